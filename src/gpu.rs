//! The GPU places at run time: programs embedded by the macro, argument and result
//! conversion, and the drivers behind [`Place::Sim`] and [`Place::Gpu`].
//!
//! With the `sim` or `cuda` feature the `#[parallel]` macro compiles each function for the
//! GPU at build time (`dpl_cuda::compile_with`) and embeds the result — PTX text plus
//! launch plan, encoded by `GpuProgram::encode` — as a [`Program`] static next to the
//! function, with one source [`Location`] per span of the function for error messages. A
//! call on a GPU place converts its arguments ([`Arg`]), runs the program through the
//! place's driver and converts the result back ([`Ret`]).
//!
//! Sequences cross between host and device as typed bytes: [`Elem::put`] writes each
//! element's scalar leaves straight into one byte column per leaf (the device's
//! structure-of-arrays layout) and [`Elem::get`] reads them back, with no per-element
//! interpreter [`Value`]. Flat sequences (`&[T]`, `Vec<T>`, [`Seq<T>`]) are one set of
//! columns; a [`Matrix`] is its storage plus shape and strides (read in place by the
//! kernels, whatever its layout); a [`Nested`] argument is its offsets plus its values'
//! columns ([`dpl_cuda::NestedColumns`], uploaded by the run and freed when it ends; two
//! arguments with the same offsets, such as `Nested`s sharing them, upload them once), and
//! a ragged result comes back as offsets plus columns, straight into
//! [`Nested::from_parts`]. Only scalars still go through `Value`s.
//!
//! A function the GPU backend cannot compile gets no [`Program`]: a call of it on a GPU
//! place runs on the CPU instead ([`cpu_instead`]), which says why on standard error once
//! per function (the reason is also in `dpl::inspect!(f).gpu_not_compiled`).

use std::sync::OnceLock;

use dpl_core::interp::Value;
use dpl_core::ir::{Scalar, Type};
use dpl_cuda::{
    Columns, DeviceNested, DeviceSeq, Driver, GpuProgram, HostColumns, Input, LaunchArg,
    MatrixStorage, NestedColumns, Output, StridedMatrix,
};

use crate::{Error, Location, Matrix, Nested, Place, Seq};

/// What the macro embeds for one function.
pub struct Program {
    name: &'static str,
    /// The encoded program.
    code: &'static [u8],
    locations: &'static [Location],
    decoded: OnceLock<Result<GpuProgram, String>>,
}

impl Program {
    /// A compiled program: `bytes` from `GpuProgram::encode`, `locations[s]` the source
    /// location of span `s`.
    pub const fn new(
        name: &'static str,
        bytes: &'static [u8],
        locations: &'static [Location],
    ) -> Program {
        Program {
            name,
            code: bytes,
            locations,
            decoded: OnceLock::new(),
        }
    }

    /// The decoded program (decoded once, at the first call).
    fn program(&self) -> Result<&GpuProgram, Error> {
        self.decoded
            .get_or_init(|| GpuProgram::decode(self.code))
            .as_ref()
            .map_err(|e| Error::Device(format!("`{}`: {e}", self.name)))
    }

    /// The PTX text, if the function was compiled for the GPU.
    pub fn ptx(&self) -> Option<&str> {
        self.program().ok().map(|p| p.ptx.as_str())
    }

    fn locate(&self, span: u32) -> Location {
        self.locations
            .get(span as usize)
            .copied()
            .unwrap_or(dpl_cuda::UNKNOWN_LOCATION)
    }
}

/// One argument of a GPU call, as [`Arg::input`] makes it: what the program reads, and the
/// device copy made for this call alone (freed when the call ends).
pub struct In {
    arg: Result<Input, Error>,
    temp: Option<DeviceSeq>,
}

impl In {
    /// A host value, uploaded by the run itself.
    fn host(v: Value) -> In {
        In {
            arg: Ok(Input::Host(v)),
            temp: None,
        }
    }

    /// A device sequence the caller keeps (a `Seq`'s device copy).
    fn device(seq: DeviceSeq) -> In {
        In {
            arg: Ok(Input::Device(seq)),
            temp: None,
        }
    }

    /// A device copy made for this call.
    fn uploaded(copy: Result<DeviceSeq, Error>) -> In {
        match copy {
            Ok(seq) => In {
                arg: Ok(Input::Device(seq.clone())),
                temp: Some(seq),
            },
            Err(e) => In {
                arg: Err(e),
                temp: None,
            },
        }
    }
}

/// Device copies made for one call; freed when dropped (also when the call fails).
struct Temps {
    place: Place,
    seqs: Vec<DeviceSeq>,
}

impl Drop for Temps {
    fn drop(&mut self) {
        for s in &self.seqs {
            free_on(self.place, s);
        }
    }
}

/// Runs `program` on `place` (a GPU place) with the converted arguments.
pub fn call<R: Ret>(program: &Program, place: Place, args: Vec<In>) -> Result<R, Error> {
    let temps = Temps {
        place,
        seqs: args.iter().filter_map(|a| a.temp.clone()).collect(),
    };
    let p = program.program()?;
    let inputs = args
        .into_iter()
        .map(|a| a.arg)
        .collect::<Result<Vec<_>, _>>()?;
    let locate = |s: u32| program.locate(s);
    let out = run_on(place, p, inputs, R::KEEP_ON_DEVICE, &locate);
    drop(temps);
    R::from_output(out?, place)
}

/// Where a call of `name`, a function the GPU backend did not compile (for `reason`), runs
/// when the current place is `place`: on [`Place::Cpu`] instead of a GPU place (saying why
/// on standard error, once per function), elsewhere on `place` itself.
pub fn cpu_instead(place: Place, name: &'static str, reason: &'static str) -> Place {
    if !matches!(place, Place::Sim | Place::Gpu(_)) {
        return place;
    }
    static TOLD: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    if !told.contains(&name) {
        told.push(name);
        eprintln!("dpl: `{name}` is not compiled for the GPU ({reason}); running it on the CPU");
    }
    Place::Cpu
}

/// Runs `program` and panics with the error's message if it fails (functions not declared
/// to return `Result`).
#[track_caller]
pub fn call_or_panic<R: Ret>(program: &Program, place: Place, args: Vec<In>) -> R {
    match call(program, place, args) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

/// Bytes and copies moved between the host and a GPU place since the process started
/// (see [`transfers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transfers {
    /// Host-to-device copies.
    pub to_device: u64,
    /// Bytes copied host-to-device.
    pub to_device_bytes: u64,
    /// Device-to-host copies (results, and the small read-backs of counts, reduction
    /// results and the error record).
    pub to_host: u64,
    /// Bytes copied device-to-host.
    pub to_host_bytes: u64,
}

/// The transfers between the host and `place` so far (zero for places without a device,
/// and for a device that was never used). Take two readings and subtract to measure a
/// stretch of code:
///
/// ```
/// let before = dpl::transfers(dpl::Place::Sim);
/// // ... calls on Place::Sim ...
/// let moved = dpl::transfers(dpl::Place::Sim).to_device_bytes - before.to_device_bytes;
/// assert_eq!(moved, 0);
/// ```
pub fn transfers(place: Place) -> Transfers {
    match place {
        Place::Sim => sim::counters()
            .map(Counted::read_counts)
            .unwrap_or_default(),
        Place::Gpu(n) => cuda::counters(n)
            .map(Counted::read_counts)
            .unwrap_or_default(),
        Place::Cpu | Place::Seq | Place::Mpi => Transfers::default(),
    }
}

/// A driver that counts the bytes it moves between host and device.
struct Counted<D> {
    inner: D,
    counts: [std::sync::atomic::AtomicU64; 4],
}

impl<D> Counted<D> {
    #[cfg_attr(not(any(feature = "sim", feature = "cuda")), allow(dead_code))]
    fn new(inner: D) -> Self {
        Counted {
            inner,
            counts: Default::default(),
        }
    }

    fn add(&self, which: usize, bytes: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.counts[which].fetch_add(1, Relaxed);
        self.counts[which + 1].fetch_add(bytes as u64, Relaxed);
    }

    fn read_counts(&self) -> Transfers {
        use std::sync::atomic::Ordering::Relaxed;
        let [a, b, c, d] = &self.counts;
        Transfers {
            to_device: a.load(Relaxed),
            to_device_bytes: b.load(Relaxed),
            to_host: c.load(Relaxed),
            to_host_bytes: d.load(Relaxed),
        }
    }
}

impl<D: Driver> Driver for Counted<D> {
    type Module = D::Module;

    fn load(&self, ptx: &str) -> Result<D::Module, String> {
        self.inner.load(ptx)
    }

    fn load_program(&self, p: &GpuProgram) -> Result<D::Module, String> {
        self.inner.load_program(p)
    }

    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
        self.inner.alloc_zeroed(bytes)
    }

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String> {
        self.add(0, data.len());
        self.inner.write(dst, data)
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String> {
        self.add(2, out.len());
        self.inner.read(src, out)
    }

    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String> {
        self.inner.copy(src, dst, bytes)
    }

    fn launch(
        &self,
        module: &D::Module,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String> {
        self.inner.launch(module, kernel, grid, block, args)
    }

    fn free(&self, addr: u64) -> Result<(), String> {
        self.inner.free(addr)
    }

    fn resident_blocks(&self, module: &D::Module, kernel: &str, block: u32) -> Result<u32, String> {
        self.inner.resident_blocks(module, kernel, block)
    }
}

/// The operations the GPU places provide, per backend module (`sim`, later `cuda`): run a
/// program, read a device sequence back, free device buffers, read the transfer counters.
fn run_on(
    place: Place,
    p: &GpuProgram,
    args: Vec<Input>,
    keep: bool,
    locate: &dyn Fn(u32) -> Location,
) -> Result<Output, Error> {
    match place {
        Place::Sim => sim::run(p, args, keep, locate),
        Place::Gpu(n) => cuda::run(n, p, args, keep, locate),
        Place::Cpu | Place::Seq | Place::Mpi => Err(crate::place::unavailable(place)),
    }
}

fn upload_on(place: Place, cols: &HostColumns) -> Result<DeviceSeq, Error> {
    match place {
        Place::Sim => sim::upload(cols),
        Place::Gpu(n) => cuda::upload(n, cols),
        Place::Cpu | Place::Seq | Place::Mpi => Err(crate::place::unavailable(place)),
    }
}

fn read_on(place: Place, seq: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
    match place {
        Place::Sim => sim::read(seq),
        Place::Gpu(n) => cuda::read(n, seq),
        Place::Cpu | Place::Seq | Place::Mpi => Err(crate::place::unavailable(place)),
    }
}

/// The leaf columns of `items` ([`Elem::put`]).
fn columns<T: Elem>(items: &[T]) -> HostColumns {
    let mut widths = Vec::with_capacity(T::LEAVES);
    T::widths(&mut widths);
    let mut cols: Vec<Vec<u8>> = widths
        .iter()
        .map(|w| Vec::with_capacity(w * items.len()))
        .collect();
    T::put_all(items, &mut cols);
    HostColumns {
        elem: T::ty(),
        len: items.len(),
        cols,
    }
}

/// Copies `items` to `place` as typed bytes (a fresh device sequence).
fn upload_items<T: Elem>(place: Place, items: &[T]) -> Result<DeviceSeq, Error> {
    upload_on(place, &columns(items))
}

/// Reads a device sequence of `T`s on `place` back to the host.
fn download_items<T: Elem>(place: Place, seq: &DeviceSeq) -> Result<Vec<T>, Error> {
    if seq.elem != T::ty() {
        return Err(Error::Device(format!(
            "internal error: a device sequence of {} read as {}",
            seq.elem,
            T::ty()
        )));
    }
    let cols = read_on(place, seq)?;
    Ok(T::get_all(&cols, seq.len))
}

/// Reads a nested device sequence of `T`s on `place` back to the host, and frees it.
fn download_nested<T: Elem>(place: Place, n: DeviceNested) -> Result<Nested<T>, Error> {
    let parts = download_items::<usize>(place, &n.offsets)
        .and_then(|o| Ok((download_items::<T>(place, &n.values)?, o)));
    free_nested(place, &n);
    let (values, offsets) = parts?;
    Nested::from_parts(values, offsets)
}

fn free_nested(place: Place, n: &DeviceNested) {
    free_on(place, &n.offsets);
    free_on(place, &n.values);
}

fn download_on(place: Place, seq: &DeviceSeq) -> Result<Value, Error> {
    match place {
        Place::Sim => sim::download(seq),
        Place::Gpu(n) => cuda::download(n, seq),
        Place::Cpu | Place::Seq | Place::Mpi => Err(crate::place::unavailable(place)),
    }
}

fn free_on(place: Place, seq: &DeviceSeq) {
    match place {
        Place::Sim => sim::free(seq),
        Place::Gpu(n) => cuda::free(n, seq),
        Place::Cpu | Place::Seq | Place::Mpi => {}
    }
}

/// Whether `Place::Gpu(n)` can run calls: the `cuda` feature is on, the CUDA driver
/// library loads and device `n` exists. Otherwise the reason.
pub fn device_status(n: usize) -> Result<(), String> {
    cuda::driver(n).map(|_| ())
}

#[cfg(feature = "cuda")]
mod cuda {
    use super::*;
    use dpl_cuda::cuda::CudaDriver;
    use std::sync::Mutex;

    type Slot = Result<&'static Counted<CudaDriver>, String>;

    /// The driver of device `n`, created at the first use and kept for the process (the
    /// module cache lives in it); a failure is remembered too, so it is reported once.
    pub fn driver(n: usize) -> Result<&'static Counted<CudaDriver>, String> {
        static DRIVERS: Mutex<Vec<(usize, Slot)>> = Mutex::new(Vec::new());
        let mut drivers = DRIVERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, slot)) = drivers.iter().find(|(k, _)| *k == n) {
            return slot.clone();
        }
        let slot: Slot = CudaDriver::new(n).map(|d| &*Box::leak(Box::new(Counted::new(d))));
        drivers.push((n, slot.clone()));
        slot
    }

    pub fn counters(n: usize) -> Option<&'static Counted<CudaDriver>> {
        driver(n).ok()
    }

    fn unavailable(n: usize, reason: String) -> Error {
        Error::PlaceUnavailable {
            place: Place::Gpu(n),
            reason,
        }
    }

    pub fn run(
        n: usize,
        p: &GpuProgram,
        args: Vec<Input>,
        keep: bool,
        locate: &dyn Fn(u32) -> Location,
    ) -> Result<Output, Error> {
        let d = driver(n).map_err(|e| unavailable(n, e))?;
        dpl_cuda::run_resident(p, d, args, keep, locate)
    }

    pub fn download(n: usize, seq: &DeviceSeq) -> Result<Value, Error> {
        let d = driver(n).map_err(|e| unavailable(n, e))?;
        dpl_cuda::download(d, seq)
    }

    pub fn upload(n: usize, cols: &HostColumns) -> Result<DeviceSeq, Error> {
        let d = driver(n).map_err(|e| unavailable(n, e))?;
        dpl_cuda::upload_columns(d, cols)
    }

    pub fn read(n: usize, seq: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
        let d = driver(n).map_err(|e| unavailable(n, e))?;
        dpl_cuda::read_columns(d, seq)
    }

    pub fn free(n: usize, seq: &DeviceSeq) {
        if let Ok(d) = driver(n) {
            for &b in &seq.bufs {
                let _ = d.free(b);
            }
        }
    }
}

#[cfg(not(feature = "cuda"))]
mod cuda {
    use super::*;

    fn unavailable(n: usize) -> Error {
        crate::place::unavailable(Place::Gpu(n))
    }

    pub fn driver(n: usize) -> Result<(), String> {
        Err(crate::place::unavailable(Place::Gpu(n)).to_string())
    }

    pub fn counters(_: usize) -> Option<&'static Counted<NoDriver>> {
        None
    }

    pub fn run(
        n: usize,
        _: &GpuProgram,
        _: Vec<Input>,
        _: bool,
        _: &dyn Fn(u32) -> Location,
    ) -> Result<Output, Error> {
        Err(unavailable(n))
    }

    pub fn download(n: usize, _: &DeviceSeq) -> Result<Value, Error> {
        Err(unavailable(n))
    }

    pub fn upload(n: usize, _: &HostColumns) -> Result<DeviceSeq, Error> {
        Err(unavailable(n))
    }

    pub fn read(n: usize, _: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
        Err(unavailable(n))
    }

    pub fn free(_: usize, _: &DeviceSeq) {}
}

#[cfg(feature = "sim")]
mod sim {
    use super::*;
    use dpl_cuda::sim::SimDriver;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The simulated device shared by every call of the process (modules are cached in
    /// it, so each function's PTX is parsed once).
    fn driver() -> &'static Counted<SimDriver> {
        static DRIVER: OnceLock<Counted<SimDriver>> = OnceLock::new();
        DRIVER.get_or_init(|| Counted::new(SimDriver::default()))
    }

    pub fn counters() -> Option<&'static Counted<SimDriver>> {
        Some(driver())
    }

    /// How many [`super::sim_profile`] calls are running; while none is, launch reports
    /// are dropped after each call so they do not pile up.
    static PROFILING: AtomicUsize = AtomicUsize::new(0);
    /// Serializes profiles, so each sees only its own launches.
    pub static PROFILE_LOCK: Mutex<()> = Mutex::new(());

    pub fn run(
        p: &GpuProgram,
        args: Vec<Input>,
        keep: bool,
        locate: &dyn Fn(u32) -> Location,
    ) -> Result<Output, Error> {
        let out = dpl_cuda::run_resident(p, driver(), args, keep, locate);
        if PROFILING.load(Ordering::Relaxed) == 0 {
            driver().inner.take_reports();
        }
        out
    }

    /// Runs `f` collecting the launches made meanwhile.
    pub fn profile<R>(f: impl FnOnce() -> R) -> (R, Vec<(String, dpl_sim::Report)>) {
        let _serial = PROFILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        driver().inner.take_reports();
        PROFILING.fetch_add(1, Ordering::Relaxed);
        struct Done;
        impl Drop for Done {
            fn drop(&mut self) {
                PROFILING.fetch_sub(1, Ordering::Relaxed);
            }
        }
        let done = Done;
        let r = f();
        drop(done);
        (r, driver().inner.take_reports())
    }

    pub fn download(seq: &DeviceSeq) -> Result<Value, Error> {
        dpl_cuda::download(driver(), seq)
    }

    pub fn upload(cols: &HostColumns) -> Result<DeviceSeq, Error> {
        dpl_cuda::upload_columns(driver(), cols)
    }

    pub fn read(seq: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
        dpl_cuda::read_columns(driver(), seq)
    }

    pub fn memory_used() -> u64 {
        driver().inner.device().memory_used()
    }

    pub fn free(seq: &DeviceSeq) {
        for &b in &seq.bufs {
            let _ = driver().free(b);
        }
    }
}

/// Bytes of simulated device memory in use by the process's `Place::Sim` calls (buffers of
/// `Seq`s kept there, plus anything leaked): for tests that check device copies are freed.
#[cfg(feature = "sim")]
pub fn sim_memory_used() -> u64 {
    sim::memory_used()
}

#[cfg(not(feature = "sim"))]
mod sim {
    use super::*;

    pub fn counters() -> Option<&'static Counted<NoDriver>> {
        None
    }

    pub fn run(
        _: &GpuProgram,
        _: Vec<Input>,
        _: bool,
        _: &dyn Fn(u32) -> Location,
    ) -> Result<Output, Error> {
        Err(crate::place::unavailable(Place::Sim))
    }

    pub fn download(_: &DeviceSeq) -> Result<Value, Error> {
        Err(crate::place::unavailable(Place::Sim))
    }

    pub fn upload(_: &HostColumns) -> Result<DeviceSeq, Error> {
        Err(crate::place::unavailable(Place::Sim))
    }

    pub fn read(_: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
        Err(crate::place::unavailable(Place::Sim))
    }

    pub fn free(_: &DeviceSeq) {}
}

/// The counters of one kernel launch on the simulated GPU (see [`sim_profile`]; dpl-sim's
/// README defines each counter).
#[cfg(feature = "sim")]
#[derive(Clone, Debug, PartialEq)]
pub struct KernelProfile {
    /// The kernel's entry name (`dpl_<function>_k<i>_<what>`).
    pub kernel: String,
    /// Thread blocks launched.
    pub blocks: u64,
    /// Warp-level instructions executed.
    pub warp_instructions: u64,
    /// Thread-level instructions executed (active lanes).
    pub thread_instructions: u64,
    /// 32-byte global-memory sectors moved by loads and stores.
    pub sectors: u64,
    /// The fewest sectors the same accesses could have moved (perfect coalescing).
    pub ideal_sectors: u64,
    /// Extra shared-memory wavefronts caused by bank conflicts.
    pub bank_conflicts: u64,
    /// Block-wide barrier completions.
    pub barriers: u64,
    /// Warp-level global atomic instructions.
    pub atomics: u64,
}

/// Runs `f` with [`Place::Sim`] as the current place and returns its result with the
/// counters of every kernel it launched on the simulated GPU, in launch order. Profiles of
/// different threads run one after the other.
///
/// ```
/// use dpl::prelude::*;
///
/// #[parallel]
/// fn scale(a: f32, x: &[f32]) -> Vec<f32> {
///     map(|v| a * v, x)
/// }
///
/// let x = vec![1.0f32; 4096];
/// let (y, launches) = dpl::sim_profile(|| scale(2.0, &x));
/// assert_eq!(y, vec![2.0f32; 4096]);
/// let k = &launches[0];
/// assert!(k.kernel.contains("scale"));
/// assert!(k.sectors as f64 <= 1.1 * k.ideal_sectors as f64); // coalesced
/// ```
#[cfg(feature = "sim")]
pub fn sim_profile<R>(f: impl FnOnce() -> R) -> (R, Vec<KernelProfile>) {
    let (r, reports) = sim::profile(|| crate::with_place(Place::Sim, f));
    let launches = reports
        .into_iter()
        .map(|(kernel, r)| KernelProfile {
            kernel,
            blocks: r.blocks,
            warp_instructions: r.instructions,
            thread_instructions: r.thread_instructions,
            sectors: r.sectors_moved,
            ideal_sectors: r.sectors_ideal,
            bank_conflicts: r.bank_conflicts,
            barriers: r.barriers,
            atomics: r.global_atomic_requests,
        })
        .collect();
    (r, launches)
}

/// Stands for the driver type of a backend this build does not have.
#[allow(dead_code)]
pub struct NoDriver;

/// A device copy of a [`Seq`]: the buffers, the place holding them, and how to read them
/// back as `T`s. Dropping it frees the buffers.
pub(crate) struct DeviceCopy<T> {
    place: Place,
    seq: DeviceSeq,
    read: fn(Place, &DeviceSeq) -> Result<Vec<T>, Error>,
}

impl<T: Elem> DeviceCopy<T> {
    /// Takes ownership of `seq`, a device sequence of `T`s on `place`.
    fn new(place: Place, seq: DeviceSeq) -> Self {
        DeviceCopy {
            place,
            seq,
            read: download_items::<T>,
        }
    }
}

impl<T> DeviceCopy<T> {
    pub(crate) fn len(&self) -> usize {
        self.seq.len
    }

    pub(crate) fn place(&self) -> Place {
        self.place
    }

    /// Reads the elements back; a device failure panics with its message.
    pub(crate) fn download(&self) -> Vec<T> {
        (self.read)(self.place, &self.seq)
            .unwrap_or_else(|e| panic!("dpl: reading a Seq back from {}: {e}", self.place))
    }
}

impl<T> Drop for DeviceCopy<T> {
    fn drop(&mut self) {
        free_on(self.place, &self.seq);
    }
}

/// A value that is not what the compiled program says it returns: a bug in dpl.
fn mismatch(what: &str, v: &Value) -> Error {
    Error::Device(format!(
        "internal error: the GPU program returned {v:?} where {what} was expected"
    ))
}

/// Element types of sequences: scalars and tuples of scalars.
pub trait Elem: Sized {
    /// The DSL type.
    fn ty() -> Type;
    /// The interpreter value of `self`.
    fn to_value(&self) -> Value;
    /// Back from an interpreter value.
    fn from_value(v: &Value) -> Result<Self, Error>;
    /// The number of scalar leaves (1 for a scalar).
    const LEAVES: usize;
    /// Appends the width in bytes of each scalar leaf to `out`, in order (`bool` is one
    /// byte, `usize` eight).
    fn widths(out: &mut Vec<usize>);
    /// Appends the scalar leaves of `self`, little-endian, to `cols[0..LEAVES]`, one
    /// column per leaf (the device's structure-of-arrays layout).
    fn put(&self, cols: &mut [Vec<u8>]);
    /// Element `i` of the columns `cols[0..LEAVES]` written by [`Elem::put`] or read from
    /// the device.
    fn get(cols: &[Vec<u8>], i: usize) -> Self;
    /// [`Elem::put`] of every item in order (scalars write their column in one pass).
    fn put_all(items: &[Self], cols: &mut [Vec<u8>]) {
        for x in items {
            x.put(cols);
        }
    }
    /// Elements `0..len` of the columns ([`Elem::get`] of each; scalars read their column
    /// in one pass).
    fn get_all(cols: &[Vec<u8>], len: usize) -> Vec<Self> {
        (0..len).map(|i| Self::get(cols, i)).collect()
    }
}

/// The width of a scalar on the device (`dpl_cuda::size_of`, as a constant).
macro_rules! scalar_width {
    (Usize, $t:ty) => {
        8
    };
    ($v:ident, $t:ty) => {
        std::mem::size_of::<$t>()
    };
}

/// The device bytes of a scalar (`bool` one byte, `usize` as `u64`).
macro_rules! scalar_bytes {
    (Bool, $x:expr) => {
        [u8::from($x)]
    };
    (Usize, $x:expr) => {
        ($x as u64).to_le_bytes()
    };
    ($v:ident, $x:expr) => {
        $x.to_le_bytes()
    };
}

/// A scalar back from its device bytes (any nonzero byte is `true`).
macro_rules! scalar_from {
    (Bool, $t:ty, $b:expr) => {
        $b[0] != 0
    };
    (Usize, $t:ty, $b:expr) => {
        u64::from_le_bytes($b) as usize
    };
    ($v:ident, $t:ty, $b:expr) => {
        <$t>::from_le_bytes($b)
    };
}

macro_rules! scalar_elem {
    ($($t:ty => $v:ident),*) => {$(
        impl Elem for $t {
            fn ty() -> Type {
                Type::Scalar(Scalar::$v)
            }
            #[inline]
            fn to_value(&self) -> Value {
                Value::$v(*self)
            }
            fn from_value(v: &Value) -> Result<Self, Error> {
                match v {
                    Value::$v(x) => Ok(*x),
                    other => Err(mismatch(stringify!($t), other)),
                }
            }
            const LEAVES: usize = 1;
            fn widths(out: &mut Vec<usize>) {
                out.push(scalar_width!($v, $t));
            }
            #[inline]
            fn put(&self, cols: &mut [Vec<u8>]) {
                cols[0].extend_from_slice(&scalar_bytes!($v, *self));
            }
            #[inline]
            fn get(cols: &[Vec<u8>], i: usize) -> Self {
                const W: usize = scalar_width!($v, $t);
                let bytes: [u8; W] = cols[0][i * W..(i + 1) * W]
                    .try_into()
                    .expect("a leaf column holds W bytes per element");
                scalar_from!($v, $t, bytes)
            }
            fn put_all(items: &[Self], cols: &mut [Vec<u8>]) {
                const W: usize = scalar_width!($v, $t);
                let col = &mut cols[0];
                let start = col.len();
                col.resize(start + W * items.len(), 0);
                for (c, x) in col[start..].chunks_exact_mut(W).zip(items) {
                    c.copy_from_slice(&scalar_bytes!($v, *x));
                }
            }
            fn get_all(cols: &[Vec<u8>], len: usize) -> Vec<Self> {
                const W: usize = scalar_width!($v, $t);
                cols[0][..len * W]
                    .chunks_exact(W)
                    .map(|c| {
                        let bytes: [u8; W] = c.try_into().expect("chunks of W bytes");
                        scalar_from!($v, $t, bytes)
                    })
                    .collect()
            }
        }
        impl Arg for $t {
            fn to_value(&self) -> Value {
                Elem::to_value(self)
            }
        }
        impl Ret for $t {
            fn from_value(v: Value) -> Result<Self, Error> {
                <$t as Elem>::from_value(&v)
            }
        }
    )*};
}

scalar_elem!(bool => Bool, i32 => I32, u32 => U32, i64 => I64, u64 => U64, usize => Usize, f32 => F32, f64 => F64);

macro_rules! tuples {
    ($(($($t:ident $i:tt),+)),*) => {$(
        impl<$($t: Elem),+> Elem for ($($t,)+) {
            fn ty() -> Type {
                Type::Tuple(vec![$($t::ty()),+])
            }
            fn to_value(&self) -> Value {
                Value::Tuple(vec![$(self.$i.to_value()),+])
            }
            fn from_value(v: &Value) -> Result<Self, Error> {
                match v {
                    Value::Tuple(items) if items.len() == [$($i),+].len() => {
                        Ok(($($t::from_value(&items[$i])?,)+))
                    }
                    other => Err(mismatch("a tuple", other)),
                }
            }
            const LEAVES: usize = 0 $(+ $t::LEAVES)+;
            fn widths(out: &mut Vec<usize>) {
                $($t::widths(out);)+
            }
            fn put(&self, cols: &mut [Vec<u8>]) {
                let mut k = 0;
                $(
                    self.$i.put(&mut cols[k..]);
                    k += $t::LEAVES;
                )+
                let _ = k;
            }
            fn get(cols: &[Vec<u8>], i: usize) -> Self {
                let mut k = 0;
                let v = ($({
                    let x = $t::get(&cols[k..], i);
                    k += $t::LEAVES;
                    x
                },)+);
                let _ = k;
                v
            }
        }
        impl<$($t: Ret),+> Ret for ($($t,)+) {
            const KEEP_ON_DEVICE: bool = false $(|| $t::KEEP_ON_DEVICE)+;

            fn from_output(o: Output, place: Place) -> Result<Self, Error> {
                match o {
                    Output::Tuple(items) if items.len() == [$($i),+].len() => {
                        let mut items = items.into_iter();
                        Ok(($($t::from_output(items.next().expect("length checked"), place)?,)+))
                    }
                    other => Self::from_value(host_value(other, place)?),
                }
            }

            fn from_value(v: Value) -> Result<Self, Error> {
                match v {
                    Value::Tuple(items) if items.len() == [$($i),+].len() => {
                        let mut items = items.into_iter();
                        Ok(($($t::from_value(items.next().expect("length checked"))?,)+))
                    }
                    other => Err(mismatch("a tuple", &other)),
                }
            }
        }
    )*};
}

tuples!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, F 5),
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6),
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
);

fn seq_value<'a, T: Elem + 'a>(items: impl Iterator<Item = &'a T>) -> Value {
    Value::seq(items.map(Elem::to_value).collect())
}

/// Parameters: how a Rust argument becomes the interpreter value the program takes.
pub trait Arg {
    /// The interpreter value of `self`.
    fn to_value(&self) -> Value;

    /// The argument for a call on `place`: the host value, a device copy already there,
    /// or one made for the call.
    fn input(&self, place: Place) -> In {
        let _ = place;
        In::host(self.to_value())
    }
}

impl<A: Arg + ?Sized> Arg for &A {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }

    fn input(&self, place: Place) -> In {
        (**self).input(place)
    }
}

impl<T: Elem> Arg for [T] {
    fn to_value(&self) -> Value {
        seq_value(self.iter())
    }

    /// Copied to `place` as typed bytes for this call.
    fn input(&self, place: Place) -> In {
        In::uploaded(upload_items(place, self))
    }
}

impl<T: Elem> Arg for Vec<T> {
    fn to_value(&self) -> Value {
        seq_value(self.iter())
    }

    fn input(&self, place: Place) -> In {
        self.as_slice().input(place)
    }
}

impl<T: Elem> Arg for Seq<T> {
    fn to_value(&self) -> Value {
        seq_value(self.iter())
    }

    /// A `Seq` whose device copy is on `place` is passed as it is: no transfer. One with
    /// only a host copy is uploaded and keeps the device copy for later calls.
    fn input(&self, place: Place) -> In {
        if self.device().is_none() {
            match upload_items(place, self.as_slice()) {
                // Another thread may have attached a copy meanwhile: then ours is dropped
                // (freed) and theirs used.
                Ok(seq) => drop(self.attach_device(DeviceCopy::new(place, seq))),
                Err(e) => return In::uploaded(Err(e)),
            }
        }
        match self.device() {
            Some(d) if d.place() == place => In::device(d.seq.clone()),
            // The device copy is on another place: a copy for this call only.
            _ => In::uploaded(upload_items(place, self.as_slice())),
        }
    }
}

impl<T: Elem> Arg for Nested<T> {
    fn to_value(&self) -> Value {
        Value::seq(self.rows().map(|r| seq_value(r.iter())).collect())
    }

    /// The offsets and the values' leaf columns, uploaded by the run for this call (and
    /// freed when it ends); the run checks the offsets again (one pass over them).
    fn input(&self, _: Place) -> In {
        In {
            arg: Ok(Input::Nested(NestedColumns {
                offsets: Columns::Host(HostColumns::offsets(self.offsets())),
                values: Columns::Host(columns(self.values())),
            })),
            temp: None,
        }
    }
}

impl<T: Elem> Arg for Matrix<T> {
    fn to_value(&self) -> Value {
        Value::seq(self.iter().map(|r| seq_value(r.iter())).collect())
    }

    /// The storage as it is laid out, with the shape and strides: the kernels address
    /// element `(r, j)` at `r * row_stride + j * col_stride`, so a column-major matrix is
    /// read in place (coalesced when each thread takes a row), not transposed to rows.
    /// The storage is copied as typed bytes for this call.
    fn input(&self, place: Place) -> In {
        let (row_stride, col_stride) = self.strides();
        match upload_items(place, self.data()) {
            Ok(seq) => In {
                arg: Ok(Input::Matrix(StridedMatrix {
                    storage: MatrixStorage::Device(seq.clone()),
                    rows: self.rows(),
                    cols: self.cols(),
                    row_stride,
                    col_stride,
                })),
                temp: Some(seq),
            },
            Err(e) => In::uploaded(Err(e)),
        }
    }
}

/// Results: how the program's value becomes the declared Rust result.
pub trait Ret: Sized {
    /// Whether results of this type keep their sequences on the device (a `Seq` inside).
    const KEEP_ON_DEVICE: bool = false;

    /// Converts the program's result.
    fn from_value(v: Value) -> Result<Self, Error>;

    /// Converts the program's result as [`dpl_cuda::run_resident`] gives it: sequences
    /// left on `place` are downloaded unless the type keeps them there.
    fn from_output(o: Output, place: Place) -> Result<Self, Error> {
        Self::from_value(host_value(o, place)?)
    }
}

/// The whole output on the host (downloading and freeing what is on the device).
fn host_value(o: Output, place: Place) -> Result<Value, Error> {
    match o {
        Output::Host(v) => Ok(v),
        Output::Device(d) => {
            let v = download_on(place, &d);
            free_on(place, &d);
            v
        }
        // Only ragged results (`Nested<T>`, alone or in a tuple) are left on the device
        // as nested sequences, and they are read by `Nested::from_output`.
        Output::Nested(n) => {
            free_nested(place, &n);
            Err(Error::Device(
                "internal error: the GPU program returned a nested sequence where another \
                 type was expected"
                    .into(),
            ))
        }
        Output::Tuple(os) => {
            // Every part is read (and freed) before the first error is reported.
            let parts: Vec<_> = os.into_iter().map(|o| host_value(o, place)).collect();
            parts
                .into_iter()
                .collect::<Result<_, _>>()
                .map(Value::Tuple)
        }
    }
}

fn seq_items(v: &Value) -> Result<&[Value], Error> {
    match v {
        Value::Seq(items) => Ok(items),
        other => Err(mismatch("a sequence", other)),
    }
}

impl<T: Elem> Ret for Vec<T> {
    /// Sequences are read back as typed bytes, not as interpreter values.
    const KEEP_ON_DEVICE: bool = true;

    fn from_value(v: Value) -> Result<Self, Error> {
        seq_items(&v)?.iter().map(T::from_value).collect()
    }

    fn from_output(o: Output, place: Place) -> Result<Self, Error> {
        match o {
            Output::Device(seq) => {
                let v = download_items(place, &seq);
                free_on(place, &seq);
                v
            }
            other => Self::from_value(host_value(other, place)?),
        }
    }
}

impl<T: Elem> Ret for Seq<T> {
    const KEEP_ON_DEVICE: bool = true;

    fn from_value(v: Value) -> Result<Self, Error> {
        Vec::<T>::from_value(v).map(Seq::from)
    }

    /// A sequence left on the device becomes a `Seq` holding only that device copy.
    fn from_output(o: Output, place: Place) -> Result<Self, Error> {
        match o {
            Output::Device(seq) => Ok(Seq::from_device(DeviceCopy::new(place, seq))),
            other => Self::from_value(host_value(other, place)?),
        }
    }
}

impl<T: Elem> Ret for Nested<T> {
    /// Ragged results are read back as typed bytes (offsets and leaf columns).
    const KEEP_ON_DEVICE: bool = true;

    fn from_output(o: Output, place: Place) -> Result<Self, Error> {
        match o {
            Output::Nested(n) => download_nested(place, n),
            other => Self::from_value(host_value(other, place)?),
        }
    }

    fn from_value(v: Value) -> Result<Self, Error> {
        let rows = seq_items(&v)?;
        let mut values = Vec::new();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        for r in rows {
            for x in seq_items(r)? {
                values.push(T::from_value(x)?);
            }
            offsets.push(values.len());
        }
        Nested::from_parts(values, offsets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver that answers every query with a recognisable value.
    struct Probe;

    impl Driver for Probe {
        type Module = ();
        fn load(&self, _: &str) -> Result<(), String> {
            Ok(())
        }
        fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
            Ok(bytes as u64 + 1000)
        }
        fn write(&self, _: u64, _: &[u8]) -> Result<(), String> {
            Ok(())
        }
        fn read(&self, _: u64, out: &mut [u8]) -> Result<(), String> {
            out.fill(7);
            Ok(())
        }
        fn copy(&self, _: u64, _: u64, _: usize) -> Result<(), String> {
            Err("copy reached the probe".into())
        }
        fn launch(&self, _: &(), k: &str, _: u32, _: u32, _: &[LaunchArg]) -> Result<(), String> {
            Err(format!("launch of {k} reached the probe"))
        }
        fn free(&self, addr: u64) -> Result<(), String> {
            Err(format!("free of {addr} reached the probe"))
        }
        fn resident_blocks(&self, _: &(), kernel: &str, block: u32) -> Result<u32, String> {
            Ok(kernel.len() as u32 * 1000 + block)
        }
    }

    /// The counting wrapper forwards every operation, including those with a default in
    /// the trait (a missed one would silently use the default: the occupancy model
    /// instead of the device's answer).
    #[test]
    fn counted_forwards_everything() {
        let c = Counted::new(Probe);
        assert_eq!(c.resident_blocks(&(), "k12", 256), Ok(3256));
        assert_eq!(c.alloc_zeroed(24), Ok(1024));
        assert_eq!(c.copy(1, 2, 3), Err("copy reached the probe".into()));
        assert_eq!(
            c.launch(&(), "k", 1, 1, &[]),
            Err("launch of k reached the probe".into())
        );
        assert_eq!(c.free(9), Err("free of 9 reached the probe".into()));
        c.write(5, &[1, 2, 3]).unwrap();
        let mut out = [0u8; 4];
        c.read(5, &mut out).unwrap();
        assert_eq!(out, [7; 4]);
        let t = c.read_counts();
        assert_eq!(
            (t.to_device, t.to_device_bytes, t.to_host, t.to_host_bytes),
            (1, 3, 1, 4)
        );
    }

    /// Leaf columns written by `put` read back by `get`, for every scalar and nested
    /// tuples, at the widths `dpl_cuda` uses for the device.
    #[test]
    fn leaf_columns_round_trip() {
        fn check<T: Elem + PartialEq + std::fmt::Debug + Clone>(items: &[T]) {
            let mut widths = Vec::new();
            T::widths(&mut widths);
            assert_eq!(widths.len(), T::LEAVES);
            let leaves: Vec<usize> = match T::ty() {
                Type::Scalar(s) => vec![dpl_cuda::size_of(s) as usize],
                Type::Tuple(ts) => ts
                    .iter()
                    .flat_map(|t| match t {
                        Type::Scalar(s) => vec![dpl_cuda::size_of(*s) as usize],
                        Type::Tuple(us) => us
                            .iter()
                            .map(|u| match u {
                                Type::Scalar(s) => dpl_cuda::size_of(*s) as usize,
                                other => panic!("{other}"),
                            })
                            .collect(),
                        other => panic!("{other}"),
                    })
                    .collect(),
                other => panic!("{other}"),
            };
            assert_eq!(widths, leaves);
            let mut cols = vec![Vec::new(); T::LEAVES];
            items.iter().for_each(|x| x.put(&mut cols));
            for (c, w) in cols.iter().zip(&widths) {
                assert_eq!(c.len(), w * items.len());
            }
            let back: Vec<T> = (0..items.len()).map(|i| T::get(&cols, i)).collect();
            assert_eq!(back, items);
            // The one-pass forms agree with the element-wise ones (and append).
            let mut all = vec![Vec::new(); T::LEAVES];
            let (a, b) = items.split_at(items.len() / 2);
            T::put_all(a, &mut all);
            T::put_all(b, &mut all);
            assert_eq!(all, cols);
            assert_eq!(T::get_all(&cols, items.len()), items);
        }
        check(&[true, false, true]);
        check(&[i32::MIN, -1, 0, i32::MAX]);
        check(&[u32::MAX, 3]);
        check(&[i64::MIN, 5]);
        check(&[u64::MAX, 0]);
        check(&[usize::MAX, 17]);
        check(&[f32::MIN_POSITIVE, -0.0, f32::INFINITY]);
        check(&[f64::MAX, -2.5]);
        check(&[(1u32, (true, -3.5f64), 9i64), (0, (false, 1e300), -1)]);
    }
}
