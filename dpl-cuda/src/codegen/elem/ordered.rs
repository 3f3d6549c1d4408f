//! Reductions inside element functions (a row's `sum`, a `reduce` per element) in dpl's
//! one order ([`dpl_core::order`]), by one thread or by a group of threads, so a row's
//! result has the bits of every other place whatever the schedule.
//!
//! * **One thread** walks the order lane by lane: lane `j` of a tile folds elements `j, j +
//!   32, ...`; each lane's result is pushed on a binary-counter stack of registers (slot
//!   `q` holds the tree of `2^q` consecutive lanes), which builds the lane tree of adjacent
//!   pairs without an array; the tiles' results are folded by the second level's lanes
//!   the same way.
//! * **A group** (a warp, or a block's warps): each warp takes whole tiles, lane `j`
//!   folding the tile's elements `j, j + 32, ...`; the warp's butterfly gives the tile's
//!   result, which lane `t % 32` folds into its second-level lane. In a block, warp `w`
//!   takes the tiles `t` with `t % W == w` (`W` the largest power of two not above the
//!   block's warps, so it divides 32 and every second-level lane belongs to one warp);
//!   the 32 second-level lanes then meet in shared memory for the final tree.
//!
//! In report mode (the run again after a failed check, [`crate::runtime`]) the loops run
//! first with one lane and stride 1, so every thread meets the elements in index order and
//! reports the failure the sequential reference reports first; when none fails, they run
//! again in the order above for the value.

use super::*;
use dpl_core::order::{LANES, TILE};

/// Slots of a binary-counter stack of lane results: slot `q` holds the tree of `2^q`
/// lanes (32 lanes: slot 5).
const SLOTS: u32 = 6;

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
        let total = self.none(k, &ls);
        let top = k.label();
        k.place(&top);
        let seq = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &seq, &pass, 0));
        let lanes = k.reg(Scalar::U64);
        k.emit(Ins::selp(Ty::U64, &lanes, 1, LANES as u64, &seq));
        let r = match &split {
            None => self.thread_order(k, soac, comb, &ls, &len, &m, &lanes, ctx)?,
            Some(sp) => self.group_order(k, soac, comb, &ls, &len, &m, &lanes, &seq, sp, &failed, ctx)?,
        };
        Self::mov_opt(k, &total, &r);
        k.emit(Ins::add(Ty::S32, &pass, &pass, 1));
        let again = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U32, &again, &pass, 2));
        k.emit(match &split {
            Some(_) => Ins::bra_uni(&top).when(&again),
            None => Ins::bra(&top).when(&again),
        });
        let op_ctx = Ctx {
            key: ctx.key.clone(),
            fail: None,
        };
        let mut total = match &split {
            None => total,
            Some(sp) => {
                // The group agrees on a failure and leaves the element together.
                let any = k.reg(Scalar::Bool);
                if sp.block {
                    k.emit(Ins::bar_red_or(&any, &failed));
                } else {
                    k.emit(Ins::vote_any(&any, &failed));
                }
                if let Some(l) = &ctx.fail {
                    k.emit(Ins::bra(l).when(&any));
                }
                self.second_level(k, comb, &total, sp.block, &op_ctx)?
            }
        };
        match init {
            Some(iv) => {
                let v = Self::get(&k.env, iv)?.flatten()?;
                let t = self.pconst(k, true);
                let first = Opt { has: t, v };
                total = self.opt_combine(k, comb, &first, &total, &op_ctx)?;
            }
            None => self.check_nonempty(k, ctx, &total.has, Self::at(s, soac)),
        }
        unflatten(ty, &mut total.v.into_iter())
    }

    /// One thread's pass: the tiles' results into the second level's lanes, each lane
    /// pushed on a stack ([`Gen::push_lane`]); returns the whole reduction (none when
    /// empty). Failed checks go to `ctx`'s label.
    #[allow(clippy::too_many_arguments)]
    fn thread_order(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        comb: Comb<'_>,
        ls: &[Scalar],
        len: &Reg,
        m: &Reg,
        lanes: &Reg,
        ctx: &Ctx,
    ) -> R<Opt> {
        let stack2 = self.slots(k, ls);
        let c2 = k.reg(Scalar::U64);
        k.emit(Ins::min(Ty::U64, &c2, lanes, m));
        let l2 = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &l2, 0));
        let (l2_top, l2_end) = (k.label(), k.label());
        k.place(&l2_top);
        Self::exit_when_ge(k, &l2, &c2, &l2_end);
        let acc2 = self.none(k, ls);
        let t = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &t, &l2));
        let (t_top, t_end) = (k.label(), k.label());
        k.place(&t_top);
        Self::exit_when_ge(k, &t, m, &t_end);
        let (t0, tlen) = Self::tile_bounds(k, &t, len);
        let c1 = k.reg(Scalar::U64);
        k.emit(Ins::min(Ty::U64, &c1, lanes, &tlen));
        let stack1 = self.slots(k, ls);
        let j = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &j, 0));
        let (j_top, j_end) = (k.label(), k.label());
        k.place(&j_top);
        Self::exit_when_ge(k, &j, &c1, &j_end);
        let a = self.none(k, ls);
        let e = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &e, &j));
        let (e_top, e_end) = (k.label(), k.label());
        k.place(&e_top);
        Self::exit_when_ge(k, &e, &tlen, &e_end);
        let i = k.reg(Scalar::Usize);
        k.emit(Ins::add(Ty::S64, &i, &t0, &e));
        let x = self.elem(k, &soac.elem, &i, ctx)?.flatten()?;
        let t1 = self.pconst(k, true);
        let n = self.opt_combine(k, comb, &a, &Opt { has: t1, v: x }, ctx)?;
        Self::mov_opt(k, &a, &n);
        k.emit(Ins::add(Ty::S64, &e, &e, lanes));
        k.emit(Ins::bra(&e_top));
        k.place(&e_end);
        self.push_lane(k, comb, &stack1, &j, &a.v, ctx)?;
        k.emit(Ins::add(Ty::S64, &j, &j, 1));
        k.emit(Ins::bra(&j_top));
        k.place(&j_end);
        let tile = self.finish_lanes(k, comb, &stack1, &c1, ctx)?;
        let n = self.opt_combine(k, comb, &acc2, &tile, ctx)?;
        Self::mov_opt(k, &acc2, &n);
        k.emit(Ins::add(Ty::S64, &t, &t, lanes));
        k.emit(Ins::bra(&t_top));
        k.place(&t_end);
        self.push_lane(k, comb, &stack2, &l2, &acc2.v, ctx)?;
        k.emit(Ins::add(Ty::S64, &l2, &l2, 1));
        k.emit(Ins::bra(&l2_top));
        k.place(&l2_end);
        self.finish_lanes(k, comb, &stack2, &c2, ctx)
    }

    /// A group's pass: each warp's tiles, lane `t % 32` folding tile `t`'s result; returns
    /// this thread's second-level lane. A failed check marks `failed` and skips the
    /// element.
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
            let arrays: Vec<Sym> = (0..=acc2.v.len()).map(|_| k.shared(LANES as u32 * 8)).collect();
            let off = k.reg(Scalar::U32);
            k.emit(Ins::shl(Ty::B32, &off, &k.lane, 3));
            let (owner, writer) = (k.reg(Scalar::U32), k.reg(Scalar::Bool));
            k.emit(Ins::and(Ty::B32, &owner, &k.lane, warps - 1));
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &writer, &owner, &k.warp));
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(&writer));
            for (r, a) in std::iter::once(&acc2.has).chain(&acc2.v).zip(&arrays) {
                let addr = Self::slot_addr(k, a, &off);
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

    /// The shared address `array + off`.
    fn slot_addr(k: &mut Kernel, array: &Sym, off: &Reg) -> Reg {
        let addr = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &addr, array));
        k.emit(Ins::add(Ty::S32, &addr, &addr, off));
        addr
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
    fn exit_when_ge(k: &mut Kernel, a: &Reg, b: &Reg, end: &Label) {
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, a, b));
        k.emit(Ins::bra(end).when(&p));
    }

    /// Fresh registers for the [`SLOTS`] slots of a lane stack.
    fn slots(&mut self, k: &mut Kernel, ls: &[Scalar]) -> Vec<Vec<Reg>> {
        (0..SLOTS)
            .map(|_| ls.iter().map(|&s| k.reg(s)).collect())
            .collect()
    }

    /// Pushes lane `j`'s value `v` on the stack `slots`: while bit `q` of `j` is set, the
    /// value becomes `op(slot q, value)`; it then goes to the first slot whose bit is
    /// clear (slot 5 after 32 lanes).
    fn push_lane(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        slots: &[Vec<Reg>],
        j: &Reg,
        v: &[Reg],
        ctx: &Ctx,
    ) -> R<()> {
        let done = k.label();
        let mut cur = v.to_vec();
        for (q, slot) in slots.iter().enumerate() {
            if q + 1 < slots.len() {
                let (bit, clear) = (k.reg(Scalar::U64), k.reg(Scalar::Bool));
                k.emit(Ins::shr(Ty::U64, &bit, j, q as u32));
                k.emit(Ins::and(Ty::B64, &bit, &bit, 1));
                k.emit(Ins::setp(Cmp::Eq, Ty::U64, &clear, &bit, 0));
                let merge = k.label();
                k.emit(Ins::bra(&merge).unless(&clear));
                for (d, s) in slot.iter().zip(&cur) {
                    Self::mov(k, d, s);
                }
                k.emit(Ins::bra(&done));
                k.place(&merge);
                cur = self.combine(k, comb, slot, &cur, ctx)?;
            } else {
                for (d, s) in slot.iter().zip(&cur) {
                    Self::mov(k, d, s);
                }
            }
        }
        k.place(&done);
        Ok(())
    }

    /// The lane tree of the `c` lanes pushed on `slots` (none when `c == 0`): the slots of
    /// the set bits of `c`, the later lanes' first, `op(slot q, rest)`.
    fn finish_lanes(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        slots: &[Vec<Reg>],
        c: &Reg,
        ctx: &Ctx,
    ) -> R<Opt> {
        let ls: Vec<Scalar> = slots[0].iter().map(|r| r.ty).collect();
        let mut cur = self.none(k, &ls);
        for (q, slot) in slots.iter().enumerate() {
            let (bit, has) = (k.reg(Scalar::U64), k.reg(Scalar::Bool));
            k.emit(Ins::shr(Ty::U64, &bit, c, q as u32));
            k.emit(Ins::and(Ty::B64, &bit, &bit, 1));
            k.emit(Ins::setp(Cmp::Ne, Ty::U64, &has, &bit, 0));
            let x = Opt {
                has,
                v: slot.clone(),
            };
            cur = self.opt_combine(k, comb, &x, &cur, ctx)?;
        }
        Ok(cur)
    }
}
