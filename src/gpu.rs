//! The GPU places at run time: the glue between the facade's types ([`Seq`], [`Nested`],
//! [`Matrix`], [`Place`], [`Error`]) and dpl-cuda's run time, which holds the rest (the
//! devices behind [`Place::Sim`] and [`Place::Gpu`], transfer counting, profiles, the
//! executor).
//!
//! With the `sim` or `cuda` feature the `#[parallel]` macro compiles each function for the
//! GPU at build time (`dpl_cuda::compile_with`) and embeds the result — PTX text plus
//! launch plan, encoded by `GpuProgram::encode` — as a [`Program`] static next to the
//! function, with one source [`Location`](crate::Location) per span of the function for error messages. A
//! call on a GPU place converts its arguments ([`Arg`]), runs the program on the place's
//! device and converts the result back ([`Ret`]).
//!
//! Sequences cross between host and device as typed bytes: [`Elem::put`] writes each
//! element's scalar leaves straight into one byte column per leaf (the device's
//! structure-of-arrays layout, `dpl_cuda::layout`) and [`Elem::get`] reads them back, with
//! no per-element interpreter [`Value`]. Flat sequences (`&[T]`, `Vec<T>`, [`Seq<T>`]) are
//! one set of columns; a [`Matrix`] is its storage plus shape and strides (read in place
//! by the kernels, whatever its layout); a [`Nested`] argument is its offsets plus its
//! values' columns ([`dpl_cuda::NestedColumns`], uploaded by the run and freed when it
//! ends; two arguments with the same offsets, such as `Nested`s sharing them, upload them
//! once), and a ragged result comes back as offsets plus columns, straight into
//! [`Nested::from_parts`]. Only scalars still go through `Value`s.
//!
//! A function the GPU backend cannot compile gets no [`Program`]: a call of it on a GPU
//! place runs on the CPU instead ([`cpu_instead`]), which says why (through `log`) once
//! per function (the reason is also in `dpl::inspect!(f).gpu_not_compiled`).

use dpl_core::float16::{bf16, f16};
use dpl_core::interp::Value;
use dpl_core::ir::Type;
pub use dpl_core::run::Transfers;
pub use dpl_cuda::layout::Elem;
pub use dpl_cuda::runtime::Embedded as Program;
#[cfg(feature = "sim")]
pub use dpl_cuda::runtime::KernelProfile;
use dpl_cuda::runtime::{Device, NoDevice};
use dpl_cuda::{
    Columns, DeviceNested, DeviceSeq, HostColumns, Input, MatrixStorage, NestedColumns, Output,
    StridedMatrix,
};

use crate::{Error, Matrix, MatrixView, Nested, Place, RowView, Seq};

/// The device of `place`, or why there is none (the place's backend is not built, or its
/// device cannot be opened).
fn device(place: Place) -> Result<Device, Error> {
    dpl_cuda::runtime::device(place).map_err(|e| match e {
        NoDevice::Unusable(reason) => Error::PlaceUnavailable { place, reason },
        NoDevice::NotGpu(_) | NoDevice::NotBuilt(_) => crate::place::unavailable(place),
    })
}

/// Whether `Place::Gpu(n)` can run calls: the `cuda` feature is on, the CUDA driver
/// library loads and device `n` exists. Otherwise the reason.
pub fn device_status(n: usize) -> Result<(), String> {
    match dpl_cuda::runtime::device(Place::Gpu(n)) {
        Ok(_) => Ok(()),
        Err(NoDevice::Unusable(reason)) => Err(reason),
        Err(_) => Err(crate::place::unavailable(Place::Gpu(n)).to_string()),
    }
}

/// The transfers between the host and `place` so far ([`crate::transfers`]).
pub fn transfers(place: Place) -> Transfers {
    dpl_cuda::runtime::device(place)
        .map(Device::transfers)
        .unwrap_or_default()
}

/// Waits for the work queued on `place`'s device ([`crate::synchronize`]); nothing for a
/// place without a usable device.
pub fn synchronize(place: Place) -> Result<(), Error> {
    match dpl_cuda::runtime::device(place) {
        Ok(d) => d.synchronize(),
        Err(_) => Ok(()),
    }
}

/// Bytes of simulated device memory in use by the process's `Place::Sim` calls (buffers of
/// `Seq`s kept there, plus anything leaked): for tests that check device copies are freed.
#[cfg(feature = "sim")]
pub fn sim_memory_used() -> u64 {
    dpl_cuda::runtime::sim_memory_used()
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
    dpl_cuda::runtime::profile(|| crate::with_place(Place::Sim, f))
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
    program.program()?;
    let inputs = args
        .into_iter()
        .map(|a| a.arg)
        .collect::<Result<Vec<_>, _>>()?;
    let out = device(place).and_then(|d| program.run(d, inputs, R::KEEP_ON_DEVICE));
    drop(temps);
    R::from_output(out?, place)
}

/// Where a call of `name`, a function the GPU backend did not compile (for `reason`), runs
/// when the current place is `place`: on [`Place::Cpu`] instead of a GPU place (saying why
/// through the `log` crate at level `warn`, once per function), elsewhere on `place`
/// itself.
pub fn cpu_instead(place: Place, name: &'static str, reason: &'static str) -> Place {
    if !matches!(place, Place::Sim | Place::Gpu(_)) {
        return place;
    }
    static TOLD: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
    if !told.contains(&name) {
        told.push(name);
        log::warn!("`{name}` is not compiled for the GPU ({reason}); running it on the CPU");
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

/// Copies `items` to `place` as typed bytes (a fresh device sequence).
fn upload_items<T: Elem>(place: Place, items: &[T]) -> Result<DeviceSeq, Error> {
    device(place)?.upload(&HostColumns::from_elems(items))
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
    let cols = device(place)?.read(seq)?;
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

fn free_on(place: Place, seq: &DeviceSeq) {
    if let Ok(d) = dpl_cuda::runtime::device(place) {
        d.free(seq);
    }
}

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

/// The place and the device addresses of `seq`'s device copy (one buffer per scalar leaf
/// of `T`, structure of arrays), if it has one: for handing dpl's device data to other CUDA
/// code in the same process (on `Place::Gpu(n)` these are `CUdeviceptr`s in device `n`'s
/// primary context, which the CUDA runtime shares; `examples/gpu_bench.rs` runs NVIDIA's
/// CUB on them). The addresses stay valid while `seq` keeps that copy: until it is dropped
/// or written through `&mut`. Work a call queued on them may still be running: wait for
/// the device before reading them elsewhere.
pub fn device_buffers<T>(seq: &Seq<T>) -> Option<(Place, &[u64])> {
    seq.device().map(|d| (d.place, d.seq.bufs.as_slice()))
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

/// The element `v` holds, or an internal error (the program returned something other than
/// its declared type).
fn elem_from_value<T: Elem>(v: &Value) -> Result<T, Error> {
    T::from_value(v).ok_or_else(|| {
        let what = match T::ty() {
            Type::Tuple(_) => "a tuple".to_string(),
            t => t.to_string(),
        };
        mismatch(&what, v)
    })
}

/// Scalar arguments and results: their interpreter values.
macro_rules! scalar_elem {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            fn input(&self, _: Place) -> In {
                In::host(Elem::to_value(self))
            }
        }
        impl Ret for $t {
            fn from_value(v: Value) -> Result<Self, Error> {
                elem_from_value(&v)
            }
        }
    )*};
}

scalar_elem!(
    bool, i8, u8, i16, u16, i32, u32, i64, u64, usize, f16, bf16, f32, f64
);

/// Tuple results: each part converted on its own (a part may be left on the device).
macro_rules! tuples {
    ($(($($t:ident $i:tt),+)),*) => {$(
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

dpl_cuda::for_each_tuple!(tuples);

/// Parameters: how a Rust argument becomes what the program takes.
pub trait Arg {
    /// The argument for a call on `place`: the host value, a device copy already there,
    /// or one made for the call.
    fn input(&self, place: Place) -> In;

    /// Whether the argument has a copy on a CUDA device (what the default placement asks,
    /// [`crate::__private::gpu_dispatch`]).
    fn on_gpu(&self) -> bool {
        false
    }
}

impl<A: Arg + ?Sized> Arg for &A {
    fn input(&self, place: Place) -> In {
        (**self).input(place)
    }

    fn on_gpu(&self) -> bool {
        (**self).on_gpu()
    }
}

impl<T: Elem> Arg for [T] {
    /// Copied to `place` as typed bytes for this call.
    fn input(&self, place: Place) -> In {
        In::uploaded(upload_items(place, self))
    }
}

impl<T: Elem> Arg for Vec<T> {
    fn input(&self, place: Place) -> In {
        self.as_slice().input(place)
    }
}

impl<T: Elem> Arg for Seq<T> {
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

    fn on_gpu(&self) -> bool {
        self.device()
            .is_some_and(|d| matches!(d.place(), Place::Gpu(_)))
    }
}

impl<T: Elem> Arg for Nested<T> {
    /// The offsets and the values' leaf columns, uploaded by the run for this call (and
    /// freed when it ends); the run checks the offsets again (one pass over them).
    fn input(&self, _: Place) -> In {
        In {
            arg: Ok(Input::Nested(NestedColumns {
                offsets: Columns::Host(HostColumns::offsets(self.offsets())),
                values: Columns::Host(HostColumns::from_elems(self.values())),
            })),
            temp: None,
        }
    }
}

impl<T: Elem> Arg for Matrix<T> {
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

impl<T: Elem + Clone> Arg for RowView<'_, T> {
    /// The addressed elements, in order (an `ndarray` 1-D view read in place on the CPU),
    /// copied as typed bytes for this call.
    fn input(&self, place: Place) -> In {
        match self.as_slice() {
            Some(s) => s.input(place),
            None => self.to_vec().as_slice().input(place),
        }
    }
}

impl<T: Elem + Clone> Arg for MatrixView<'_, T> {
    /// The addressed elements packed row after row (a view's buffer may hold elements it
    /// does not address, which are not uploaded), copied as typed bytes for this call.
    fn input(&self, place: Place) -> In {
        let packed: Vec<T> = self.iter().flat_map(|r| r.iter().cloned()).collect();
        match upload_items(place, &packed) {
            Ok(seq) => In {
                arg: Ok(Input::Matrix(StridedMatrix {
                    storage: MatrixStorage::Device(seq.clone()),
                    rows: self.rows(),
                    cols: self.cols(),
                    row_stride: self.cols(),
                    col_stride: 1,
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
            let v = device(place).and_then(|dev| dev.download(&d));
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
        seq_items(&v)?.iter().map(elem_from_value).collect()
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
                values.push(elem_from_value(x)?);
            }
            offsets.push(values.len());
        }
        Nested::from_parts(values, offsets)
    }
}
