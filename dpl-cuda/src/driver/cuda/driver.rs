//! The driver proper: [`CudaDriver`], a [`Driver`] on one device, with its module cache
//! and its pool of freed allocations, on the checked calls of `call`.

use std::collections::HashMap;
use std::ffi::c_int;
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::sys::CUdevice_attribute as Attr;

use super::call::{self, Context, Device, Module, Source, Spare};
use super::error::CudaError;
use super::staging::Staging;
use crate::GpuProgram;
use crate::driver::{Driver, LaunchArg};

/// A [`Driver`] on CUDA device `n` (see the module documentation).
pub struct CudaDriver {
    ordinal: usize,
    cc: (u32, u32),
    name: String,
    /// Multiprocessors of the device.
    sms: u32,
    ctx: Context,
    modules: Mutex<Modules>,
    /// Freed allocations kept for reuse ([`Pool`]).
    pool: Mutex<Pool>,
    /// The most bytes the pool keeps ([`pool_limit`]).
    pool_bytes: usize,
    /// The page-locked buffers transfers go through ([`Staging`]).
    staging: Staging,
}

/// The loaded modules, by PTX text. Finding a text in a hash map hashes all of it, and a
/// scan's or a sort's PTX is about 100 KB: tens of microseconds on every call, more than a
/// resident call's kernels on a million elements. So the module found for a text at the
/// same address and of the same length is tried first, by comparing the texts (a
/// program's text stays where it is between calls; the comparison, a `memcmp`, is ten
/// times faster than the hash).
#[derive(Default)]
struct Modules {
    by_text: HashMap<Arc<str>, Arc<CudaModule>>,
    /// `(address, length)` of a text looked up -> the text and its module.
    by_place: HashMap<(usize, usize), (Arc<str>, Arc<CudaModule>)>,
}

impl Modules {
    /// The module of `ptx`, if loaded.
    fn get(&mut self, ptx: &str) -> Option<Arc<CudaModule>> {
        let place = (ptx.as_ptr().addr(), ptx.len());
        if let Some((text, m)) = self.by_place.get(&place)
            && **text == *ptx
        {
            return Some(m.clone());
        }
        let (text, m) = self.by_text.get_key_value(ptx)?;
        let found = (text.clone(), m.clone());
        self.remember(place, found.clone());
        Some(found.1)
    }

    /// Adds the module of `ptx`.
    fn insert(&mut self, ptx: &str, m: Arc<CudaModule>) {
        let text: Arc<str> = ptx.into();
        self.by_text.insert(text.clone(), m.clone());
        self.remember((ptx.as_ptr().addr(), ptx.len()), (text, m));
    }

    fn remember(&mut self, place: (usize, usize), entry: (Arc<str>, Arc<CudaModule>)) {
        // Texts built and dropped call after call (a test compiling programs) would grow
        // it without end.
        if self.by_place.len() >= 4096 {
            self.by_place.clear();
        }
        self.by_place.insert(place, entry);
    }
}

/// Allocations freed by [`Driver::free`] and kept for the next [`Driver::alloc`] of the
/// same size, up to [`pool_limit`] bytes in all. `cuMemAlloc` and `cuMemFree` (which also
/// waits for the device) cost more than the kernels of a call on millions of elements: on
/// an H100, a resident `saxpy` of 2^20 to 2^24 elements took 0.3-0.45 ms per call with
/// them, most of it fixed cost. A pooled allocation is zeroed again when reused by
/// [`Driver::alloc_zeroed`].
#[derive(Default)]
struct Pool {
    /// Size in bytes -> allocations.
    free: HashMap<usize, Vec<Spare>>,
    /// Bytes held.
    bytes: usize,
    /// Size in bytes -> allocations given back zeroed ([`Driver::free_kept_zero`]: counts
    /// the kernels set back to zero, clean error records), handed out again by
    /// [`Driver::alloc_kept_zero`] without zeroing; at most [`KEPT_ZERO`] of them.
    zero: HashMap<usize, Vec<Spare>>,
    /// How many `zero` holds.
    zero_count: usize,
}

/// The most allocations a [`CudaDriver`] keeps zeroed for [`Driver::alloc_kept_zero`]
/// (each a few bytes: a count of blocks done, an error record).
const KEPT_ZERO: usize = 256;

/// The most bytes a [`CudaDriver`] keeps in its pool of freed allocations: an eighth of
/// the device's memory, at least 1 GiB. (With 1 GiB on an H200, the 1 GiB result of a
/// triad of 2^28 `f32` did not fit beside the other buffers kept, and each call allocated
/// and freed it: 4.2 times CUB's time.) When an allocation fails for want of memory, the
/// pool is given back and the allocation tried again.
fn pool_limit(device_memory: usize) -> usize {
    (device_memory / 8).max(1 << 30)
}

/// A loaded module of a [`CudaDriver`]: the kernels of one program, compiled from its PTX
/// or loaded from one of its cubins.
pub struct CudaModule {
    module: Module,
    cubin: Option<u32>,
}

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
        self.module.kernels()
    }
}

/// The number of CUDA devices, or why there is none to ask (no driver library, a driver
/// too old, `cuInit` failing). Never panics.
pub fn device_count() -> Result<usize, String> {
    Ok(call::device_count()?)
}

impl CudaDriver {
    /// Opens CUDA device `ordinal`: probes the driver library, initialises CUDA, checks
    /// that the device exists and retains its primary context. Fails with a message (no
    /// driver library, a driver too old, no such device, a failed call) and never panics.
    pub fn new(ordinal: usize) -> Result<CudaDriver, String> {
        Ok(CudaDriver::open(ordinal)?)
    }

    fn open(ordinal: usize) -> Result<CudaDriver, CudaError> {
        call::init()?;
        let count = call::device_count()?;
        if ordinal >= count {
            return Err(CudaError::NoSuchDevice { ordinal, count });
        }
        let ord = c_int::try_from(ordinal).map_err(|_| CudaError::Ordinal(ordinal))?;
        let device = Device::get(ord)?;
        let major = device.attribute(
            Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "compute capability major",
        )?;
        let minor = device.attribute(
            Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "compute capability minor",
        )?;
        let sms = device.attribute(
            Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "multiprocessor count",
        )?;
        if major < 7 {
            return Err(CudaError::OldDevice {
                ordinal,
                major,
                minor,
            });
        }
        let name = device.name()?;
        let pool_bytes = pool_limit(device.total_memory()?);
        let ctx = Context::retain(&device)?;
        Ok(CudaDriver {
            ordinal,
            cc: (major, minor),
            name,
            sms: sms.max(1),
            ctx,
            modules: Mutex::new(Modules::default()),
            pool: Mutex::new(Pool::default()),
            pool_bytes,
            staging: Staging::default(),
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
        self.ctx.live_bytes()
    }

    /// Waits until everything queued on the device so far has run ([`Driver::launch`]
    /// returns before its kernel has), reporting a fault of any of it.
    pub fn synchronize(&self) -> Result<(), String> {
        Ok(self.ctx.synchronize("the kernels queued before it")?)
    }

    /// Whether host transfers go through the driver's page-locked staging buffers (on
    /// unless switched off, or when the system refused page-locked memory): copies to the
    /// device queued behind the kernels without waiting for them, large transfers in
    /// chunks with the host's side copied by the rayon pool. Switched off
    /// ([`CudaDriver::set_staging`]), transfers are the CUDA driver's synchronous copies
    /// from pageable memory (for comparing the two; `examples/gpu_bench.rs` does).
    pub fn staging(&self) -> bool {
        self.staging.active()
    }

    /// Switches staging on or off (see [`CudaDriver::staging`]); a transfer under way
    /// finishes as it started.
    pub fn set_staging(&self, on: bool) {
        self.staging.set_enabled(on);
    }

    /// Frees the allocations kept for reuse: [`Driver::free`] keeps up to an eighth of the device's memory (at least 1 GiB) of freed
    /// allocations for the next ones of the same sizes (`cuMemAlloc`/`cuMemFree` cost more
    /// than a call's kernels on millions of elements); this gives that memory back to
    /// the device. Allocating also does it when the device is out of memory.
    pub fn release_pool(&self) {
        let (free, zero) = {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            pool.bytes = 0;
            pool.zero_count = 0;
            (
                std::mem::take(&mut pool.free),
                std::mem::take(&mut pool.zero),
            )
        };
        if !free.is_empty() || !zero.is_empty() {
            self.ctx
                .release_all(free.into_values().chain(zero.into_values()).flatten());
        }
    }

    /// A pooled allocation of `bytes` bytes, if one is kept.
    fn pooled(&self, bytes: usize) -> Option<Spare> {
        let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
        let spare = pool.free.get_mut(&bytes).and_then(Vec::pop);
        if spare.is_some() {
            pool.bytes -= bytes;
        }
        spare
    }

    /// Loads (or finds in the cache) the module of `ptx`, preferring a cubin of `cubins`
    /// that suits the device.
    fn load_with(
        &self,
        ptx: &str,
        cubins: &[(u32, Vec<u8>)],
    ) -> Result<Arc<CudaModule>, CudaError> {
        let mut cache = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = cache.get(ptx) {
            return Ok(m.clone());
        }
        let source = Source::parse(ptx)?;
        let cc = 10 * self.cc.0 + self.cc.1;
        let mut cubin_error = None;
        let mut loaded = None;
        if let Some((arch, cubin)) = crate::cubin::select_entry(cubins, cc) {
            if crate::cubin::is_elf(cubin) {
                // SAFETY: a program's cubins are its PTX assembled ahead of time
                // (`GpuProgram::cubins`, written by `cubin::embed`), so their kernels
                // take the parameters the PTX declares.
                match unsafe { self.ctx.load_cubin(&source, cubin, arch) } {
                    Ok(m) => loaded = Some((m, Some(arch))),
                    Err(e) => cubin_error = Some(e),
                }
            } else {
                cubin_error = Some(CudaError::NotElf(arch));
            }
        }
        let (module, cubin) = match loaded {
            Some(l) => l,
            None => match self.ctx.load_ptx(&source) {
                Ok(m) => (m, None),
                Err(e) => {
                    return Err(match cubin_error {
                        Some(c) => CudaError::CubinThenPtx {
                            cubin: Box::new(c),
                            ptx: Box::new(e),
                        },
                        None => e,
                    });
                }
            },
        };
        let m = Arc::new(CudaModule { module, cubin });
        cache.insert(ptx, m.clone());
        Ok(m)
    }
}

impl Drop for CudaDriver {
    /// Frees the staging buffers (after their copies) and the pooled allocations and
    /// unloads the modules (a module kept by a caller can no longer be launched); the
    /// context then frees what is still allocated and is released.
    fn drop(&mut self) {
        self.staging.release(&self.ctx);
        self.release_pool();
        let modules = std::mem::take(
            self.modules
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner),
        );
        drop(modules.by_place);
        for m in modules.by_text.into_values() {
            self.ctx.unload(&m.module);
        }
    }
}

impl Driver for CudaDriver {
    type Module = Arc<CudaModule>;

    fn load(&self, ptx: &str) -> Result<Arc<CudaModule>, String> {
        Ok(self.load_with(ptx, &[])?)
    }

    fn load_program(&self, program: &GpuProgram) -> Result<Arc<CudaModule>, String> {
        Ok(self.load_with(&program.ptx, &program.cubins)?)
    }

    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
        let addr = self.alloc(bytes)?;
        if let Err(e) = self.ctx.zero(addr, bytes.max(1)) {
            let _ = self.ctx.free(addr);
            return Err(e.into());
        }
        Ok(addr)
    }

    /// From the pool when it holds an allocation of this size, else a fresh one (the pool
    /// given back first when the device is out of memory); not zeroed.
    fn alloc(&self, bytes: usize) -> Result<u64, String> {
        let bytes = bytes.max(1);
        self.ctx.bind()?;
        Ok(match self.pooled(bytes) {
            Some(spare) => self.ctx.revive(spare),
            None => match self.ctx.alloc(bytes) {
                Ok(addr) => addr,
                // The pool's memory may be what is missing: give it back and retry.
                Err(_) => {
                    self.release_pool();
                    self.ctx.alloc(bytes)?
                }
            },
        })
    }

    /// From the allocations given back zeroed when one of this size is kept (no zeroing:
    /// what a resident sum's count of blocks done costs was a memset per call), else a
    /// zeroed one.
    fn alloc_kept_zero(&self, bytes: usize) -> Result<u64, String> {
        let bytes = bytes.max(1);
        let kept = {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            let spare = pool.zero.get_mut(&bytes).and_then(Vec::pop);
            if spare.is_some() {
                pool.zero_count -= 1;
            }
            spare
        };
        match kept {
            Some(spare) => Ok(self.ctx.revive(spare)),
            None => self.alloc_zeroed(bytes),
        }
    }

    fn free_kept_zero(&self, addr: u64) -> Result<(), String> {
        let spare = self.ctx.retire(addr)?;
        {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            if pool.zero_count < KEPT_ZERO {
                pool.zero_count += 1;
                pool.zero.entry(spare.bytes()).or_default().push(spare);
                return Ok(());
            }
        }
        Ok(self.ctx.release(spare)?)
    }

    fn read_parts(&self, parts: &[(u64, usize)], out: &mut [u8]) -> Result<(), String> {
        if self.staging.read_together(&self.ctx, parts, out)? {
            return Ok(());
        }
        crate::driver::read_one_by_one(self, parts, out)
    }

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        Ok(self.staging.write(&self.ctx, dst, data)?)
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String> {
        if out.is_empty() {
            return Ok(());
        }
        Ok(self.staging.read(&self.ctx, src, out)?)
    }

    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String> {
        if bytes == 0 {
            return Ok(());
        }
        Ok(self.ctx.copy(src, dst, bytes)?)
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
        let per_sm = self
            .ctx
            .max_active_blocks(&module.module, kernel, block)?
            .max(1);
        Ok(per_sm.saturating_mul(self.sms))
    }

    /// Queues the kernel on the context's default stream without waiting for it: the
    /// copies and launches after it queue behind it, and a copy to the host waits for it
    /// (a fault inside it is reported there, and by every later call: CUDA's faults are
    /// sticky).
    fn launch(
        &self,
        module: &Arc<CudaModule>,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String> {
        Ok(self.ctx.launch(&module.module, kernel, grid, block, args)?)
    }

    fn free(&self, addr: u64) -> Result<(), String> {
        let spare = self.ctx.retire(addr)?;
        {
            let mut pool = self.pool.lock().unwrap_or_else(PoisonError::into_inner);
            if pool.bytes + spare.bytes() <= self.pool_bytes {
                pool.bytes += spare.bytes();
                pool.free.entry(spare.bytes()).or_default().push(spare);
                return Ok(());
            }
        }
        Ok(self.ctx.release(spare)?)
    }
}
