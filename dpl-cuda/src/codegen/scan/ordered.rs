//! Device-wide scans of floats (element types with an `f32` or `f64` leaf) in dpl's one
//! order for scans, so their bits are those of every other place. The order, for values
//! `x_0 .. x_{n-1}` and an optional start value `v`:
//!
//! * **Tiles** of [`TILE`] = 2048 consecutive values; in a tile, lane `j` (of [`LANES`] =
//!   32) takes the [`RUN`] = 64 *consecutive* values from `j * 64` and folds them left to
//!   right (`L_i`, the lane's total `t_j`); a Kogge-Stone scan over the lanes present
//!   (`shfl.sync.up` by 1, 2, 4, 8, 16: lane `j >= d` does `op(lane j - d, lane j)`) gives
//!   `s_j`; the tile's total is `s_{c-1}` (`c` lanes present).
//! * **Carries**: tile 0's is `v`; with two tiles or more, the tile totals are scanned by
//!   this same order with the same start value (recursively) and tile `b >= 1`'s carry is
//!   the scanned total of tile `b - 1`.
//! * **Results**: `y_i = combine(combine(C_b, s_{j-1}), L_i)`, a missing operand being the
//!   identity. An exclusive scan's `y_0` is `v` and its `y_1 ..` the inclusive scan with `v`
//!   of `x_0 .. x_{n-2}` (`x_{n-1}` is evaluated for its failed checks only).
//!
//! On the GPU one warp (a block of 32 threads) takes one tile: the tile is staged in
//! shared memory in coalesced rounds (a padding slot every 64 keeps both the rounds and
//! each lane's run free of bank conflicts), each lane folds its run, the warp scans the
//! lane totals with [`Gen::warp_scan`]. The levels: the tile totals of the values (a
//! *totals* pass per level, up to [`UPPER`] levels above the values), then from the top
//! down a *scan* pass per level, scanning each level's values in place with the carries
//! from the level above; the last writes the results. A level with at most one tile needs
//! no level above: those passes return at once. The length is checked on the host to be
//! within what the levels cover.

use super::*;
use dpl_core::order::{LANES, TILE};

/// Values per lane in a tile: each lane folds this many consecutive values.
const RUN: u64 = (TILE / LANES) as u64;

/// Levels of tile totals above the values: lengths up to `TILE^(UPPER + 1)` (2^44, more
/// than any device's memory holds as a scan's result) are scanned.
const UPPER: usize = 3;

/// At most this many bytes of shared memory stage a tile (a static allocation's limit);
/// an element type with more leaves is read and written in place by each lane instead.
const STAGED_BYTES: u64 = 48 * 1024;

/// Items of a staged run unrolled at a time ([`Gen::run_items`]).
const UNROLL: u64 = 8;

/// A lane's run of a tile ([`Gen::run_items`]).
struct Run {
    /// Its first slot in the tile and its length (`u32`s).
    start: Reg,
    count: Reg,
    /// The shared address of its first item in each staged array (none: read in place).
    addrs: Vec<Reg>,
    /// The leaves' slot sizes.
    bytes: Vec<u64>,
}

/// One item of a lane's run ([`Gen::run_items`]).
struct RunItem {
    /// The run's first item.
    first: bool,
    /// Its slot in the tile (`u32`; in the loop, not in the unrolled whole runs).
    pos: Option<Reg>,
    /// Its address in each staged array (none when read in place).
    addrs: Vec<Addr>,
}

/// Where the values of one level of an ordered scan come from.
#[derive(Clone, Copy)]
enum Source<'a> {
    /// The scan's element function (the first level).
    Elems(&'a Soac),
    /// The tile totals of the level below, in temporaries (one per leaf).
    Totals(&'a [u32]),
}

/// One pass (kernel) of an ordered scan.
struct Pass<'a> {
    /// The level's values.
    src: Source<'a>,
    /// Values of the level evaluated (their failed checks reported).
    eval: Count,
    /// Values of the level in the scan (`eval`, but for the elements of an exclusive
    /// scan: all but the last).
    len: Count,
    /// A totals pass: the tile totals go to these temporaries; a scan pass: the results.
    dst: &'a [u32],
    /// A scan pass (else a totals pass).
    scan: bool,
    /// The scanned tile totals of the level above (a scan pass whose level may have
    /// more than one tile).
    carries: Option<&'a [u32]>,
    /// The results go to index + 1 and the start value to 0 (the elements of an
    /// exclusive scan).
    shifted: bool,
}

/// What every pass of one ordered scan shares.
#[derive(Clone, Copy)]
struct Shared<'a> {
    /// The operator and its combining step.
    op: &'a Lambda,
    comb: Comb<'a>,
    /// The element's leaves.
    ls: &'a [Scalar],
    /// The start value (an exclusive scan's).
    init: Option<VarId>,
    /// The number of elements (the key of the operator's failed checks).
    n: &'a Count,
}

/// Whether a scan of elements of leaves `ls` follows dpl's scan order ([`Gen::ordered_scan`]):
/// when a leaf is a float (integer scans do not depend on the order and keep their faster
/// tiles).
pub(in crate::codegen) fn is_ordered(ls: &[Scalar]) -> bool {
    ls.iter().any(|s| s.is_float())
}

/// The shared address of slot `p` (`u32`) of a staged tile's array `array` of `bytes`-byte
/// slots, with a padding slot after every [`RUN`].
fn staged_slot(k: &mut Kernel, array: &Sym, p: &Reg, bytes: u64) -> Reg {
    let q = k.reg(Scalar::U32);
    k.emit(Ins::shr(Ty::U32, &q, p, RUN.trailing_zeros()));
    k.emit(Ins::add(Ty::S32, &q, &q, p));
    Gen::shared_at(k, array, &q, bytes)
}

impl<'f> Gen<'f> {
    /// A device-wide `scan` (an `exclusive_scan` with start value `init`) in dpl's scan
    /// order (see the [module docs](self)): the totals passes up the levels, the scan
    /// passes down, one warp per tile.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn ordered_scan(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        op: &Lambda,
        init: Option<VarId>,
        elem_ty: &Type,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let ls = leaves(elem_ty)?;
        let comb = Comb::Op(op, elem_ty);
        self.cur = KernelInfo {
            block: LANES as u32,
            default: LANES as u32,
            note: Some("a warp per tile of 2048 in dpl's scan order"),
            fixed: true,
            ..self.cur
        };
        let tile = TILE as u64;
        steps.push(Step::Assert {
            check: HostAssert::AtMost {
                origin: origin_of(&soac.kind),
                len: var(soac.len),
                max: tile.pow(UPPER as u32 + 1),
            },
            span: s.span.0,
        });
        let n = Count::Var(var(soac.len));
        // Only an exclusive scan has a start value.
        let shifted = init.is_some();
        let scan_len = if shifted {
            Count::Sub(Box::new(n.clone()), Box::new(Count::Const(1)))
        } else {
            n.clone()
        };
        // Level `l + 1`'s values: the tile totals of level `l` (the elements at 0).
        let mut lens = vec![scan_len.clone()];
        let mut totals: Vec<Vec<u32>> = Vec::new();
        for l in 0..UPPER {
            let m = cdiv(lens[l].clone(), tile);
            totals.push(self.alloc_leaves(&ls, &cmax1(m.clone()), steps));
            lens.push(m);
        }
        let outs = self.alloc_written(&ls, &n, steps);
        let ctx = Shared {
            op,
            comb,
            ls: &ls,
            init,
            n: &n,
        };
        // Up: the tile totals of each level.
        for l in 0..UPPER {
            let src = match l {
                0 => Source::Elems(soac),
                _ => Source::Totals(&totals[l - 1]),
            };
            let pass = Pass {
                src,
                eval: lens[l].clone(),
                len: lens[l].clone(),
                dst: &totals[l],
                scan: false,
                carries: None,
                shifted: false,
            };
            self.ordered_pass(&pass, ctx, steps)?;
        }
        // Down: each level of totals scanned in place with the carries from above, then
        // the elements.
        for l in (0..UPPER).rev() {
            let src = Source::Totals(&totals[l]);
            let pass = Pass {
                src,
                eval: lens[l + 1].clone(),
                len: lens[l + 1].clone(),
                dst: &totals[l],
                scan: true,
                carries: totals.get(l + 1).map(Vec::as_slice),
                shifted: false,
            };
            self.ordered_pass(&pass, ctx, steps)?;
        }
        let pass = Pass {
            src: Source::Elems(soac),
            eval: n.clone(),
            len: scan_len,
            dst: &outs,
            scan: true,
            carries: Some(&totals[0]),
            shifted,
        };
        self.ordered_pass(&pass, ctx, steps)?;
        // One read of the error record for all the passes: a failed check leaves values
        // unspecified but no pass waits on another's, so all run, and in report mode all
        // run again.
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n));
        Ok(())
    }

    /// One pass of an ordered scan: a block (one warp) per tile of the level's values.
    fn ordered_pass(&mut self, p: &Pass<'_>, sh: Shared<'_>, steps: &mut Vec<Step>) -> R<()> {
        let Shared {
            op,
            comb,
            ls,
            init,
            n: n_count,
        } = sh;
        let elems = matches!(p.src, Source::Elems(_));
        let mut k = self.new_kernel(if p.scan {
            "scan_ordered"
        } else {
            "scan_ordered_totals"
        });
        k.env = match p.src {
            Source::Elems(soac) => self.bind_captures(&mut k, &[&soac.elem, op])?,
            Source::Totals(_) => self.bind_captures(&mut k, &[op])?,
        };
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let eval = k.param(Scalar::U64, KArg::Count(p.eval.clone()));
        let len = k.param(Scalar::U64, KArg::Count(p.len.clone()));
        let src_p = match p.src {
            Source::Totals(t) => Self::temp_ptrs(&mut k, t),
            Source::Elems(_) => Vec::new(),
        };
        let dst_p = Self::temp_ptrs(&mut k, p.dst);
        let car_p = p.carries.map(|c| Self::temp_ptrs(&mut k, c));
        let init_v = if p.scan {
            self.bind_init(&mut k, init)?
        } else {
            None
        };
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let exit = k.label();
        // A totals pass is needed with two tiles or more; the scan of a level of totals
        // with two values or more (one: no level above used it).
        let least = match (p.scan, elems) {
            (false, _) => TILE as u64 + 1,
            (true, false) => 2,
            (true, true) => 0,
        };
        if least > 0 {
            let idle = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Lt, Ty::U64, &idle, &len, least));
            k.emit(Ins::bra_uni(&exit).when(&idle));
        }
        let base = k.reg(Scalar::U64);
        k.emit(Ins::shl(Ty::B64, &base, &k.ctaid64, TILE.trailing_zeros()));
        let tile_eval = Self::tile_part(&mut k, &eval, &base, TILE as u64);
        let tile_len = Self::tile_part(&mut k, &len, &base, TILE as u64);
        let bytes: u64 = ls.iter().map(|&s| u64::from(slot_bytes(s))).sum();
        let staged = (TILE as u64 + TILE as u64 / RUN) * bytes <= STAGED_BYTES;
        let arrays: Vec<Sym> = if staged {
            ls.iter()
                .map(|&s| {
                    k.shared(((TILE as u64 + TILE as u64 / RUN) * u64::from(slot_bytes(s))) as u32)
                })
                .collect()
        } else {
            Vec::new()
        };
        let src = p.src;
        // The value at index `idx` of the level (a failed check jumps to `fail`).
        let value = |g: &mut Self, k: &mut Kernel, idx: &Reg, fail: &Label| -> R<Vec<Reg>> {
            match src {
                Source::Elems(soac) => Ok(g.elem_at(k, soac, None, &n, idx, fail)?.0),
                Source::Totals(_) => Ok(g.load_leaves(k, &src_p, idx, ls)),
            }
        };
        if staged {
            // The tile into shared memory, in coalesced rounds.
            Self::rounds(&mut k, &tile_eval, &mut |k, pos| {
                let idx = k.reg(Scalar::U64);
                k.emit(Ins::cvt(Ty::U64, Ty::U32, &idx, pos));
                k.emit(Ins::add(Ty::S64, &idx, &idx, &base));
                let next = k.label();
                let x = value(self, k, &idx, &next)?;
                for ((r, a), &s) in x.iter().zip(&arrays).zip(ls) {
                    let at = staged_slot(k, a, pos, u64::from(slot_bytes(s)));
                    Self::st(k, Space::Shared, &at, r);
                }
                k.place(&next);
                Ok(())
            })?;
            k.emit(Ins::bar_sync());
        } else if p.shifted {
            // The last element, evaluated for its failed checks only, by the first lane
            // of its tile.
            let (last, skip) = (k.reg(Scalar::U64), k.label());
            // Not this thread's: the tile has no extra element, or the lane is not 0.
            let (other, w) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
            k.emit(Ins::sub(Ty::S64, &last, &eval, 1));
            k.emit(Ins::setp(Cmp::Eq, Ty::U64, &other, &tile_eval, &tile_len));
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &w, &k.lane, 0));
            k.emit(Ins::or(Ty::Pred, &other, &other, &w));
            k.emit(Ins::bra(&skip).when(&other));
            value(self, &mut k, &last, &skip)?;
            k.place(&skip);
        }
        // This lane's run: `start .. start + count` of the tile.
        let start = k.reg(Scalar::U32);
        k.emit(Ins::shl(Ty::B32, &start, &k.lane, RUN.trailing_zeros()));
        let count = {
            let s64 = k.reg(Scalar::U64);
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &s64, &start));
            let c = Self::tile_part(&mut k, &tile_len, &s64, RUN);
            let c32 = k.reg(Scalar::U32);
            k.emit(Ins::cvt(Ty::U32, Ty::U64, &c32, &c));
            c32
        };
        let bytes: Vec<u64> = ls.iter().map(|&s| u64::from(slot_bytes(s))).collect();
        let run = Run {
            start: start.clone(),
            count,
            addrs: arrays
                .iter()
                .zip(&bytes)
                .map(|(a, &b)| staged_slot(&mut k, a, &start, b))
                .collect(),
            bytes: bytes.clone(),
        };
        // The run's item: staged, or evaluated in place (at its slot `pos` of the tile).
        let item = |g: &mut Self, k: &mut Kernel, it: &RunItem, fail: &Label| -> R<Vec<Reg>> {
            if staged {
                return Ok(it
                    .addrs
                    .iter()
                    .zip(ls)
                    .map(|(a, &s)| Self::ld(k, Space::Shared, a.clone(), s))
                    .collect());
            }
            let pos = it.pos.as_ref().expect("a run read in place is looped over");
            let idx = k.reg(Scalar::U64);
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &idx, pos));
            k.emit(Ins::add(Ty::S64, &idx, &idx, &base));
            value(g, k, &idx, fail)
        };
        // Fold the run (a scan pass keeps each `L_i` in its staged slot).
        let acc = self.none(&mut k, ls);
        self.run_items(&mut k, &run, &mut |g, k, it, next| {
            let x = item(g, k, &it, next)?;
            let r = if it.first {
                k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 1, 1));
                x
            } else {
                g.combine(k, comb, &acc.v, &x, &op_ctx)?
            };
            for (d, s) in acc.v.iter().zip(&r) {
                Self::mov(k, d, s);
            }
            if p.scan && staged {
                for (r, a) in acc.v.iter().zip(&it.addrs) {
                    Self::st(k, Space::Shared, a.clone(), r);
                }
            }
            Ok(())
        })?;
        let (incl, excl) = self.warp_scan(&mut k, &acc, &mut Self::fold(comb, &op_ctx))?;
        if !p.scan {
            // The tile total: the scan at the last lane present, `ceil(len / 64) - 1`.
            let last = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &last, &tile_len, RUN - 1));
            k.emit(Ins::shr(Ty::U64, &last, &last, RUN.trailing_zeros()));
            k.emit(Ins::max(Ty::U64, &last, &last, 1));
            k.emit(Ins::sub(Ty::S64, &last, &last, 1));
            let lane = k.reg(Scalar::U32);
            k.emit(Ins::cvt(Ty::U32, Ty::U64, &lane, &last));
            let total: Vec<Reg> = incl
                .v
                .iter()
                .map(|r| Self::shfl(&mut k, r, Shfl::Idx, &lane, 31))
                .collect();
            let skip = k.label();
            let (no, empty) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &no, &k.lane, 0));
            k.emit(Ins::setp(Cmp::Eq, Ty::U64, &empty, &tile_len, 0));
            k.emit(Ins::or(Ty::Pred, &no, &no, &empty));
            k.emit(Ins::bra(&skip).when(&no));
            let tile = k.ctaid64.clone();
            for (r, ptr) in total.iter().zip(&dst_p) {
                self.store(&mut k, ptr, &tile, r);
            }
            k.place(&skip);
            k.place(&exit);
            self.launch_on(k, cmax1(cdiv(p.len.clone(), TILE as u64)), steps);
            return Ok(());
        }
        // The carry: the start value for tile 0, else the scanned total of the tile before.
        let carry = self.none(&mut k, ls);
        let (later, known) = (k.label(), k.label());
        if car_p.is_some() {
            let has_prev = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ne, Ty::U64, &has_prev, &k.ctaid64, 0));
            k.emit(Ins::bra_uni(&later).when(&has_prev));
        }
        Self::set_init(&mut k, &carry, init_v.as_deref());
        if let Some(cp) = &car_p {
            k.emit(Ins::bra_uni(&known));
            k.place(&later);
            let prev = k.reg(Scalar::U64);
            k.emit(Ins::sub(Ty::S64, &prev, &k.ctaid64, 1));
            let v = self.load_leaves(&mut k, cp, &prev, ls);
            for (d, s) in carry.v.iter().zip(&v) {
                Self::mov(&mut k, d, s);
            }
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &carry.has, 1, 1));
            k.place(&known);
        }
        let before = self.opt_combine(&mut k, comb, &carry, &excl, &op_ctx)?;
        let shift = u64::from(p.shifted);
        if staged {
            // `y_i = op(before, L_i)` in the slots (with nothing before, `L_i` is there).
            let none = k.label();
            k.emit(Ins::bra(&none).unless(&before.has));
            self.run_items(&mut k, &run, &mut |g, k, it, _| {
                let l = item(g, k, &it, &none)?;
                let y = g.combine(k, comb, &before.v, &l, &op_ctx)?;
                for (r, a) in y.iter().zip(&it.addrs) {
                    Self::st(k, Space::Shared, a.clone(), r);
                }
                Ok(())
            })?;
            k.place(&none);
            k.emit(Ins::bar_sync());
            self.staged_store(&mut k, &arrays, ls, &dst_p, &base, shift, &tile_len)?;
        } else {
            // The run again, each `L_i` combined with what is before and stored in place.
            let run_acc = self.none(&mut k, ls);
            self.run_items(&mut k, &run, &mut |g, k, it, next| {
                let x = item(g, k, &it, next)?;
                let t = g.pconst(k, true);
                let r = g.opt_combine(k, comb, &run_acc, &Opt { has: t, v: x }, &op_ctx)?;
                Self::mov_opt(k, &run_acc, &r);
                let y = g.opt_combine(k, comb, &before, &r, &op_ctx)?;
                let pos = it.pos.as_ref().expect("a run read in place is looped over");
                let idx = k.reg(Scalar::U64);
                k.emit(Ins::cvt(Ty::U64, Ty::U32, &idx, pos));
                k.emit(Ins::add(Ty::S64, &idx, &idx, &base));
                k.emit(Ins::add(Ty::S64, &idx, &idx, shift));
                for (r, ptr) in y.v.iter().zip(&dst_p) {
                    g.store(k, ptr, &idx, r);
                }
                Ok(())
            })?;
        }
        if let (true, Some(iv)) = (p.shifted, &init_v) {
            // `y_0 = v`, by the first lane of tile 0 (when there is an element).
            let (skip, no, empty) = (k.label(), k.reg(Scalar::Bool), k.reg(Scalar::Bool));
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &no, &k.tid, 0));
            k.emit(Ins::setp(Cmp::Ne, Ty::U64, &empty, &k.ctaid64, 0));
            k.emit(Ins::or(Ty::Pred, &no, &no, &empty));
            k.emit(Ins::setp(Cmp::Eq, Ty::U64, &empty, &eval, 0));
            k.emit(Ins::or(Ty::Pred, &no, &no, &empty));
            k.emit(Ins::bra(&skip).when(&no));
            let zero = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &zero, 0));
            for (r, ptr) in iv.iter().zip(&dst_p) {
                self.store(&mut k, ptr, &zero, r);
            }
            k.place(&skip);
        }
        k.place(&exit);
        let grid = cmax1(cdiv(p.eval.clone(), TILE as u64));
        self.launch_on(k, grid, steps);
        Ok(())
    }

    /// `clamp(total - from, 0, most)` (`u64`s, `from` and `total` below 2^63): the part of
    /// `total` values that falls in the `most` from `from`.
    fn tile_part(k: &mut Kernel, total: &Reg, from: &Reg, most: u64) -> Reg {
        let d = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &d, total, from));
        k.emit(Ins::max(Ty::S64, &d, &d, 0));
        k.emit(Ins::min(Ty::S64, &d, &d, most));
        d
    }

    /// Coalesced rounds over the first `count` (`u64`, at most [`TILE`]) slots of a tile:
    /// lane `j` takes slots `j, j + 32, ...`; `body` gets the slot (`u32`).
    fn rounds(
        k: &mut Kernel,
        count: &Reg,
        body: &mut dyn FnMut(&mut Kernel, &Reg) -> R<()>,
    ) -> R<()> {
        let c = k.reg(Scalar::U32);
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &c, count));
        let pos = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &pos, &k.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &out, &pos, &c));
        k.emit(Ins::bra(&end).when(&out));
        body(k, &pos)?;
        k.emit(Ins::add(Ty::S32, &pos, &pos, LANES as u32));
        k.emit(Ins::bra(&top));
        k.place(&end);
        Ok(())
    }

    /// A lane's run in order: `body` gets each item (see [`RunItem`]) and a label to jump
    /// to to skip the rest of the item (a failed check). A staged run of [`RUN`] items is
    /// unrolled by [`UNROLL`] with constant shared offsets; a shorter one, or one read in
    /// place, is a loop.
    fn run_items(
        &mut self,
        k: &mut Kernel,
        run: &Run,
        body: &mut dyn FnMut(&mut Self, &mut Kernel, RunItem, &Label) -> R<()>,
    ) -> R<()> {
        let (partial, done) = (k.label(), k.label());
        let addrs: Vec<Reg> = run.addrs.iter().map(|a| k.reg(a.ty)).collect();
        for (d, s) in addrs.iter().zip(&run.addrs) {
            Self::mov(k, d, s);
        }
        let mut items = |g: &mut Self, k: &mut Kernel, first: bool| -> R<()> {
            for j in 0..UNROLL {
                let next = k.label();
                let it = RunItem {
                    first: first && j == 0,
                    pos: None,
                    addrs: addrs
                        .iter()
                        .zip(&run.bytes)
                        .map(|(a, &b)| Addr::from(a).plus(j * b))
                        .collect(),
                };
                body(g, k, it, &next)?;
                k.place(&next);
            }
            for (a, &b) in addrs.iter().zip(&run.bytes) {
                k.emit(Ins::add(Ty::S32, a, a, UNROLL * b));
            }
            Ok(())
        };
        if !run.addrs.is_empty() {
            let full = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &full, &run.count, RUN));
            k.emit(Ins::bra(&partial).unless(&full));
            items(self, k, true)?;
            let (c, top) = (k.reg(Scalar::U32), k.label());
            k.emit(Ins::mov(Ty::U32, &c, 1));
            k.place(&top);
            items(self, k, false)?;
            k.emit(Ins::add(Ty::S32, &c, &c, 1));
            let more = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Lt, Ty::U32, &more, &c, RUN / UNROLL));
            k.emit(Ins::bra(&top).when(&more));
            k.emit(Ins::bra_uni(&done));
        }
        k.place(&partial);
        let (pos, end) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.emit(Ins::mov(Ty::U32, &pos, &run.start));
        k.emit(Ins::add(Ty::S32, &end, &run.start, &run.count));
        let (top, next) = (k.label(), k.label());
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &out, &pos, &end));
        k.emit(Ins::bra(&done).when(&out));
        // The first item, then the rest.
        for first in [true, false] {
            if !first {
                k.place(&top);
                k.emit(Ins::setp(Cmp::Ge, Ty::U32, &out, &pos, &end));
                k.emit(Ins::bra(&done).when(&out));
            }
            let label = if first { k.label() } else { next.clone() };
            let it = RunItem {
                first,
                pos: Some(pos.clone()),
                addrs: addrs.iter().map(Addr::from).collect(),
            };
            body(self, k, it, &label)?;
            k.place(&label);
            k.emit(Ins::add(Ty::S32, &pos, &pos, 1));
            for (a, &b) in addrs.iter().zip(&run.bytes) {
                k.emit(Ins::add(Ty::S32, a, a, b));
            }
            if !first {
                k.emit(Ins::bra(&top));
            }
        }
        k.place(&done);
        Ok(())
    }

    /// The results of a staged tile (`len` of them, `u64`) from the shared `arrays` to
    /// index `base + slot + shift` of the leaf buffers `ptrs`, in coalesced rounds
    /// (unrolled, with constant offsets, for a whole tile).
    #[allow(clippy::too_many_arguments)]
    fn staged_store(
        &mut self,
        k: &mut Kernel,
        arrays: &[Sym],
        ls: &[Scalar],
        ptrs: &[Reg],
        base: &Reg,
        shift: u64,
        len: &Reg,
    ) -> R<()> {
        let (part, done) = (k.label(), k.label());
        let whole = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &whole, len, TILE as u64));
        k.emit(Ins::bra(&part).unless(&whole));
        let idx = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &idx, &k.lane));
        k.emit(Ins::add(Ty::S64, &idx, &idx, base));
        k.emit(Ins::add(Ty::S64, &idx, &idx, shift));
        let lane = k.lane.clone();
        let rows: Vec<(Reg, Reg)> = arrays
            .iter()
            .zip(ls)
            .zip(ptrs)
            .map(|((a, &s), p)| {
                (
                    staged_slot(k, a, &lane, u64::from(slot_bytes(s))),
                    Self::addr(k, p, &idx, s),
                )
            })
            .collect();
        for r in 0..RUN {
            for ((sh, g), &s) in rows.iter().zip(ls) {
                let slot = r * LANES as u64 + r / 2;
                let y = Self::ld(
                    k,
                    Space::Shared,
                    Addr::from(sh).plus(slot * u64::from(slot_bytes(s))),
                    s,
                );
                let at = Addr::from(g).plus(r * LANES as u64 * size_of(s));
                Self::st(k, Space::Global, at, &y);
            }
        }
        k.emit(Ins::bra_uni(&done));
        k.place(&part);
        Self::rounds(k, len, &mut |k, pos| {
            let idx = k.reg(Scalar::U64);
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &idx, pos));
            k.emit(Ins::add(Ty::S64, &idx, &idx, base));
            k.emit(Ins::add(Ty::S64, &idx, &idx, shift));
            for ((a, &s), ptr) in arrays.iter().zip(ls).zip(ptrs) {
                let at = staged_slot(k, a, pos, u64::from(slot_bytes(s)));
                let y = Self::ld(k, Space::Shared, &at, s);
                self.store(k, ptr, &idx, &y);
            }
            Ok(())
        })?;
        k.place(&done);
        Ok(())
    }
}
