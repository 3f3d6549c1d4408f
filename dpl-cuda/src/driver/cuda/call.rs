//! Checked calls: every call the driver makes into the driver library (cudarc's
//! `driver::sys` bindings), each turning its status code into a [`CudaError`] that names
//! the call and the driver's name for the status (`cuMemAlloc_v2(4096 bytes) failed:
//! CUDA_ERROR_OUT_OF_MEMORY`).
//!
//! The CUDA driver's unsafe code is here (and in `probe`, which opens the library). The
//! types below own what they pass to the driver library, so that their methods can be
//! safe:
//!
//! * [`Context`]: a device's primary context, retained until dropped, made current on the
//!   calling thread by every method. It keeps the table of its live allocations: reads,
//!   writes, copies and zeroing must lie inside one of them, frees take only them, and
//!   an allocation can be retired from the table without being freed ([`Spare`], what the
//!   driver's pool keeps) and revived later.
//! * [`Pinned`]: page-locked host memory of a context with the event behind its last
//!   queued copy; its bytes are reachable only after that copy has run.
//! * [`Module`]: a module loaded in a context, launched only through that context and only
//!   while loaded, with the parameter lists of its kernels read from its PTX: a launch's
//!   arguments are checked against them (count and types), since the driver copies each
//!   parameter's size from the pointer it is given.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use cudarc::driver::sys;

use super::error::CudaError;
use super::probe;
use crate::driver::LaunchArg;
use crate::entry::{self, Param};

type Result<T> = std::result::Result<T, CudaError>;

/// Size of the JIT error log buffer given to `cuModuleLoadDataEx`.
const JIT_LOG_BYTES: usize = 16 * 1024;

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

/// `Ok` for success, else an error naming the call (`call` is only built on failure).
fn check(r: sys::CUresult, call: impl FnOnce() -> String) -> Result<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Call {
            call: call(),
            status: error_name(r),
        })
    }
}

/// Probes the library and calls `cuInit` (once per process).
pub(super) fn init() -> Result<()> {
    probe::probe()?;
    static INIT: OnceLock<Result<()>> = OnceLock::new();
    INIT.get_or_init(|| {
        // SAFETY: the probe found the library and cuInit in it; cuInit(0) has no
        // precondition and may be called more than once.
        check(unsafe { sys::cuInit(0) }, || "cuInit".into())
    })
    .clone()
}

/// The number of CUDA devices (probing and initialising first).
pub(super) fn device_count() -> Result<usize> {
    init()?;
    let mut n: c_int = 0;
    // SAFETY: the driver is initialised; `n` is a valid out-pointer.
    check(unsafe { sys::cuDeviceGetCount(&mut n) }, || {
        "cuDeviceGetCount".into()
    })?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// A device of the driver.
pub(super) struct Device(sys::CUdevice);

impl Device {
    /// Device `ordinal` (initialising the driver first).
    pub(super) fn get(ordinal: c_int) -> Result<Device> {
        init()?;
        let mut device: sys::CUdevice = 0;
        // SAFETY: the driver is initialised; `device` is a valid out-pointer (an ordinal
        // without a device is an error status).
        check(unsafe { sys::cuDeviceGet(&mut device, ordinal) }, || {
            "cuDeviceGet".into()
        })?;
        Ok(Device(device))
    }

    /// A non-negative attribute; `what` names it in errors.
    pub(super) fn attribute(&self, a: sys::CUdevice_attribute, what: &'static str) -> Result<u32> {
        let mut v: c_int = 0;
        // SAFETY: the device came from cuDeviceGet; `v` is a valid out-pointer.
        let r = unsafe { sys::cuDeviceGetAttribute(&mut v, a, self.0) };
        check(r, || format!("cuDeviceGetAttribute({what})"))?;
        u32::try_from(v).map_err(|_| CudaError::Attribute { what, value: v })
    }

    /// The device's memory in bytes.
    pub(super) fn total_memory(&self) -> Result<usize> {
        let mut bytes = 0usize;
        // SAFETY: the device came from cuDeviceGet; `bytes` is a valid out-pointer.
        let r = unsafe { sys::cuDeviceTotalMem_v2(&mut bytes, self.0) };
        check(r, || "cuDeviceTotalMem_v2".into())?;
        Ok(bytes)
    }

    /// The device's name.
    pub(super) fn name(&self) -> Result<String> {
        let mut buf = [0u8; 256];
        // SAFETY: `buf` is writable for its whole length, which is what we pass; the
        // driver writes a NUL-terminated name (truncated to fit).
        let r =
            unsafe { sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int, self.0) };
        check(r, || "cuDeviceGetName".into())?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
    }
}

/// Unique identities of contexts (two drivers of one device retain the same primary
/// context but are distinct here), so a module is only launched through its own.
static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A device's primary context, retained until dropped (see the module documentation).
pub(super) struct Context {
    id: u64,
    raw: sys::CUcontext,
    device: sys::CUdevice,
    /// Live allocations: start address -> size in bytes.
    live: Mutex<BTreeMap<u64, usize>>,
}

// SAFETY: the CUDA driver API is thread-safe. The raw context handle is only passed to
// the driver (each method makes it current on the calling thread first), and the table of
// allocations is behind a mutex.
unsafe impl Send for Context {}
// SAFETY: as for `Send`: `&self` methods only call the thread-safe driver API and lock the
// table.
unsafe impl Sync for Context {}

/// An allocation of a [`Context`] retired from its live allocations but not freed: it can
/// be revived ([`Context::revive`]) or freed ([`Context::release`]). Only the context makes
/// them, so one is always an allocation of it.
pub(super) struct Spare {
    addr: u64,
    bytes: usize,
}

impl Spare {
    /// Its size in bytes.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Context {
    /// Retains the primary context of `device`.
    pub(super) fn retain(device: &Device) -> Result<Context> {
        let mut raw: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the device came from cuDeviceGet; `raw` is a valid out-pointer. The
        // reference taken here is released in `Drop`.
        let r = unsafe { sys::cuDevicePrimaryCtxRetain(&mut raw, device.0) };
        check(r, || "cuDevicePrimaryCtxRetain".into())?;
        Ok(Context {
            id: NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed),
            raw,
            device: device.0,
            live: Mutex::new(BTreeMap::new()),
        })
    }

    /// Makes the context current on the calling thread.
    pub(super) fn bind(&self) -> Result<()> {
        // SAFETY: `raw` is the primary context retained in `retain` and released only in
        // `Drop`, so it is alive.
        check(unsafe { sys::cuCtxSetCurrent(self.raw) }, || {
            "cuCtxSetCurrent".into()
        })
    }

    fn live(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, usize>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Checks that `[addr, addr + len)` lies inside one live allocation.
    pub(super) fn check_range(&self, what: &'static str, addr: u64, len: usize) -> Result<()> {
        let inside = self
            .live()
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
            Err(CudaError::OutOfRange { what, addr, len })
        }
    }

    /// Bytes in live allocations.
    pub(super) fn live_bytes(&self) -> usize {
        self.live().values().sum()
    }

    /// A fresh allocation of `bytes` bytes (not zeroed), live from now on.
    pub(super) fn alloc(&self, bytes: usize) -> Result<u64> {
        self.bind()?;
        let mut addr: sys::CUdeviceptr = 0;
        // SAFETY: the context is current; `addr` is a valid out-pointer.
        let r = unsafe { sys::cuMemAlloc_v2(&mut addr, bytes) };
        check(r, || format!("cuMemAlloc_v2({bytes} bytes)"))?;
        self.live().insert(addr, bytes);
        Ok(addr)
    }

    /// Sets `bytes` bytes at `addr` to zero.
    pub(super) fn zero(&self, addr: u64, bytes: usize) -> Result<()> {
        self.check_range("zeroing", addr, bytes)?;
        self.bind()?;
        // SAFETY: the context is current and `[addr, addr + bytes)` lies inside a live
        // allocation of it (checked above).
        check(unsafe { sys::cuMemsetD8_v2(addr, 0, bytes) }, || {
            "cuMemsetD8_v2".into()
        })
    }

    /// Takes a live allocation out of the table without freeing it.
    pub(super) fn retire(&self, addr: u64) -> Result<Spare> {
        match self.live().remove(&addr) {
            Some(bytes) => Ok(Spare { addr, bytes }),
            None => Err(CudaError::NotLive(addr)),
        }
    }

    /// Makes a retired allocation live again (its contents are what they were); its
    /// address.
    pub(super) fn revive(&self, spare: Spare) -> u64 {
        self.live().insert(spare.addr, spare.bytes);
        spare.addr
    }

    /// Frees a retired allocation.
    pub(super) fn release(&self, spare: Spare) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current; a spare is an allocation of this context that is
        // no longer live (not in the table), and it is consumed here, so it is freed once.
        check(unsafe { sys::cuMemFree_v2(spare.addr) }, || {
            "cuMemFree_v2".into()
        })
    }

    /// Frees retired allocations, ignoring failures (for cleanup); nothing when the
    /// context cannot be made current.
    pub(super) fn release_all(&self, spares: impl IntoIterator<Item = Spare>) {
        if self.bind().is_err() {
            return;
        }
        for spare in spares {
            // SAFETY: as in `release`.
            let _ = unsafe { sys::cuMemFree_v2(spare.addr) };
        }
    }

    /// Frees a live allocation.
    pub(super) fn free(&self, addr: u64) -> Result<()> {
        let spare = self.retire(addr)?;
        self.release(spare)
    }

    /// Copies host bytes to `dst`.
    pub(super) fn write(&self, dst: u64, data: &[u8]) -> Result<()> {
        self.check_range("a write", dst, data.len())?;
        self.bind()?;
        // SAFETY: the context is current; `[dst, dst + len)` lies inside a live
        // allocation (checked above) and `data` is readable for `len` bytes.
        check(
            unsafe { sys::cuMemcpyHtoD_v2(dst, data.as_ptr().cast(), data.len()) },
            || "cuMemcpyHtoD_v2".into(),
        )
    }

    /// Copies device bytes at `src` to the host.
    pub(super) fn read(&self, src: u64, out: &mut [u8]) -> Result<()> {
        self.check_range("a read", src, out.len())?;
        self.bind()?;
        // SAFETY: the context is current; `[src, src + len)` lies inside a live
        // allocation (checked above) and `out` is writable for `len` bytes.
        check(
            unsafe { sys::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), src, out.len()) },
            || "cuMemcpyDtoH_v2".into(),
        )
    }

    /// Copies `bytes` bytes from `src` to `dst` on the device.
    pub(super) fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<()> {
        self.check_range("a copy's source", src, bytes)?;
        self.check_range("a copy's destination", dst, bytes)?;
        self.bind()?;
        // SAFETY: the context is current and both ranges lie inside live allocations
        // (checked above).
        check(unsafe { sys::cuMemcpyDtoD_v2(dst, src, bytes) }, || {
            "cuMemcpyDtoD_v2".into()
        })
    }

    /// Page-locked host memory of `bytes` bytes (`cuMemAllocHost`) with its event, for
    /// copies queued on the default stream without waiting ([`Context::write_pinned`],
    /// [`Context::read_pinned`]).
    pub(super) fn alloc_pinned(&self, bytes: usize) -> Result<Pinned> {
        self.bind()?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: the context is current; `ptr` is a valid out-pointer.
        let r = unsafe { sys::cuMemAllocHost_v2(&mut ptr, bytes) };
        check(r, || format!("cuMemAllocHost_v2({bytes} bytes)"))?;
        let mut event: sys::CUevent = std::ptr::null_mut();
        // SAFETY: the context is current; `event` is a valid out-pointer; timing is not
        // needed (events without it are cheaper to record and wait for).
        let r = unsafe {
            sys::cuEventCreate(
                &mut event,
                sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as c_uint,
            )
        };
        if let Err(e) = check(r, || "cuEventCreate".into()) {
            // SAFETY: `ptr` was allocated just above by cuMemAllocHost and is unused.
            let _ = unsafe { sys::cuMemFreeHost(ptr) };
            return Err(e);
        }
        // SAFETY: `ptr` is `bytes` bytes of host memory just allocated, used by nothing
        // else yet; zeroed once so that its bytes are always initialised.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        Ok(Pinned {
            ptr: ptr.cast(),
            bytes,
            event,
            busy: false,
        })
    }

    /// Frees page-locked memory, after waiting for the copies that use it (ignoring
    /// failures: for cleanup).
    pub(super) fn free_pinned(&self, mut p: Pinned) {
        let _ = self.wait_pinned(&mut p);
        if self.bind().is_err() {
            return;
        }
        // SAFETY: the context is current; the event and the memory were made by
        // `alloc_pinned` and are destroyed once (`p` is consumed); no copy uses the memory
        // any more (waited for above; a failed wait means the context is broken, and its
        // copies will never run).
        unsafe {
            let _ = sys::cuEventDestroy_v2(p.event);
            let _ = sys::cuMemFreeHost(p.ptr.cast());
        }
    }

    /// Waits until the copies queued with `p` have run (asking first, so that the host
    /// does not block on one that has).
    fn wait_pinned(&self, p: &mut Pinned) -> Result<()> {
        if p.busy {
            self.bind()?;
            // SAFETY: the context is current and the event was recorded on it.
            let r = unsafe { sys::cuEventQuery(p.event) };
            if r == sys::CUresult::CUDA_ERROR_NOT_READY {
                // SAFETY: as above.
                check(unsafe { sys::cuEventSynchronize(p.event) }, || {
                    "cuEventSynchronize (after a copy through page-locked memory)".into()
                })?;
            } else {
                check(r, || "cuEventQuery".into())?;
            }
            p.busy = false;
        }
        Ok(())
    }

    /// The host side of `p`, once the copies queued with it have run (waiting for them).
    pub(super) fn pinned_bytes<'p>(&self, p: &'p mut Pinned) -> Result<&'p mut [u8]> {
        self.wait_pinned(p)?;
        // SAFETY: `ptr` is `bytes` bytes of page-locked host memory owned by `p` and
        // borrowed mutably with it, initialised (zeroed when allocated, then written only
        // by copies); no copy is queued on it (waited for above), so nothing else reads or
        // writes it while the slice lives.
        Ok(unsafe { std::slice::from_raw_parts_mut(p.ptr, p.bytes) })
    }

    /// Queues the copy of the first `len` bytes of `p` to `dst` on the default stream
    /// (behind every launch and copy before it) and returns without waiting; `p` is busy
    /// until it has run ([`Context::pinned_bytes`] waits).
    pub(super) fn write_pinned(&self, dst: u64, p: &mut Pinned, len: usize) -> Result<()> {
        self.check_range("a write", dst, len)?;
        p.holds("a write", len)?;
        self.wait_pinned(p)?;
        self.bind()?;
        // SAFETY: the context is current; `[dst, dst + len)` lies inside a live allocation
        // (checked above); `p.ptr` is page-locked memory of at least `len` bytes that stays
        // allocated and untouched by the host until the event recorded next has been
        // waited for (`p.busy`: `pinned_bytes` and `free_pinned` wait first).
        let r = unsafe { sys::cuMemcpyHtoDAsync_v2(dst, p.ptr.cast(), len, std::ptr::null_mut()) };
        check(r, || "cuMemcpyHtoDAsync_v2".into())?;
        self.record(p)
    }

    /// Queues the copy of `len` bytes at `src` into `p` at byte `at` on the default stream
    /// (behind every launch and copy before it, those with `p` included, so there is
    /// nothing to wait for first); the bytes are there once [`Context::pinned_bytes`]
    /// returns.
    pub(super) fn read_pinned(
        &self,
        src: u64,
        p: &mut Pinned,
        at: usize,
        len: usize,
    ) -> Result<()> {
        self.check_range("a read", src, len)?;
        p.holds("a read", at.saturating_add(len))?;
        self.bind()?;
        // SAFETY: the context is current; `[src, src + len)` lies inside a live allocation
        // (checked above); `p.ptr + at` starts `len` bytes of page-locked memory (`at + len`
        // fits, checked above), written by the copy after the copies queued with it before
        // (one stream runs in order) and left alone by the host until the event recorded
        // next has been waited for (`p.busy`).
        let r = unsafe {
            sys::cuMemcpyDtoHAsync_v2(p.ptr.add(at).cast(), src, len, std::ptr::null_mut())
        };
        check(r, || "cuMemcpyDtoHAsync_v2".into())?;
        self.record(p)
    }

    /// Records `p`'s event on the default stream, behind the copy just queued.
    fn record(&self, p: &mut Pinned) -> Result<()> {
        // SAFETY: the context is current (the caller bound it) and the event was made on
        // it.
        let r = unsafe { sys::cuEventRecord(p.event, std::ptr::null_mut()) };
        check(r, || "cuEventRecord".into())?;
        p.busy = true;
        Ok(())
    }

    /// Loads `image` (a NUL-terminated PTX text or a cubin), collecting the JIT error log
    /// on failure; `what` names the image in errors.
    fn load_image(&self, image: &[u8], what: &str) -> Result<sys::CUmodule> {
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
        check(r, || format!("cuModuleLoadDataEx ({what})")).map_err(|e| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            if text.trim().is_empty() {
                e
            } else {
                CudaError::Jit {
                    error: Box::new(e),
                    log: text.trim_end().to_string(),
                }
            }
        })?;
        Ok(module)
    }

    /// Loads a PTX text (the driver compiles it for the device).
    pub(super) fn load_ptx(&self, source: &Source<'_>) -> Result<Module> {
        let text = CString::new(source.ptx).map_err(|_| CudaError::NulInPtx)?;
        let handle = self.load_image(text.as_bytes_with_nul(), "PTX")?;
        Ok(self.module(handle, source))
    }

    /// Loads a cubin assembled for compute capability `arch` from the PTX of `source`.
    ///
    /// # Safety
    ///
    /// `cubin` must be `source`'s PTX assembled (its kernels take the parameters the PTX
    /// declares): the driver reads as many parameter pointers at a launch as the cubin's
    /// kernel has parameters, and launches are checked against the PTX's lists only.
    pub(super) unsafe fn load_cubin(
        &self,
        source: &Source<'_>,
        cubin: &[u8],
        arch: u32,
    ) -> Result<Module> {
        // Copied into 8-byte aligned memory: the driver reads the ELF headers in place.
        let mut aligned = vec![0u64; cubin.len().div_ceil(8)];
        let bytes: &mut [u8] = bytemuck_bytes(&mut aligned);
        bytes[..cubin.len()].copy_from_slice(cubin);
        let handle = self.load_image(&bytes[..cubin.len()], &format!("cubin for sm_{arch}"))?;
        Ok(self.module(handle, source))
    }

    /// A module of this context from its loaded handle.
    fn module(&self, handle: sys::CUmodule, source: &Source<'_>) -> Module {
        Module {
            context: self.id,
            handle,
            loaded: AtomicBool::new(true),
            params: source.params.clone(),
            functions: Mutex::new(HashMap::new()),
        }
    }

    /// Unloads a module of this context (once; later launches of it are errors).
    pub(super) fn unload(&self, m: &Module) {
        if m.context != self.id || !m.loaded.swap(false, Ordering::AcqRel) || self.bind().is_err() {
            return;
        }
        // SAFETY: the context is current and the module was loaded in it and not unloaded
        // yet (the flag was set, and it is cleared only here).
        let _ = unsafe { sys::cuModuleUnload(m.handle) };
    }

    /// Checks that `m` is a loaded module of this context.
    fn owns(&self, m: &Module, kernel: &str) -> Result<()> {
        if m.context != self.id {
            return Err(CudaError::ForeignModule(kernel.into()));
        }
        if !m.loaded.load(Ordering::Acquire) {
            return Err(CudaError::Unloaded(kernel.into()));
        }
        Ok(())
    }

    /// The function handle of `kernel` in `m`, a loaded module of this context, which
    /// must be current (looked up once).
    fn function(&self, m: &Module, kernel: &str) -> Result<sys::CUfunction> {
        let mut fns = m.functions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(&f) = fns.get(kernel) {
            return Ok(f);
        }
        let name = CString::new(kernel).map_err(|_| CudaError::NulInKernel(kernel.into()))?;
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: the context is current (the caller bound it); `m.handle` is a loaded
        // module of it (checked by the caller); `name` is NUL-terminated; `f` is a valid
        // out-pointer.
        let r = unsafe { sys::cuModuleGetFunction(&mut f, m.handle, name.as_ptr()) };
        check(r, || format!("cuModuleGetFunction({kernel})"))?;
        fns.insert(kernel.to_string(), f);
        Ok(f)
    }

    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor` for `kernel` of `m` at `block`
    /// threads (its registers and shared memory as the driver compiled them), no dynamic
    /// shared memory.
    pub(super) fn max_active_blocks(&self, m: &Module, kernel: &str, block: u32) -> Result<u32> {
        self.owns(m, kernel)?;
        let size = c_int::try_from(block).map_err(|_| CudaError::Block(block))?;
        self.bind()?;
        let f = self.function(m, kernel)?;
        let mut n: c_int = 0;
        // SAFETY: the context is current; `f` is a kernel of a loaded module of it; `n` is
        // a valid out-pointer; no dynamic shared memory.
        let r = unsafe { sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&mut n, f, size, 0) };
        check(r, || {
            format!("cuOccupancyMaxActiveBlocksPerMultiprocessor({kernel})")
        })?;
        Ok(u32::try_from(n).unwrap_or(0))
    }

    /// Queues `kernel` of `m` over `grid` blocks of `block` threads (one dimension) on the
    /// default stream, after checking `args` against its parameter list.
    pub(super) fn launch(
        &self,
        m: &Module,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<()> {
        self.owns(m, kernel)?;
        let params = m
            .params
            .get(kernel)
            .ok_or_else(|| CudaError::NoKernel(kernel.into()))?;
        check_args(kernel, params, args)?;
        self.bind()?;
        let f = self.function(m, kernel)?;
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
        // SAFETY: the context is current; `f` is a kernel of a loaded module of it;
        // `pointers` holds one pointer per kernel parameter (count checked against the
        // PTX, whose lists the module's kernels have: `load_cubin`), each to 8 readable
        // bytes of which the driver reads the parameter's size (checked to be at most 8);
        // `slots` outlives the call (parameters are copied at launch). No dynamic shared
        // memory, the default stream, no `extra` options.
        check(
            unsafe {
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
            },
            || format!("cuLaunchKernel({kernel})"),
        )
    }

    /// Waits for everything queued on the context; `after` names what was waited for in
    /// errors.
    pub(super) fn synchronize(&self, after: &str) -> Result<()> {
        self.bind()?;
        // SAFETY: the context is current; waiting has no other precondition.
        check(unsafe { sys::cuCtxSynchronize() }, || {
            format!("cuCtxSynchronize (after {after})")
        })
    }
}

impl Drop for Context {
    /// Frees the allocations still live and releases the context (nothing when it cannot
    /// be made current).
    fn drop(&mut self) {
        if self.bind().is_err() {
            return;
        }
        let live = std::mem::take(self.live.get_mut().unwrap_or_else(PoisonError::into_inner));
        for addr in live.into_keys() {
            // SAFETY: the context is current and `addr` is a live allocation of it.
            let _ = unsafe { sys::cuMemFree_v2(addr) };
        }
        // SAFETY: releases the reference retained in `retain`, once.
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(self.device) };
    }
}

/// Page-locked host memory of a [`Context`] (`cuMemAllocHost`) and the event recorded on
/// the default stream behind the last copy queued with it: the staging memory of the
/// driver's transfers. Only the context makes, uses and frees one
/// ([`Context::alloc_pinned`], [`Context::free_pinned`]); its bytes are reached through
/// [`Context::pinned_bytes`], which waits for the copies first.
pub(super) struct Pinned {
    ptr: *mut u8,
    bytes: usize,
    event: sys::CUevent,
    /// A copy was queued with it since the last wait.
    busy: bool,
}

// SAFETY: the memory and the event are plain driver objects usable from any thread once
// their context is current (which every `Context` method ensures); a `Pinned` is reached
// only through `&mut` (one thread at a time).
unsafe impl Send for Pinned {}

impl Pinned {
    /// `Ok` when `len` bytes fit in it, else an error naming `what`.
    fn holds(&self, what: &'static str, len: usize) -> Result<()> {
        if len <= self.bytes {
            Ok(())
        } else {
            Err(CudaError::Staging {
                what,
                len,
                bytes: self.bytes,
            })
        }
    }
}

/// A PTX text with the parameter lists of its kernels, what a [`Module`] is loaded from.
pub(super) struct Source<'a> {
    ptx: &'a str,
    params: HashMap<String, Vec<Param>>,
}

impl Source<'_> {
    /// Reads the kernels' parameter lists of `ptx`.
    pub(super) fn parse(ptx: &str) -> Result<Source<'_>> {
        Ok(Source {
            ptx,
            params: entry::params(ptx)?,
        })
    }
}

/// A module loaded in a [`Context`]: its handle, the parameter lists of its kernels (read
/// from its PTX) and their function handles, looked up once.
pub(super) struct Module {
    context: u64,
    handle: sys::CUmodule,
    loaded: AtomicBool,
    params: HashMap<String, Vec<Param>>,
    functions: Mutex<HashMap<String, sys::CUfunction>>,
}

// SAFETY: module and function handles are plain identifiers of driver objects, usable
// from any thread once their context is current (which `Context` ensures before every
// use); the function table is behind a mutex.
unsafe impl Send for Module {}
// SAFETY: as for `Send`.
unsafe impl Sync for Module {}

impl Module {
    /// The names of the module's kernels (from its PTX), sorted.
    pub(super) fn kernels(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.params.keys().map(String::as_str).collect();
        v.sort_unstable();
        v
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

/// Checks launch arguments against a kernel's parameter list.
fn check_args(kernel: &str, params: &[Param], args: &[LaunchArg]) -> Result<()> {
    if params.len() != args.len() {
        return Err(CudaError::ArgCount {
            kernel: kernel.into(),
            params: params.len(),
            args: args.len(),
        });
    }
    for (index, (&param, &arg)) in params.iter().zip(args).enumerate() {
        let fits = matches!(
            (param, arg),
            (Param::Int32, LaunchArg::U32(_))
                | (Param::Int64, LaunchArg::U64(_))
                | (Param::F32, LaunchArg::F32(_))
                | (Param::F64, LaunchArg::F64(_))
        );
        if !fits {
            return Err(CudaError::ArgType {
                kernel: kernel.into(),
                index,
                param,
                arg,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let e = check_args("k", &ps, &good[..3]).unwrap_err().to_string();
        assert!(e.contains("takes 4 parameter(s), 3 given"), "{e}");
        let mut bad = good;
        bad[1] = LaunchArg::U64(2);
        let e = check_args("k", &ps, &bad).unwrap_err().to_string();
        assert!(e.contains("parameter 1"), "{e}");
        assert_eq!(
            e,
            "kernel `k`: parameter 1 is Int32 in the PTX but U64(2) was given"
        );
        bad = good;
        bad[2] = LaunchArg::U32(3);
        assert!(check_args("k", &ps, &bad).is_err());
    }
}
