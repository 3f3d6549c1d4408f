//! A stand-in for NVIDIA's `libcuda`: the CUDA driver API functions that
//! `dpl_cuda::cuda::CudaDriver` calls, implemented on the dpl-sim simulated GPU, so the
//! real driver's code (library probe, contexts, memory, module loading, launches) runs in
//! tests on machines without a GPU. `tests/cuda_driver.rs` builds it and runs test
//! processes with it first on `LD_LIBRARY_PATH`.
//!
//! Behaviour kept from the real driver: functions fail with `CUDA_ERROR_NOT_INITIALIZED`
//! before `cuInit` and with `CUDA_ERROR_INVALID_CONTEXT` when the calling thread has no
//! current context; the driver reads each kernel parameter's size from the kernel (here:
//! from the PTX) through the pointers it is given; a fault in a kernel is reported by the
//! next call that waits for the device (`cuCtxSynchronize`, a copy to the host: launches
//! are queued, not waited for); `cuModuleLoadDataEx` writes the compiler's message into the
//! error log buffer. A "cubin" is `\x7fELFdplfake:` followed by PTX text and a NUL byte.
//!
//! Copies queued on the default stream (`cuMemcpyHtoDAsync_v2`, `cuMemcpyDtoHAsync_v2`,
//! only from or into page-locked memory of `cuMemAllocHost_v2`) and event records are
//! *deferred* as far as the real driver may defer them: they run when something waits
//! for them (`cuEventSynchronize` runs the queue up to the event's last record,
//! `cuCtxSynchronize` all of it) or when a later operation of the stream runs (a launch,
//! a memset, a synchronous copy, a free). So a caller that touches page-locked memory
//! before waiting for the copy that uses it, or frees it under a queued copy (an error
//! here), is caught by the tests.
//!
//! Configuration (read by `cuInit`): `FAKE_CUDA_DEVICES` (device count, default 1) and
//! `FAKE_CUDA_CC` (compute capability as `10 * major + minor`, default 80).
//! `fake_cuda_counts` reports live context references, allocations, modules and launches;
//! `fake_cuda_calls` how often the calls that cost a round trip or a pass over memory were
//! made (a test counts what one call of a program does).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::cell::Cell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};

use dpl_sim::{Arg, Device, Module};

type CUresult = c_uint;
const SUCCESS: CUresult = 0;
const INVALID_VALUE: CUresult = 1;
const NOT_INITIALIZED: CUresult = 3;
const INVALID_DEVICE: CUresult = 101;
const INVALID_IMAGE: CUresult = 200;
const INVALID_CONTEXT: CUresult = 201;
const INVALID_PTX: CUresult = 218;
const INVALID_HANDLE: CUresult = 400;
const NOT_FOUND: CUresult = 500;
const NOT_READY: CUresult = 600;
const LAUNCH_FAILED: CUresult = 719;

/// The one context handle (a dummy, never dereferenced).
const CTX: usize = 0xC0_0000;
const FAKE_CUBIN: &[u8] = b"\x7fELFdplfake:";

struct State {
    devices: c_int,
    cc: c_int,
    dev: Device,
    retains: u64,
    allocs: HashSet<u64>,
    modules: HashMap<usize, (Module, HashMap<String, Vec<char>>)>,
    functions: HashMap<usize, (usize, String)>,
    next_handle: usize,
    launches: u64,
    /// [`Calls`] so far.
    calls: Calls,
    pending: Option<String>,
    /// Page-locked allocations: address -> size.
    pinned: HashMap<usize, usize>,
    /// Events made and not destroyed.
    events: HashSet<usize>,
    /// Copies and event records queued on the default stream, not run yet.
    queue: VecDeque<Queued>,
}

/// An operation queued on the default stream.
enum Queued {
    /// Page-locked host bytes to the device: `(dst, src, n)`.
    ToDevice(u64, usize, usize),
    /// Device bytes into page-locked host memory: `(dst, src, n)`.
    ToHost(usize, u64, usize),
    /// An event's record.
    Record(usize),
}

impl State {
    /// Runs the first `k` queued operations, in order.
    fn run_queued(&mut self, k: usize) -> CUresult {
        let mut status = SUCCESS;
        for op in self.queue.drain(..k).collect::<Vec<_>>() {
            let ok = match op {
                Queued::ToDevice(dst, src, n) => {
                    let data = unsafe { std::slice::from_raw_parts(src as *const u8, n) };
                    self.dev.write_bytes(dst, data).is_ok()
                }
                Queued::ToHost(dst, src, n) => {
                    let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, n) };
                    self.dev.read_bytes(src, out).is_ok()
                }
                Queued::Record(_) => true,
            };
            if !ok {
                status = INVALID_VALUE;
            }
        }
        status
    }

    /// Runs everything queued (before an operation of the stream that runs at once).
    fn flush(&mut self) -> CUresult {
        self.run_queued(self.queue.len())
    }

    /// Whether `[p, p + n)` lies in one page-locked allocation.
    fn is_pinned(&self, p: usize, n: usize) -> bool {
        self.pinned
            .iter()
            .any(|(&a, &len)| p >= a && p.saturating_add(n) <= a + len)
    }
}

/// How often the calls that cost a round trip or a pass over device memory were made.
#[derive(Clone, Copy, Default)]
struct Calls {
    /// `cuCtxSynchronize` and `cuEventSynchronize`.
    syncs: u64,
    /// `cuMemsetD8_v2` and its bytes.
    memsets: u64,
    memset_bytes: u64,
    /// `cuMemcpyHtoD_v2` and `cuMemcpyHtoDAsync_v2` and their bytes.
    to_device: u64,
    to_device_bytes: u64,
    /// `cuMemcpyDtoH_v2` (each waits for the device) and `cuMemcpyDtoHAsync_v2` and their
    /// bytes.
    to_host: u64,
    to_host_bytes: u64,
    /// `cuMemcpyDtoD_v2`.
    device_copies: u64,
    /// `cuMemAlloc_v2`.
    allocs: u64,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

thread_local! {
    static CURRENT: Cell<usize> = const { Cell::new(0) };
}

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the state when initialised (and, if `ctx`, with the context current).
fn with(ctx: bool, f: impl FnOnce(&mut State) -> CUresult) -> CUresult {
    let mut g = state();
    let Some(s) = g.as_mut() else {
        return NOT_INITIALIZED;
    };
    if ctx && (CURRENT.with(Cell::get) != CTX || s.retains == 0) {
        return INVALID_CONTEXT;
    }
    f(s)
}

fn env_int(name: &str, default: c_int) -> c_int {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuGetErrorName(error: CUresult, p: *mut *const c_char) -> CUresult {
    let name: &'static CStr = match error {
        0 => c"CUDA_SUCCESS",
        1 => c"CUDA_ERROR_INVALID_VALUE",
        3 => c"CUDA_ERROR_NOT_INITIALIZED",
        101 => c"CUDA_ERROR_INVALID_DEVICE",
        200 => c"CUDA_ERROR_INVALID_IMAGE",
        201 => c"CUDA_ERROR_INVALID_CONTEXT",
        218 => c"CUDA_ERROR_INVALID_PTX",
        400 => c"CUDA_ERROR_INVALID_HANDLE",
        500 => c"CUDA_ERROR_NOT_FOUND",
        600 => c"CUDA_ERROR_NOT_READY",
        719 => c"CUDA_ERROR_LAUNCH_FAILED",
        _ => return INVALID_VALUE,
    };
    unsafe { *p = name.as_ptr() };
    SUCCESS
}

#[unsafe(no_mangle)]
pub extern "C" fn cuInit(flags: c_uint) -> CUresult {
    if flags != 0 {
        return INVALID_VALUE;
    }
    let mut g = state();
    if g.is_none() {
        *g = Some(State {
            devices: env_int("FAKE_CUDA_DEVICES", 1),
            cc: env_int("FAKE_CUDA_CC", 80),
            dev: Device::new(),
            retains: 0,
            allocs: HashSet::new(),
            modules: HashMap::new(),
            functions: HashMap::new(),
            next_handle: 1,
            launches: 0,
            calls: Calls::default(),
            pending: None,
            pinned: HashMap::new(),
            events: HashSet::new(),
            queue: VecDeque::new(),
        });
    }
    SUCCESS
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetCount(n: *mut c_int) -> CUresult {
    with(false, |s| {
        unsafe { *n = s.devices };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGet(d: *mut c_int, ordinal: c_int) -> CUresult {
    with(false, |s| {
        if ordinal < 0 || ordinal >= s.devices {
            return INVALID_DEVICE;
        }
        unsafe { *d = ordinal };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetAttribute(v: *mut c_int, attr: c_uint, d: c_int) -> CUresult {
    with(false, |s| {
        if d < 0 || d >= s.devices {
            return INVALID_DEVICE;
        }
        let value = match attr {
            16 => env_int("FAKE_CUDA_SMS", 4),
            75 => s.cc / 10,
            76 => s.cc % 10,
            _ => return INVALID_VALUE,
        };
        unsafe { *v = value };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, d: c_int) -> CUresult {
    with(false, |s| {
        if d < 0 || d >= s.devices || len <= 0 {
            return INVALID_VALUE;
        }
        let text = format!("dpl fake GPU {d} (sm_{})\0", s.cc);
        let n = text.len().min(len as usize);
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), name.cast::<u8>(), n) };
        unsafe { *name.add(n - 1) = 0 };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, d: c_int) -> CUresult {
    with(false, |s| {
        if d < 0 || d >= s.devices {
            return INVALID_VALUE;
        }
        // The simulated device's memory is only bounded by the host's; say 4 GiB.
        unsafe { *bytes = 4 << 30 };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, d: c_int) -> CUresult {
    with(false, |s| {
        if d != 0 {
            return INVALID_DEVICE;
        }
        s.retains += 1;
        unsafe { *ctx = std::ptr::without_provenance_mut(CTX) };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuDevicePrimaryCtxRelease_v2(d: c_int) -> CUresult {
    with(false, |s| {
        if d != 0 || s.retains == 0 {
            return INVALID_CONTEXT;
        }
        s.retains -= 1;
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> CUresult {
    with(false, |s| {
        if ctx.addr() != CTX || s.retains == 0 {
            return INVALID_CONTEXT;
        }
        CURRENT.with(|c| c.set(CTX));
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuCtxSynchronize() -> CUresult {
    with(true, |s| {
        s.calls.syncs += 1;
        let status = s.flush();
        match waited(s) {
            SUCCESS => status,
            fault => fault,
        }
    })
}

/// What a call that waits for the queued kernels returns: the fault of one of them.
fn waited(s: &mut State) -> CUresult {
    match s.pending.take() {
        Some(msg) => {
            eprintln!("fake libcuda: kernel failed: {msg}");
            LAUNCH_FAILED
        }
        None => SUCCESS,
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAlloc_v2(p: *mut u64, bytes: usize) -> CUresult {
    with(true, |s| {
        if bytes == 0 {
            return INVALID_VALUE;
        }
        s.calls.allocs += 1;
        match s.dev.alloc_bytes(bytes) {
            Ok(a) => {
                s.allocs.insert(a);
                unsafe { *p = a };
                SUCCESS
            }
            Err(_) => 2,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFree_v2(a: u64) -> CUresult {
    with(true, |s| {
        if s.flush() != SUCCESS {
            return INVALID_VALUE;
        }
        if !s.allocs.remove(&a) {
            return INVALID_VALUE;
        }
        match s.dev.free_bytes(a) {
            Ok(()) => SUCCESS,
            Err(_) => INVALID_VALUE,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemsetD8_v2(a: u64, byte: u8, n: usize) -> CUresult {
    with(true, |s| {
        if s.flush() != SUCCESS {
            return INVALID_VALUE;
        }
        s.calls.memsets += 1;
        s.calls.memset_bytes += n as u64;
        match s.dev.write_bytes(a, &vec![byte; n]) {
            Ok(()) => SUCCESS,
            Err(_) => INVALID_VALUE,
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, n: usize) -> CUresult {
    with(true, |s| {
        if s.flush() != SUCCESS {
            return INVALID_VALUE;
        }
        s.calls.to_device += 1;
        s.calls.to_device_bytes += n as u64;
        let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), n) };
        match s.dev.write_bytes(dst, data) {
            Ok(()) => SUCCESS,
            Err(_) => INVALID_VALUE,
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, n: usize) -> CUresult {
    with(true, |s| {
        if s.flush() != SUCCESS {
            return INVALID_VALUE;
        }
        s.calls.to_host += 1;
        s.calls.to_host_bytes += n as u64;
        let status = waited(s);
        if status != SUCCESS {
            return status;
        }
        let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), n) };
        match s.dev.read_bytes(src, out) {
            Ok(()) => SUCCESS,
            Err(_) => INVALID_VALUE,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoD_v2(dst: u64, src: u64, n: usize) -> CUresult {
    with(true, |s| {
        if s.flush() != SUCCESS {
            return INVALID_VALUE;
        }
        s.calls.device_copies += 1;
        match s.dev.copy_bytes(src, dst, n) {
            Ok(()) => SUCCESS,
            Err(_) => INVALID_VALUE,
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuMemAllocHost_v2(p: *mut *mut c_void, bytes: usize) -> CUresult {
    with(true, |s| {
        if bytes == 0 {
            return INVALID_VALUE;
        }
        // Not zeroed by the real driver either: filled so that a read before a copy shows.
        let mem = Box::into_raw(vec![0xA5u8; bytes].into_boxed_slice()).cast::<u8>();
        s.pinned.insert(mem.addr(), bytes);
        unsafe { *p = mem.cast() };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    with(true, |s| {
        let Some(&len) = s.pinned.get(&p.addr()) else {
            return INVALID_VALUE;
        };
        // Freeing memory a queued copy still uses is the caller's bug: refused.
        let used = s.queue.iter().any(|q| match *q {
            Queued::ToDevice(_, h, n) | Queued::ToHost(h, _, n) => {
                h < p.addr() + len && p.addr() < h + n
            }
            Queued::Record(_) => false,
        });
        if used {
            eprintln!("fake libcuda: cuMemFreeHost of memory a queued copy uses");
            return INVALID_VALUE;
        }
        s.pinned.remove(&p.addr());
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p.cast::<u8>(), len)) });
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: u64,
    src: *const c_void,
    n: usize,
    stream: *mut c_void,
) -> CUresult {
    with(true, |s| {
        if !stream.is_null() || !s.is_pinned(src.addr(), n) {
            return INVALID_VALUE;
        }
        s.calls.to_device += 1;
        s.calls.to_device_bytes += n as u64;
        s.queue.push_back(Queued::ToDevice(dst, src.addr(), n));
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: u64,
    n: usize,
    stream: *mut c_void,
) -> CUresult {
    with(true, |s| {
        if !stream.is_null() || !s.is_pinned(dst.addr(), n) {
            return INVALID_VALUE;
        }
        s.calls.to_host += 1;
        s.calls.to_host_bytes += n as u64;
        s.queue.push_back(Queued::ToHost(dst.addr(), src, n));
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuEventCreate(e: *mut *mut c_void, _flags: c_uint) -> CUresult {
    with(true, |s| {
        let h = s.next_handle;
        s.next_handle += 1;
        s.events.insert(h);
        unsafe { *e = std::ptr::without_provenance_mut(h) };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventRecord(e: *mut c_void, stream: *mut c_void) -> CUresult {
    with(true, |s| {
        if !stream.is_null() || !s.events.contains(&e.addr()) {
            return INVALID_HANDLE;
        }
        s.queue.push_back(Queued::Record(e.addr()));
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventQuery(e: *mut c_void) -> CUresult {
    with(true, |s| {
        if !s.events.contains(&e.addr()) {
            INVALID_HANDLE
        } else if s
            .queue
            .iter()
            .any(|q| matches!(*q, Queued::Record(h) if h == e.addr()))
        {
            NOT_READY
        } else {
            SUCCESS
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventSynchronize(e: *mut c_void) -> CUresult {
    with(true, |s| {
        if !s.events.contains(&e.addr()) {
            return INVALID_HANDLE;
        }
        s.calls.syncs += 1;
        // Waits for the event's last record (and what is queued before it).
        let upto = s
            .queue
            .iter()
            .rposition(|q| matches!(*q, Queued::Record(h) if h == e.addr()))
            .map_or(0, |i| i + 1);
        let status = s.run_queued(upto);
        match waited(s) {
            SUCCESS => status,
            fault => fault,
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuEventDestroy_v2(e: *mut c_void) -> CUresult {
    with(true, |s| {
        if s.events.remove(&e.addr()) {
            SUCCESS
        } else {
            INVALID_HANDLE
        }
    })
}

/// The parameter types (`u`: 32-bit integer, `U`: 64-bit, `f`, `F`) of every entry.
fn param_types(ptx: &str) -> HashMap<String, Vec<char>> {
    let mut out = HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let after = &rest[at + 7..];
        let (Some(open), Some(close)) = (after.find('('), after.find(')')) else {
            break;
        };
        let types = after[open + 1..close]
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                let ty = p.split_whitespace().nth(1).unwrap_or("");
                match ty {
                    ".f32" => 'f',
                    ".f64" => 'F',
                    t if t.ends_with("64") => 'U',
                    _ => 'u',
                }
            })
            .collect();
        out.insert(after[..open].trim().to_string(), types);
        rest = &after[close..];
    }
    out
}

/// Writes `msg` into the error log option of `cuModuleLoadDataEx`, if given.
unsafe fn write_log(n: c_uint, options: *const c_uint, values: *const *mut c_void, msg: &str) {
    let mut buf: *mut u8 = std::ptr::null_mut();
    let mut size = 0usize;
    for i in 0..n as usize {
        let (o, v) = unsafe { (*options.add(i), *values.add(i)) };
        match o {
            5 => buf = v.cast(),
            6 => size = v.addr(),
            _ => {}
        }
    }
    if buf.is_null() || size == 0 {
        return;
    }
    let k = msg.len().min(size - 1);
    unsafe {
        std::ptr::copy_nonoverlapping(msg.as_ptr(), buf, k);
        *buf.add(k) = 0;
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    m: *mut *mut c_void,
    image: *const c_void,
    n: c_uint,
    options: *const c_uint,
    values: *const *mut c_void,
) -> CUresult {
    with(true, |s| {
        let bytes = unsafe { CStr::from_ptr(image.cast::<c_char>()) }.to_bytes();
        let (text, bad) = if bytes.starts_with(b"\x7fELF") {
            match bytes.strip_prefix(FAKE_CUBIN) {
                Some(t) => (t, INVALID_IMAGE),
                None => {
                    unsafe { write_log(n, options, values, "not a cubin of the fake driver") };
                    return INVALID_IMAGE;
                }
            }
        } else {
            (bytes, INVALID_PTX)
        };
        let text = String::from_utf8_lossy(text);
        match s.dev.load_ptx(&text) {
            Ok(module) => {
                let h = s.next_handle * 16;
                s.next_handle += 1;
                s.modules.insert(h, (module, param_types(&text)));
                unsafe { *m = std::ptr::without_provenance_mut(h) };
                SUCCESS
            }
            Err(e) => {
                unsafe { write_log(n, options, values, &format!("fake ptxas: {e}")) };
                bad
            }
        }
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn cuModuleUnload(m: *mut c_void) -> CUresult {
    with(true, |s| match s.modules.remove(&m.addr()) {
        Some(_) => {
            s.functions.retain(|_, (mh, _)| *mh != m.addr());
            SUCCESS
        }
        None => INVALID_HANDLE,
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuModuleGetFunction(
    f: *mut *mut c_void,
    m: *mut c_void,
    name: *const c_char,
) -> CUresult {
    with(true, |s| {
        let name = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        let Some((module, _)) = s.modules.get(&m.addr()) else {
            return INVALID_HANDLE;
        };
        if !module.kernel_names().contains(&name) {
            return NOT_FOUND;
        }
        let h = s.next_handle * 16;
        s.next_handle += 1;
        s.functions.insert(h, (m.addr(), name));
        unsafe { *f = std::ptr::without_provenance_mut(h) };
        SUCCESS
    })
}

/// Resident blocks per multiprocessor: what 2048 threads and 32 blocks allow (registers
/// are not modelled).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
    n: *mut c_int,
    f: *mut c_void,
    block: c_int,
    shared: usize,
) -> CUresult {
    with(true, |s| {
        if !s.functions.contains_key(&f.addr()) {
            return INVALID_HANDLE;
        }
        if !(1..=1024).contains(&block) || shared != 0 {
            return INVALID_VALUE;
        }
        unsafe { *n = (2048 / block).min(32) };
        SUCCESS
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: *mut c_void,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    with(true, |s| {
        if !stream.is_null() || !extra.is_null() || s.flush() != SUCCESS {
            return INVALID_VALUE;
        }
        let Some((mh, name)) = s.functions.get(&f.addr()).cloned() else {
            return INVALID_HANDLE;
        };
        let (module, types) = &s.modules[&mh];
        let types = &types[&name];
        // As the real driver: one pointer per parameter, the parameter's size read from it.
        let args: Vec<Arg<'static>> = types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let p = unsafe { *params.add(i) }.cast::<u8>();
                let mut b = [0u8; 8];
                let n = if matches!(t, 'u' | 'f') { 4 } else { 8 };
                unsafe { std::ptr::copy_nonoverlapping(p, b.as_mut_ptr(), n) };
                let w4 = [b[0], b[1], b[2], b[3]];
                match t {
                    'u' => Arg::U32(u32::from_ne_bytes(w4)),
                    'f' => Arg::F32(f32::from_ne_bytes(w4)),
                    'U' => Arg::U64(u64::from_ne_bytes(b)),
                    _ => Arg::F64(f64::from_ne_bytes(b)),
                }
            })
            .collect();
        s.launches += 1;
        if let Err(e) = s
            .dev
            .launch(module, &name, [gx, gy, gz], [bx, by, bz], shared, &args)
        {
            s.pending = Some(format!("{name}: {e}"));
        }
        SUCCESS
    })
}

/// Test hook: writes live context references, allocations, modules and launches so far
/// into `out[0..4]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fake_cuda_counts(out: *mut u64) {
    let g = state();
    let c = match g.as_ref() {
        Some(s) => [
            s.retains,
            s.allocs.len() as u64,
            s.modules.len() as u64,
            s.launches,
        ],
        None => [0; 4],
    };
    unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), out, 4) };
}

/// Test hook: writes the [`Calls`] so far (syncs, memsets and their bytes, copies to the
/// device and their bytes, copies to the host and their bytes, device copies,
/// allocations) into `out[0..9]`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fake_cuda_calls(out: *mut u64) {
    let g = state();
    let c = g.as_ref().map(|s| s.calls).unwrap_or_default();
    let words = [
        c.syncs,
        c.memsets,
        c.memset_bytes,
        c.to_device,
        c.to_device_bytes,
        c.to_host,
        c.to_host_bytes,
        c.device_copies,
        c.allocs,
    ];
    unsafe { std::ptr::copy_nonoverlapping(words.as_ptr(), out, words.len()) };
}
