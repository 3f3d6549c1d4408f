//! Reductions inside element functions (a row's `sum`, a `reduce` per element) in dpl's
//! one order ([`dpl_core::order`]), by one thread or by a group of threads, so a row's
//! result has the bits of every other place whatever the schedule.
//!
//! * **One thread** meets the elements in index order (also when they are streamed from
//!   a lazy `filter` or `scan`) and keeps the 32 lanes of the current tile in a
//!   per-thread `.local` array: element `e` of a tile goes to lane `e % 32`; a full tile's
//!   lanes are combined by the lane tree (halves first) and its result goes to the second
//!   level's lane `t % 32`, another `.local` array, reduced by the tree at the end.
//! * **A group** (a warp, or a block's warps): each warp takes whole tiles, lane `j`
//!   folding the tile's elements `j, j + 32, ...`; the warp's `shfl.down`-order butterfly
//!   gives the tile's result, which lane `t % 32` folds into its second-level lane. In a
//!   block, warp `w` takes the tiles `t` with `t % W == w` (`W` the largest power of two
//!   not above the block's warps, so it divides 32 and every second-level lane belongs to
//!   one warp); the 32 second-level lanes then meet in shared memory for the final tree.
//!   In report mode (the run again after a failed check, [`crate::runtime`]) a group first
//!   runs the loops with one lane and stride 1, so every thread meets the elements in
//!   index order and reports the failure the sequential reference reports first; when
//!   none fails, they run again in the order above for the value.

use super::*;
use dpl_core::order::{LANES, TILE};

impl<'f> Gen<'f> {
    /// A reduction inside an element function in dpl's order: by this thread, or split
    /// across the group `split` (a warp or a block; the element function then runs with
    /// no split, `self.split` is `None`). `init` goes first; without it an empty index
    /// space fails [`Gen::check_nonempty`].
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn ordered_reduce(
        &mut self,
        k: &mut Kernel,
        s: &Stmt,
        soac: &Soac,
        op: &Lambda,
        init: Option<VarId>,
        ctx: &Ctx,
        split: Option<Split>,
    ) -> R<KVal> {
        let ty = self.ty(s.var);
        let ls = leaves(ty)?;
        let comb = Comb::Op(op, ty);
        let op_ctx = Ctx {
            key: ctx.key.clone(),
            fail: None,
        };
        let mut total = match &split {
            None => self.thread_order(k, soac, comb, &ls, ctx)?,
            Some(sp) => self.group_passes(k, soac, comb, &ls, sp, ctx, &op_ctx)?,
        };
        match init {
            Some(iv) => {
                let v = Self::get(&k.env, iv)?.flatten()?;
                let t = self.pconst(k, true);
                let first = Opt { has: t, v };
                // A failed check in the operator: the thread's element fails; a group has
                // already agreed (its operator's checks report without leaving).
                let c = if split.is_none() { ctx } else { &op_ctx };
                total = self.opt_combine(k, comb, &first, &total, c)?;
            }
            None => self.check_nonempty(k, ctx, &total.has, Self::at(s, soac)),
        }
        unflatten(ty, &mut total.v.into_iter())
    }

    /// A group's reduction: the passes (report mode: sequential first), the group's
    /// agreement on a failure (leaving the element together), the second level.
    #[allow(clippy::too_many_arguments)]
    fn group_passes(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        comb: Comb<'_>,
        ls: &[Scalar],
        sp: &Split,
        ctx: &Ctx,
        op_ctx: &Ctx,
    ) -> R<Opt> {
        let len = Self::get(&k.env, soac.len)?.reg()?.clone();
        let m = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &m, &len, TILE as u64 - 1));
        k.emit(Ins::shr(Ty::U64, &m, &m, TILE.trailing_zeros()));
        // Pass 0 (report mode only): sequential; pass 1: the order.
        let rep = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &rep, &k.report, 0));
        let pass = k.reg(Scalar::U32);
        k.emit(Ins::selp(Ty::U32, &pass, 0, 1, &rep));
        let failed = self.pconst(k, false);
        let acc2 = self.none(k, ls);
        let last = self.none(k, ls);
        let top = k.label();
        k.place(&top);
        let seq = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &seq, &pass, 0));
        let lanes = k.reg(Scalar::U64);
        k.emit(Ins::selp(Ty::U64, &lanes, 1, LANES as u64, &seq));
        let r = self.group_order(
            k, soac, comb, ls, &len, &m, &lanes, &seq, sp, &failed, &last, ctx,
        )?;
        Self::mov_opt(k, &acc2, &r);
        k.emit(Ins::add(Ty::S32, &pass, &pass, 1));
        let again = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U32, &again, &pass, 2));
        k.emit(Ins::bra_uni(&top).when(&again));
        let any = k.reg(Scalar::Bool);
        if sp.block {
            k.emit(Ins::bar_red_or(&any, &failed));
        } else {
            k.emit(Ins::vote_any(&any, &failed));
        }
        if let Some(l) = &ctx.fail {
            k.emit(Ins::bra(l).when(&any));
        }
        if sp.block {
            return self.second_level(k, comb, &acc2, true, op_ctx);
        }
        // A warp with at most one tile (the usual row) has its result already.
        let total = self.none(k, ls);
        let (one, several, done) = (k.reg(Scalar::Bool), k.label(), k.label());
        k.emit(Ins::setp(Cmp::Le, Ty::U64, &one, &m, 1));
        k.emit(Ins::bra_uni(&several).unless(&one));
        Self::mov_opt(k, &total, &last);
        k.emit(Ins::bra_uni(&done));
        k.place(&several);
        let r = self.second_level(k, comb, &acc2, false, op_ctx)?;
        Self::mov_opt(k, &total, &r);
        k.place(&done);
        Ok(total)
    }

    /// One thread's reduction, in index order: the current tile's lanes in a `.local`
    /// array, each full tile's result into the second level's lanes (another), the tree of
    /// those at the end; none when there is no element. Failed checks go to `ctx`'s label.
    fn thread_order(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        comb: Comb<'_>,
        ls: &[Scalar],
        ctx: &Ctx,
    ) -> R<Opt> {
        let lanes1: Vec<Sym> = ls.iter().map(|_| k.local(LANES as u32 * 8)).collect();
        let lanes2: Vec<Sym> = ls.iter().map(|_| k.local(LANES as u32 * 8)).collect();
        let cnt = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &cnt, 0));
        let thirty_two = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &thirty_two, LANES as u64));
        self.for_each(k, soac, Lanes::Thread(ctx), &mut |g, k, _, _, e| {
            let e = e.flatten()?;
            let inner = k.reg(Scalar::U64);
            k.emit(Ins::and(Ty::B64, &inner, &cnt, TILE as u64 - 1));
            g.put_lane(k, comb, &lanes1, &cnt, &inner, &e, ctx)?;
            // A full tile: its result to the second level.
            let (full, skip) = (k.reg(Scalar::Bool), k.label());
            k.emit(Ins::setp(Cmp::Eq, Ty::U64, &full, &inner, TILE as u64 - 1));
            k.emit(Ins::bra(&skip).unless(&full));
            let p = g.local_tree(k, comb, &lanes1, ls, &thirty_two, ctx)?;
            let t = k.reg(Scalar::U64);
            k.emit(Ins::shr(Ty::U64, &t, &cnt, TILE.trailing_zeros()));
            g.put_lane(k, comb, &lanes2, &t, &t, &p, ctx)?;
            k.place(&skip);
            k.emit(Ins::add(Ty::S64, &cnt, &cnt, 1));
            Ok(())
        })?;
        let has = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &has, &cnt, 0));
        let v: Vec<Reg> = ls.iter().map(|&t| k.reg(t)).collect();
        // Less than one full tile (the usual row): its lanes' tree is the result. (A full
        // tile's tree was taken in the loop and went to the second level.)
        let (one, several, done) = (k.reg(Scalar::Bool), k.label(), k.label());
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &one, &cnt, TILE as u64));
        k.emit(Ins::bra(&several).unless(&one));
        let c = k.reg(Scalar::U64);
        k.emit(Ins::min(Ty::U64, &c, &cnt, LANES as u64));
        let p = self.local_tree(k, comb, &lanes1, ls, &c, ctx)?;
        for (d, x) in v.iter().zip(&p) {
            Self::mov(k, d, x);
        }
        k.emit(Ins::bra(&done));
        k.place(&several);
        // The last tile, if partial, then the second level's tree.
        let (rem, part, after) = (k.reg(Scalar::U64), k.reg(Scalar::Bool), k.label());
        k.emit(Ins::and(Ty::B64, &rem, &cnt, TILE as u64 - 1));
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &part, &rem, 0));
        k.emit(Ins::bra(&after).unless(&part));
        let c = k.reg(Scalar::U64);
        k.emit(Ins::min(Ty::U64, &c, &rem, LANES as u64));
        let p = self.local_tree(k, comb, &lanes1, ls, &c, ctx)?;
        let t = k.reg(Scalar::U64);
        k.emit(Ins::shr(Ty::U64, &t, &cnt, TILE.trailing_zeros()));
        self.put_lane(k, comb, &lanes2, &t, &t, &p, ctx)?;
        k.place(&after);
        let m = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &m, &cnt, TILE as u64 - 1));
        k.emit(Ins::shr(Ty::U64, &m, &m, TILE.trailing_zeros()));
        let c2 = k.reg(Scalar::U64);
        k.emit(Ins::min(Ty::U64, &c2, &m, LANES as u64));
        let p = self.local_tree(k, comb, &lanes2, ls, &c2, ctx)?;
        for (d, x) in v.iter().zip(&p) {
            Self::mov(k, d, x);
        }
        k.place(&done);
        Ok(Opt { has, v })
    }

    /// The `.local` address of lane `idx % 32` (8-byte slots) of `array`.
    pub(super) fn lane_addr(k: &mut Kernel, array: &Sym, idx: &Reg) -> Reg {
        let (off, addr) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &off, idx));
        k.emit(Ins::and(Ty::B32, &off, &off, LANES as u32 - 1));
        k.emit(Ins::shl(Ty::B32, &off, &off, 3));
        k.emit(Ins::mov(Ty::U32, &addr, array));
        k.emit(Ins::add(Ty::S32, &addr, &addr, &off));
        addr
    }

    /// Folds `v` into lane `idx % 32` of the `.local` arrays `arrays`: written when `pos`
    /// (the position in the lanes' sequence) is below 32, else `op(lane, v)`.
    #[allow(clippy::too_many_arguments)]
    fn put_lane(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        arrays: &[Sym],
        idx: &Reg,
        pos: &Reg,
        v: &[Reg],
        ctx: &Ctx,
    ) -> R<()> {
        let addrs: Vec<Reg> = arrays.iter().map(|a| Self::lane_addr(k, a, idx)).collect();
        let (first, rest, done) = (k.reg(Scalar::Bool), k.label(), k.label());
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &first, pos, LANES as u64));
        k.emit(Ins::bra(&rest).unless(&first));
        for (a, r) in addrs.iter().zip(v) {
            Self::st(k, Space::Local, a, r);
        }
        k.emit(Ins::bra(&done));
        k.place(&rest);
        let old: Vec<Reg> = addrs
            .iter()
            .zip(v)
            .map(|(a, r)| Self::ld(k, Space::Local, a, r.ty))
            .collect();
        let n = self.combine(k, comb, &old, v, ctx)?;
        for (a, r) in addrs.iter().zip(&n) {
            Self::st(k, Space::Local, a, r);
        }
        k.place(&done);
        Ok(())
    }

    /// The lane tree of the first `c` lanes (`u64`, at least 1 for a meaningful result) of
    /// the `.local` arrays `arrays`: for `s` = 16, 8, 4, 2, 1, lane `j < s` becomes
    /// `op(lane j, lane j + s)` where `j + s < c`; returns lane 0.
    fn local_tree(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        arrays: &[Sym],
        ls: &[Scalar],
        c: &Reg,
        ctx: &Ctx,
    ) -> R<Vec<Reg>> {
        let s = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &s, LANES as u64 / 2));
        let (s_top, s_end, j_top, j_end) = (k.label(), k.label(), k.label(), k.label());
        k.place(&s_top);
        let zero = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &zero, &s, 0));
        k.emit(Ins::bra(&s_end).when(&zero));
        // Lanes `j < min(s, c - s)` (none when `c <= s`).
        let (bound, over) = (k.reg(Scalar::U64), k.reg(Scalar::Bool));
        k.emit(Ins::setp(Cmp::Gt, Ty::U64, &over, c, &s));
        k.emit(Ins::sub(Ty::S64, &bound, c, &s));
        k.emit(Ins::min(Ty::U64, &bound, &bound, &s));
        k.emit(Ins::selp(Ty::U64, &bound, &bound, 0, &over));
        let j = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &j, 0));
        k.place(&j_top);
        Self::exit_when_ge(k, &j, &bound, &j_end);
        let js = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &js, &j, &s));
        let (a_addrs, b_addrs): (Vec<Reg>, Vec<Reg>) = arrays
            .iter()
            .map(|a| (Self::lane_addr(k, a, &j), Self::lane_addr(k, a, &js)))
            .unzip();
        let a: Vec<Reg> = a_addrs
            .iter()
            .zip(ls)
            .map(|(x, &t)| Self::ld(k, Space::Local, x, t))
            .collect();
        let b: Vec<Reg> = b_addrs
            .iter()
            .zip(ls)
            .map(|(x, &t)| Self::ld(k, Space::Local, x, t))
            .collect();
        let r = self.combine(k, comb, &a, &b, ctx)?;
        for (x, v) in a_addrs.iter().zip(&r) {
            Self::st(k, Space::Local, x, v);
        }
        k.emit(Ins::add(Ty::S64, &j, &j, 1));
        k.emit(Ins::bra(&j_top));
        k.place(&j_end);
        k.emit(Ins::shr(Ty::U64, &s, &s, 1));
        k.emit(Ins::bra(&s_top));
        k.place(&s_end);
        let zero = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &zero, 0));
        Ok(arrays
            .iter()
            .zip(ls)
            .map(|(a, &t)| {
                let x = Self::lane_addr(k, a, &zero);
                Self::ld(k, Space::Local, &x, t)
            })
            .collect())
    }

    /// A group's pass: each warp's tiles, lane `t % 32` folding tile `t`'s result; returns
    /// this thread's second-level lane (and leaves the warp's last tile's result in
    /// `last`). A failed check marks `failed` and skips the element.
    #[allow(clippy::too_many_arguments)]
    fn group_order(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        comb: Comb<'_>,
        ls: &[Scalar],
        len: &Reg,
        m: &Reg,
        lanes: &Reg,
        seq: &Reg,
        sp: &Split,
        failed: &Reg,
        last: &Opt,
        ctx: &Ctx,
    ) -> R<Opt> {
        // This warp's first tile and the stride between its tiles (in the sequential pass:
        // every thread takes every tile, from element 0).
        let warps = if sp.block { self.tile_warps() } else { 1 };
        let (t, step, lane) = (k.reg(Scalar::U64), k.reg(Scalar::U64), k.reg(Scalar::U64));
        if sp.block {
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &t, &k.warp));
            // Warps past the first `warps` take no tile.
            let idle = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ge, Ty::U64, &idle, &t, u64::from(warps)));
            k.emit(Ins::selp(Ty::U64, &t, m, &t, &idle));
        } else {
            k.emit(Ins::mov(Ty::U64, &t, 0));
        }
        k.emit(Ins::selp(Ty::U64, &t, 0, &t, seq));
        k.emit(Ins::selp(Ty::U64, &step, 1, u64::from(warps), seq));
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane, &k.lane));
        let lane_e = k.reg(Scalar::U64);
        k.emit(Ins::selp(Ty::U64, &lane_e, 0, &lane, seq));
        let acc2 = self.none(k, ls);
        let (t_top, t_end) = (k.label(), k.label());
        k.place(&t_top);
        Self::exit_when_ge(k, &t, m, &t_end);
        let (t0, tlen) = Self::tile_bounds(k, &t, len);
        let a = self.none(k, ls);
        let e = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &e, &lane_e));
        let (e_top, next, flag, e_end) = (k.label(), k.label(), k.label(), k.label());
        k.place(&e_top);
        Self::exit_when_ge(k, &e, &tlen, &e_end);
        let i = k.reg(Scalar::Usize);
        k.emit(Ins::add(Ty::S64, &i, &t0, &e));
        let ictx = Ctx {
            key: ctx.key.clone(),
            fail: Some(flag.clone()),
        };
        let x = self.elem(k, &soac.elem, &i, &ictx)?.flatten()?;
        let t1 = self.pconst(k, true);
        let n = self.opt_combine(k, comb, &a, &Opt { has: t1, v: x }, &ictx)?;
        Self::mov_opt(k, &a, &n);
        k.place(&next);
        k.emit(Ins::add(Ty::S64, &e, &e, lanes));
        k.emit(Ins::bra(&e_top));
        k.place(&flag);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, failed, 0, 0));
        k.emit(Ins::bra(&next));
        k.place(&e_end);
        let op_ctx = Ctx {
            key: ctx.key.clone(),
            fail: None,
        };
        let tile = self.group_combine(k, &a, false, &mut Self::fold(comb, &op_ctx))?;
        Self::mov_opt(k, last, &tile);
        // Lane `t % 32` folds the tile's result into its second-level lane.
        let (mine, low) = (k.reg(Scalar::Bool), k.reg(Scalar::U64));
        k.emit(Ins::and(Ty::B64, &low, &t, LANES as u64 - 1));
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &mine, &low, &lane));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&mine));
        let n = self.opt_combine(k, comb, &acc2, &tile, &op_ctx)?;
        Self::mov_opt(k, &acc2, &n);
        k.place(&skip);
        k.emit(Ins::add(Ty::S64, &t, &t, &step));
        k.emit(Ins::bra(&t_top));
        k.place(&t_end);
        Ok(acc2)
    }

    /// The second level of a group: lane `l` of the group's warps holds second-level lane
    /// `l` (in a block, warp `l % W`'s); returns the tree of the 32 lanes in every thread.
    fn second_level(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        acc2: &Opt,
        block: bool,
        op_ctx: &Ctx,
    ) -> R<Opt> {
        let lanes = if block {
            // Warp `l % W` writes lane `l`'s value (set or not) to slot `l`; every warp
            // reads all 32 back.
            let warps = self.tile_warps();
            let arrays: Vec<Sym> = (0..=acc2.v.len())
                .map(|_| k.shared(LANES as u32 * 8))
                .collect();
            let off = k.reg(Scalar::U32);
            k.emit(Ins::shl(Ty::B32, &off, &k.lane, 3));
            let (owner, writer) = (k.reg(Scalar::U32), k.reg(Scalar::Bool));
            k.emit(Ins::and(Ty::B32, &owner, &k.lane, warps - 1));
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &writer, &owner, &k.warp));
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(&writer));
            for (r, a) in std::iter::once(&acc2.has).chain(&acc2.v).zip(&arrays) {
                let addr = Self::shared_slot(k, a, &off);
                Self::st(k, Space::Shared, &addr, r);
            }
            k.place(&skip);
            k.emit(Ins::bar_sync());
            let ls: Vec<Scalar> = acc2.v.iter().map(|r| r.ty).collect();
            let lane = k.lane.clone();
            let got = Self::warp_partial(k, &arrays, &ls, &lane);
            // The slots are written again if this code runs again (a loop).
            k.emit(Ins::bar_sync());
            got
        } else {
            acc2.clone()
        };
        self.group_combine(k, &lanes, false, &mut Self::fold(comb, op_ctx))
    }

    /// Warps of a block that take tiles in a split reduction: the largest power of two not
    /// above the block's warps (so it divides 32).
    fn tile_warps(&self) -> u32 {
        1 << self.warps().ilog2()
    }

    /// Tile `t`'s first element and length in an index space of `len` elements.
    fn tile_bounds(k: &mut Kernel, t: &Reg, len: &Reg) -> (Reg, Reg) {
        let (t0, tlen) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::shl(Ty::B64, &t0, t, TILE.trailing_zeros()));
        k.emit(Ins::sub(Ty::S64, &tlen, len, &t0));
        k.emit(Ins::min(Ty::U64, &tlen, &tlen, TILE as u64));
        (t0, tlen)
    }

    /// `bra end` when `a >= b` (unsigned 64-bit).
    pub(super) fn exit_when_ge(k: &mut Kernel, a: &Reg, b: &Reg, end: &Label) {
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, a, b));
        k.emit(Ins::bra(end).when(&p));
    }
}
