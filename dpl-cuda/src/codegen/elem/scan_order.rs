//! Float scans inside element functions (a row's `scan` or `exclusive_scan`, written out
//! or streamed into a consumer) in dpl's one order for scans ([`dpl_core::order`], the
//! order the device-wide [`crate::codegen::scan`] follows), so a row's results have the
//! bits of every other place whatever the schedule.
//!
//! One thread produces the results in index order, as `dpl_core`'s incremental levels
//! do: each level (the values, then the tiles' totals of the level below, up to
//! [`LEVELS`] levels) keeps its count, its current tile's carry, the current lane's run
//! (the left fold from the lane's first value) and its `combine(carry, s[j - 1])`, and the
//! totals of the tile's complete lanes in a per-thread `.local` array. At a lane's first
//! value the Kogge-Stone scan of the lanes before it (`s[j - 1]`, which depends on them
//! only) is taken again from those totals; at a tile's first value (not the first tile's)
//! the last tile's total goes up a level, whose result there is this tile's carry. After
//! the last value a level with an upper level sends its last tile's total up too, so the
//! same operations are applied as everywhere else.
//!
//! A group of threads (a warp or a block schedule) streams the values in chunks of the
//! group's width as usual, each thread evaluating its own; then every thread takes the
//! chunk's values in order (a warp by `shfl.sync.idx`, a block through a shared slot per
//! thread) and runs the same machine on them, keeping the result at its own position: the
//! machine's state stays the same in every thread (so they branch, and fail, together),
//! and the consumer gets whole chunks (coalesced stores). Integer scans do not depend on
//! the order and keep their group scans ([`Gen::stream`]).

use super::stream::{Body, Lanes, flag};
use super::*;
use dpl_core::order::{LANES, TILE};

/// Values per lane in a tile: each lane folds this many consecutive values.
const RUN: u64 = (TILE / LANES) as u64;

/// Levels of the machine (the values and the tiles' totals above them): rows up to
/// `TILE^LEVELS` (2^44) values, more than any device holds, so the top level never
/// starts a second tile.
const LEVELS: usize = 4;

/// One level of a scan in the order, in registers and `.local` arrays.
struct Level {
    /// Values taken so far (`u64`).
    cnt: Reg,
    /// The current tile's carry.
    carry: Opt,
    /// The current lane's `combine(carry, s[j - 1])`.
    before: Opt,
    /// The current lane's run so far.
    run: Vec<Reg>,
    /// The totals of the current tile's complete lanes, per leaf (8-byte slots).
    totals: Vec<Sym>,
}

/// A scan in the order being produced by one thread ([`Gen::order_start`]).
pub(super) struct ScanOrder {
    /// The levels, values first.
    levels: Vec<Level>,
    /// Where the lanes' totals are scanned, per leaf.
    scratch: Vec<Sym>,
}

impl<'f> Gen<'f> {
    /// Whether a group of the inner schedule asked for cannot run the float scans of `l`:
    /// with more than 512 threads per block (`.maxntid` then leaves ptxas at most 64
    /// registers per thread), the levels' state of the stream spills (measured: 20 bytes
    /// for a block of 1024 on sm_70).
    pub(in crate::codegen) fn float_scan_too_wide(&self, l: &Lambda) -> bool {
        self.opts.inner == crate::Inner::Block
            && self.opts.block.is_some_and(|b| b > 512)
            && self.holds_float_scan(l)
    }

    /// Whether the element function `l` holds a float scan: it runs in dpl's order as one
    /// stream in every thread, so a group per row is no faster than a thread per row (the
    /// `auto` schedule then takes a thread per row).
    pub(in crate::codegen) fn holds_float_scan(&self, l: &Lambda) -> bool {
        let mut found = false;
        l.body.walk(&mut |st| {
            if let Expr::Soac(x) = &st.expr
                && matches!(
                    x.kind,
                    SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
                )
            {
                found |= self.ty(st.var).holds_float();
            }
        });
        found
    }

    /// The registers of a scan in the order of values with leaves `ls` and start value
    /// `init` (every level's first carry).
    pub(super) fn order_start(
        &mut self,
        k: &mut Kernel,
        ls: &[Scalar],
        init: Option<&[Reg]>,
    ) -> ScanOrder {
        let arrays =
            |k: &mut Kernel| -> Vec<Sym> { ls.iter().map(|_| k.local(LANES as u32 * 8)).collect() };
        let scratch = arrays(k);
        let levels = (0..LEVELS)
            .map(|_| {
                let cnt = k.reg(Scalar::U64);
                k.emit(Ins::mov(Ty::U64, &cnt, 0));
                let carry = self.none(k, ls);
                if let Some(v) = init {
                    for (d, s) in carry.v.iter().zip(v) {
                        Self::mov(k, d, s);
                    }
                    k.emit(Ins::setp(Cmp::Eq, Ty::U32, &carry.has, 0, 0));
                }
                Level {
                    cnt,
                    carry,
                    before: self.none(k, ls),
                    run: ls.iter().map(|&s| self.zero(k, s)).collect(),
                    totals: arrays(k),
                }
            })
            .collect();
        ScanOrder { levels, scratch }
    }

    /// Takes the next value `x` of level `at` (0: the scan's values); returns the scan's
    /// result at its index (fresh registers). Failed checks of the operator go to `ctx`.
    pub(super) fn order_push(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        sc: &ScanOrder,
        at: usize,
        x: &[Reg],
        ctx: &Ctx,
    ) -> R<Vec<Reg>> {
        let lv = &sc.levels[at];
        let in_tile = k.reg(Scalar::U64);
        k.emit(Ins::and(Ty::B64, &in_tile, &lv.cnt, TILE as u64 - 1));
        if at + 1 < LEVELS {
            // A new tile (not the first): the last one's total goes up and gives its carry.
            let (first, later, skip) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool), k.label());
            k.emit(Ins::setp(Cmp::Eq, Ty::U64, &first, &in_tile, 0));
            k.emit(Ins::setp(Cmp::Ne, Ty::U64, &later, &lv.cnt, 0));
            k.emit(Ins::and(Ty::Pred, &first, &first, &later));
            k.emit(Ins::bra(&skip).unless(&first));
            let all = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &all, LANES as u64));
            let total = self.lanes_scanned(k, comb, sc, at, &all, ctx)?;
            let y = self.order_push(k, comb, sc, at + 1, &total.v, ctx)?;
            for (d, s) in lv.carry.v.iter().zip(&y) {
                Self::mov(k, d, s);
            }
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &lv.carry.has, 0, 0));
            k.place(&skip);
        }
        // A lane's first value: its `combine(carry, s[j - 1])`, and the run starts.
        let (low, start, rest, after) = (
            k.reg(Scalar::U64),
            k.reg(Scalar::Bool),
            k.label(),
            k.label(),
        );
        k.emit(Ins::and(Ty::B64, &low, &lv.cnt, RUN - 1));
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &start, &low, 0));
        k.emit(Ins::bra(&rest).unless(&start));
        let c = k.reg(Scalar::U64);
        k.emit(Ins::shr(Ty::U64, &c, &in_tile, RUN.trailing_zeros()));
        let s = self.lanes_scanned(k, comb, sc, at, &c, ctx)?;
        let b = self.opt_combine(k, comb, &lv.carry, &s, ctx)?;
        Self::mov_opt(k, &lv.before, &b);
        for (d, s) in lv.run.iter().zip(x) {
            Self::mov(k, d, s);
        }
        k.emit(Ins::bra(&after));
        k.place(&rest);
        let n = self.combine(k, comb, &lv.run, x, ctx)?;
        for (d, s) in lv.run.iter().zip(&n) {
            Self::mov(k, d, s);
        }
        k.place(&after);
        k.emit(Ins::add(Ty::S64, &lv.cnt, &lv.cnt, 1));
        // A lane's last value: its total.
        let (end, skip) = (k.reg(Scalar::Bool), k.label());
        k.emit(Ins::and(Ty::B64, &low, &lv.cnt, RUN - 1));
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &end, &low, 0));
        k.emit(Ins::bra(&skip).unless(&end));
        self.put_total(k, lv, &in_tile);
        k.place(&skip);
        let t = self.pconst(k, true);
        let run = Opt {
            has: t,
            v: lv.run.clone(),
        };
        let y = self.opt_combine(k, comb, &lv.before, &run, ctx)?;
        let out: Vec<Reg> = y.v.iter().map(|r| k.reg(r.ty)).collect();
        for (d, s) in out.iter().zip(&y.v) {
            Self::mov(k, d, s);
        }
        Ok(out)
    }

    /// After the last value: from the values up, a level with a level above (two tiles
    /// or more) sends its last tile's total up, so every place applies the same
    /// operations.
    pub(super) fn order_finish(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        sc: &ScanOrder,
        at: usize,
        ctx: &Ctx,
    ) -> R<()> {
        if at + 1 >= LEVELS {
            return Ok(());
        }
        let lv = &sc.levels[at];
        let (upper, skip) = (k.reg(Scalar::Bool), k.label());
        k.emit(Ins::setp(Cmp::Gt, Ty::U64, &upper, &lv.cnt, TILE as u64));
        k.emit(Ins::bra(&skip).unless(&upper));
        // The last value's position in its tile; its lane's run, if not complete, is the
        // lane's total.
        let (last, low, partial) = (k.reg(Scalar::U64), k.reg(Scalar::U64), k.reg(Scalar::Bool));
        k.emit(Ins::sub(Ty::S64, &last, &lv.cnt, 1));
        k.emit(Ins::and(Ty::B64, &last, &last, TILE as u64 - 1));
        k.emit(Ins::and(Ty::B64, &low, &lv.cnt, RUN - 1));
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &partial, &low, 0));
        let full = k.label();
        k.emit(Ins::bra(&full).unless(&partial));
        self.put_total(k, lv, &last);
        k.place(&full);
        let c = k.reg(Scalar::U64);
        k.emit(Ins::shr(Ty::U64, &c, &last, RUN.trailing_zeros()));
        k.emit(Ins::add(Ty::S64, &c, &c, 1));
        let total = self.lanes_scanned(k, comb, sc, at, &c, ctx)?;
        self.order_push(k, comb, sc, at + 1, &total.v, ctx)?;
        self.order_finish(k, comb, sc, at + 1, ctx)?;
        k.place(&skip);
        Ok(())
    }

    /// Stores level `lv`'s run as the total of the lane of the value at `pos` (its
    /// position in the tile).
    fn put_total(&mut self, k: &mut Kernel, lv: &Level, pos: &Reg) {
        let j = k.reg(Scalar::U64);
        k.emit(Ins::shr(Ty::U64, &j, pos, RUN.trailing_zeros()));
        for (a, r) in lv.totals.iter().zip(&lv.run) {
            let addr = Self::lane_addr(k, a, &j);
            Self::st(k, Space::Local, &addr, r);
        }
    }

    /// The Kogge-Stone scan of the first `c` lane totals of level `at` (`u64`, at most
    /// 32), taken in the scratch arrays: for `d` = 1, 2, 4, 8, 16, lane `j >= d` (from the
    /// last down, so each step reads the values before it) becomes `op(lane j - d, lane
    /// j)`; returns lane `c - 1`, none when `c` is 0.
    fn lanes_scanned(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        sc: &ScanOrder,
        at: usize,
        c: &Reg,
        ctx: &Ctx,
    ) -> R<Opt> {
        let lv = &sc.levels[at];
        let ls: Vec<Scalar> = lv.run.iter().map(|r| r.ty).collect();
        let out = self.none(k, &ls);
        let end = k.label();
        let empty = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &empty, c, 0));
        k.emit(Ins::bra(&end).when(&empty));
        // The totals into the scratch arrays.
        let j = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &j, 0));
        let (copy, copied) = (k.label(), k.label());
        k.place(&copy);
        Self::exit_when_ge(k, &j, c, &copied);
        for ((from, to), &t) in lv.totals.iter().zip(&sc.scratch).zip(&ls) {
            let a = Self::lane_addr(k, from, &j);
            let v = Self::ld(k, Space::Local, &a, t);
            let b = Self::lane_addr(k, to, &j);
            Self::st(k, Space::Local, &b, &v);
        }
        k.emit(Ins::add(Ty::S64, &j, &j, 1));
        k.emit(Ins::bra(&copy));
        k.place(&copied);
        // The steps: `d` doubling while below `c`; `j` from `c - 1` down to `d`.
        let d = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &d, 1));
        let (d_top, d_end, j_top, j_end) = (k.label(), k.label(), k.label(), k.label());
        k.place(&d_top);
        Self::exit_when_ge(k, &d, c, &d_end);
        k.emit(Ins::sub(Ty::S64, &j, c, 1));
        k.place(&j_top);
        let below = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &below, &j, &d));
        k.emit(Ins::bra(&j_end).when(&below));
        let jd = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &jd, &j, &d));
        let (a_addrs, b_addrs): (Vec<Reg>, Vec<Reg>) = sc
            .scratch
            .iter()
            .map(|s| (Self::lane_addr(k, s, &jd), Self::lane_addr(k, s, &j)))
            .unzip();
        let a: Vec<Reg> = a_addrs
            .iter()
            .zip(&ls)
            .map(|(x, &t)| Self::ld(k, Space::Local, x, t))
            .collect();
        let b: Vec<Reg> = b_addrs
            .iter()
            .zip(&ls)
            .map(|(x, &t)| Self::ld(k, Space::Local, x, t))
            .collect();
        let r = self.combine(k, comb, &a, &b, ctx)?;
        for (x, v) in b_addrs.iter().zip(&r) {
            Self::st(k, Space::Local, x, v);
        }
        k.emit(Ins::sub(Ty::S64, &j, &j, 1));
        k.emit(Ins::bra(&j_top));
        k.place(&j_end);
        k.emit(Ins::shl(Ty::B64, &d, &d, 1));
        k.emit(Ins::bra(&d_top));
        k.place(&d_end);
        let last = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &last, c, 1));
        for ((s, d), &t) in sc.scratch.iter().zip(&out.v).zip(&ls) {
            let a = Self::lane_addr(k, s, &last);
            let v = Self::ld(k, Space::Local, &a, t);
            Self::mov(k, d, &v);
        }
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &out.has, 0, 0));
        k.place(&end);
        Ok(out)
    }

    /// A float scan streamed in the order ([`Gen::stream`]): `soac`'s values (`init`:
    /// an exclusive scan from that start value), each result handed to `body` at its
    /// position, by `lanes` (see the module's docs).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn stream_in_order(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        comb: Comb<'_>,
        ls: &[Scalar],
        init: Option<Vec<Reg>>,
        lanes: Lanes<'_>,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        let Comb::Op(_, ety) = comb else {
            return unsupported("a scan of counts in the order (internal)");
        };
        let ctx = match lanes {
            Lanes::Thread(ctx) => ctx.clone(),
            // Every thread runs the machine alike: a failed check leaves them together.
            Lanes::Group(grp) => Ctx {
                key: grp.key.clone(),
                fail: Some(grp.fail.clone()),
            },
        };
        let sc = self.order_start(k, ls, init.as_deref());
        let ex = init.map(|v| {
            let cur: Vec<Reg> = ls.iter().map(|&s| k.reg(s)).collect();
            for (d, s) in cur.iter().zip(&v) {
                Self::mov(k, d, s);
            }
            Exclusive {
                cur,
                pending: ls.iter().map(|&s| self.zero(k, s)).collect(),
                has: self.pconst(k, false),
            }
        });
        let ex = ex.as_ref();
        match lanes {
            Lanes::Thread(_) => self.for_each(k, soac, lanes, &mut |g, k, j, ok, e| {
                let y = g.order_next(k, comb, &sc, ex, &e.flatten()?, &ctx)?;
                body(g, k, j, ok, unflatten(ety, &mut y.into_iter())?)
            })?,
            Lanes::Group(grp) => {
                // A block's values meet in shared memory (a slot per thread and leaf, and
                // the flags); a warp's come by shuffles.
                let slots = grp.block.then(|| {
                    let bytes = self.warps() * 32 * 8;
                    (0..=ls.len())
                        .map(|_| k.shared(bytes))
                        .collect::<Vec<Sym>>()
                });
                self.for_each(k, soac, lanes, &mut |g, k, j, ok, e| {
                    let ok = flag(ok)?.clone();
                    let e = e.flatten()?;
                    let mine: Vec<Reg> = ls.iter().map(|&s| g.zero(k, s)).collect();
                    let own: Vec<Reg> = std::iter::once(&ok).chain(&e).cloned().collect();
                    if let Some(slots) = &slots {
                        let off = k.reg(Scalar::U32);
                        k.emit(Ins::shl(Ty::B32, &off, &grp.lane, 3));
                        for (a, r) in slots.iter().zip(&own) {
                            let addr = Self::shared_slot(k, a, &off);
                            Self::st(k, Space::Shared, &addr, r);
                        }
                        k.emit(Ins::bar_sync());
                    }
                    // Thread `t`'s value, in the group's order, taken by every thread.
                    let t = k.reg(Scalar::U32);
                    k.emit(Ins::mov(Ty::U32, &t, 0));
                    let width = k.reg(Scalar::U32);
                    k.emit(Ins::cvt(Ty::U32, Ty::U64, &width, &grp.width));
                    let (top, next, end) = (k.label(), k.label(), k.label());
                    k.place(&top);
                    let done = k.reg(Scalar::Bool);
                    k.emit(Ins::setp(Cmp::Ge, Ty::U32, &done, &t, &width));
                    k.emit(Ins::bra_uni(&end).when(&done));
                    let got: Vec<Reg> = match &slots {
                        Some(slots) => {
                            let off = k.reg(Scalar::U32);
                            k.emit(Ins::shl(Ty::B32, &off, &t, 3));
                            slots
                                .iter()
                                .zip(&own)
                                .map(|(a, r)| {
                                    let addr = Self::shared_slot(k, a, &off);
                                    Self::ld(k, Space::Shared, &addr, r.ty)
                                })
                                .collect()
                        }
                        None => own
                            .iter()
                            .map(|r| Self::shfl(k, r, Shfl::Idx, &t, 31))
                            .collect(),
                    };
                    k.emit(Ins::bra_uni(&next).unless(&got[0]));
                    let y = g.order_next(k, comb, &sc, ex, &got[1..], &ctx)?;
                    let at = k.reg(Scalar::Bool);
                    k.emit(Ins::setp(Cmp::Eq, Ty::U32, &at, &t, &grp.lane));
                    for (d, s) in mine.iter().zip(&y) {
                        Self::select(k, d, &at, s, d);
                    }
                    k.place(&next);
                    k.emit(Ins::add(Ty::S32, &t, &t, 1));
                    k.emit(Ins::bra_uni(&top));
                    k.place(&end);
                    if slots.is_some() {
                        // The slots are written again by the next chunk.
                        k.emit(Ins::bar_sync());
                    }
                    body(g, k, j, Some(&ok), unflatten(ety, &mut mine.into_iter())?)
                })?
            }
        }
        self.order_finish(k, comb, &sc, 0, &ctx)
    }

    /// The result at the next position of a scan in the order, given its value `x`
    /// (fresh registers): an inclusive scan's is `x` pushed; an exclusive scan's (`ex`)
    /// is the start value, then the inclusive scan of the values before it (a value is
    /// pushed at the next position, so the last is evaluated, not combined).
    fn order_next(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        sc: &ScanOrder,
        ex: Option<&Exclusive>,
        x: &[Reg],
        ctx: &Ctx,
    ) -> R<Vec<Reg>> {
        let Some(ex) = ex else {
            return self.order_push(k, comb, sc, 0, x, ctx);
        };
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&ex.has));
        let y = self.order_push(k, comb, sc, 0, &ex.pending, ctx)?;
        for (d, s) in ex.cur.iter().zip(&y) {
            Self::mov(k, d, s);
        }
        k.place(&skip);
        for (d, s) in ex.pending.iter().zip(x) {
            Self::mov(k, d, s);
        }
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &ex.has, 0, 0));
        // A copy, so the consumer sees this position's value even if it loops.
        let out: Vec<Reg> = ex.cur.iter().map(|r| k.reg(r.ty)).collect();
        for (d, s) in out.iter().zip(&ex.cur) {
            Self::mov(k, d, s);
        }
        Ok(out)
    }
}

/// An exclusive scan's state between positions ([`Gen::order_next`]).
struct Exclusive {
    /// The result at the current position.
    cur: Vec<Reg>,
    /// The value of the position before, not yet pushed.
    pending: Vec<Reg>,
    /// Whether there is one.
    has: Reg,
}
