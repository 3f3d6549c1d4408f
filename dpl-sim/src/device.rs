//! The host-side API: devices, buffers, modules, arguments and launches.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use crate::decode::{self, WINDOW_SIZE};
use crate::error::{Error, Result};
use crate::exec::{Launch, Report, Worker};
use crate::ir::{Kernel, Ty};
use crate::memory::Memory;
use crate::parse::{self, Space};

/// The default bound on warp instructions per launch: 2^31, a few minutes of simulation
/// per host core, far above what test-sized launches execute.
pub const DEFAULT_INSTRUCTION_LIMIT: u64 = 1 << 31;
/// The default bound on device memory (bytes).
pub const DEFAULT_MEMORY_LIMIT: u64 = 4 << 30;

static NEXT_DEVICE: AtomicU64 = AtomicU64::new(1);

struct Inner {
    id: u64,
    mem: Memory,
    instruction_limit: AtomicU64,
    threads: AtomicUsize,
    sms: u32,
}

/// One simulated GPU. Cheap to clone (clones share the device); `Send + Sync`, so several
/// host threads can upload, launch and download concurrently.
#[derive(Clone)]
pub struct Device {
    inner: Arc<Inner>,
}

impl Default for Device {
    fn default() -> Self {
        Device::new()
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.inner.id)
            .field("memory_used", &self.memory_used())
            .finish()
    }
}

/// A scalar type that can live in device memory.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// Size in bytes.
    const SIZE: usize;
    /// The PTX type name (`f32`, `s32`, ...).
    const PTX: &'static str;
    /// Little-endian bytes.
    fn write_le(self, out: &mut [u8]);
    /// From little-endian bytes.
    fn read_le(b: &[u8]) -> Self;
    /// As a kernel argument.
    fn to_arg(self) -> Arg<'static>;
}

mod sealed {
    pub trait Sealed {}
}

/// A kernel argument: a scalar, a device pointer, or raw bytes for a by-value aggregate.
/// The lifetime ties an argument made from a buffer to that buffer, so a buffer cannot be
/// freed while a launch's arguments still name it.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<'a> {
    /// `.u8`/`.b8`
    U8(u8),
    /// `.s8`
    I8(i8),
    /// `.u16`
    U16(u16),
    /// `.s16`
    I16(i16),
    /// `.u32`/`.b32`
    U32(u32),
    /// `.s32`
    I32(i32),
    /// `.u64`/`.b64`
    U64(u64),
    /// `.s64`
    I64(i64),
    /// `.f32`
    F32(f32),
    /// `.f64`
    F64(f64),
    /// A raw device address, passed as a 64-bit parameter.
    Ptr(u64),
    /// A buffer's device address, passed as a 64-bit parameter.
    Buffer(u64, PhantomData<&'a ()>),
    /// Raw bytes for a `.param .align N .b8 name[SIZE]` aggregate.
    Bytes(Vec<u8>),
}

macro_rules! element {
    ($t:ty, $ptx:literal, $v:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const PTX: &'static str = $ptx;
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn read_le(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("element size"))
            }
            fn to_arg(self) -> Arg<'static> {
                Arg::$v(self)
            }
        }
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::$v(v)
            }
        }
    };
}

element!(u8, "u8", U8);
element!(i8, "s8", I8);
element!(u16, "u16", U16);
element!(i16, "s16", I16);
element!(u32, "u32", U32);
element!(i32, "s32", I32);
element!(u64, "u64", U64);
element!(i64, "s64", I64);
element!(f32, "f32", F32);
element!(f64, "f64", F64);

impl Arg<'_> {
    fn bytes(&self) -> Vec<u8> {
        match self {
            Arg::U8(v) => v.to_le_bytes().to_vec(),
            Arg::I8(v) => v.to_le_bytes().to_vec(),
            Arg::U16(v) => v.to_le_bytes().to_vec(),
            Arg::I16(v) => v.to_le_bytes().to_vec(),
            Arg::U32(v) => v.to_le_bytes().to_vec(),
            Arg::I32(v) => v.to_le_bytes().to_vec(),
            Arg::U64(v) | Arg::Ptr(v) | Arg::Buffer(v, _) => v.to_le_bytes().to_vec(),
            Arg::I64(v) => v.to_le_bytes().to_vec(),
            Arg::F32(v) => v.to_le_bytes().to_vec(),
            Arg::F64(v) => v.to_le_bytes().to_vec(),
            Arg::Bytes(b) => b.clone(),
        }
    }
    fn describe(&self) -> String {
        match self {
            Arg::U8(_) => "u8".into(),
            Arg::I8(_) => "i8".into(),
            Arg::U16(_) => "u16".into(),
            Arg::I16(_) => "i16".into(),
            Arg::U32(_) => "u32".into(),
            Arg::I32(_) => "i32".into(),
            Arg::U64(_) => "u64".into(),
            Arg::I64(_) => "i64".into(),
            Arg::F32(_) => "f32".into(),
            Arg::F64(_) => "f64".into(),
            Arg::Ptr(_) | Arg::Buffer(..) => "a device pointer".into(),
            Arg::Bytes(b) => format!("{} raw bytes", b.len()),
        }
    }
    fn is_float(&self) -> bool {
        matches!(self, Arg::F32(_) | Arg::F64(_))
    }
}

/// A typed allocation in device memory. Not `Clone`: free it with [`Device::free`].
#[derive(Debug)]
pub struct DeviceBuffer<T: Element> {
    addr: u64,
    len: usize,
    device: u64,
    _t: PhantomData<T>,
}

impl<T: Element> DeviceBuffer<T> {
    /// The device address of the first element (what a kernel receives as a pointer).
    pub fn addr(&self) -> u64 {
        self.addr
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * T::SIZE
    }
}

impl<'a, T: Element> From<&'a DeviceBuffer<T>> for Arg<'a> {
    fn from(b: &'a DeviceBuffer<T>) -> Arg<'a> {
        Arg::Buffer(b.addr, PhantomData)
    }
}

/// A loaded PTX module: its kernels and its `.global`/`.const` variables (allocated in the
/// device's memory for as long as the module lives).
pub struct Module {
    kernels: HashMap<String, Arc<Kernel>>,
    names: Vec<String>,
    globals: HashMap<String, u64>,
    device: Arc<Inner>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("kernels", &self.names)
            .finish()
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        for a in self.globals.values() {
            let _ = self.device.mem.free(*a);
        }
    }
}

impl Module {
    /// The `.entry` names, in text order.
    pub fn kernel_names(&self) -> &[String] {
        &self.names
    }
    /// The device address of a module-scope `.global` or `.const` variable.
    pub fn global_address(&self, name: &str) -> Option<u64> {
        self.globals.get(name).copied()
    }
    /// The parameters of a kernel as (name, size in bytes).
    pub fn kernel_params(&self, kernel: &str) -> Option<Vec<(String, u32)>> {
        self.kernels
            .get(kernel)
            .map(|k| k.params.iter().map(|p| (p.name.clone(), p.size)).collect())
    }
    /// Decoded instruction count of a kernel (after inlining calls).
    pub fn kernel_len(&self, kernel: &str) -> Option<usize> {
        self.kernels.get(kernel).map(|k| k.insts.len())
    }
}

impl Device {
    /// A new simulated GPU with the default memory and instruction limits.
    pub fn new() -> Device {
        Device::with_memory_limit(DEFAULT_MEMORY_LIMIT)
    }

    /// A new simulated GPU whose allocations may total at most `bytes`.
    pub fn with_memory_limit(bytes: u64) -> Device {
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        Device {
            inner: Arc::new(Inner {
                id: NEXT_DEVICE.fetch_add(1, Relaxed),
                mem: Memory::new(bytes),
                instruction_limit: AtomicU64::new(DEFAULT_INSTRUCTION_LIMIT),
                threads: AtomicUsize::new(threads),
                sms: 80,
            }),
        }
    }

    /// Bounds the warp instructions one launch may execute; a launch that exceeds it fails
    /// with [`crate::FaultKind::InstructionLimit`] instead of running on.
    pub fn set_instruction_limit(&self, warp_instructions: u64) {
        self.inner
            .instruction_limit
            .store(warp_instructions.max(1), Relaxed);
    }

    /// The current instruction limit.
    pub fn instruction_limit(&self) -> u64 {
        self.inner.instruction_limit.load(Relaxed)
    }

    /// How many host threads run the blocks of a launch (default: available parallelism).
    pub fn set_host_threads(&self, n: usize) {
        self.inner.threads.store(n.max(1), Relaxed);
    }

    /// Bytes of device memory currently allocated.
    pub fn memory_used(&self) -> u64 {
        self.inner.mem.used()
    }

    /// Parses and decodes PTX text. Errors name the offending line.
    pub fn load_ptx(&self, ptx: &str) -> Result<Module> {
        let m = parse::parse(ptx)?;
        let shared = decode::shared_layout(&m)?;
        let mut module = Module {
            kernels: HashMap::new(),
            names: Vec::new(),
            globals: HashMap::new(),
            device: self.inner.clone(),
        };
        for v in m
            .vars
            .iter()
            .filter(|v| matches!(v.space, Space::Global | Space::Const))
        {
            if v.is_extern {
                return Err(Error::Parse {
                    line: v.line,
                    msg: format!("external variable `{}` cannot be resolved", v.name),
                });
            }
            let init = decode::var_init(v)?;
            let addr = self.inner.mem.alloc(init.len() as u64)?;
            module.globals.insert(v.name.clone(), addr);
            self.inner.mem.get(addr)?.write_bytes(0, &init);
        }
        for k in decode::decode_module(&m, &module.globals, &shared)? {
            module.names.push(k.name.clone());
            module.kernels.insert(k.name.clone(), Arc::new(k));
        }
        Ok(module)
    }

    fn check<T: Element>(&self, b: &DeviceBuffer<T>) -> Result<Arc<crate::memory::Alloc>> {
        if b.device != self.inner.id {
            return Err(Error::Buffer("the buffer belongs to another device".into()));
        }
        self.inner.mem.get(b.addr)
    }

    /// Allocates `len` zeroed elements, or fails when the memory limit would be exceeded.
    pub fn try_alloc_zeroed<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        // An impossible size saturates to a request the limit refuses.
        let bytes = len.checked_mul(T::SIZE).map_or(u64::MAX, |b| b as u64);
        let addr = self.inner.mem.alloc(bytes)?;
        Ok(DeviceBuffer {
            addr,
            len,
            device: self.inner.id,
            _t: PhantomData,
        })
    }

    /// Allocates `len` zeroed elements.
    ///
    /// # Panics
    /// When the device's memory limit would be exceeded (see [`Device::try_alloc_zeroed`]).
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> DeviceBuffer<T> {
        self.try_alloc_zeroed(len)
            .unwrap_or_else(|e| panic!("dpl-sim: {e}"))
    }

    /// Copies host data into a new buffer, or fails when memory is exhausted.
    pub fn try_upload<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let b = self.try_alloc_zeroed::<T>(data.len())?;
        self.write(&b, 0, data)?;
        Ok(b)
    }

    /// Copies host data into a new buffer.
    ///
    /// # Panics
    /// When the device's memory limit would be exceeded (see [`Device::try_upload`]).
    pub fn upload<T: Element>(&self, data: &[T]) -> DeviceBuffer<T> {
        self.try_upload(data)
            .unwrap_or_else(|e| panic!("dpl-sim: {e}"))
    }

    /// Writes `data` into the buffer starting at element `offset`.
    pub fn write<T: Element>(&self, b: &DeviceBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        let a = self.check(b)?;
        if offset.checked_add(data.len()).is_none_or(|e| e > b.len) {
            return Err(Error::Buffer(format!(
                "write of {} elements at {offset} into a buffer of {}",
                data.len(),
                b.len
            )));
        }
        let mut bytes = vec![0u8; data.len() * T::SIZE];
        for (c, v) in bytes.chunks_exact_mut(T::SIZE).zip(data) {
            v.write_le(c);
        }
        a.write_bytes((offset * T::SIZE) as u64, &bytes);
        Ok(())
    }

    /// Copies elements `range` of the buffer to the host.
    pub fn download_range<T: Element>(
        &self,
        b: &DeviceBuffer<T>,
        range: Range<usize>,
    ) -> Result<Vec<T>> {
        let a = self.check(b)?;
        if range.start > range.end || range.end > b.len {
            return Err(Error::Buffer(format!(
                "range {range:?} outside a buffer of {} elements",
                b.len
            )));
        }
        let mut bytes = vec![0u8; range.len() * T::SIZE];
        a.read_bytes((range.start * T::SIZE) as u64, &mut bytes);
        Ok(bytes.chunks_exact(T::SIZE).map(T::read_le).collect())
    }

    /// Copies the whole buffer to the host.
    ///
    /// # Panics
    /// When the buffer belongs to another device (see [`Device::download_range`]).
    pub fn download<T: Element>(&self, b: &DeviceBuffer<T>) -> Vec<T> {
        self.download_range(b, 0..b.len)
            .unwrap_or_else(|e| panic!("dpl-sim: {e}"))
    }

    /// Copies `len` elements from `src[src_offset..]` to `dst[dst_offset..]` (device to device).
    pub fn copy<T: Element>(
        &self,
        src: &DeviceBuffer<T>,
        src_offset: usize,
        dst: &DeviceBuffer<T>,
        dst_offset: usize,
        len: usize,
    ) -> Result<()> {
        let data = self.download_range(
            src,
            src_offset
                ..src_offset
                    .checked_add(len)
                    .ok_or_else(|| Error::Buffer("length overflow".into()))?,
        )?;
        self.write(dst, dst_offset, &data)
    }

    /// Sets every byte of the buffer to `byte` (as `cudaMemset`).
    pub fn memset<T: Element>(&self, b: &DeviceBuffer<T>, byte: u8) -> Result<()> {
        let a = self.check(b)?;
        a.write_bytes(0, &vec![byte; b.byte_len()]);
        Ok(())
    }

    /// Sets every element of the buffer to `value`.
    pub fn fill<T: Element>(&self, b: &DeviceBuffer<T>, value: T) -> Result<()> {
        self.write(b, 0, &vec![value; b.len])
    }

    /// Frees a buffer.
    pub fn free<T: Element>(&self, b: DeviceBuffer<T>) -> Result<()> {
        self.check(&b)?;
        self.inner.mem.free(b.addr)
    }

    /// Allocates `len` zeroed bytes and returns their device address (for drivers that
    /// manage untyped memory; [`Device::free_bytes`] frees it).
    pub fn alloc_bytes(&self, len: usize) -> Result<u64> {
        self.inner.mem.alloc(len as u64)
    }

    /// Frees an allocation made by [`Device::alloc_bytes`] (or any allocation, by its
    /// first address).
    pub fn free_bytes(&self, addr: u64) -> Result<()> {
        self.inner.mem.free(addr)
    }

    /// The allocation containing `[addr, addr + len)` and the offset of `addr` in it.
    fn range(&self, addr: u64, len: usize) -> Result<(Arc<crate::memory::Alloc>, u64)> {
        let view = self.inner.mem.view();
        let mut hint = 0;
        match view.find(addr, 0, &mut hint) {
            Some((i, off)) if off + len as u64 <= view.allocs[i].len => {
                Ok((view.allocs[i].clone(), off))
            }
            _ => Err(Error::Buffer(format!(
                "{len} bytes at {addr:#x} are not inside one allocation"
            ))),
        }
    }

    /// Copies host bytes to device memory at `addr` (anywhere inside one allocation).
    pub fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<()> {
        let (a, off) = self.range(addr, data.len())?;
        a.write_bytes(off, data);
        Ok(())
    }

    /// Copies device memory at `addr` (inside one allocation) to `out`.
    pub fn read_bytes(&self, addr: u64, out: &mut [u8]) -> Result<()> {
        let (a, off) = self.range(addr, out.len())?;
        a.read_bytes(off, out);
        Ok(())
    }

    /// Copies `len` bytes between device addresses (each range inside one allocation;
    /// overlapping ranges behave like `memmove`).
    pub fn copy_bytes(&self, src: u64, dst: u64, len: usize) -> Result<()> {
        let mut tmp = vec![0u8; len];
        self.read_bytes(src, &mut tmp)?;
        self.write_bytes(dst, &tmp)
    }

    /// Runs kernel `name` of `module` over a `grid` of blocks of `block` threads with
    /// `dynamic_shared_bytes` of dynamic shared memory per block, and returns its counters.
    pub fn launch(
        &self,
        module: &Module,
        name: &str,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_shared_bytes: u32,
        args: &[Arg<'_>],
    ) -> Result<Report> {
        if !Arc::ptr_eq(&module.device, &self.inner) {
            return Err(Error::LaunchConfig {
                kernel: name.into(),
                msg: "the module was loaded on another device".into(),
            });
        }
        let Some(k) = module.kernels.get(name) else {
            return Err(Error::UnknownKernel {
                name: name.into(),
                available: module.names.join(", "),
            });
        };
        let cfg = |msg: String| Error::LaunchConfig {
            kernel: name.into(),
            msg,
        };
        if grid.contains(&0) || block.contains(&0) {
            return Err(cfg(format!(
                "grid {grid:?} and block {block:?} must be at least 1 in every dimension"
            )));
        }
        let threads = block[0] as u64 * block[1] as u64 * block[2] as u64;
        if threads > 1024 || block[0] > 1024 || block[1] > 1024 || block[2] > 64 {
            return Err(cfg(format!(
                "block {block:?} exceeds 1024 threads (or 1024 x 1024 x 64)"
            )));
        }
        if grid[1] > 65535 || grid[2] > 65535 || grid[0] > i32::MAX as u32 {
            return Err(cfg(format!("grid {grid:?} exceeds (2^31-1, 65535, 65535)")));
        }
        if let Some(req) = k.reqntid
            && req != block
        {
            return Err(cfg(format!(
                "block {block:?} differs from the kernel's .reqntid {req:?}"
            )));
        }
        if let Some(max) = k.maxntid
            && threads > max[0] as u64 * max[1] as u64 * max[2] as u64
        {
            return Err(cfg(format!(
                "block {block:?} has more threads than the kernel's .maxntid {max:?}"
            )));
        }
        let shared_total = k.dyn_shared_offset as u64 + dynamic_shared_bytes as u64;
        if shared_total > WINDOW_SIZE / 2 {
            return Err(cfg(format!(
                "{shared_total} bytes of shared memory per block is too much"
            )));
        }
        let params = build_params(k, args)?;
        let view = self.inner.mem.view();
        let executed = AtomicU64::new(0);
        let abort = AtomicBool::new(false);
        let launch = Launch {
            kernel: k,
            global: &view,
            params: &params,
            grid,
            block,
            dyn_shared: dynamic_shared_bytes,
            limit: self.instruction_limit(),
            executed: &executed,
            abort: &abort,
            nsms: self.inner.sms,
        };
        let nblocks = grid[0] as u64 * grid[1] as u64 * grid[2] as u64;
        let nthreads = (self.inner.threads.load(Relaxed) as u64)
            .min(nblocks)
            .max(1) as usize;
        let next = AtomicU64::new(0);
        let first_error: Mutex<Option<(u64, Error)>> = Mutex::new(None);
        let total = Mutex::new(Report::default());
        let work = || {
            let mut w = Worker::default();
            loop {
                if abort.load(Relaxed) {
                    break;
                }
                let b = next.fetch_add(1, Relaxed);
                if b >= nblocks {
                    break;
                }
                // A panic would be a simulator bug; it becomes an error, not a crash.
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    w.run_block(&launch, b)
                }))
                .unwrap_or_else(|p| {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    Err(Error::Internal(format!(
                        "kernel `{name}`, block {b}: {msg}"
                    )))
                });
                if let Err(e) = result {
                    let mut fe = first_error.lock().unwrap_or_else(|p| p.into_inner());
                    if fe.as_ref().is_none_or(|(fb, _)| b < *fb) {
                        *fe = Some((b, e));
                    }
                    abort.store(true, Relaxed);
                    break;
                }
            }
            total
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .merge(&w.report);
        };
        if nthreads == 1 {
            work();
        } else {
            std::thread::scope(|s| {
                for _ in 0..nthreads {
                    s.spawn(work);
                }
            });
        }
        if let Some((_, e)) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        Ok(total.into_inner().unwrap_or_else(|p| p.into_inner()))
    }
}

fn build_params(k: &Kernel, args: &[Arg<'_>]) -> Result<Vec<u8>> {
    let bad = |msg: String| Error::Arguments {
        kernel: k.name.clone(),
        msg,
    };
    if args.len() != k.params.len() {
        return Err(bad(format!(
            "expects {} arguments, got {}",
            k.params.len(),
            args.len()
        )));
    }
    let mut out = vec![0u8; k.param_bytes as usize];
    for (i, (p, a)) in k.params.iter().zip(args).enumerate() {
        let bytes = a.bytes();
        if bytes.len() != p.size as usize {
            return Err(bad(format!(
                "argument {i} (`{}`) is {}-byte `{}`, but {} ({} bytes) was passed",
                p.name,
                p.size,
                p.ty.map(|t| format!("{t:?}").to_lowercase())
                    .unwrap_or_else(|| "b8[]".into()),
                a.describe(),
                bytes.len()
            )));
        }
        if let Some(t) = p.ty {
            let ok = match t {
                Ty::F32 | Ty::F64 => a.is_float(),
                Ty::B32 | Ty::B64 | Ty::B16 | Ty::B8 => true,
                _ => !a.is_float(),
            };
            if !ok {
                return Err(bad(format!(
                    "argument {i} (`{}`) has type {t:?}, but {} was passed",
                    p.name,
                    a.describe()
                )));
            }
        }
        out[p.offset as usize..p.offset as usize + bytes.len()].copy_from_slice(&bytes);
    }
    Ok(out)
}
