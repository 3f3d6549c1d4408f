//! Plan execution: the environment of a run, its steps, launches and error checks.

use dpl_core::interp::Value;
use dpl_core::ir::{Scalar, Type};
use dpl_core::run::{Error, Location};

use super::columns::{assemble, download_values, type_leaves, words};
use super::error::{RunError, dev, internal, is_out_of_memory};
use super::host::as_u64;
use super::io::{DeviceSeq, Input, Output};
use crate::GpuProgram;
use crate::driver::{Driver, LaunchArg};
use crate::layout::{self, size_of};
use crate::plan::*;

/// The most bytes of per-thread temporaries ([`KArg::Scratch`]) a kernel whose grid is
/// free ([`crate::plan::Launch::any_grid`]) is given: its grid shrinks to fit (at least one
/// block).
const SCRATCH_BUDGET: u64 = 256 << 20;

/// Bytes of the error record: four words (the negated key of the first failure, then
/// the site and two values the report mode writes).
pub(super) const RECORD_BYTES: usize = 32;

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
        return Err(RunError::ArgumentCount {
            name: program.name.clone(),
            params: plan.params.len(),
            given: args.len(),
        }
        .into());
    }
    if cfg!(debug_assertions) {
        program.verify().map_err(RunError::Plan)?;
    }
    let module = driver.load_program(program).map_err(dev)?;
    let mut ex = Exec {
        program,
        driver,
        module,
        env: Vec::new(),
        temps: vec![None; plan.temps as usize],
        allocs: Vec::new(),
        kept_zero: Vec::new(),
        sizes: Default::default(),
        pending: Vec::new(),
        err: 0,
        due: false,
        shapes: Vec::new(),
        host_offsets: Vec::new(),
        given: Vec::new(),
        locate,
    };
    let result = ex.start(args).and_then(|()| {
        ex.steps(&plan.steps)?;
        ex.settle()?;
        let r = ex.get(plan.result)?.clone();
        if keep_on_device {
            ex.take_output(&r)
        } else {
            ex.to_value(&r).map(Output::Host)
        }
    });
    // After a successful run, the buffers the kernels set back to zero (and the error
    // record, which no check wrote) are given back as such.
    let returned = result.is_ok();
    let result =
        result.and_then(|out| give_back_zeroed(driver, program, &ex.kept_zero).map(|()| out));
    // Everything else this run allocated is freed, except what a successful run hands
    // over.
    let given = if result.is_ok() { &ex.given[..] } else { &[] };
    let kept: &[u64] = if returned { &ex.kept_zero } else { &[] };
    for &a in &ex.allocs {
        if !given.contains(&a) && !kept.contains(&a) {
            let _ = driver.free(a);
        }
    }
    result
}

/// Gives back `bufs`, buffers of [`Driver::alloc_kept_zero`] the kernels have set back to
/// zero, with [`Driver::free_kept_zero`]. A driver that checks the promise (the
/// simulator) reports a kernel that did not keep it: a bug of the code generator, an
/// internal error of `program`'s run.
fn give_back_zeroed<D: Driver>(
    driver: &D,
    program: &GpuProgram,
    bufs: &[u64],
) -> Result<(), Error> {
    let mut broken = None;
    for &a in bufs {
        if let Err(e) = driver.free_kept_zero(a) {
            broken.get_or_insert(e);
        }
    }
    broken.map_or(Ok(()), |e| Err(internal(format!("{}: {e}", program.name))))
}

/// A value of the environment.
#[derive(Clone, Debug)]
pub(super) enum Rt {
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

impl Rt {
    /// A tuple of values: a host value when every part is one, else a tuple holding
    /// sequences.
    pub(super) fn tuple(xs: Vec<Rt>) -> Rt {
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
}

/// The strides of a matrix given as its storage ([`Input::Matrix`]), in elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Strides {
    pub(super) rs: u64,
    pub(super) cs: u64,
    pub(super) cols: u64,
}

impl Strides {
    /// How many elements of storage `rows` rows span (0 for an empty matrix).
    pub(super) fn extent(&self, rows: usize) -> usize {
        if rows == 0 || self.cols == 0 {
            return 0;
        }
        ((rows as u64 - 1) * self.rs + (self.cols - 1) * self.cs + 1) as usize
    }
}

/// A temporary of the plan ([`Buf::Temp`], [`Count::Temp`]).
#[derive(Clone, Debug)]
pub(super) enum TempV {
    /// A device buffer ([`Step::Alloc`]).
    Buf(u64),
    /// A number read back ([`Step::ReadCount`]).
    Num(u64),
}

/// A launch since the last check: kernel, grid, block, resolved arguments, the position
/// of the report key among them, and whether it is safe on any data (so records no check,
/// [`Launch::any_data`]).
type Pending = (usize, u32, u32, Vec<LaunchArg>, Option<usize>, bool);

/// One run of a program: its driver and module, its environment (one value per IR
/// variable) and temporaries, and what it allocated.
pub(super) struct Exec<'a, D: Driver> {
    pub(super) program: &'a GpuProgram,
    pub(super) driver: &'a D,
    pub(super) module: D::Module,
    /// The value of each variable defined so far, by index.
    pub(super) env: Vec<Option<Rt>>,
    /// The plan's temporaries, as the steps define them.
    pub(super) temps: Vec<Option<TempV>>,
    /// Every buffer this run allocated (freed when it ends, unless handed over).
    pub(super) allocs: Vec<u64>,
    /// The buffers of `allocs` from [`Driver::alloc_kept_zero`], given back with
    /// [`Driver::free_kept_zero`] when the run succeeds.
    pub(super) kept_zero: Vec<u64>,
    /// The size in bytes of each buffer [`Exec::alloc`] made, by address (what a top-level
    /// loop may free between iterations, [`Exec::release_since`]).
    pub(super) sizes: std::collections::HashMap<u64, usize>,
    /// Launches since the last check: kernel, grid, resolved arguments and the position
    /// of the report key among them.
    pub(super) pending: Vec<Pending>,
    /// The error record (see the run time's module documentation): [`RECORD_BYTES`]
    /// bytes, zero until a check fails (kept zeroed between runs).
    pub(super) err: u64,
    /// A `CheckErrors` whose read of the error record is deferred (past launches safe on
    /// any data, [`Launch::any_data`]) to where the host next needs a value.
    pub(super) due: bool,
    /// The source location of a span, for error messages.
    pub(super) locate: &'a dyn Fn(u32) -> Location,
    /// `(total, longest row)` of the nested sequences uploaded by this run, by the address
    /// of their offsets (so `inner = "auto"` does not read them back).
    pub(super) shapes: Vec<(u64, usize, usize)>,
    /// The host offsets uploaded by this run and where they went, so that equal offsets
    /// of another argument are not uploaded again.
    pub(super) host_offsets: Vec<(Vec<u8>, u64)>,
    /// Buffers of `allocs` handed to the caller with the result ([`Exec::own`]): not freed
    /// at the end of a successful run.
    pub(super) given: Vec<u64>,
}

impl<D: Driver> Exec<'_, D> {
    /// The user's source location of span `span` of the plan.
    pub(super) fn at(&self, span: u32) -> Location {
        (self.locate)(span)
    }

    /// A zeroed device allocation of `bytes` (at least one), freed when the run ends
    /// unless it is handed over in the result.
    pub(super) fn alloc(&mut self, bytes: usize) -> Result<u64, Error> {
        self.try_alloc(bytes, Init::Zeroed).map_err(dev)
    }

    /// [`Exec::alloc`] with the driver's own error, for callers that tell an exhausted
    /// device from other failures; zeroed or not as `init` says.
    pub(super) fn try_alloc(&mut self, bytes: usize, init: Init) -> Result<u64, String> {
        let a = match init {
            Init::Written => self.driver.alloc(bytes.max(1))?,
            Init::Zeroed => self.driver.alloc_zeroed(bytes.max(1))?,
            Init::KeptZero => {
                let a = self.driver.alloc_kept_zero(bytes.max(1))?;
                self.kept_zero.push(a);
                a
            }
        };
        self.allocs.push(a);
        self.sizes.insert(a, bytes.max(1));
        Ok(a)
    }

    /// Binds plan variable `v`.
    pub(super) fn set(&mut self, v: u32, x: Rt) {
        let i = v as usize;
        if self.env.len() <= i {
            self.env.resize(i + 1, None);
        }
        self.env[i] = Some(x);
    }

    /// What plan variable `v` is bound to.
    pub(super) fn get(&self, v: u32) -> Result<&Rt, Error> {
        self.env
            .get(v as usize)
            .and_then(Option::as_ref)
            .ok_or_else(|| internal(format!("%{v} undefined")))
    }

    /// The part of variable `v` at tuple `path`.
    pub(super) fn path(&self, v: u32, path: &[u32]) -> Result<Rt, Error> {
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

    /// Variable `v` as a host value (an error if it lives on the device).
    pub(super) fn value(&self, v: u32) -> Result<Value, Error> {
        match self.get(v)? {
            Rt::Val(x) => Ok(x.clone()),
            _ => Err(internal(format!("%{v} is not a host value"))),
        }
    }

    /// The total number of elements and the longest row of `len` rows whose offsets are
    /// at `offs` (known from the upload, or read back).
    pub(super) fn row_shape(&self, offs: u64, len: usize) -> Result<(usize, usize), Error> {
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

    /// Reads `n` `u64`s at `addr`.
    pub(super) fn read_u64s(&self, addr: u64, n: usize) -> Result<Vec<u64>, Error> {
        let mut bytes = vec![0u8; n * 8];
        if n > 0 {
            self.driver.read(addr, &mut bytes).map_err(dev)?;
        }
        Ok(words(&bytes))
    }

    /// Reads `len` elements of type `elem` (scalar or tuple) from leaf buffers.
    pub(super) fn read_items(
        &self,
        bufs: &[u64],
        len: usize,
        elem: &Type,
    ) -> Result<Vec<Value>, Error> {
        let seq = DeviceSeq {
            bufs: bufs.to_vec(),
            len,
            elem: elem.clone(),
        };
        download_values(self.driver, &seq)
    }

    /// Element `i` of type `ty` (a scalar or a tuple of scalars) of the leaf buffers
    /// `bufs`, read leaf by leaf.
    pub(super) fn read_element(&self, bufs: &[u64], i: u64, ty: &Type) -> Result<Value, Error> {
        let ls = type_leaves(ty)?;
        let mut vals = Vec::with_capacity(ls.len());
        for (b, &l) in bufs.iter().zip(&ls) {
            let sz = size_of(l);
            let mut bytes = vec![0u8; sz as usize];
            self.driver.read(b + sz * i, &mut bytes).map_err(dev)?;
            vals.push(layout::get_value(l, &bytes));
        }
        assemble(ty, &mut vals.into_iter())
    }

    /// Row `i` of a nested device sequence as a flat sequence (a view into its buffers).
    pub(super) fn row(&self, bufs: &[u64], offs: u64, elem: &Type, i: usize) -> Result<Rt, Error> {
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
    pub(super) fn count(&self, c: &Count) -> Result<u64, Error> {
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
                .ok_or(RunError::CountOverflow)?,
            Count::Mul(a, b) => self
                .count(a)?
                .checked_mul(*b)
                .ok_or(RunError::CountOverflow)?,
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

    /// The device address of buffer `b`: a temporary, a leaf of a sequence or its offsets.
    pub(super) fn buf(&self, b: &Buf) -> Result<u64, Error> {
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

    /// Runs the plan's steps in order.
    pub(super) fn steps(&mut self, steps: &[Step]) -> Result<(), Error> {
        for s in steps {
            // A deferred check is settled before any step that reads the device (but the
            // combined read-backs) or runs a kernel not safe on any data; and a step's own
            // error comes second to a failed check of the launches before it.
            let defers = match s {
                Step::Launch(l) => l.any_data,
                Step::Host { .. }
                | Step::Assert { .. }
                | Step::Alloc { .. }
                | Step::Copy { .. }
                | Step::CheckErrors
                | Step::BindSeq { .. }
                | Step::ReadCount { .. }
                | Step::ReadScalars { .. } => true,
                Step::ByShape { .. } | Step::If { .. } | Step::Loop { .. } => false,
            };
            if !defers {
                self.settle()?;
            }
            if let Err(e) = self.step(s) {
                self.settle()?;
                return Err(e);
            }
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
            Step::Alloc {
                temp,
                init,
                elem,
                count,
                origin,
                span,
            } => {
                let n = self.count(count)?;
                let want = u128::from(n) * u128::from(size_of(*elem));
                let out_of_memory = |this: &Self| Error::OutOfMemory {
                    prim: origin.map_or("the result", |o| o.name()),
                    bytes: want,
                    at: this.at(*span),
                };
                let Ok(bytes) = usize::try_from(want) else {
                    return Err(out_of_memory(self));
                };
                let a = match self.try_alloc(bytes, *init) {
                    Ok(a) => a,
                    Err(e) if is_out_of_memory(&e) => return Err(out_of_memory(self)),
                    Err(e) => return Err(dev(e)),
                };
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
                    let at = self.buf(src)? + 8 * self.count(index)?;
                    let b = self.read_checked(&[(at, 8)])?;
                    u64::from_le_bytes(b[..8].try_into().map_err(|_| internal("a count"))?)
                };
                self.temps[*temp as usize] = Some(TempV::Num(x));
            }
            Step::Launch(l) => self.launch(l)?,
            Step::CheckErrors => self.check_errors(),
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
                // The flag and the leaves, with the error record, in one round trip.
                let ls = type_leaves(ty)?;
                let mut parts = Vec::with_capacity(ls.len() + 1);
                if let Some(h) = has {
                    parts.push((self.buf(h)?, 1));
                }
                for (b, &l) in bufs.iter().zip(&ls) {
                    parts.push((self.buf(b)?, size_of(l) as usize));
                }
                let bytes = self.read_checked(&parts)?;
                let mut at = 0;
                if has.is_some() {
                    at = 1;
                    if bytes.first() == Some(&0) {
                        return Err(Error::Empty {
                            prim: origin.name(),
                            at: self.at(*span),
                        });
                    }
                }
                let mut vals = Vec::with_capacity(ls.len());
                for &l in &ls {
                    let sz = size_of(l) as usize;
                    let b = bytes.get(at..at + sz).ok_or_else(|| internal("a scalar"))?;
                    vals.push(layout::get_value(l, b));
                    at += sz;
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
            Step::Loop {
                var,
                params,
                inits,
                cond,
                cond_result,
                body,
                body_result,
            } => {
                let mut state = inits
                    .iter()
                    .map(|v| self.get(*v).cloned())
                    .collect::<Result<Vec<_>, _>>()?;
                let base = self.allocs.len();
                loop {
                    for (p, x) in params.iter().zip(&state) {
                        self.set(*p, x.clone());
                    }
                    self.steps(cond)?;
                    if !matches!(self.value(*cond_result)?, Value::Bool(true)) {
                        break;
                    }
                    self.steps(body)?;
                    state = (0..params.len() as u32)
                        .map(|k| self.path(*body_result, &[k]))
                        .collect::<Result<_, _>>()?;
                    self.release_since(base, &state)?;
                }
                self.set(*var, Rt::tuple(state));
            }
        }
        Ok(())
    }

    /// The end of an iteration of a top-level loop: frees the buffers allocated since
    /// `allocs[base]` (in this iteration, or kept by the ones before it) that the carried
    /// values `live` do not use, after checking the launches that used them. Buffers of
    /// unknown size (uploads) are kept.
    fn release_since(&mut self, base: usize, live: &[Rt]) -> Result<(), Error> {
        if !self.pending.is_empty() {
            self.check_errors();
            self.settle()?;
        }
        let mut used = Vec::new();
        for x in live {
            buffers_of(x, &mut used);
        }
        let (mut kept, mut zeroed) = (Vec::new(), Vec::new());
        for a in self.allocs.split_off(base) {
            // The error record lives on.
            let keep = a == self.err
                || match self.sizes.get(&a) {
                    Some(&n) => used.iter().any(|p| (a..a + n as u64).contains(p)),
                    None => true,
                };
            if keep {
                kept.push(a);
            } else {
                // The iteration went through (its checks settled above), so a buffer its
                // kernels set back to zero is zero: given back as such below.
                if let Some(i) = self.kept_zero.iter().position(|&k| k == a) {
                    zeroed.push(self.kept_zero.swap_remove(i));
                } else {
                    let _ = self.driver.free(a);
                }
                self.sizes.remove(&a);
                self.shapes.retain(|s| s.0 != a);
                self.host_offsets.retain(|(_, o)| *o != a);
            }
        }
        self.allocs.extend(kept);
        give_back_zeroed(self.driver, self.program, &zeroed)
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
                    .ok_or(RunError::ScratchTooLarge)?;
            }
        }
        if l.any_grid && per_block > 0 {
            grid = grid.min((SCRATCH_BUDGET / per_block).max(1));
        }
        let grid = u32::try_from(grid).map_err(|_| RunError::Grid(grid))?;
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
                        .ok_or(RunError::ScratchTooLarge)?;
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
                        // Held in `f32` registers: passed as their exact `f32` value.
                        (Scalar::F16, Value::F16(x)) => LaunchArg::F32(x.to_f32()),
                        (Scalar::BF16, Value::BF16(x)) => LaunchArg::F32(x.to_f32()),
                        (Scalar::I32, Value::I32(x)) => LaunchArg::U32(x as u32),
                        (Scalar::U32, Value::U32(x)) => LaunchArg::U32(x),
                        // Extended to 32 bits as the kernel holds them (`ptx::narrow`).
                        (Scalar::I8, Value::I8(x)) => LaunchArg::U32(i32::from(x) as u32),
                        (Scalar::U8, Value::U8(x)) => LaunchArg::U32(x.into()),
                        (Scalar::I16, Value::I16(x)) => LaunchArg::U32(i32::from(x) as u32),
                        (Scalar::U16, Value::U16(x)) => LaunchArg::U32(x.into()),
                        (_, v) => LaunchArg::U64(as_u64(&v)?),
                    }
                }
            });
        }
        let kernel = l.kernel as usize;
        self.raw_launch(kernel, grid, l.block, &args)?;
        self.pending
            .push((kernel, grid, l.block, args, report, l.any_data));
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

    /// A `CheckErrors`: the launches since the last one are to be checked before anything
    /// uses their results ([`Exec::settle`] or [`Exec::read_checked`]). Launches that
    /// record no check (a program without checks, [`crate::plan::Plan::sites`] empty,
    /// or kernels safe on any data) never write the record: then nothing is to be read,
    /// so the host does not wait for them.
    fn check_errors(&mut self) {
        if self.program.plan.sites.is_empty() {
            self.pending.clear();
        } else if self.pending.iter().any(|p| !p.5) {
            self.due = true;
        } else if !self.due {
            self.pending.clear();
        }
    }

    /// Reads the error record if a check is due (see [`Exec::failed`]).
    pub(super) fn settle(&mut self) -> Result<(), Error> {
        if !self.due {
            return Ok(());
        }
        self.due = false;
        let mut rec = [0u8; RECORD_BYTES];
        self.driver.read(self.err, &mut rec).map_err(dev)?;
        self.failed(&rec)
    }

    /// Reads the device bytes `parts` (address, length) and returns them one after the
    /// other, with the error record first when a check is due, in one round trip
    /// ([`Driver::read_parts`]: the host waits once). When a check is due, a failed check
    /// is the error ([`Exec::failed`]).
    fn read_checked(&mut self, parts: &[(u64, usize)]) -> Result<Vec<u8>, Error> {
        let due = std::mem::take(&mut self.due);
        let record = due.then_some((self.err, RECORD_BYTES));
        let all: Vec<(u64, usize)> = record.into_iter().chain(parts.iter().copied()).collect();
        let mut bytes = vec![0u8; all.iter().map(|p| p.1).sum()];
        self.driver.read_parts(&all, &mut bytes).map_err(dev)?;
        if due {
            let rec: [u8; RECORD_BYTES] = bytes[..RECORD_BYTES]
                .try_into()
                .map_err(|_| internal("a record"))?;
            self.failed(&rec)?;
            return Ok(bytes.split_off(RECORD_BYTES));
        }
        Ok(bytes)
    }

    /// Given the error record as read: when a check failed, runs the pending launches
    /// again in report mode and returns the failure the sequential reference reports
    /// first.
    fn failed(&mut self, rec: &[u8; RECORD_BYTES]) -> Result<(), Error> {
        let pending = std::mem::take(&mut self.pending);
        fn word(rec: &[u8; RECORD_BYTES], i: usize) -> u64 {
            u64::from_le_bytes(rec[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
        }
        let nk = word(rec, 0);
        if nk == 0 {
            return Ok(());
        }
        for (kernel, grid, block, mut args, report, _) in pending {
            if let Some(r) = report {
                args[r] = LaunchArg::U64(nk);
            }
            self.raw_launch(kernel, grid, block, &args)?;
        }
        let mut rec = [0u8; RECORD_BYTES];
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
            SiteKind::DivideByZero => Error::DivideByZero { op: "/", at },
            SiteKind::RemainderByZero => Error::DivideByZero { op: "%", at },
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
}

/// Adds the device buffers a value uses (leaves and row offsets).
fn buffers_of(x: &Rt, out: &mut Vec<u64>) {
    match x {
        Rt::Val(_) => {}
        Rt::Seq { bufs, offs, .. } => {
            out.extend(bufs);
            out.extend(offs);
        }
        Rt::Tup(xs) => xs.iter().for_each(|x| buffers_of(x, out)),
    }
}
