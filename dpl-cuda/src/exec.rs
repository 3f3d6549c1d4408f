//! The executor: runs a [`GpuProgram`]'s plan through a [`Driver`].
//!
//! Arguments arrive as [`Input`]s: host values, or sequences as typed byte columns
//! ([`HostColumns`], one per scalar leaf; nested sequences as offsets plus columns,
//! [`NestedColumns`]) on the host or already on the device. The environment maps each
//! top-level variable to a host value (scalars and tuples, as [`Value`]s), a device
//! sequence (one buffer per scalar leaf of the element type, plus the length, and the row
//! offsets of a nested one), or a tuple of those. Scalar statements are evaluated with the reference
//! interpreter's own semantics (each one is run by [`dpl_core::interp::run`] as a
//! one-statement function), so host arithmetic cannot drift from the CPU backends.
//!
//! Failed checks inside kernels are kept in a 32-byte error record: word 0 holds the
//! bitwise negation of the smallest failing key (0: none), written with an atomic max.
//! At a [`Step::CheckErrors`] the executor reads it; when set, it launches the kernels of
//! the checked group again in *report mode* (the report key parameter is that word), where
//! only the thread with that key writes its site and values (words 1-3), and turns them
//! into the [`Error`] the interpreter gives. Keys are element indices (then `len + i` for
//! the second stage of a combinator), so the reported failure is the one the sequential
//! reference reports first, whatever the schedule.

use dpl_core::interp::{self, Value};
use dpl_core::ir::{Block, Expr, Function, Scalar, Span, Stmt, Type};
use dpl_core::run::{Error, Location};

use crate::GpuProgram;
use crate::plan::*;
use crate::ptx::size_of;

/// The most bytes of per-thread temporaries ([`KArg::Scratch`]) a kernel whose grid is
/// free ([`crate::plan::Launch::any_grid`]) is given: its grid shrinks to fit (at least one
/// block).
const SCRATCH_BUDGET: u64 = 256 << 20;

/// A scalar kernel argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LaunchArg {
    /// A `.u32` (also `.s32` and `bool`) parameter.
    U32(u32),
    /// A `.u64` (also `.s64`, lengths and device addresses) parameter.
    U64(u64),
    /// A `.f32` parameter.
    F32(f32),
    /// A `.f64` parameter.
    F64(f64),
}

/// What the executor needs from a device. Memory is untyped and addressed by 64-bit device
/// addresses; errors are messages (they become [`Error::Device`]).
pub trait Driver {
    /// A loaded PTX module.
    type Module;
    /// Loads (or finds in a cache) the module of a PTX text.
    fn load(&self, ptx: &str) -> Result<Self::Module, String>;
    /// Loads (or finds in a cache) the module of a compiled program. The default loads
    /// its PTX text with [`Driver::load`]; a driver that can use the program's cubins
    /// ([`GpuProgram::cubins`]) overrides it.
    fn load_program(&self, program: &GpuProgram) -> Result<Self::Module, String> {
        self.load(&program.ptx)
    }
    /// Allocates `bytes` zeroed bytes (at least 1).
    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String>;
    /// Copies host bytes to device address `dst`.
    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String>;
    /// Copies device bytes at `src` to the host.
    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String>;
    /// Copies `bytes` bytes between device addresses.
    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String>;
    /// Launches `kernel` over `grid` blocks of `block` threads (one dimension) and waits
    /// for it.
    fn launch(
        &self,
        module: &Self::Module,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String>;
    /// Frees an allocation.
    fn free(&self, addr: u64) -> Result<(), String>;
    /// How many blocks of `block` threads of `kernel` the device runs at once: resident
    /// blocks per multiprocessor (from the kernel's registers and shared memory) times the
    /// number of multiprocessors. Grid-stride kernels are launched with at most this many
    /// blocks ([`crate::plan::Count::Resident`]). The default is the model of
    /// [`crate::plan::model_resident_blocks`] (what the simulator uses); the CUDA driver
    /// asks the device. Must give the same answer for the same arguments during a run.
    fn resident_blocks(
        &self,
        module: &Self::Module,
        kernel: &str,
        block: u32,
    ) -> Result<u32, String> {
        let _ = (module, kernel);
        Ok(crate::plan::model_resident_blocks(block))
    }
}

/// Where errors are reported when no location table is given.
/// The location of errors when [`run`] is given no location table.
pub const UNKNOWN_LOCATION: Location = Location {
    file: "<dpl>",
    line: 0,
    column: 0,
};

/// Runs `program` on `args` (one [`Value`] per parameter); errors carry an unknown
/// location (see [`run_at`]).
pub fn run<D: Driver>(program: &GpuProgram, driver: &D, args: Vec<Value>) -> Result<Value, Error> {
    run_at(program, driver, args, &|_| UNKNOWN_LOCATION)
}

/// Runs `program` on `args`; `locate` maps a statement's span number to its source
/// location for error messages.
pub fn run_at<D: Driver>(
    program: &GpuProgram,
    driver: &D,
    args: Vec<Value>,
    locate: &dyn Fn(u32) -> Location,
) -> Result<Value, Error> {
    let args = args.into_iter().map(Input::Host).collect();
    match run_resident(program, driver, args, false, locate)? {
        Output::Host(v) => Ok(v),
        _ => Err(internal("a device result was not asked for")),
    }
}

/// A flat sequence in device memory: one buffer per scalar leaf of `elem` (structure of
/// arrays), `len` elements each. Whoever holds it owns the buffers and frees them with
/// [`Driver::free`].
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceSeq {
    /// One buffer per scalar leaf of `elem`.
    pub bufs: Vec<u64>,
    /// The number of elements.
    pub len: usize,
    /// The element type (a scalar or a tuple of scalars).
    pub elem: Type,
}

/// An argument of [`run_resident`].
#[derive(Clone, Debug)]
pub enum Input {
    /// A host value, uploaded for the call.
    Host(Value),
    /// A flat sequence already on the device (read, never freed nor written by the call).
    Device(DeviceSeq),
    /// A matrix (a `[[T]]` parameter) given as its storage and strides, uploaded as is:
    /// the kernels address element `j` of row `r` at `r * row_stride + j * col_stride`,
    /// so a column-major matrix is read without transposing it.
    Matrix(StridedMatrix),
    /// A nested sequence (a `[[T]]` parameter) given as its row offsets and its values'
    /// leaf columns, each on the host (uploaded for the call, freed when it ends) or
    /// already on the device (read, never freed nor written). See [`NestedColumns`] for
    /// what is checked.
    Nested(NestedColumns),
}

/// The scalar leaves of `len` elements of type `elem` (a scalar or a tuple of scalars) on
/// the host: one column per leaf, in order, each holding the leaf of every element as
/// little-endian bytes at its device width ([`size_of`]: `bool` one byte, `usize` eight).
/// This is the device's structure-of-arrays layout, so a column is copied as it is.
#[derive(Clone, Debug, PartialEq)]
pub struct HostColumns {
    /// The element type.
    pub elem: Type,
    /// The number of elements.
    pub len: usize,
    /// One column per scalar leaf of `elem`, `len * size_of(leaf)` bytes each.
    pub cols: Vec<Vec<u8>>,
}

impl HostColumns {
    /// The columns of host values of type `elem`.
    pub fn from_values<'a>(
        elem: &Type,
        items: impl Iterator<Item = &'a Value>,
    ) -> Result<HostColumns, Error> {
        let leaves = type_leaves(elem)?;
        let hint = items.size_hint().0;
        let mut cols: Vec<Vec<u8>> = leaves
            .iter()
            .map(|&l| Vec::with_capacity(hint * size_of(l) as usize))
            .collect();
        let mut tmp = Vec::new();
        let mut len = 0;
        for it in items {
            len += 1;
            tmp.clear();
            value_leaves(it, &mut tmp);
            if tmp.len() != leaves.len() {
                return Err(internal(format!("an element of type {elem} was expected")));
            }
            for (b, x) in cols.iter_mut().zip(&tmp) {
                scalar_bytes(x, b)?;
            }
        }
        Ok(HostColumns {
            elem: elem.clone(),
            len,
            cols,
        })
    }

    /// `usize` offsets as a column (what [`NestedColumns::offsets`] takes).
    pub fn offsets(offsets: &[usize]) -> HostColumns {
        let mut col = Vec::with_capacity(offsets.len() * 8);
        for &o in offsets {
            col.extend_from_slice(&(o as u64).to_le_bytes());
        }
        HostColumns {
            elem: Type::Scalar(Scalar::Usize),
            len: offsets.len(),
            cols: vec![col],
        }
    }

    /// The elements as host values.
    pub fn to_values(&self) -> Result<Vec<Value>, Error> {
        let leaves = self.leaves()?;
        (0..self.len)
            .map(|i| {
                let mut it = leaves.iter().zip(&self.cols).map(|(&l, c)| {
                    let w = size_of(l) as usize;
                    scalar_from_bytes(l, &c[i * w..(i + 1) * w])
                });
                assemble(&self.elem, &mut it)
            })
            .collect()
    }

    /// The leaves of `elem`, after checking there is one column of the right size per
    /// leaf.
    fn leaves(&self) -> Result<Vec<Scalar>, Error> {
        let leaves = type_leaves(&self.elem)?;
        let sized = |(c, &l): (&Vec<u8>, &Scalar)| {
            (self.len as u128) * u128::from(size_of(l)) == c.len() as u128
        };
        if self.cols.len() != leaves.len() || !self.cols.iter().zip(&leaves).all(sized) {
            return Err(Error::Device(format!(
                "{} host column(s) of {} bytes do not hold {} element(s) of {}",
                self.cols.len(),
                self.cols.iter().map(Vec::len).sum::<usize>(),
                self.len,
                self.elem
            )));
        }
        Ok(leaves)
    }

    /// The columns as `u64`s (one leaf of 8 bytes: `usize` or `u64` offsets).
    fn words(&self) -> Result<Vec<u64>, Error> {
        match self.leaves()?.as_slice() {
            [Scalar::Usize | Scalar::U64] => Ok(words(&self.cols[0])),
            _ => Err(Error::Device(format!(
                "offsets must be usize, {} was given",
                self.elem
            ))),
        }
    }
}

/// A flat sequence given as part of an argument: on the host, or already on the device.
#[derive(Clone, Debug)]
pub enum Columns {
    /// Host columns, uploaded for the call (and freed when it ends).
    Host(HostColumns),
    /// A device sequence (read, never freed nor written by the call).
    Device(DeviceSeq),
}

impl Columns {
    fn elem(&self) -> &Type {
        match self {
            Columns::Host(c) => &c.elem,
            Columns::Device(d) => &d.elem,
        }
    }

    fn len(&self) -> usize {
        match self {
            Columns::Host(c) => c.len,
            Columns::Device(d) => d.len,
        }
    }
}

/// A nested sequence `[[T]]` as its parts ([`Input::Nested`]): row `r` is
/// `values[offsets[r] .. offsets[r + 1]]`.
///
/// The executor checks the parts against the parameter's type: `values` holds `T`s,
/// `offsets` holds `usize`s (`rows + 1` of them, at least one), `offsets[0] == 0` and the
/// last offset is the number of values. Host offsets are also checked to be
/// non-decreasing (one pass, which also gives the longest row for `inner = "auto"`);
/// device offsets are only read at both ends (two 8-byte reads): that they do not
/// decrease is trusted. Host offsets equal to those of an earlier argument of the same
/// call are uploaded once (the case of two `dpl::Nested` sharing their offsets).
#[derive(Clone, Debug)]
pub struct NestedColumns {
    /// The `rows + 1` row offsets into `values`, `usize` elements.
    pub offsets: Columns,
    /// Every element of every row, row 0 first.
    pub values: Columns,
}

impl NestedColumns {
    /// The parts of a host [`Value`]: a sequence of sequences of `inner`s.
    pub fn from_value(inner: &Type, v: &Value) -> Result<NestedColumns, Error> {
        let Value::Seq(rows) = v else {
            return Err(internal("a sequence of rows was expected"));
        };
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        for r in rows.iter() {
            let Value::Seq(row) = r else {
                return Err(internal("a row was expected"));
            };
            offsets.push(offsets[offsets.len() - 1] + row.len());
        }
        let flat = rows.iter().flat_map(|r| match r {
            Value::Seq(row) => row.iter(),
            _ => [].iter(),
        });
        Ok(NestedColumns {
            offsets: Columns::Host(HostColumns::offsets(&offsets)),
            values: Columns::Host(HostColumns::from_values(inner, flat)?),
        })
    }
}

/// A nested sequence left on the device by [`run_resident`] ([`Output::Nested`]); the
/// caller owns the buffers of both parts. Row `r` is `values[offsets[r] ..
/// offsets[r + 1]]`, `offsets[0]` is 0 and `offsets.len` is the number of rows plus one.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceNested {
    /// The row offsets (`usize`).
    pub offsets: DeviceSeq,
    /// The values, as many as the last offset says.
    pub values: DeviceSeq,
}

/// A matrix as its storage and strides ([`Input::Matrix`]): element `(r, j)` is
/// `storage[r * row_stride + j * col_stride]`. Row-major: `row_stride = cols`,
/// `col_stride = 1`; column-major: `row_stride = 1`, `col_stride = rows`.
#[derive(Clone, Debug)]
pub struct StridedMatrix {
    /// The elements, as laid out in memory: on the host, or already on the device.
    pub storage: MatrixStorage,
    /// Number of rows.
    pub rows: usize,
    /// Number of columns (the length of every row).
    pub cols: usize,
    /// Elements between the starts of consecutive rows.
    pub row_stride: usize,
    /// Elements between consecutive elements of a row.
    pub col_stride: usize,
}

impl StridedMatrix {
    /// Whether host storage is a sequence of `flat_ty`.
    fn storage_conforms(&self, flat_ty: &Type) -> bool {
        matches!(&self.storage, MatrixStorage::Host(v) if v.conforms(flat_ty))
    }
}

/// Where the elements of a [`StridedMatrix`] are.
#[derive(Clone, Debug)]
pub enum MatrixStorage {
    /// A [`Value::Seq`] of values of the row element type `T`, uploaded for the call.
    Host(Value),
    /// A flat device sequence of `T`s (read, never freed nor written by the call).
    Device(DeviceSeq),
}

impl From<Value> for MatrixStorage {
    fn from(v: Value) -> Self {
        MatrixStorage::Host(v)
    }
}

/// A result of [`run_resident`].
#[derive(Clone, Debug)]
pub enum Output {
    /// A host value (the whole result when sequences are not kept on the device).
    Host(Value),
    /// A flat sequence left on the device; the caller owns its buffers.
    Device(DeviceSeq),
    /// A nested sequence left on the device; the caller owns its buffers.
    Nested(DeviceNested),
    /// A tuple with at least one device sequence inside.
    Tuple(Vec<Output>),
}

/// Runs `program` on `args`, some of which may already be on the device. With
/// `keep_on_device`, flat and nested sequences in the result stay on the device
/// ([`Output::Device`], [`Output::Nested`]: fresh buffers owned by the caller, even when
/// the program returns an argument unchanged); everything else comes back to the host.
/// This is what lets a `Seq<T>` stay on the device between calls, and a ragged result be
/// read back as typed columns. Whatever the run uploaded or allocated is freed when it
/// ends, also when it fails.
pub fn run_resident<D: Driver>(
    program: &GpuProgram,
    driver: &D,
    args: Vec<Input>,
    keep_on_device: bool,
    locate: &dyn Fn(u32) -> Location,
) -> Result<Output, Error> {
    let plan = &program.plan;
    if args.len() != plan.params.len() {
        return Err(Error::Device(format!(
            "`{}` takes {} argument(s), {} given",
            program.name,
            plan.params.len(),
            args.len()
        )));
    }
    let module = driver.load_program(program).map_err(Error::Device)?;
    let mut ex = Exec {
        program,
        driver,
        module,
        env: Vec::new(),
        temps: vec![None; plan.temps as usize],
        allocs: Vec::new(),
        pending: Vec::new(),
        err: 0,
        shapes: Vec::new(),
        host_offsets: Vec::new(),
        given: Vec::new(),
        locate,
    };
    let result = ex.start(args).and_then(|()| {
        ex.steps(&plan.steps)?;
        let r = ex.get(plan.result)?.clone();
        if keep_on_device {
            ex.take_output(&r)
        } else {
            ex.to_value(&r).map(Output::Host)
        }
    });
    // Everything this run allocated is freed, except what a successful run hands over.
    let given = if result.is_ok() { &ex.given[..] } else { &[] };
    for &a in ex.allocs.iter().filter(|a| !given.contains(a)) {
        let _ = driver.free(a);
    }
    result
}

/// Copies a flat host sequence (`items`, elements of type `elem`) to the device; the
/// caller owns the buffers of the result.
pub fn upload<D: Driver>(driver: &D, elem: &Type, items: &[Value]) -> Result<DeviceSeq, Error> {
    upload_columns(driver, &HostColumns::from_values(elem, items.iter())?)
}

/// Reads a device sequence back to the host.
pub fn download<D: Driver>(driver: &D, seq: &DeviceSeq) -> Result<Value, Error> {
    download_values(driver, seq).map(Value::seq)
}

/// The elements of a device sequence as host values.
fn download_values<D: Driver>(driver: &D, seq: &DeviceSeq) -> Result<Vec<Value>, Error> {
    let cols = HostColumns {
        elem: seq.elem.clone(),
        len: seq.len,
        cols: read_columns(driver, seq)?,
    };
    cols.to_values()
}

/// Copies host leaf columns to fresh device buffers (one per column) owned by the caller;
/// on failure, whatever was allocated is freed.
pub fn upload_columns<D: Driver>(driver: &D, c: &HostColumns) -> Result<DeviceSeq, Error> {
    c.leaves()?;
    let mut bufs: Vec<u64> = Vec::with_capacity(c.cols.len());
    for col in &c.cols {
        let written = driver.alloc_zeroed(col.len().max(1)).and_then(|b| {
            bufs.push(b);
            if col.is_empty() {
                Ok(())
            } else {
                driver.write(b, col)
            }
        });
        if let Err(e) = written {
            for &b in &bufs {
                let _ = driver.free(b);
            }
            return Err(dev(e));
        }
    }
    Ok(DeviceSeq {
        bufs,
        len: c.len,
        elem: c.elem.clone(),
    })
}

/// Reads the leaf columns of a device sequence (the inverse of [`upload_columns`]).
pub fn read_columns<D: Driver>(driver: &D, seq: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
    let leaves = type_leaves(&seq.elem)?;
    if leaves.len() != seq.bufs.len() {
        return Err(internal(format!(
            "a device sequence of {} with {} buffer(s)",
            seq.elem,
            seq.bufs.len()
        )));
    }
    seq.bufs
        .iter()
        .zip(&leaves)
        .map(|(&b, &l)| {
            let mut bytes = vec![0u8; size_of(l) as usize * seq.len];
            if !bytes.is_empty() {
                driver.read(b, &mut bytes).map_err(dev)?;
            }
            Ok(bytes)
        })
        .collect()
}

/// Checks host row offsets against `total` values (`offsets[0] == 0`, non-decreasing,
/// the last one is `total`); the length of the longest row.
fn check_offsets(offsets: &[u64], total: usize) -> Result<usize, Error> {
    let bad = |why: String| Err(Error::Device(format!("malformed nested sequence: {why}")));
    match (offsets.first(), offsets.last()) {
        (Some(0), Some(&last)) if last == total as u64 => {}
        (Some(0), Some(last)) => {
            return bad(format!(
                "the last offset is {last}, there are {total} values"
            ));
        }
        (first, _) => return bad(format!("offsets[0] is {first:?}, expected 0")),
    }
    let mut longest = 0;
    for (i, w) in offsets.windows(2).enumerate() {
        let Some(n) = w[1].checked_sub(w[0]) else {
            return bad(format!("offsets decrease at row {i}: {} > {}", w[0], w[1]));
        };
        longest = longest.max(n);
    }
    Ok(longest as usize)
}

/// Little-endian `u64`s of a byte column.
fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

/// A value of the environment.
#[derive(Clone, Debug)]
enum Rt {
    /// A host value (scalar or tuple of scalars).
    Val(Value),
    /// A device sequence: one buffer per scalar leaf of the (innermost) element type. A
    /// nested sequence (`elem` is `[T]`) also has `offs`: `len + 1` `u64` offsets of the
    /// rows into the leaf buffers.
    Seq {
        bufs: Vec<u64>,
        len: usize,
        elem: Type,
        offs: Option<u64>,
        /// A strided matrix (`Input::Matrix`): no offsets, row `r` at element `r * rs` of
        /// the leaves, `cols` long, elements `cs` apart.
        layout: Option<Strides>,
    },
    /// A tuple holding sequences.
    Tup(Vec<Rt>),
}

/// The strides of a matrix given as its storage ([`Input::Matrix`]), in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Strides {
    rs: u64,
    cs: u64,
    cols: u64,
}

impl Strides {
    /// How many elements of storage `rows` rows span (0 for an empty matrix).
    fn extent(&self, rows: usize) -> usize {
        if rows == 0 || self.cols == 0 {
            return 0;
        }
        ((rows as u64 - 1) * self.rs + (self.cols - 1) * self.cs + 1) as usize
    }
}

#[derive(Clone, Debug)]
enum TempV {
    Buf(u64),
    Num(u64),
}

/// A launch since the last check: kernel, grid, block, resolved arguments and the
/// position of the report key among them.
type Pending = (usize, u32, u32, Vec<LaunchArg>, Option<usize>);

struct Exec<'a, D: Driver> {
    program: &'a GpuProgram,
    driver: &'a D,
    module: D::Module,
    env: Vec<Option<Rt>>,
    temps: Vec<Option<TempV>>,
    allocs: Vec<u64>,
    /// Launches since the last check: kernel, grid, resolved arguments and the position
    /// of the report key among them.
    pending: Vec<Pending>,
    err: u64,
    locate: &'a dyn Fn(u32) -> Location,
    /// `(total, longest row)` of the nested sequences uploaded by this run, by the address
    /// of their offsets (so `inner = "auto"` does not read them back).
    shapes: Vec<(u64, usize, usize)>,
    /// The host offsets uploaded by this run and where they went, so that equal offsets
    /// of another argument are not uploaded again.
    host_offsets: Vec<(Vec<u8>, u64)>,
    /// Buffers of `allocs` handed to the caller with the result ([`Exec::own`]): not freed
    /// at the end of a successful run.
    given: Vec<u64>,
}

fn dev(e: String) -> Error {
    Error::Device(e)
}

fn internal(msg: impl Into<String>) -> Error {
    Error::Device(format!(
        "internal error of the GPU executor: {}",
        msg.into()
    ))
}

/// The scalar leaves of a host value, in order.
fn value_leaves(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Tuple(vs) => vs.iter().for_each(|v| value_leaves(v, out)),
        other => out.push(other.clone()),
    }
}

fn scalar_bytes(v: &Value, out: &mut Vec<u8>) -> Result<(), Error> {
    match *v {
        Value::Bool(b) => out.push(u8::from(b)),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::Usize(x) => out.extend_from_slice(&(x as u64).to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        _ => return Err(internal("a scalar was expected")),
    }
    Ok(())
}

fn scalar_from_bytes(s: Scalar, b: &[u8]) -> Value {
    let w8 = |b: &[u8]| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        a
    };
    let w4 = |b: &[u8]| {
        let mut a = [0u8; 4];
        a.copy_from_slice(&b[..4]);
        a
    };
    match s {
        Scalar::Bool => Value::Bool(b[0] != 0),
        Scalar::I32 => Value::I32(i32::from_le_bytes(w4(b))),
        Scalar::U32 => Value::U32(u32::from_le_bytes(w4(b))),
        Scalar::F32 => Value::F32(f32::from_le_bytes(w4(b))),
        Scalar::I64 => Value::I64(i64::from_le_bytes(w8(b))),
        Scalar::U64 => Value::U64(u64::from_le_bytes(w8(b))),
        Scalar::Usize => Value::Usize(u64::from_le_bytes(w8(b)) as usize),
        Scalar::F64 => Value::F64(f64::from_le_bytes(w8(b))),
    }
}

fn type_leaves(t: &Type) -> Result<Vec<Scalar>, Error> {
    crate::codegen::leaves(t).map_err(|e| internal(e.message))
}

/// Rebuilds a value of type `ty` from scalar leaves.
fn assemble(ty: &Type, it: &mut impl Iterator<Item = Value>) -> Result<Value, Error> {
    Ok(match ty {
        Type::Tuple(ts) => Value::Tuple(
            ts.iter()
                .map(|t| assemble(t, it))
                .collect::<Result<_, _>>()?,
        ),
        _ => it.next().ok_or_else(|| internal("too few leaves"))?,
    })
}

fn as_u64(v: &Value) -> Result<u64, Error> {
    Ok(match *v {
        Value::Usize(x) => x as u64,
        Value::U64(x) => x,
        Value::U32(x) => x.into(),
        Value::I32(x) => x as u64,
        Value::I64(x) => x as u64,
        _ => return Err(internal("an integer was expected")),
    })
}

fn as_i128(v: &Value) -> Result<i128, Error> {
    Ok(match *v {
        Value::Usize(x) => x as i128,
        Value::U64(x) => x.into(),
        Value::U32(x) => x.into(),
        Value::I32(x) => x.into(),
        Value::I64(x) => x.into(),
        _ => return Err(internal("an integer index was expected")),
    })
}

impl<D: Driver> Exec<'_, D> {
    fn at(&self, span: u32) -> Location {
        (self.locate)(span)
    }

    fn alloc(&mut self, bytes: usize) -> Result<u64, Error> {
        let a = self.driver.alloc_zeroed(bytes.max(1)).map_err(dev)?;
        self.allocs.push(a);
        Ok(a)
    }

    fn set(&mut self, v: u32, x: Rt) {
        let i = v as usize;
        if self.env.len() <= i {
            self.env.resize(i + 1, None);
        }
        self.env[i] = Some(x);
    }

    fn get(&self, v: u32) -> Result<&Rt, Error> {
        self.env
            .get(v as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| internal(format!("%{v} undefined")))
    }

    fn path(&self, v: u32, path: &[u32]) -> Result<Rt, Error> {
        let mut cur = self.get(v)?.clone();
        for &p in path {
            cur = match cur {
                Rt::Tup(xs) => xs.get(p as usize).cloned(),
                Rt::Val(Value::Tuple(xs)) => xs.get(p as usize).cloned().map(Rt::Val),
                _ => None,
            }
            .ok_or_else(|| internal("bad tuple path"))?;
        }
        Ok(cur)
    }

    fn value(&self, v: u32) -> Result<Value, Error> {
        match self.get(v)? {
            Rt::Val(x) => Ok(x.clone()),
            _ => Err(internal(format!("%{v} is not a host value"))),
        }
    }

    /// Uploads the arguments.
    fn start(&mut self, args: Vec<Input>) -> Result<(), Error> {
        self.err = self.alloc(32)?;
        let params = self.program.plan.params.clone();
        for ((v, ty), a) in params.iter().zip(args) {
            let a = match a {
                Input::Host(a) => a,
                Input::Matrix(m) => {
                    let rt = self.upload_matrix(*v, ty, &m)?;
                    self.set(*v, rt);
                    continue;
                }
                Input::Nested(n) => {
                    let rt = self.bind_nested(ty, n).map_err(|e| match e {
                        Error::Device(m) => Error::Device(format!("argument %{v}: {m}")),
                        other => other,
                    })?;
                    self.set(*v, rt);
                    continue;
                }
                Input::Device(d) => {
                    if Type::seq(d.elem.clone()) != *ty
                        || d.bufs.len() != type_leaves(&d.elem)?.len()
                    {
                        return Err(Error::Device(format!(
                            "argument %{v} must be {ty}, a device sequence of [{}] was given",
                            d.elem
                        )));
                    }
                    self.set(
                        *v,
                        Rt::Seq {
                            bufs: d.bufs,
                            len: d.len,
                            elem: d.elem,
                            offs: None,
                            layout: None,
                        },
                    );
                    continue;
                }
            };
            if !a.conforms(ty) {
                return Err(Error::Device(format!("argument %{v} must be {ty}")));
            }
            let rt = self.upload(ty, &a)?;
            self.set(*v, rt);
        }
        Ok(())
    }

    /// Uploads a matrix given as storage and strides for parameter `%v` of type `ty`.
    fn upload_matrix(&mut self, v: u32, ty: &Type, m: &StridedMatrix) -> Result<Rt, Error> {
        let bad = |why: String| Error::Device(format!("argument %{v}: {why}"));
        let Some(Type::Seq(inner)) = ty.elem() else {
            return Err(bad(format!(
                "a matrix was given for a parameter of type {ty}"
            )));
        };
        let flat_ty = Type::seq((**inner).clone());
        let stored = match &m.storage {
            MatrixStorage::Host(Value::Seq(items)) if m.storage_conforms(&flat_ty) => items.len(),
            MatrixStorage::Device(d)
                if d.elem == **inner && d.bufs.len() == type_leaves(&d.elem)?.len() =>
            {
                d.len
            }
            _ => return Err(bad(format!("the matrix storage must be {flat_ty}"))),
        };
        let st = Strides {
            rs: m.row_stride as u64,
            cs: m.col_stride as u64,
            cols: m.cols as u64,
        };
        let extent = (m.rows as u128)
            .saturating_sub(1)
            .saturating_mul(m.row_stride as u128)
            + (m.cols as u128)
                .saturating_sub(1)
                .saturating_mul(m.col_stride as u128)
            + 1;
        if m.rows > 0 && m.cols > 0 && extent > stored as u128 {
            return Err(bad(format!(
                "a {} x {} matrix with strides ({}, {}) spans {extent} elements, its storage \
                 holds {}",
                m.rows, m.cols, m.row_stride, m.col_stride, stored
            )));
        }
        let bufs = match &m.storage {
            MatrixStorage::Host(v) => match self.upload(&flat_ty, v)? {
                Rt::Seq { bufs, .. } => bufs,
                _ => return Err(internal("a flat upload that is not a sequence")),
            },
            MatrixStorage::Device(d) => d.bufs.clone(),
        };
        Ok(Rt::Seq {
            bufs,
            len: m.rows,
            elem: Type::seq((**inner).clone()),
            offs: None,
            layout: Some(st),
        })
    }

    /// Uploads a host value of type `ty`: sequences (flat or nested) go to the device as
    /// typed columns, scalars stay on the host.
    fn upload(&mut self, ty: &Type, a: &Value) -> Result<Rt, Error> {
        Ok(match (ty, a) {
            (Type::Seq(elem), Value::Seq(items)) => match &**elem {
                Type::Seq(inner) => self.bind_nested(ty, NestedColumns::from_value(inner, a)?)?,
                elem => Rt::Seq {
                    bufs: self.upload_host(&HostColumns::from_values(elem, items.iter())?)?,
                    len: items.len(),
                    elem: elem.clone(),
                    offs: None,
                    layout: None,
                },
            },
            (Type::Tuple(ts), Value::Tuple(vs))
                if ts
                    .iter()
                    .any(|t| matches!(t, Type::Seq(_) | Type::Tuple(_))) =>
            {
                Rt::Tup(
                    ts.iter()
                        .zip(vs)
                        .map(|(t, v)| self.upload(t, v))
                        .collect::<Result<_, _>>()?,
                )
            }
            _ => Rt::Val(a.clone()),
        })
    }

    /// Uploads host columns into buffers of this run (freed when it ends).
    fn upload_host(&mut self, c: &HostColumns) -> Result<Vec<u64>, Error> {
        let seq = upload_columns(self.driver, c)?;
        self.allocs.extend_from_slice(&seq.bufs);
        Ok(seq.bufs)
    }

    /// A nested sequence of type `ty` (`[[T]]`) from its parts, checked as
    /// [`NestedColumns`] says; host parts are uploaded (host offsets equal to ones already
    /// uploaded by this run are not uploaded again).
    fn bind_nested(&mut self, ty: &Type, n: NestedColumns) -> Result<Rt, Error> {
        let bad = |why: String| Err(Error::Device(why));
        let Some(row_ty @ Type::Seq(inner)) = ty.elem() else {
            return bad(format!(
                "a nested sequence was given for a parameter of type {ty}"
            ));
        };
        let row_ty = row_ty.clone();
        if let Columns::Host(c) = &n.values {
            c.leaves()?;
        }
        if n.values.elem() != &**inner {
            return bad(format!(
                "the values of a nested sequence must be {inner}, {} was given",
                n.values.elem()
            ));
        }
        if !matches!(n.offsets.elem(), Type::Scalar(Scalar::Usize | Scalar::U64)) {
            return bad(format!(
                "the offsets of a nested sequence must be usize, {} was given",
                n.offsets.elem()
            ));
        }
        let Some(rows) = n.offsets.len().checked_sub(1) else {
            return bad("a nested sequence needs rows + 1 offsets, none was given".into());
        };
        let total = n.values.len();
        let (offs, longest) = match n.offsets {
            Columns::Host(c) => {
                let longest = check_offsets(&c.words()?, total)?;
                let addr = match self.host_offsets.iter().find(|(b, _)| *b == c.cols[0]) {
                    Some(&(_, addr)) => addr,
                    None => {
                        let addr = self.upload_host(&c)?[0];
                        self.host_offsets
                            .extend(c.cols.into_iter().map(|b| (b, addr)));
                        addr
                    }
                };
                (addr, Some(longest))
            }
            Columns::Device(d) => {
                let addr = match d.bufs[..] {
                    [a] => a,
                    _ => return Err(internal("offsets with several buffers")),
                };
                let first = self.read_u64s(addr, 1)?[0];
                let last = self.read_u64s(addr + 8 * rows as u64, 1)?[0];
                if first != 0 || last != total as u64 {
                    return bad(format!(
                        "device offsets run from {first} to {last}, expected 0 to {total} \
                         (the number of values)"
                    ));
                }
                (addr, None)
            }
        };
        let bufs = match n.values {
            Columns::Host(c) => self.upload_host(&c)?,
            Columns::Device(d) => {
                if d.bufs.len() != type_leaves(&d.elem)?.len() {
                    return Err(internal(
                        "a device sequence with the wrong number of buffers",
                    ));
                }
                d.bufs
            }
        };
        if let Some(longest) = longest {
            self.shapes.push((offs, total, longest));
        }
        Ok(Rt::Seq {
            bufs,
            len: rows,
            elem: row_ty,
            offs: Some(offs),
            layout: None,
        })
    }

    /// Reads `n` `u64`s at `addr`.
    /// The total number of elements and the longest row of `len` rows whose offsets are
    /// at `offs` (known from the upload, or read back).
    fn row_shape(&self, offs: u64, len: usize) -> Result<(usize, usize), Error> {
        if let Some(&(_, t, l)) = self.shapes.iter().find(|s| s.0 == offs) {
            return Ok((t, l));
        }
        let offs = self.read_u64s(offs, len + 1)?;
        let total = offs.last().copied().unwrap_or(0) as usize;
        let longest = offs
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .max()
            .unwrap_or(0) as usize;
        Ok((total, longest))
    }

    fn read_u64s(&self, addr: u64, n: usize) -> Result<Vec<u64>, Error> {
        let mut bytes = vec![0u8; n * 8];
        if n > 0 {
            self.driver.read(addr, &mut bytes).map_err(dev)?;
        }
        Ok(words(&bytes))
    }

    /// Reads `len` elements of type `elem` (scalar or tuple) from leaf buffers.
    fn read_items(&self, bufs: &[u64], len: usize, elem: &Type) -> Result<Vec<Value>, Error> {
        let seq = DeviceSeq {
            bufs: bufs.to_vec(),
            len,
            elem: elem.clone(),
        };
        download_values(self.driver, &seq)
    }

    /// Row `i` of a nested device sequence as a flat sequence (a view into its buffers).
    fn row(&self, bufs: &[u64], offs: u64, elem: &Type, i: usize) -> Result<Rt, Error> {
        let o = self.read_u64s(offs + 8 * i as u64, 2)?;
        let inner = elem
            .elem()
            .ok_or_else(|| internal("a row of a flat sequence"))?;
        let ls = type_leaves(inner)?;
        Ok(Rt::Seq {
            bufs: bufs
                .iter()
                .zip(&ls)
                .map(|(b, l)| b + o[0] * size_of(*l))
                .collect(),
            len: (o[1] - o[0]) as usize,
            elem: inner.clone(),
            offs: None,
            layout: None,
        })
    }

    /// The result with its flat sequences left on the device, in buffers the caller will
    /// own: buffers allocated by this run are handed over (no longer freed at the end),
    /// any other (an argument's, or one already handed over) is copied first.
    fn take_output(&mut self, r: &Rt) -> Result<Output, Error> {
        Ok(match r {
            Rt::Tup(xs) => Output::Tuple(
                xs.iter()
                    .map(|x| self.take_output(x))
                    .collect::<Result<_, _>>()?,
            ),
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: None,
                layout: None,
            } => Output::Device(self.own(bufs, *len, elem)?),
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: Some(o),
                layout: None,
            } => {
                let inner = elem.elem().ok_or_else(|| internal("rows of a flat type"))?;
                // The number of values: known for offsets this run uploaded, else the
                // last offset (offsets start at 0 in every nested sequence of a run).
                let total = match self.shapes.iter().find(|s| s.0 == *o) {
                    Some(&(_, total, _)) => total,
                    None => self.read_u64s(o + 8 * *len as u64, 1)?[0] as usize,
                };
                Output::Nested(DeviceNested {
                    offsets: self.own(&[*o], len + 1, &Type::Scalar(Scalar::Usize))?,
                    values: self.own(bufs, total, inner)?,
                })
            }
            other => Output::Host(self.to_value(other)?),
        })
    }

    /// The flat sequence in `bufs` as one the caller will own: a buffer allocated by this
    /// run and not given yet is given as it is, any other (an argument's, a view into a
    /// buffer, or one given already) is copied to a fresh one first.
    fn own(&mut self, bufs: &[u64], len: usize, elem: &Type) -> Result<DeviceSeq, Error> {
        let leaves = type_leaves(elem)?;
        let mut owned = Vec::with_capacity(bufs.len());
        for (&b, &l) in bufs.iter().zip(&leaves) {
            if self.allocs.contains(&b) && !self.given.contains(&b) {
                owned.push(b);
            } else {
                let bytes = size_of(l) as usize * len;
                let fresh = self.alloc(bytes)?;
                if bytes > 0 {
                    self.driver.copy(b, fresh, bytes).map_err(dev)?;
                }
                owned.push(fresh);
            }
            self.given.push(owned[owned.len() - 1]);
        }
        Ok(DeviceSeq {
            bufs: owned,
            len,
            elem: elem.clone(),
        })
    }

    fn to_value(&self, r: &Rt) -> Result<Value, Error> {
        Ok(match r {
            Rt::Val(v) => v.clone(),
            Rt::Tup(xs) => Value::Tuple(
                xs.iter()
                    .map(|x| self.to_value(x))
                    .collect::<Result<_, _>>()?,
            ),
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: None,
                layout: None,
            } => Value::seq(self.read_items(bufs, *len, elem)?),
            Rt::Seq {
                bufs,
                len,
                elem,
                layout: Some(st),
                ..
            } => {
                let inner = elem.elem().ok_or_else(|| internal("rows of a flat type"))?;
                let extent = st.extent(*len);
                let flat = self.read_items(bufs, extent, inner)?;
                let rows = (0..*len as u64)
                    .map(|r| {
                        Value::seq(
                            (0..st.cols)
                                .map(|j| flat[(r * st.rs + j * st.cs) as usize].clone())
                                .collect(),
                        )
                    })
                    .collect();
                Value::seq(rows)
            }
            Rt::Seq {
                bufs,
                len,
                elem,
                offs: Some(o),
                ..
            } => {
                let offs = self.read_u64s(*o, len + 1)?;
                let inner = elem.elem().ok_or_else(|| internal("rows of a flat type"))?;
                let total = offs.last().copied().unwrap_or(0) as usize;
                let mut flat = self.read_items(bufs, total, inner)?.into_iter();
                let mut rows = Vec::with_capacity(*len);
                for w in offs.windows(2) {
                    let n = w[1].saturating_sub(w[0]) as usize;
                    rows.push(Value::seq(flat.by_ref().take(n).collect()));
                }
                Value::seq(rows)
            }
        })
    }

    fn count(&self, c: &Count) -> Result<u64, Error> {
        Ok(match c {
            Count::Const(x) => *x,
            Count::Var(v) => as_u64(&self.value(*v)?)?,
            Count::Len { var, path } => match self.path(*var, path)? {
                Rt::Seq { len, .. } => len as u64,
                _ => return Err(internal("length of a non-sequence")),
            },
            Count::Longest { var, path } => match self.path(*var, path)? {
                Rt::Seq {
                    len, offs: Some(o), ..
                } => self.row_shape(o, len)?.1 as u64,
                Rt::Seq {
                    layout: Some(st), ..
                } => st.cols,
                _ => return Err(internal("the longest row of a flat sequence")),
            },
            Count::Temp(t) => match self.temps.get(*t as usize) {
                Some(Some(TempV::Num(x))) => *x,
                _ => return Err(internal("numeric temporary missing")),
            },
            Count::CeilDiv(a, b) => self.count(a)?.div_ceil(*b),
            Count::Min(a, b) => self.count(a)?.min(self.count(b)?),
            Count::Max(a, b) => self.count(a)?.max(self.count(b)?),
            Count::Sub(a, b) => self.count(a)?.saturating_sub(self.count(b)?),
            Count::Add(a, b) => self
                .count(a)?
                .checked_add(self.count(b)?)
                .ok_or_else(|| dev("count overflow".into()))?,
            Count::Mul(a, b) => self
                .count(a)?
                .checked_mul(*b)
                .ok_or_else(|| dev("count overflow".into()))?,
            Count::Resident { kernel, block } => {
                let name = self
                    .program
                    .kernels
                    .get(*kernel as usize)
                    .ok_or_else(|| internal("bad kernel index"))?;
                let n = self
                    .driver
                    .resident_blocks(&self.module, name, *block)
                    .map_err(dev)?;
                u64::from(n.max(1))
            }
        })
    }

    fn buf(&self, b: &Buf) -> Result<u64, Error> {
        match b {
            Buf::Temp(t) => match self.temps.get(*t as usize) {
                Some(Some(TempV::Buf(a))) => Ok(*a),
                _ => Err(internal("buffer temporary missing")),
            },
            Buf::Seq { var, path, leaf } => match self.path(*var, path)? {
                Rt::Seq { bufs, .. } => bufs
                    .get(*leaf as usize)
                    .copied()
                    .ok_or_else(|| internal("bad leaf")),
                _ => Err(internal("buffer of a non-sequence")),
            },
            Buf::Offsets { var, path } => match self.path(*var, path)? {
                Rt::Seq { offs: Some(o), .. } => Ok(o),
                // A strided matrix has none; its kernels never read them.
                Rt::Seq {
                    layout: Some(_), ..
                } => Ok(0),
                _ => Err(internal("offsets of a flat sequence")),
            },
        }
    }

    fn steps(&mut self, steps: &[Step]) -> Result<(), Error> {
        for s in steps {
            self.step(s)?;
        }
        Ok(())
    }

    fn step(&mut self, s: &Step) -> Result<(), Error> {
        match s {
            Step::Host {
                var,
                ty,
                expr,
                span,
            } => {
                let v = self.host(ty, expr, *span)?;
                self.set(*var, v);
            }
            Step::Assert { check, span } => self.assert(check, *span)?,
            Step::Alloc { temp, elem, count } => {
                let n = self.count(count)?;
                let bytes = n
                    .checked_mul(size_of(*elem))
                    .ok_or_else(|| dev("allocation too large".into()))?;
                let a = self.alloc(
                    usize::try_from(bytes).map_err(|_| dev("allocation too large".into()))?,
                )?;
                self.temps[*temp as usize] = Some(TempV::Buf(a));
            }
            Step::Copy {
                src,
                dst,
                elem,
                count,
            } => {
                let bytes = (self.count(count)? * size_of(*elem)) as usize;
                if bytes > 0 {
                    self.driver
                        .copy(self.buf(src)?, self.buf(dst)?, bytes)
                        .map_err(dev)?;
                }
            }
            Step::ReadCount {
                temp,
                src,
                index,
                guard,
            } => {
                let x = if self.count(guard)? == 0 {
                    0
                } else {
                    let mut b = [0u8; 8];
                    self.driver
                        .read(self.buf(src)? + 8 * self.count(index)?, &mut b)
                        .map_err(dev)?;
                    u64::from_le_bytes(b)
                };
                self.temps[*temp as usize] = Some(TempV::Num(x));
            }
            Step::Launch(l) => self.launch(l)?,
            Step::CheckErrors => self.check_errors()?,
            Step::BindSeq {
                var,
                elem,
                bufs,
                len,
                offs,
            } => {
                let bufs = bufs.iter().map(|b| self.buf(b)).collect::<Result<_, _>>()?;
                let len = self.count(len)? as usize;
                let offs = offs.as_ref().map(|o| self.buf(o)).transpose()?;
                self.set(
                    *var,
                    Rt::Seq {
                        bufs,
                        len,
                        elem: elem.clone(),
                        offs,
                        layout: None,
                    },
                );
            }
            Step::ReadScalars {
                var,
                ty,
                bufs,
                has,
                origin,
                span,
            } => {
                if let Some(h) = has {
                    let mut b = [0u8; 1];
                    self.driver.read(self.buf(h)?, &mut b).map_err(dev)?;
                    if b[0] == 0 {
                        return Err(Error::Empty {
                            prim: origin.name(),
                            at: self.at(*span),
                        });
                    }
                }
                let ls = type_leaves(ty)?;
                let mut vals = Vec::new();
                for (b, l) in bufs.iter().zip(&ls) {
                    let mut bytes = vec![0u8; size_of(*l) as usize];
                    self.driver.read(self.buf(b)?, &mut bytes).map_err(dev)?;
                    vals.push(scalar_from_bytes(*l, &bytes));
                }
                let v = assemble(ty, &mut vals.into_iter())?;
                self.set(*var, Rt::Val(v));
            }
            Step::ByShape { rows, warp, seq } => {
                let (len, o) = match self.get(*rows)?.clone() {
                    Rt::Seq {
                        len, offs: Some(o), ..
                    } => (len, o),
                    Rt::Seq {
                        len,
                        layout: Some(st),
                        ..
                    } => {
                        let cols = st.cols as usize;
                        if warp_per_row(len, len.saturating_mul(cols), cols) {
                            self.steps(warp)?;
                        } else {
                            self.steps(seq)?;
                        }
                        return Ok(());
                    }
                    _ => return Err(internal("the shape of a flat sequence")),
                };
                let (total, longest) = self.row_shape(o, len)?;
                if warp_per_row(len, total, longest) {
                    self.steps(warp)?;
                } else {
                    self.steps(seq)?;
                }
            }
            Step::If {
                var,
                cond,
                then,
                then_result,
                else_,
                else_result,
            } => {
                let c = matches!(self.value(*cond)?, Value::Bool(true));
                let (steps, r) = if c {
                    (then, then_result)
                } else {
                    (else_, else_result)
                };
                self.steps(steps)?;
                let v = self.get(*r)?.clone();
                self.set(*var, v);
            }
        }
        Ok(())
    }

    fn launch(&mut self, l: &Launch) -> Result<(), Error> {
        let mut grid = self.count(&l.grid)?.max(1);
        // Per-thread temporaries: a kernel whose grid is free gets fewer blocks rather
        // than more than SCRATCH_BUDGET bytes of them.
        let mut per_block = 0u64;
        for a in &l.args {
            if let KArg::Scratch { elem, per_thread } = a {
                per_block = self
                    .count(per_thread)?
                    .checked_mul(size_of(*elem))
                    .and_then(|b| b.checked_mul(u64::from(l.block)))
                    .and_then(|b| b.checked_add(per_block))
                    .ok_or_else(|| dev("per-thread temporary too large".into()))?;
            }
        }
        if l.any_grid && per_block > 0 {
            grid = grid.min((SCRATCH_BUDGET / per_block).max(1));
        }
        let grid = u32::try_from(grid).map_err(|_| dev(format!("grid of {grid} blocks")))?;
        let mut args = Vec::with_capacity(l.args.len());
        let mut report = None;
        for a in &l.args {
            args.push(match a {
                KArg::Buf(b) => LaunchArg::U64(self.buf(b)?),
                KArg::Scratch { elem, per_thread } => {
                    let per = self.count(per_thread)?;
                    let bytes = u64::from(grid)
                        .checked_mul(u64::from(l.block))
                        .and_then(|t| t.checked_mul(per))
                        .and_then(|t| t.checked_mul(size_of(*elem)))
                        .and_then(|b| usize::try_from(b).ok())
                        .ok_or_else(|| dev("per-thread temporary too large".into()))?;
                    LaunchArg::U64(self.alloc(bytes)?)
                }
                KArg::Count(c) => LaunchArg::U64(self.count(c)?),
                KArg::RowLayout { var, path, field } => {
                    let st = match self.path(*var, path)? {
                        Rt::Seq { layout, .. } => layout,
                        _ => return Err(internal("the row layout of a non-sequence")),
                    };
                    LaunchArg::U64(match (st, field) {
                        // Rows from offsets: elements 1 apart.
                        (None, 2) => 1,
                        (None, _) => 0,
                        (Some(_), 0) => 1,
                        (Some(st), 1) => st.rs,
                        (Some(st), 2) => st.cs,
                        (Some(st), _) => st.cols,
                    })
                }
                KArg::ErrorRecord => LaunchArg::U64(self.err),
                KArg::ReportKey => {
                    report = Some(args.len());
                    LaunchArg::U64(0)
                }
                KArg::Scalar { var, path, ty } => {
                    let Rt::Val(v) = self.path(*var, path)? else {
                        return Err(internal("a scalar argument is a sequence"));
                    };
                    match (ty, v) {
                        (Scalar::Bool, Value::Bool(b)) => LaunchArg::U32(u32::from(b)),
                        (Scalar::F32, Value::F32(x)) => LaunchArg::F32(x),
                        (Scalar::F64, Value::F64(x)) => LaunchArg::F64(x),
                        (Scalar::I32, Value::I32(x)) => LaunchArg::U32(x as u32),
                        (Scalar::U32, Value::U32(x)) => LaunchArg::U32(x),
                        (_, v) => LaunchArg::U64(as_u64(&v)?),
                    }
                }
            });
        }
        let kernel = l.kernel as usize;
        self.raw_launch(kernel, grid, l.block, &args)?;
        self.pending.push((kernel, grid, l.block, args, report));
        Ok(())
    }

    fn raw_launch(
        &self,
        kernel: usize,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), Error> {
        let name = self
            .program
            .kernels
            .get(kernel)
            .ok_or_else(|| internal("bad kernel index"))?;
        self.driver
            .launch(&self.module, name, grid, block, args)
            .map_err(dev)
    }

    fn check_errors(&mut self) -> Result<(), Error> {
        let pending = std::mem::take(&mut self.pending);
        let mut rec = [0u8; 32];
        self.driver.read(self.err, &mut rec).map_err(dev)?;
        fn word(rec: &[u8; 32], i: usize) -> u64 {
            u64::from_le_bytes(rec[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
        }
        let nk = word(&rec, 0);
        if nk == 0 {
            return Ok(());
        }
        for (kernel, grid, block, mut args, report) in pending {
            if let Some(r) = report {
                args[r] = LaunchArg::U64(nk);
            }
            self.raw_launch(kernel, grid, block, &args)?;
        }
        self.driver.read(self.err, &mut rec).map_err(dev)?;
        let (site, a, b) = (word(&rec, 1), word(&rec, 2), word(&rec, 3));
        let Some(site) = site
            .checked_sub(1)
            .and_then(|s| self.program.plan.sites.get(s as usize))
        else {
            return Err(internal("a failed check did not report its site"));
        };
        let at = self.at(site.span);
        let prim = site.origin.name();
        Err(match site.kind {
            SiteKind::IndexOutOfRange => Error::IndexOutOfRange {
                prim,
                index: if site.signed {
                    a as i64 as i128
                } else {
                    a as i128
                },
                len: b as usize,
                at,
            },
            SiteKind::DivideByZero => Error::DivideByZero { at },
            SiteKind::LengthMismatch => Error::LengthMismatch {
                prim,
                left: a as usize,
                right: b as usize,
                at,
            },
            SiteKind::Empty => Error::Empty { prim, at },
            SiteKind::Duplicate => Error::NotAPermutation {
                prim,
                detail: format!("index {a} appears twice"),
                at,
            },
        })
    }

    fn assert(&self, check: &HostAssert, span: u32) -> Result<(), Error> {
        let at = self.at(span);
        match check {
            HostAssert::EqLen { origin, a, b } => {
                let (l, r) = (
                    as_u64(&self.value(*a)?)? as usize,
                    as_u64(&self.value(*b)?)? as usize,
                );
                if l != r {
                    return Err(Error::LengthMismatch {
                        prim: origin.name(),
                        left: l,
                        right: r,
                        at,
                    });
                }
            }
            HostAssert::InBounds { origin, index, len } => {
                let i = as_i128(&self.value(*index)?)?;
                let n = as_u64(&self.value(*len)?)? as usize;
                if i < 0 || i >= n as i128 {
                    return Err(Error::IndexOutOfRange {
                        prim: origin.name(),
                        index: i,
                        len: n,
                        at,
                    });
                }
            }
            HostAssert::NonEmpty { origin, len } => {
                if as_u64(&self.value(*len)?)? == 0 {
                    return Err(Error::Empty {
                        prim: origin.name(),
                        at,
                    });
                }
            }
            HostAssert::AtMost { origin, len, max } => {
                let n = as_u64(&self.value(*len)?)?;
                if n > *max {
                    return Err(dev(format!(
                        "{}: {n} elements at {at}; its GPU kernels take at most {max}",
                        origin.name()
                    )));
                }
            }
        }
        Ok(())
    }

    fn host(&mut self, ty: &Type, expr: &HostExpr, span: u32) -> Result<Rt, Error> {
        Ok(match expr {
            HostExpr::Var(v) => self.get(*v)?.clone(),
            HostExpr::Tuple(vs) => {
                let xs: Vec<Rt> = vs
                    .iter()
                    .map(|v| self.get(*v).cloned())
                    .collect::<Result<_, _>>()?;
                if xs.iter().all(|x| matches!(x, Rt::Val(_))) {
                    Rt::Val(Value::Tuple(
                        xs.into_iter()
                            .map(|x| if let Rt::Val(v) = x { v } else { Value::unit() })
                            .collect(),
                    ))
                } else {
                    Rt::Tup(xs)
                }
            }
            HostExpr::Field(v, n) => self.path(*v, &[*n])?,
            HostExpr::Len(v) => match self.get(*v)? {
                Rt::Seq { len, .. } => Rt::Val(Value::Usize(*len)),
                _ => return Err(internal("len of a non-sequence")),
            },
            HostExpr::Index {
                seq,
                index,
                checked,
            } => {
                let Rt::Seq {
                    bufs,
                    len,
                    elem,
                    offs,
                    layout,
                } = self.get(*seq)?.clone()
                else {
                    return Err(internal("indexing a non-sequence"));
                };
                let i = as_i128(&self.value(*index)?)?;
                if i < 0 || i >= len as i128 {
                    return Err(match checked {
                        Some(o) => Error::IndexOutOfRange {
                            prim: o.name(),
                            index: i,
                            len,
                            at: self.at(span),
                        },
                        None => {
                            internal(format!("unchecked index {i} out of range for length {len}"))
                        }
                    });
                }
                if let Some(o) = offs {
                    return self.row(&bufs, o, &elem, i as usize);
                }
                if let Some(st) = layout {
                    // A row of a strided matrix: read and uploaded again contiguous (a
                    // flat sequence has no stride).
                    let inner = elem
                        .elem()
                        .ok_or_else(|| internal("a row of a flat sequence"))?
                        .clone();
                    let flat = self.read_items(&bufs, st.extent(len), &inner)?;
                    let row: Vec<Value> = (0..st.cols)
                        .map(|j| flat[(i as u64 * st.rs + j * st.cs) as usize].clone())
                        .collect();
                    return self.upload(&Type::seq(inner), &Value::seq(row));
                }
                let ls = type_leaves(&elem)?;
                let mut vals = Vec::new();
                for (b, l) in bufs.iter().zip(&ls) {
                    let sz = size_of(*l);
                    let mut bytes = vec![0u8; sz as usize];
                    self.driver
                        .read(b + sz * i as u64, &mut bytes)
                        .map_err(dev)?;
                    vals.push(scalar_from_bytes(*l, &bytes));
                }
                Rt::Val(assemble(&elem, &mut vals.into_iter())?)
            }
            HostExpr::Const(c) => Rt::Val(self.interp(ty, &[], |_| Expr::Const(*c), span)?),
            HostExpr::Unary(op, x) => {
                Rt::Val(self.interp(ty, &[*x], |p| Expr::Unary(*op, p[0]), span)?)
            }
            HostExpr::Binary(op, a, b) => {
                Rt::Val(self.interp(ty, &[*a, *b], |p| Expr::Binary(*op, p[0], p[1]), span)?)
            }
            HostExpr::Cast(x, to) => {
                Rt::Val(self.interp(ty, &[*x], |p| Expr::Cast(p[0], *to), span)?)
            }
            HostExpr::Math(m, xs) => {
                Rt::Val(self.interp(ty, xs, |p| Expr::Math(*m, p.to_vec()), span)?)
            }
        })
    }

    /// Evaluates one scalar statement with the reference interpreter.
    fn interp(
        &self,
        ty: &Type,
        operands: &[u32],
        build: impl FnOnce(&[dpl_core::ir::VarId]) -> Expr,
        span: u32,
    ) -> Result<Value, Error> {
        let mut f = Function::new("host", ty.clone());
        let mut args = Vec::new();
        let mut params = Vec::new();
        for &o in operands {
            let v = self.value(o)?;
            let t = match v.scalar_type() {
                Some(s) => Type::Scalar(s),
                None => return Err(internal("a host operand is not a scalar")),
            };
            params.push(f.new_var("x", t, Span::NONE));
            args.push(v);
        }
        f.params = params.clone();
        let r = f.new_var("r", ty.clone(), Span(span));
        f.body = Block {
            stmts: vec![Stmt {
                var: r,
                expr: build(&params),
                span: Span(span),
            }],
            result: r,
        };
        interp::run(&f, args).map_err(|e| {
            e.to_run_error(self.at(span))
                .unwrap_or_else(|| internal(e.to_string()))
        })
    }
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;
    use crate::sim::SimDriver;

    /// Compiles a program written in the IR text form.
    fn program(src: &str) -> GpuProgram {
        let mut f = dpl_core::text::parse(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        dpl_core::captures::fix_captures(&mut f);
        let c = dpl_core::pipeline::compile(f).unwrap_or_else(|e| panic!("{e:?}"));
        crate::compile(&c.fused).unwrap_or_else(|e| panic!("{e}"))
    }

    fn row_sums() -> GpuProgram {
        program(
            "fn row_sums(%0 x: [[i32]]) -> [i32] {
  %1 r: [i32] = map(|%2 row: [i32]| [] { %3 s: i32 = sum(%2); %3 }, %0)
  %1
}",
        )
    }

    fn positives() -> GpuProgram {
        program(
            "fn positives(%0 x: [[i32]]) -> [[i32]] {
  %1 r: [[i32]] = map(|%2 row: [i32]| [] {
    %3 p: [i32] = filter(|%4 v: i32| [] { %5 z: i32 = const 0; %6 c: bool = gt %4, %5; %6 }, %2)
    %3
  }, %0)
  %1
}",
        )
    }

    /// Rows with empty ones first, inside and last.
    fn rows() -> Vec<Vec<i32>> {
        vec![
            vec![],
            vec![3, -1, 4],
            vec![],
            vec![-5],
            vec![9, 2, -6, 5, 3],
            vec![],
        ]
    }

    fn value(rows: &[Vec<i32>]) -> Value {
        Value::seq(
            rows.iter()
                .map(|r| Value::seq(r.iter().map(|&x| Value::I32(x)).collect()))
                .collect(),
        )
    }

    fn parts(rows: &[Vec<i32>]) -> (HostColumns, HostColumns) {
        let mut offsets = vec![0];
        for r in rows {
            offsets.push(offsets[offsets.len() - 1] + r.len());
        }
        let flat: Vec<Value> = rows.iter().flatten().map(|&x| Value::I32(x)).collect();
        let values = HostColumns::from_values(&Type::Scalar(Scalar::I32), flat.iter());
        (HostColumns::offsets(&offsets), values.expect("i32 values"))
    }

    fn run_host(p: &GpuProgram, d: &SimDriver, args: Vec<Input>) -> Result<Value, Error> {
        match run_resident(p, d, args, false, &|_| UNKNOWN_LOCATION)? {
            Output::Host(v) => Ok(v),
            other => panic!("a host result was expected: {other:?}"),
        }
    }

    /// A nested argument given as host columns, as device columns or as a host value
    /// gives the same result; device parts are neither freed nor changed by the call,
    /// and everything the call uploaded is freed.
    #[test]
    fn nested_parts_agree_with_values() {
        let d = SimDriver::default();
        let p = row_sums();
        let rows = rows();
        let want = Value::seq(rows.iter().map(|r| Value::I32(r.iter().sum())).collect());
        let base = d.device().memory_used();
        let from_value = run_host(&p, &d, vec![Input::Host(value(&rows))]);
        assert_eq!(from_value, Ok(want.clone()));
        let (offsets, values) = parts(&rows);
        let host = NestedColumns {
            offsets: Columns::Host(offsets.clone()),
            values: Columns::Host(values.clone()),
        };
        assert_eq!(
            run_host(&p, &d, vec![Input::Nested(host)]),
            Ok(want.clone())
        );
        assert_eq!(d.device().memory_used(), base);

        let (o, v) = (upload_columns(&d, &offsets), upload_columns(&d, &values));
        let (o, v) = (o.expect("upload"), v.expect("upload"));
        let on_device = d.device().memory_used();
        let dev_in = NestedColumns {
            offsets: Columns::Device(o.clone()),
            values: Columns::Device(v.clone()),
        };
        assert_eq!(run_host(&p, &d, vec![Input::Nested(dev_in)]), Ok(want));
        assert_eq!(d.device().memory_used(), on_device);
        assert_eq!(read_columns(&d, &o), Ok(offsets.cols));
        assert_eq!(read_columns(&d, &v), Ok(values.cols));
        for b in o.bufs.iter().chain(&v.bufs) {
            d.free(*b).expect("free");
        }
        assert_eq!(d.device().memory_used(), base);
    }

    /// Parts that do not make a nested sequence of the parameter's type are rejected
    /// with a message, and nothing stays allocated.
    #[test]
    fn malformed_parts_are_rejected() {
        let d = SimDriver::default();
        let p = row_sums();
        let (offsets, values) = parts(&rows());
        let base = d.device().memory_used();
        let with_offsets = |o: &[usize]| NestedColumns {
            offsets: Columns::Host(HostColumns::offsets(o)),
            values: Columns::Host(values.clone()),
        };
        let f32_values = HostColumns {
            elem: Type::Scalar(Scalar::F32),
            ..values.clone()
        };
        let i32_offsets = HostColumns {
            elem: Type::Scalar(Scalar::I32),
            len: offsets.len * 2,
            ..offsets.clone()
        };
        let short = HostColumns {
            len: values.len + 1,
            ..values.clone()
        };
        let cases = [
            (
                with_offsets(&[0, 0, 3, 3, 2, 9, 9]),
                "offsets decrease at row 3",
            ),
            (
                with_offsets(&[1, 1, 4, 4, 5, 10, 10]),
                "offsets[0] is Some(1)",
            ),
            (
                with_offsets(&[0, 0, 3, 3, 4, 8, 8]),
                "the last offset is 8, there are 9 values",
            ),
            (with_offsets(&[]), "needs rows + 1 offsets"),
            (
                NestedColumns {
                    offsets: Columns::Host(offsets.clone()),
                    values: Columns::Host(f32_values),
                },
                "must be i32, f32 was given",
            ),
            (
                NestedColumns {
                    offsets: Columns::Host(i32_offsets),
                    values: Columns::Host(values.clone()),
                },
                "offsets of a nested sequence must be usize",
            ),
            (
                NestedColumns {
                    offsets: Columns::Host(offsets.clone()),
                    values: Columns::Host(short),
                },
                "do not hold 10 element(s) of i32",
            ),
        ];
        for (n, why) in cases {
            match run_host(&p, &d, vec![Input::Nested(n)]) {
                Err(Error::Device(m)) => assert!(m.contains(why), "{m}, expected {why}"),
                other => panic!("{other:?}, expected an error saying {why}"),
            }
            assert_eq!(d.device().memory_used(), base, "{why}");
        }
        // Device offsets are checked at both ends.
        let bad = upload_columns(&d, &HostColumns::offsets(&[0, 0, 3, 3, 4, 9, 8]));
        let bad = bad.expect("upload");
        let n = NestedColumns {
            offsets: Columns::Device(bad.clone()),
            values: Columns::Host(values.clone()),
        };
        match run_host(&p, &d, vec![Input::Nested(n)]) {
            Err(Error::Device(m)) => assert!(m.contains("from 0 to 8, expected 0 to 9"), "{m}"),
            other => panic!("{other:?}"),
        }
        d.free(bad.bufs[0]).expect("free");
        assert_eq!(d.device().memory_used(), base);
    }

    /// A ragged result kept on the device comes back as offsets and values owned by the
    /// caller: fresh buffers (copies) when it is an argument's, freed by the caller.
    #[test]
    fn ragged_results_stay_on_the_device() {
        let d = SimDriver::default();
        let rows = rows();
        let read = |n: &DeviceNested| {
            let o = words(&read_columns(&d, &n.offsets).expect("read")[0]);
            let v = download(&d, &n.values).expect("read");
            (o, v)
        };
        let keep = |p: &GpuProgram, a: Input| match run_resident(p, &d, vec![a], true, &|_| {
            UNKNOWN_LOCATION
        }) {
            Ok(Output::Nested(n)) => n,
            other => panic!("a nested device result was expected: {other:?}"),
        };
        let base = d.device().memory_used();
        let p = positives();
        let n = keep(&p, Input::Host(value(&rows)));
        let kept: Vec<Vec<i32>> = rows
            .iter()
            .map(|r| r.iter().copied().filter(|&x| x > 0).collect())
            .collect();
        let (o, v) = read(&n);
        let (want_o, want_v) = parts(&kept);
        assert_eq!(o, words(&want_o.cols[0]));
        assert_eq!(v, Value::seq(want_v.to_values().expect("values")));
        for b in n.offsets.bufs.iter().chain(&n.values.bufs) {
            d.free(*b).expect("free");
        }
        assert_eq!(d.device().memory_used(), base);

        let id = program("fn id(%0 x: [[i32]]) -> [[i32]] {\n  %0\n}");
        let (offsets, values) = parts(&rows);
        let o = upload_columns(&d, &offsets).expect("upload");
        let v = upload_columns(&d, &values).expect("upload");
        let n = keep(
            &id,
            Input::Nested(NestedColumns {
                offsets: Columns::Device(o.clone()),
                values: Columns::Device(v.clone()),
            }),
        );
        assert_ne!(n.offsets.bufs, o.bufs);
        assert_ne!(n.values.bufs, v.bufs);
        assert_eq!(read(&n).0, words(&offsets.cols[0]));
        assert_eq!(read_columns(&d, &n.values), Ok(values.cols));
        for b in [&n.offsets, &n.values, &o, &v].iter().flat_map(|s| &s.bufs) {
            d.free(*b).expect("free");
        }
        assert_eq!(d.device().memory_used(), base);
    }
}
