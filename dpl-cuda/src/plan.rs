//! The launch plan: what the host does to run a compiled function.
//!
//! A [`Plan`] is plain data — vectors, enums, integers, strings and a few `Copy` enums of
//! `dpl-core` ([`Scalar`], [`BinOp`], [`Origin`], ...) — so the macro can write it out as
//! Rust tokens and embed it next to the PTX text. The executor ([`crate::run`]) walks the
//! steps in order with an environment holding, per top-level IR variable, either host
//! values (scalars, tuples) or device sequences (one buffer per scalar leaf of the element
//! type: structure of arrays), and a table of temporaries (device buffers and host
//! counts).
//!
//! Variables are named by the index of their [`dpl_core::ir::VarId`] in the compiled
//! function's arena, so a plan can be read side by side with the IR's text form.
//!
//! [`Plan::verify`] checks the plan against its program's kernels (their indices, their
//! parameter counts) and its own temporaries; it runs in debug builds after code
//! generation and before each run.

use dpl_core::ir::{BinOp, Const, MathFn, Origin, Scalar, Type, UnOp};

/// The host-side program of a compiled function.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Plan {
    /// The parameters (variable indices), in order, with their types.
    pub params: Vec<(u32, Type)>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The variable holding the function's result.
    pub result: u32,
    /// The declared result type.
    pub ret: Type,
    /// How many temporaries ([`Count::Temp`], [`Buf::Temp`]) the steps use.
    pub temps: u32,
    /// The places in the kernels where a run-time check can fail, indexed by site number.
    pub sites: Vec<ErrorSite>,
}

/// One thing the host does.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Step {
    /// Evaluates a statement of the function's top level on the host.
    Host {
        /// The variable defined.
        var: u32,
        /// Its type.
        ty: Type,
        /// The expression.
        expr: HostExpr,
        /// The statement's span (for error messages).
        span: u32,
    },
    /// Checks an assertion of the function's top level.
    Assert {
        /// What is checked.
        check: HostAssert,
        /// The statement's span.
        span: u32,
    },
    /// Allocates a device buffer of `count` elements of type `elem` as temporary `temp`,
    /// zeroed unless the kernels write every element before any is read.
    Alloc {
        /// The temporary that receives the buffer.
        temp: u32,
        /// How the buffer starts.
        init: Init,
        /// Element type.
        elem: Scalar,
        /// Number of elements.
        count: Count,
        /// The top-level statement whose result or temporary it is: its primitive (if it
        /// is one) and span, named when the buffer cannot be allocated.
        origin: Option<Origin>,
        /// The statement's span.
        span: u32,
    },
    /// Copies `count` elements of type `elem` from `src` to `dst`.
    Copy {
        /// Source buffer.
        src: Buf,
        /// Destination buffer.
        dst: Buf,
        /// Element type.
        elem: Scalar,
        /// Number of elements.
        count: Count,
    },
    /// Reads element `index` (a `u64`) of `src` into the numeric temporary `temp`; 0 when
    /// `guard` evaluates to 0 (nothing is read then).
    ReadCount {
        /// The temporary that receives the number.
        temp: u32,
        /// The buffer (of `u64`).
        src: Buf,
        /// The element read.
        index: Count,
        /// Read only when this is not zero.
        guard: Count,
    },
    /// Launches a kernel of the module.
    Launch(Launch),
    /// The launches since the last `CheckErrors` are checked: the error record is read
    /// before anything uses their results, and if a kernel recorded a failed check, those
    /// launches run again in report mode to learn the first failure's details and the run
    /// fails with it. The read may be deferred past launches safe on any data
    /// ([`Launch::any_data`]) to the next value the host reads, and made in the same round
    /// trip.
    CheckErrors,
    /// Makes `var` a device sequence made of the buffers `bufs` (one per scalar leaf of
    /// the element type `elem`) of length `len`.
    BindSeq {
        /// The variable defined.
        var: u32,
        /// Its element type.
        elem: Type,
        /// One buffer per scalar leaf.
        bufs: Vec<Buf>,
        /// The length.
        len: Count,
        /// For a nested sequence (`elem` is `[T]`, `bufs` hold the leaves of `T`): the
        /// buffer of the `len + 1` row offsets (`u64`).
        offs: Option<Buf>,
    },
    /// Makes `var` a host value of type `ty` from element 0 of each buffer (one per scalar
    /// leaf). With `has: Some(buf)`, element 0 of `buf` (a `u32`) says whether there is a
    /// value at all; if not, fails with [`dpl_core::run::Error::Empty`] for `origin`.
    ReadScalars {
        /// The variable defined.
        var: u32,
        /// Its type.
        ty: Type,
        /// One buffer per scalar leaf.
        bufs: Vec<Buf>,
        /// The buffer telling whether a value exists (reductions without start value).
        has: Option<Buf>,
        /// The primitive named when there is no value.
        origin: Origin,
        /// The statement's span.
        span: u32,
    },
    /// `inner = "auto"`: runs `warp` (a warp per row) when [`warp_per_row`] holds for the
    /// shape of the nested sequence `rows` (a variable), else `seq` (a thread per row).
    ByShape {
        /// The nested sequence whose shape decides.
        rows: u32,
        /// Steps with a warp per element.
        warp: Vec<Step>,
        /// Steps with a thread per element.
        seq: Vec<Step>,
    },
    /// `var = if cond { then } else { else_ }` where the branches are plans of their own.
    If {
        /// The variable defined.
        var: u32,
        /// The condition (a `bool` variable).
        cond: u32,
        /// Steps of the `then` branch.
        then: Vec<Step>,
        /// The variable holding the `then` branch's value.
        then_result: u32,
        /// Steps of the `else` branch.
        else_: Vec<Step>,
        /// The variable holding the `else` branch's value.
        else_result: u32,
    },
    /// `var = loop(params = inits) while cond do body`, a loop at the top level of the
    /// body ([`dpl_core::ir::Loop`]) as host control flow: the params start as the inits;
    /// while `cond`'s steps give `true` in `cond_result`, `body`'s steps compute the next
    /// values of the params (the fields of `body_result`, in order). `var` is the tuple of
    /// their final values. Sequences carried stay on the device; what an iteration
    /// allocated and the next one does not carry is freed at its end.
    Loop {
        /// The variable defined.
        var: u32,
        /// The loop-carried variables.
        params: Vec<u32>,
        /// Their values before the first iteration.
        inits: Vec<u32>,
        /// Steps of the condition.
        cond: Vec<Step>,
        /// The variable holding the condition (a `bool`).
        cond_result: u32,
        /// Steps of the body.
        body: Vec<Step>,
        /// The variable holding the params' next values (a tuple).
        body_result: u32,
    },
}

/// Threads a GPU of the class dpl targets keeps resident (80 SMs of 2048 threads, a
/// V100); the `inner = "auto"` rule counts in these.
pub const RESIDENT_THREADS: usize = 80 * 2048;

/// The `inner = "auto"` rule of the GPU backend, the CPU backend's rule
/// (`dpl_cpu::heavy::parallel_inner`) with GPU threads instead of cores: give each row a
/// warp when a thread per row cannot keep the GPU busy — fewer than two rows per resident
/// thread — or when one row holds more than a thread's share of all the elements (a skewed
/// `Nested`, whose longest row would be left to one thread). Otherwise one thread per row,
/// the inner level a sequential loop.
///
/// `rows` is the outer length, `total` the number of inner elements, `longest` the length
/// of the longest row.
pub fn warp_per_row(rows: usize, total: usize, longest: usize) -> bool {
    rows < 2 * RESIDENT_THREADS || longest.saturating_mul(RESIDENT_THREADS) > total
}

/// A kernel launch.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Launch {
    /// The kernel's index in [`crate::GpuProgram::kernels`].
    pub kernel: u32,
    /// Number of blocks (at least 1 is launched).
    pub grid: Count,
    /// Threads per block (the kernel's `.maxntid`).
    pub block: u32,
    /// The arguments, in the kernel's parameter order.
    pub args: Vec<KArg>,
    /// The kernel computes the same whatever its number of blocks (a grid-, warp- or
    /// block-stride loop): its grid is enough blocks for every item but at most what the
    /// device keeps resident ([`Count::Resident`]), a number known only at run time.
    /// Kernels with a block per tile, or a single block, have `false`.
    pub any_grid: bool,
    /// The kernel is safe whatever values its inputs hold: it records no failed check,
    /// addresses memory only at offsets the host knows and loops only as many times as
    /// the host knows. A failed check leaves unspecified values behind it, so only such a
    /// launch may be queued before the error record of the launches before it has been
    /// read: the run time then reads the record together with the next value the host
    /// needs, in one round trip ([`Step::CheckErrors`]).
    pub any_data: bool,
}

/// Streaming multiprocessors of the modelled GPU (a V100) for [`model_resident_blocks`].
pub const MODEL_SMS: u32 = 80;

/// The blocks of `block` threads a GPU keeps resident at once in the model used where the
/// driver cannot say (the simulator): [`MODEL_SMS`] multiprocessors, each holding at most
/// 2048 threads and 32 blocks (sm_70 to sm_90), registers assumed not to limit (at most
/// 32 per thread). 640 blocks of 256 threads; at least one block per multiprocessor.
pub fn model_resident_blocks(block: u32) -> u32 {
    let per_sm = (2048 / block.max(1)).clamp(1, 32);
    MODEL_SMS * per_sm
}

/// How a buffer of [`Step::Alloc`] starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Init {
    /// Contents unspecified: only for a result that one kernel writes at every index (a
    /// `map`'s, a scan's), so the contents the allocation had are never seen: zeroing it
    /// would move its bytes once more for nothing ([`crate::Driver::alloc`]).
    Written,
    /// Zeroed ([`crate::Driver::alloc_zeroed`]).
    Zeroed,
    /// Zeroed, and set back to zero by the kernels when they are done with it (a count of
    /// blocks done, which the last block of its kernel resets): the run time may take it
    /// from, and give it back to, buffers kept zeroed ([`crate::Driver::alloc_kept_zero`]),
    /// with no zeroing per call.
    KeptZero,
}

/// A number known on the host at run time.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Count {
    /// A constant.
    Const(u64),
    /// A `usize` variable.
    Var(u32),
    /// The length of a sequence variable (`path` selects inside a tuple).
    Len {
        /// The variable.
        var: u32,
        /// Field indices into nested tuples.
        path: Vec<u32>,
    },
    /// The length of the longest row of the nested sequence variable `var` (`path`
    /// selects inside a tuple): from its row offsets (read back unless known from the
    /// upload), or a strided matrix's column count.
    Longest {
        /// The variable.
        var: u32,
        /// Field indices into nested tuples.
        path: Vec<u32>,
    },
    /// A numeric temporary.
    Temp(u32),
    /// `ceil(of / by)`.
    CeilDiv(Box<Count>, u64),
    /// `min(a, b)`.
    Min(Box<Count>, Box<Count>),
    /// `max(a, b)`.
    Max(Box<Count>, Box<Count>),
    /// `a - b` (saturating at 0).
    Sub(Box<Count>, Box<Count>),
    /// `a + b`.
    Add(Box<Count>, Box<Count>),
    /// `a * b`.
    Mul(Box<Count>, u64),
    /// How many blocks of `block` threads of kernel `kernel` the device keeps resident at
    /// once (multiprocessors times resident blocks per multiprocessor), asked from the
    /// driver ([`crate::Driver::resident_blocks`]). Used only for the grids of kernels
    /// with [`Launch::any_grid`] (and the temporaries sized like them).
    Resident {
        /// The kernel's index in [`crate::GpuProgram::kernels`].
        kernel: u32,
        /// Threads per block.
        block: u32,
    },
}

/// A device buffer.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Buf {
    /// A temporary allocated by [`Step::Alloc`].
    Temp(u32),
    /// Leaf `leaf` of the sequence variable `var` (`path` selects inside a tuple).
    Seq {
        /// The variable.
        var: u32,
        /// Field indices into nested tuples.
        path: Vec<u32>,
        /// The scalar leaf of the element type (of the rows' elements for a nested
        /// sequence).
        leaf: u32,
    },
    /// The `len + 1` row offsets (`u64`) of the nested sequence variable `var`.
    Offsets {
        /// The variable.
        var: u32,
        /// Field indices into nested tuples.
        path: Vec<u32>,
    },
}

/// A kernel argument.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum KArg {
    /// A buffer's address (`.u64`).
    Buf(Buf),
    /// A count (`.u64`).
    Count(Count),
    /// A scalar leaf of a host variable (`path` selects inside a tuple); `bool` is passed
    /// as a `.u32`.
    Scalar {
        /// The variable.
        var: u32,
        /// Field indices into nested tuples.
        path: Vec<u32>,
        /// Its type.
        ty: Scalar,
    },
    /// How the rows of the nested sequence variable `var` are laid out (`.u64`), see
    /// [`crate::Input::Matrix`]: `field` 0 is 1 for a strided matrix (0: rows from the
    /// offsets), 1 the row stride, 2 the column stride (1 for rows from offsets: the step
    /// between a row's elements), 3 the number of columns (all in elements; fields 1
    /// and 3 are 0 for rows from offsets).
    RowLayout {
        /// The variable.
        var: u32,
        /// Field indices into nested tuples.
        path: Vec<u32>,
        /// Which number (0 to 3).
        field: u32,
    },
    /// The address of a zeroed buffer of `per_thread` elements of type `elem` for every
    /// thread of the launch (grid x block x `per_thread`), allocated by the executor when
    /// it launches the kernel (it knows the grid then) and freed with the run's other
    /// buffers: a per-thread temporary of an element function, such as a per-element
    /// `scatter` whose result is read again (`.u64`).
    Scratch {
        /// The element type.
        elem: Scalar,
        /// Elements per thread.
        per_thread: Count,
    },
    /// The address of the error record (`.u64`).
    ErrorRecord,
    /// The report key (`.u64`): 0 in a normal run, the bitwise negation of the failing key
    /// in report mode.
    ReportKey,
}

/// A scalar (or tuple) statement evaluated on the host, operands by variable index.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum HostExpr {
    /// A literal.
    Const(Const),
    /// A copy.
    Var(u32),
    /// `op x`
    Unary(UnOp, u32),
    /// `a op b`
    Binary(BinOp, u32, u32),
    /// `x as T`
    Cast(u32, Scalar),
    /// `(a, b, ...)` (of any values, sequences included)
    Tuple(Vec<u32>),
    /// `t.n`
    Field(u32, u32),
    /// A math function.
    Math(MathFn, Vec<u32>),
    /// `seq.len()`
    Len(u32),
    /// `seq[index]`: one element read back from the device.
    Index {
        /// The sequence.
        seq: u32,
        /// The index.
        index: u32,
        /// Checked on whose behalf (`None`: in range by construction).
        checked: Option<Origin>,
    },
}

/// An assertion of the top level, checked on the host.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum HostAssert {
    /// Two `usize` variables are equal.
    EqLen {
        /// Who requires it.
        origin: Origin,
        /// First length.
        a: u32,
        /// Second length.
        b: u32,
    },
    /// An index variable is below a `usize` variable.
    InBounds {
        /// Who requires it.
        origin: Origin,
        /// The index.
        index: u32,
        /// The bound.
        len: u32,
    },
    /// A `usize` variable is not zero.
    NonEmpty {
        /// Who requires it.
        origin: Origin,
        /// The length.
        len: u32,
    },
    /// A `usize` variable (a length) is at most `max`: the most elements the kernels of
    /// `origin` can index (a sort's `u32` indices).
    AtMost {
        /// Who requires it.
        origin: Origin,
        /// The length.
        len: u32,
        /// The largest length allowed.
        max: u64,
    },
}

/// A place in a kernel where a run-time check can fail.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorSite {
    /// What is checked.
    pub kind: SiteKind,
    /// Who requires it.
    pub origin: Origin,
    /// The statement's span.
    pub span: u32,
    /// Whether the recorded first value is a signed integer (an index of a signed type).
    pub signed: bool,
}

/// The kinds of in-kernel checks. The two recorded values `a` and `b` mean what each
/// variant says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SiteKind {
    /// `a` (an index) is not below `b` (a length).
    IndexOutOfRange,
    /// Integer division (`/`) by zero.
    DivideByZero,
    /// Integer remainder (`%`) by zero.
    RemainderByZero,
    /// Lengths `a` and `b` differ.
    LengthMismatch,
    /// A reduction without start value over nothing.
    Empty,
    /// `permute`: index `a` appears twice.
    Duplicate,
}

/// A way a [`Plan`] does not fit its program (see [`Plan::verify`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The program lists kernels and parameter counts of different lengths.
    #[error("{kernels} kernel(s) but {params} parameter count(s)")]
    Params {
        /// Kernels.
        kernels: usize,
        /// Parameter counts.
        params: usize,
    },
    /// A kernel index past the program's kernels.
    #[error("kernel {kernel} of {kernels}")]
    Kernel {
        /// The index.
        kernel: u32,
        /// The program's kernels.
        kernels: usize,
    },
    /// A temporary index past [`Plan::temps`].
    #[error("temporary {temp} of {temps}")]
    Temp {
        /// The index.
        temp: u32,
        /// The plan's temporaries.
        temps: u32,
    },
    /// A temporary used as a buffer and as a number.
    #[error("temporary {temp} is both a buffer and a number")]
    TempKind {
        /// The index.
        temp: u32,
    },
    /// A temporary used but never defined.
    #[error("temporary {temp} is used but never defined")]
    Undefined {
        /// The index.
        temp: u32,
    },
    /// A launch whose argument count is not its kernel's parameter count.
    #[error("a launch of `{kernel}` passes {args} argument(s), the kernel takes {params}")]
    Arguments {
        /// The kernel's name.
        kernel: String,
        /// Arguments passed.
        args: usize,
        /// The kernel's parameters.
        params: u32,
    },
}

/// What a temporary holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TempKind {
    /// A device buffer ([`Step::Alloc`], [`Buf::Temp`]).
    Buf,
    /// A host number ([`Step::ReadCount`], [`Count::Temp`]).
    Num,
}

/// The state of [`Plan::verify`].
struct Verifier<'a> {
    kernels: &'a [String],
    params: &'a [u32],
    temps: u32,
    /// Per temporary: what defines it, and what uses it.
    defined: Vec<Option<TempKind>>,
    used: Vec<Option<TempKind>>,
}

impl Plan {
    /// Checks the plan against the kernels of its program (`kernels[i]` takes `params[i]`
    /// parameters): every kernel index (of a [`Launch`], of a [`Count::Resident`]) names a
    /// kernel; every temporary index is below [`Plan::temps`], is defined (by a
    /// [`Step::Alloc`] or a [`Step::ReadCount`]) and is used as what it is (a buffer, a
    /// number); every launch passes as many arguments as its kernel has parameters. The
    /// first violation found is returned.
    pub fn verify(&self, kernels: &[String], params: &[u32]) -> Result<(), PlanError> {
        if kernels.len() != params.len() {
            return Err(PlanError::Params {
                kernels: kernels.len(),
                params: params.len(),
            });
        }
        let mut v = Verifier {
            kernels,
            params,
            temps: self.temps,
            defined: vec![None; self.temps as usize],
            used: vec![None; self.temps as usize],
        };
        v.steps(&self.steps)?;
        for (t, (d, u)) in v.defined.iter().zip(&v.used).enumerate() {
            match (d, u) {
                (_, None) => {}
                (None, Some(_)) => return Err(PlanError::Undefined { temp: t as u32 }),
                (Some(d), Some(u)) if d != u => return Err(PlanError::TempKind { temp: t as u32 }),
                _ => {}
            }
        }
        Ok(())
    }
}

impl Verifier<'_> {
    fn steps(&mut self, steps: &[Step]) -> Result<(), PlanError> {
        steps.iter().try_for_each(|s| self.step(s))
    }

    fn step(&mut self, s: &Step) -> Result<(), PlanError> {
        match s {
            Step::Host { .. } | Step::Assert { .. } | Step::CheckErrors => Ok(()),
            Step::Alloc { temp, count, .. } => {
                self.define(*temp, TempKind::Buf)?;
                self.count(count)
            }
            Step::Copy {
                src, dst, count, ..
            } => {
                self.buf(src)?;
                self.buf(dst)?;
                self.count(count)
            }
            Step::ReadCount {
                temp,
                src,
                index,
                guard,
            } => {
                self.define(*temp, TempKind::Num)?;
                self.buf(src)?;
                self.count(index)?;
                self.count(guard)
            }
            Step::Launch(l) => self.launch(l),
            Step::BindSeq {
                bufs, len, offs, ..
            } => {
                bufs.iter().try_for_each(|b| self.buf(b))?;
                offs.iter().try_for_each(|b| self.buf(b))?;
                self.count(len)
            }
            Step::ReadScalars { bufs, has, .. } => {
                bufs.iter().try_for_each(|b| self.buf(b))?;
                has.iter().try_for_each(|b| self.buf(b))
            }
            Step::ByShape { warp, seq, .. } => {
                self.steps(warp)?;
                self.steps(seq)
            }
            Step::If { then, else_, .. } => {
                self.steps(then)?;
                self.steps(else_)
            }
            Step::Loop { cond, body, .. } => {
                self.steps(cond)?;
                self.steps(body)
            }
        }
    }

    fn kernel(&self, kernel: u32) -> Result<usize, PlanError> {
        let k = kernel as usize;
        if k < self.kernels.len() {
            Ok(k)
        } else {
            Err(PlanError::Kernel {
                kernel,
                kernels: self.kernels.len(),
            })
        }
    }

    fn launch(&mut self, l: &Launch) -> Result<(), PlanError> {
        let k = self.kernel(l.kernel)?;
        if l.args.len() != self.params[k] as usize {
            return Err(PlanError::Arguments {
                kernel: self.kernels[k].clone(),
                args: l.args.len(),
                params: self.params[k],
            });
        }
        self.count(&l.grid)?;
        for a in &l.args {
            match a {
                KArg::Buf(b) => self.buf(b)?,
                KArg::Count(c) => self.count(c)?,
                KArg::Scratch { per_thread, .. } => self.count(per_thread)?,
                KArg::Scalar { .. }
                | KArg::RowLayout { .. }
                | KArg::ErrorRecord
                | KArg::ReportKey => {}
            }
        }
        Ok(())
    }

    /// Checks a temporary index; records its use as `kind`.
    fn temp(
        &mut self,
        temp: u32,
        kind: TempKind,
        slot: fn(&mut Self) -> &mut Vec<Option<TempKind>>,
    ) -> Result<(), PlanError> {
        if temp >= self.temps {
            return Err(PlanError::Temp {
                temp,
                temps: self.temps,
            });
        }
        match slot(self)[temp as usize].replace(kind) {
            Some(k) if k != kind => Err(PlanError::TempKind { temp }),
            _ => Ok(()),
        }
    }

    fn define(&mut self, temp: u32, kind: TempKind) -> Result<(), PlanError> {
        self.temp(temp, kind, |v| &mut v.defined)
    }

    fn buf(&mut self, b: &Buf) -> Result<(), PlanError> {
        match b {
            Buf::Temp(t) => self.temp(*t, TempKind::Buf, |v| &mut v.used),
            Buf::Seq { .. } | Buf::Offsets { .. } => Ok(()),
        }
    }

    fn count(&mut self, c: &Count) -> Result<(), PlanError> {
        match c {
            Count::Const(_) | Count::Var(_) | Count::Len { .. } | Count::Longest { .. } => Ok(()),
            Count::Temp(t) => self.temp(*t, TempKind::Num, |v| &mut v.used),
            Count::CeilDiv(a, _) | Count::Mul(a, _) => self.count(a),
            Count::Min(a, b) | Count::Max(a, b) | Count::Sub(a, b) | Count::Add(a, b) => {
                self.count(a)?;
                self.count(b)
            }
            Count::Resident { kernel, .. } => self.kernel(*kernel).map(|_| ()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(kernel: u32, args: Vec<KArg>) -> Step {
        Step::Launch(Launch {
            kernel,
            grid: Count::Const(1),
            block: 32,
            args,
            any_grid: false,
            any_data: false,
        })
    }

    fn plan(steps: Vec<Step>, temps: u32) -> Plan {
        Plan {
            params: Vec::new(),
            steps,
            result: 0,
            ret: Type::Tuple(Vec::new()),
            temps,
            sites: Vec::new(),
        }
    }

    /// A buffer (temporary 0) filled by kernel 0, a number read back from it (temporary
    /// 1), and kernel 1 launched with it in a branch.
    fn steps(resident: u32, used: Buf) -> Vec<Step> {
        vec![
            Step::Alloc {
                origin: None,
                span: 0,
                temp: 0,
                init: Init::Zeroed,
                elem: Scalar::U64,
                count: Count::Resident {
                    kernel: resident,
                    block: 32,
                },
            },
            launch(0, vec![KArg::Buf(Buf::Temp(0)), KArg::ErrorRecord]),
            Step::ReadCount {
                temp: 1,
                src: used,
                index: Count::Const(0),
                guard: Count::Const(1),
            },
            Step::If {
                var: 3,
                cond: 2,
                then: vec![launch(
                    1,
                    vec![KArg::Count(Count::Add(
                        Box::new(Count::Temp(1)),
                        Box::new(Count::Const(1)),
                    ))],
                )],
                then_result: 3,
                else_: Vec::new(),
                else_result: 3,
            },
        ]
    }

    #[test]
    fn plans_are_checked_against_their_kernels_and_temporaries() {
        let kernels = ["k0".to_string(), "k1".to_string()];
        let ok = plan(steps(1, Buf::Temp(0)), 2);
        assert_eq!(ok.verify(&kernels, &[2, 1]), Ok(()));
        assert_eq!(
            ok.verify(&kernels, &[2]),
            Err(PlanError::Params {
                kernels: 2,
                params: 1
            })
        );
        let e = ok.verify(&kernels, &[2, 2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a launch of `k1` passes 1 argument(s), the kernel takes 2"
        );
        assert_eq!(
            ok.verify(&kernels[..1], &[2]),
            Err(PlanError::Kernel {
                kernel: 1,
                kernels: 1
            })
        );
        assert_eq!(
            plan(steps(1, Buf::Temp(0)), 1).verify(&kernels, &[2, 1]),
            Err(PlanError::Temp { temp: 1, temps: 1 })
        );
        assert_eq!(
            plan(steps(5, Buf::Temp(0)), 2).verify(&kernels, &[2, 1]),
            Err(PlanError::Kernel {
                kernel: 5,
                kernels: 2
            })
        );
        // Temporary 1 is a number: read as a buffer, it is both.
        assert_eq!(
            plan(steps(1, Buf::Temp(1)), 2).verify(&kernels, &[2, 1]),
            Err(PlanError::TempKind { temp: 1 })
        );
        // A temporary used and never defined.
        let mut s = steps(1, Buf::Temp(0));
        s.remove(0);
        assert_eq!(
            plan(s, 2).verify(&kernels, &[2, 1]),
            Err(PlanError::Undefined { temp: 0 })
        );
    }
}
