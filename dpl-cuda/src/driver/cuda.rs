//! The real driver: runs programs on an NVIDIA GPU through the CUDA driver API (cudarc's
//! `driver::sys` bindings, feature `cuda`).
//!
//! `libcuda` is loaded at run time, so this module builds without CUDA and a binary using
//! it starts on machines without a GPU. cudarc's loaders panic when the library or one of
//! its functions is missing, so [`CudaDriver::new`] and [`device_count`] first *probe*: they
//! open the driver library with `libloading` themselves (the same file names, in the same
//! order, that cudarc tries) and check that every function this module calls is there,
//! before the first call through cudarc. Every failure afterwards is a `String` naming the
//! CUDA call that failed and the driver's error name (`cuMemAlloc_v2 failed:
//! CUDA_ERROR_OUT_OF_MEMORY`).
//!
//! * One [`CudaDriver`] per device: it retains the device's primary context (released on
//!   drop) and makes it current on the calling thread in every method, so a driver can be
//!   shared between threads.
//! * Modules are cached by PTX text. [`Driver::load_program`] loads the program's cubin
//!   for the device's compute capability when there is one ([`crate::cubin::select`]),
//!   else the PTX, which the driver compiles (JIT, with its error log in the message).
//! * Allocations are tracked: reads, writes and copies must lie inside one live
//!   allocation of this driver, and `free` takes only addresses it returned, so a bad
//!   address is an error message, not a write into someone else's memory.
//! * Launches check the arguments against the kernel's parameter list read from the PTX
//!   (count and sizes; the driver copies each parameter's size from the pointer it is
//!   given), then wait for the kernel (`cuCtxSynchronize`), so a fault inside it is
//!   reported by that launch. A device fault (`CUDA_ERROR_ILLEGAL_ADDRESS`, ...) is sticky
//!   in CUDA: every later call on the context fails with it too.
//!
//! Limitation: cudarc declares the driver's status codes as a Rust enum; the bindings
//! chosen (feature `cuda-13040`, the newest cudarc knows) list every code up to CUDA
//! 13.4. A newer driver returning a code added later is outside what cudarc can represent.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use cudarc::driver::sys;

use super::{Driver, LaunchArg};
use crate::GpuProgram;

/// Every function of the driver library this module calls; the probe checks them all, so
/// cudarc never meets a missing symbol (which it reports by panicking).
const SYMBOLS: &[&str] = &[
    "cuGetErrorName",
    "cuInit",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetAttribute",
    "cuDeviceGetName",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease_v2",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemsetD8_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuMemcpyDtoD_v2",
    "cuModuleLoadDataEx",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuLaunchKernel",
    "cuOccupancyMaxActiveBlocksPerMultiprocessor",
];

/// Size of the JIT error log buffer given to `cuModuleLoadDataEx`.
const JIT_LOG_BYTES: usize = 16 * 1024;

/// The file names cudarc tries for the driver library, in its order.
fn library_candidates() -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for n in ["cuda", "nvcuda"]
        .iter()
        .flat_map(|n| cudarc::get_lib_name_candidates(n))
    {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// Checks, once per process, that the driver library loads and has every function in
/// [`SYMBOLS`]. Nothing of cudarc is called before this succeeds.
fn probe() -> Result<(), String> {
    static PROBE: OnceLock<Result<(), String>> = OnceLock::new();
    PROBE.get_or_init(probe_library).clone()
}

fn probe_library() -> Result<(), String> {
    let candidates = library_candidates();
    for name in &candidates {
        // SAFETY: opening the NVIDIA driver library runs its initialisers, which have no
        // precondition on the caller; it is the library cudarc opens next (same names,
        // same order), so this loads nothing cudarc would not.
        let Ok(lib) = (unsafe { libloading::Library::new(name) }) else {
            continue;
        };
        let missing: Vec<&str> = SYMBOLS
            .iter()
            .copied()
            // SAFETY: the symbol is only looked up, never called or dereferenced, so the
            // pointer type given to `get` does not matter.
            .filter(|s| unsafe { lib.get::<*const c_void>(s.as_bytes()) }.is_err())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "the CUDA driver library `{name}` lacks {}: the NVIDIA driver is too old for \
                 dpl (CUDA 12 or newer is needed)",
                missing.join(", ")
            ));
        }
        return Ok(());
    }
    let usual = if cfg!(windows) {
        "nvcuda.dll"
    } else {
        "libcuda.so.1"
    };
    Err(format!(
        "no CUDA driver library could be loaded (tried {usual} and {} other names): no \
         NVIDIA driver is installed on this machine",
        candidates.len().saturating_sub(1)
    ))
}

/// The driver's name for a status code (`CUDA_ERROR_OUT_OF_MEMORY`).
fn error_name(r: sys::CUresult) -> String {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: only called after a successful probe (every CUDA call is), so the symbol
    // exists; `p` is a valid out-pointer. On success it points to a static NUL-terminated
    // string owned by the driver.
    let ok = unsafe { sys::cuGetErrorName(r, &mut p) } == sys::CUresult::CUDA_SUCCESS;
    if ok && !p.is_null() {
        // SAFETY: a non-null pointer written by a successful cuGetErrorName is a static
        // NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    } else {
        format!("{r:?} ({})", r as u32)
    }
}

/// Turns a status code into `Ok` or an error naming the call.
fn check(call: &str, r: sys::CUresult) -> Result<(), String> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{call} failed: {}", error_name(r)))
    }
}

/// Probes the library and calls `cuInit` (once per process).
fn init() -> Result<(), String> {
    probe()?;
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        // SAFETY: the probe found the library and cuInit in it; cuInit(0) has no
        // precondition and may be called more than once.
        check("cuInit", unsafe { sys::cuInit(0) })
    })
    .clone()
}

/// The number of CUDA devices, or why there is none to ask (no driver library, a driver
/// too old, `cuInit` failing). Never panics.
pub fn device_count() -> Result<usize, String> {
    init()?;
    let mut n: c_int = 0;
    // SAFETY: the driver is initialised; `n` is a valid out-pointer.
    check("cuDeviceGetCount", unsafe { sys::cuDeviceGetCount(&mut n) })?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Unique identities of drivers, so a module of one driver is never launched on another.
static NEXT_DRIVER_ID: AtomicU64 = AtomicU64::new(1);

/// A [`Driver`] on CUDA device `n` (see the module documentation).
pub struct CudaDriver {
    id: u64,
    ordinal: usize,
    device: sys::CUdevice,
    ctx: sys::CUcontext,
    cc: (u32, u32),
    name: String,
    /// Multiprocessors of the device.
    sms: u32,
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    /// Live allocations: start address -> size in bytes.
    allocs: Mutex<BTreeMap<u64, usize>>,
    /// Freed allocations kept for reuse ([`Pool`]).
    pool: Mutex<Pool>,
}

/// Allocations freed by [`Driver::free`] and kept for the next [`Driver::alloc_zeroed`] of
/// the same size, up to [`POOL_BYTES`] in all. `cuMemAlloc` and `cuMemFree` (which also
/// waits for the device) cost more than the kernels of a call on millions of elements: on
/// an H100, a resident `saxpy` of 2^20 to 2^24 elements took 0.3-0.45 ms per call with
/// them, most of it fixed cost. A pooled allocation is zeroed again when reused.
#[derive(Default)]
struct Pool {
    /// Size in bytes -> addresses.
    free: HashMap<usize, Vec<u64>>,
    /// Bytes held.
    bytes: usize,
}

/// The most bytes a [`CudaDriver`] keeps in its pool of freed allocations.
const POOL_BYTES: usize = 1 << 30;

// SAFETY: the CUDA driver API is thread-safe. The raw context handle is only passed to
// the driver (each method makes it current on the calling thread first), and the mutable
// state (module cache, allocation table) is behind mutexes.
unsafe impl Send for CudaDriver {}
// SAFETY: as for `Send`: `&self` methods only call the thread-safe driver API and lock
// the mutexes for the shared tables.
unsafe impl Sync for CudaDriver {}

/// A loaded module of a [`CudaDriver`]: the driver's handle, the parameter lists of its
/// kernels (read from the PTX) and the kernels' function handles, looked up once.
pub struct CudaModule {
    driver: u64,
    handle: sys::CUmodule,
    params: HashMap<String, Vec<Param>>,
    functions: Mutex<HashMap<String, sys::CUfunction>>,
    cubin: Option<u32>,
}

// SAFETY: module and function handles are plain identifiers of driver objects, usable
// from any thread once their context is current (which the owning driver ensures before
// every use); the function table is behind a mutex.
unsafe impl Send for CudaModule {}
// SAFETY: as for `Send`.
unsafe impl Sync for CudaModule {}

impl std::fmt::Debug for CudaModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaModule")
            .field("kernels", &self.kernels())
            .field("cubin", &self.cubin)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for CudaDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaDriver")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.cc)
            .finish_non_exhaustive()
    }
}

impl CudaModule {
    /// The compute capability (`10 * major + minor`) of the cubin the module was loaded
    /// from, or `None` when the driver compiled the PTX.
    pub fn cubin(&self) -> Option<u32> {
        self.cubin
    }

    /// The names of the module's kernels (from its PTX), sorted.
    pub fn kernels(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.params.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}

impl CudaDriver {
    /// Frees the allocations kept for reuse: [`Driver::free`] keeps up to 1 GiB of freed
    /// allocations for the next ones of the same sizes (`cuMemAlloc`/`cuMemFree` cost more
    /// than a call's kernels on millions of elements); this gives that memory back to
    /// the device. Allocating also does it when the device is out of memory.
    pub fn release_pool(&self) {
        let free = {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            pool.bytes = 0;
            std::mem::take(&mut pool.free)
        };
        if free.is_empty() || self.bind().is_err() {
            return;
        }
        for addr in free.into_values().flatten() {
            // SAFETY: the context is current; pooled addresses are allocations of it that
            // are no longer live (not in the table), each pooled once and now taken out.
            let _ = unsafe { sys::cuMemFree_v2(addr) };
        }
    }

    /// Opens CUDA device `ordinal`: probes the driver library, initialises CUDA, checks
    /// that the device exists and retains its primary context. Fails with a message (no
    /// driver library, a driver too old, no such device, a failed call) and never panics.
    pub fn new(ordinal: usize) -> Result<CudaDriver, String> {
        init()?;
        let count = device_count()?;
        if ordinal >= count {
            return Err(format!(
                "CUDA device {ordinal} does not exist: the driver reports {count} device(s)"
            ));
        }
        let ord = c_int::try_from(ordinal)
            .map_err(|_| format!("CUDA device {ordinal} does not exist"))?;
        let mut device: sys::CUdevice = 0;
        // SAFETY: the driver is initialised; `device` is a valid out-pointer and the
        // ordinal is below the device count.
        check("cuDeviceGet", unsafe { sys::cuDeviceGet(&mut device, ord) })?;
        let attribute = |a: sys::CUdevice_attribute, what: &str| -> Result<u32, String> {
            let mut v: c_int = 0;
            // SAFETY: `device` came from cuDeviceGet; `v` is a valid out-pointer.
            let r = unsafe { sys::cuDeviceGetAttribute(&mut v, a, device) };
            check(&format!("cuDeviceGetAttribute({what})"), r)?;
            u32::try_from(v).map_err(|_| format!("the device reports {what} = {v}"))
        };
        let major = attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "compute capability major",
        )?;
        let minor = attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "compute capability minor",
        )?;
        let sms = attribute(
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "multiprocessor count",
        )?;
        if major < 7 {
            return Err(format!(
                "CUDA device {ordinal} has compute capability {major}.{minor}: dpl's kernels \
                 need 7.0 (Volta) or newer"
            ));
        }
        let mut buf = [0u8; 256];
        // SAFETY: `buf` is writable for its whole length, which is what we pass; the
        // driver writes a NUL-terminated name (truncated to fit).
        check("cuDeviceGetName", unsafe {
            sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int, device)
        })?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = String::from_utf8_lossy(&buf[..end]).into_owned();
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: `device` came from cuDeviceGet; `ctx` is a valid out-pointer. The
        // reference taken here is released in `Drop`.
        check("cuDevicePrimaryCtxRetain", unsafe {
            sys::cuDevicePrimaryCtxRetain(&mut ctx, device)
        })?;
        Ok(CudaDriver {
            id: NEXT_DRIVER_ID.fetch_add(1, Ordering::Relaxed),
            ordinal,
            device,
            ctx,
            cc: (major, minor),
            name,
            sms: sms.max(1),
            modules: Mutex::new(HashMap::new()),
            allocs: Mutex::new(BTreeMap::new()),
            pool: Mutex::new(Pool::default()),
        })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, as the driver reports it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The device's number of multiprocessors.
    pub fn multiprocessors(&self) -> u32 {
        self.sms
    }

    /// The device's compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.cc
    }

    /// Bytes currently allocated through this driver.
    pub fn allocated_bytes(&self) -> usize {
        self.allocs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .sum()
    }

    /// Makes the driver's context current on the calling thread.
    fn bind(&self) -> Result<(), String> {
        // SAFETY: `ctx` is the primary context retained in `new` and released only in
        // `Drop`, so it is alive.
        check("cuCtxSetCurrent", unsafe { sys::cuCtxSetCurrent(self.ctx) })
    }

    /// Checks that `[addr, addr + len)` lies inside one live allocation.
    fn check_range(&self, what: &str, addr: u64, len: usize) -> Result<(), String> {
        let allocs = self.allocs.lock().unwrap_or_else(PoisonError::into_inner);
        let inside = allocs
            .range(..=addr)
            .next_back()
            .is_some_and(|(&start, &size)| {
                (addr - start)
                    .checked_add(len as u64)
                    .is_some_and(|end| end <= size as u64)
            });
        if inside {
            Ok(())
        } else {
            Err(format!(
                "{what} of {len} byte(s) at device address {addr:#x} is outside every \
                 allocation of this driver"
            ))
        }
    }

    /// Loads a module from `image` (a NUL-terminated PTX text or a cubin), collecting the
    /// JIT error log on failure.
    fn load_image(&self, image: &[u8], what: &str) -> Result<sys::CUmodule, String> {
        self.bind()?;
        let mut log = vec![0u8; JIT_LOG_BYTES];
        let mut options = [
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 2] = [
            log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(log.len()),
        ];
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: the context is current; `image` is a PTX text ending in NUL or a whole
        // cubin (an ELF image the driver validates), alive for the call; the two options
        // are a writable log buffer and its size (passed by value in the pointer slot, as
        // the API specifies), both arrays have `options.len()` entries; `module` is a
        // valid out-pointer.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                image.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        check(&format!("cuModuleLoadDataEx ({what})"), r).map_err(|e| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            if text.trim().is_empty() {
                e
            } else {
                format!("{e}\n{}", text.trim_end())
            }
        })?;
        Ok(module)
    }

    /// Loads (or finds in the cache) the module of `ptx`, preferring a cubin of `cubins`
    /// that suits the device.
    fn load_with(&self, ptx: &str, cubins: &[(u32, Vec<u8>)]) -> Result<Arc<CudaModule>, String> {
        let mut cache = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = cache.get(ptx) {
            return Ok(m.clone());
        }
        let params = entry_params(ptx)?;
        let cc = 10 * self.cc.0 + self.cc.1;
        let mut cubin_error = None;
        let mut loaded = None;
        if let Some((arch, cubin)) = crate::cubin::select_entry(cubins, cc) {
            if crate::cubin::is_elf(cubin) {
                // Copied into 8-byte aligned memory: the driver reads the ELF headers in
                // place.
                let mut aligned = vec![0u64; cubin.len().div_ceil(8)];
                let bytes: &mut [u8] = bytemuck_bytes(&mut aligned);
                bytes[..cubin.len()].copy_from_slice(cubin);
                match self.load_image(&bytes[..cubin.len()], &format!("cubin for sm_{arch}")) {
                    Ok(h) => loaded = Some((h, Some(arch))),
                    Err(e) => cubin_error = Some(e),
                }
            } else {
                cubin_error = Some(format!(
                    "the embedded cubin for sm_{arch} is not an ELF image"
                ));
            }
        }
        let (handle, cubin) = match loaded {
            Some(l) => l,
            None => {
                let text = CString::new(ptx)
                    .map_err(|_| "the PTX text contains a NUL byte".to_string())?;
                match self.load_image(text.as_bytes_with_nul(), "PTX") {
                    Ok(h) => (h, None),
                    Err(e) => {
                        return Err(match cubin_error {
                            Some(c) => format!("{c}\nand then {e}"),
                            None => e,
                        });
                    }
                }
            }
        };
        let m = Arc::new(CudaModule {
            driver: self.id,
            handle,
            params,
            functions: Mutex::new(HashMap::new()),
            cubin,
        });
        cache.insert(ptx.to_string(), m.clone());
        Ok(m)
    }

    /// The function handle of `kernel` in `module` (looked up once).
    fn function(&self, module: &CudaModule, kernel: &str) -> Result<sys::CUfunction, String> {
        let mut fns = module
            .functions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(&f) = fns.get(kernel) {
            return Ok(f);
        }
        let name = CString::new(kernel)
            .map_err(|_| format!("kernel name `{kernel}` contains a NUL byte"))?;
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: the context is current (the caller bound it); `module.handle` is a live
        // module of this driver (checked by the caller, unloaded only in `Drop`); `name`
        // is NUL-terminated; `f` is a valid out-pointer.
        check(&format!("cuModuleGetFunction({kernel})"), unsafe {
            sys::cuModuleGetFunction(&mut f, module.handle, name.as_ptr())
        })?;
        fns.insert(kernel.to_string(), f);
        Ok(f)
    }
}

/// Views a `u64` buffer as bytes.
fn bytemuck_bytes(words: &mut [u64]) -> &mut [u8] {
    let len = std::mem::size_of_val(words);
    // SAFETY: the pointer and length cover exactly the `u64` slice, which is initialised;
    // every bit pattern is a valid `u8`, `u8` has alignment 1, and the returned borrow
    // keeps `words` mutably borrowed for its lifetime.
    unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), len) }
}

impl Drop for CudaDriver {
    fn drop(&mut self) {
        if self.bind().is_err() {
            return;
        }
        let allocs = std::mem::take(
            self.allocs
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for addr in allocs.into_keys() {
            // SAFETY: the context is current and `addr` is a live allocation of it.
            let _ = unsafe { sys::cuMemFree_v2(addr) };
        }
        self.release_pool();
        let modules = std::mem::take(
            self.modules
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for m in modules.into_values() {
            // SAFETY: the context is current and the module was loaded in it; it is
            // unloaded once (the cache held each module once). A module handle kept by a
            // caller can no longer be used: launching needs this driver (identity check).
            let _ = unsafe { sys::cuModuleUnload(m.handle) };
        }
        // SAFETY: releases the reference retained in `new`, once.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}

impl Driver for CudaDriver {
    type Module = Arc<CudaModule>;

    fn load(&self, ptx: &str) -> Result<Arc<CudaModule>, String> {
        self.load_with(ptx, &[])
    }

    fn load_program(&self, program: &GpuProgram) -> Result<Arc<CudaModule>, String> {
        self.load_with(&program.ptx, &program.cubins)
    }

    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
        let bytes = bytes.max(1);
        self.bind()?;
        let pooled = {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            let addr = pool.free.get_mut(&bytes).and_then(Vec::pop);
            if addr.is_some() {
                pool.bytes -= bytes;
            }
            addr
        };
        let addr = match pooled {
            Some(addr) => addr,
            None => {
                let mut addr: sys::CUdeviceptr = 0;
                // SAFETY: the context is current; `addr` is a valid out-pointer.
                let mut r = unsafe { sys::cuMemAlloc_v2(&mut addr, bytes) };
                if r != sys::CUresult::CUDA_SUCCESS {
                    // The pool's memory may be what is missing: give it back and retry.
                    self.release_pool();
                    // SAFETY: as above.
                    r = unsafe { sys::cuMemAlloc_v2(&mut addr, bytes) };
                }
                check(&format!("cuMemAlloc_v2({bytes} bytes)"), r)?;
                addr
            }
        };
        // SAFETY: `addr` is a fresh allocation of `bytes` bytes in the current context.
        if let Err(e) = check("cuMemsetD8_v2", unsafe {
            sys::cuMemsetD8_v2(addr, 0, bytes)
        }) {
            // SAFETY: frees the allocation just made, once.
            let _ = unsafe { sys::cuMemFree_v2(addr) };
            return Err(e);
        }
        self.allocs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(addr, bytes);
        Ok(addr)
    }

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        self.check_range("a write", dst, data.len())?;
        self.bind()?;
        // SAFETY: the context is current; `[dst, dst + len)` lies inside a live
        // allocation (checked above) and `data` is readable for `len` bytes.
        check("cuMemcpyHtoD_v2", unsafe {
            sys::cuMemcpyHtoD_v2(dst, data.as_ptr().cast(), data.len())
        })
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String> {
        if out.is_empty() {
            return Ok(());
        }
        self.check_range("a read", src, out.len())?;
        self.bind()?;
        // SAFETY: the context is current; `[src, src + len)` lies inside a live
        // allocation (checked above) and `out` is writable for `len` bytes.
        check("cuMemcpyDtoH_v2", unsafe {
            sys::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), src, out.len())
        })
    }

    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String> {
        if bytes == 0 {
            return Ok(());
        }
        self.check_range("a copy's source", src, bytes)?;
        self.check_range("a copy's destination", dst, bytes)?;
        self.bind()?;
        // SAFETY: the context is current and both ranges lie inside live allocations
        // (checked above).
        check("cuMemcpyDtoD_v2", unsafe {
            sys::cuMemcpyDtoD_v2(dst, src, bytes)
        })
    }

    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor` for the loaded kernel (its registers
    /// and shared memory as the driver compiled them) times the multiprocessors; at least
    /// one block.
    fn resident_blocks(
        &self,
        module: &Arc<CudaModule>,
        kernel: &str,
        block: u32,
    ) -> Result<u32, String> {
        if module.driver != self.id {
            return Err(format!(
                "kernel `{kernel}`: the module was loaded by another CUDA driver"
            ));
        }
        let size = c_int::try_from(block).map_err(|_| format!("block of {block} threads"))?;
        self.bind()?;
        let f = self.function(module, kernel)?;
        let mut n: c_int = 0;
        // SAFETY: the context is current; `f` is a kernel of a live module of this
        // driver; `n` is a valid out-pointer; no dynamic shared memory.
        let r = unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, size, 0) };
        check(
            &format!("cuOccupancyMaxActiveBlocksPerMultiprocessor({kernel})"),
            r,
        )?;
        let per_sm = u32::try_from(n).unwrap_or(0).max(1);
        Ok(per_sm.saturating_mul(self.sms))
    }

    fn launch(
        &self,
        module: &Arc<CudaModule>,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String> {
        if module.driver != self.id {
            return Err(format!(
                "kernel `{kernel}`: the module was loaded by another CUDA driver"
            ));
        }
        let params = module
            .params
            .get(kernel)
            .ok_or_else(|| format!("the module has no kernel `{kernel}`"))?;
        check_args(kernel, params, args)?;
        self.bind()?;
        let f = self.function(module, kernel)?;
        // One 8-byte slot per argument; the driver copies the parameter's size (4 or 8
        // bytes, checked against the PTX above) from the start of its slot.
        let mut slots: Vec<u64> = args
            .iter()
            .map(|a| {
                let mut b = [0u8; 8];
                match *a {
                    LaunchArg::U32(x) => b[..4].copy_from_slice(&x.to_ne_bytes()),
                    LaunchArg::F32(x) => b[..4].copy_from_slice(&x.to_ne_bytes()),
                    LaunchArg::U64(x) => b = x.to_ne_bytes(),
                    LaunchArg::F64(x) => b = x.to_ne_bytes(),
                }
                u64::from_ne_bytes(b)
            })
            .collect();
        let mut pointers: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| std::ptr::from_mut(s).cast::<c_void>())
            .collect();
        // SAFETY: the context is current; `f` is a kernel of a live module of this driver;
        // `pointers` holds one pointer per kernel parameter (count checked against the
        // PTX), each to 8 readable bytes of which the driver reads the parameter's size
        // (checked to be at most 8); `slots` outlives the call (parameters are copied at
        // launch). No dynamic shared memory, the default stream, no `extra` options.
        check(&format!("cuLaunchKernel({kernel})"), unsafe {
            sys::cuLaunchKernel(
                f,
                grid,
                1,
                1,
                block,
                1,
                1,
                0,
                std::ptr::null_mut(),
                pointers.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })?;
        // SAFETY: the context is current; waiting has no other precondition.
        check(&format!("cuCtxSynchronize (after {kernel})"), unsafe {
            sys::cuCtxSynchronize()
        })
    }

    fn free(&self, addr: u64) -> Result<(), String> {
        let known = self
            .allocs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&addr);
        let Some(bytes) = known else {
            return Err(format!(
                "free of device address {addr:#x}, which is not a live allocation of this driver"
            ));
        };
        {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            if pool.bytes + bytes <= POOL_BYTES {
                pool.bytes += bytes;
                pool.free.entry(bytes).or_default().push(addr);
                return Ok(());
            }
        }
        self.bind()?;
        // SAFETY: the context is current and `addr` was a live allocation of this driver,
        // now removed from the table and not pooled, so it is freed once.
        check("cuMemFree_v2", unsafe { sys::cuMemFree_v2(addr) })
    }
}

/// A kernel parameter's type, as declared in the PTX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Param {
    /// `.u32`, `.s32`, `.b32`.
    Int32,
    /// `.u64`, `.s64`, `.b64`.
    Int64,
    /// `.f32`.
    F32,
    /// `.f64`.
    F64,
}

/// The parameter list of every `.entry` of a PTX text.
fn entry_params(ptx: &str) -> Result<HashMap<String, Vec<Param>>, String> {
    let mut out = HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        let after = &rest[at + ".entry ".len()..];
        let open = after
            .find('(')
            .ok_or_else(|| "a PTX `.entry` without a parameter list".to_string())?;
        let name = after[..open].trim().to_string();
        let close = after[open..]
            .find(')')
            .ok_or_else(|| format!("PTX entry `{name}`: unterminated parameter list"))?;
        let list = &after[open + 1..open + close];
        let mut params = Vec::new();
        for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let words: Vec<&str> = p.split_whitespace().collect();
            if words.first() != Some(&".param") {
                return Err(format!("PTX entry `{name}`: unexpected parameter `{p}`"));
            }
            let ty = words
                .iter()
                .skip(1)
                .find(|w| w.starts_with('.') && !matches!(**w, ".align" | ".ptr"))
                .copied()
                .unwrap_or("");
            params.push(match ty {
                ".u32" | ".s32" | ".b32" => Param::Int32,
                ".u64" | ".s64" | ".b64" => Param::Int64,
                ".f32" => Param::F32,
                ".f64" => Param::F64,
                _ => {
                    return Err(format!(
                        "PTX entry `{name}`: parameter `{p}` has a type the driver cannot pass"
                    ));
                }
            });
        }
        out.insert(name, params);
        rest = &after[open + close..];
    }
    Ok(out)
}

/// Checks launch arguments against a kernel's parameter list.
fn check_args(kernel: &str, params: &[Param], args: &[LaunchArg]) -> Result<(), String> {
    if params.len() != args.len() {
        return Err(format!(
            "kernel `{kernel}` takes {} parameter(s), {} given",
            params.len(),
            args.len()
        ));
    }
    for (i, (p, a)) in params.iter().zip(args).enumerate() {
        let fits = matches!(
            (p, a),
            (Param::Int32, LaunchArg::U32(_))
                | (Param::Int64, LaunchArg::U64(_))
                | (Param::F32, LaunchArg::F32(_))
                | (Param::F64, LaunchArg::F64(_))
        );
        if !fits {
            return Err(format!(
                "kernel `{kernel}`: parameter {i} is {p:?} in the PTX but {a:?} was given"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\n\
        .visible .entry dpl_f_k0_map(\n\t.param .u64 p0,\n\t.param .u32 p1,\n\
        \t.param .f32 p2,\n\t.param .f64 p3,\n\t.param .s64 p4\n)\n.maxntid 256\n{\n\tret;\n}\n\n\
        .visible .entry dpl_f_k1_none()\n{\n\tret;\n}\n";

    #[test]
    fn parameter_lists_are_read_from_the_ptx() {
        let p = entry_params(PTX).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            p["dpl_f_k0_map"],
            [
                Param::Int64,
                Param::Int32,
                Param::F32,
                Param::F64,
                Param::Int64
            ]
        );
        assert!(p["dpl_f_k1_none"].is_empty());
        let e = entry_params(".visible .entry k(\n.param .u8 x\n)\n{}").unwrap_err();
        assert!(e.contains("`k`") && e.contains(".u8"), "{e}");
        let e = entry_params(".visible .entry k(\n.param .u32 x\n").unwrap_err();
        assert!(e.contains("unterminated"), "{e}");
    }

    #[test]
    fn launch_arguments_must_match_the_parameters() {
        let ps = [Param::Int64, Param::Int32, Param::F32, Param::F64];
        let good = [
            LaunchArg::U64(1),
            LaunchArg::U32(2),
            LaunchArg::F32(3.0),
            LaunchArg::F64(4.0),
        ];
        assert!(check_args("k", &ps, &good).is_ok());
        let e = check_args("k", &ps, &good[..3]).unwrap_err();
        assert!(e.contains("takes 4 parameter(s), 3 given"), "{e}");
        let mut bad = good;
        bad[1] = LaunchArg::U64(2);
        let e = check_args("k", &ps, &bad).unwrap_err();
        assert!(e.contains("parameter 1"), "{e}");
        bad = good;
        bad[2] = LaunchArg::U32(3);
        assert!(check_args("k", &ps, &bad).is_err());
    }

    #[test]
    fn library_names_cover_linux_and_windows() {
        let c = library_candidates();
        assert!(
            c.iter().any(|n| n == "libcuda.so.1" || n == "nvcuda.dll"),
            "{c:?}"
        );
    }
}
