//! Warp and block collectives over optional values: shuffles, reductions (down trees,
//! butterflies) and scans (up sweeps) of a warp, block reductions and scans through
//! per-warp shared arrays, and the group counts of filters.

use super::*;

/// The combining step of a collective: `a ⊕ b` of two optional values (a missing one is
/// the identity), emitted where the collective calls it ([`Gen::fold`] makes one).
pub(super) type Fold<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Opt, &Opt) -> R<Opt> + 'b;

impl<'f> Gen<'f> {
    /// The combining step `comb` ([`Gen::opt_combine`]) as a closure for the collectives,
    /// the failed checks of the operator going where `ctx` says.
    pub(super) fn fold<'b>(
        comb: Comb<'b>,
        ctx: &'b Ctx,
    ) -> impl FnMut(&mut Gen<'f>, &mut Kernel, &Opt, &Opt) -> R<Opt> + 'b {
        move |g, k, a, b| g.opt_combine(k, comb, a, b, ctx)
    }

    /// Counts the threads of a group where `keep` holds: returns (with `before`) how many
    /// of the threads before this one, and how many in all (`u64`s). A warp: `vote.ballot`
    /// and `popc` (with `%lanemask_lt`); a block: a block scan of the flags
    /// ([`Gen::block_scan`]).
    pub(super) fn group_count(
        &mut self,
        k: &mut Kernel,
        grp: &Group,
        keep: &Reg,
        before: bool,
    ) -> R<(Reg, Reg)> {
        let (b, t) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        if grp.block {
            let f = k.reg(Scalar::U64);
            k.emit(Ins::selp(Ty::U64, &f, 1, 0, keep));
            let has = self.pconst(k, true);
            let x = Opt { has, v: vec![f] };
            let ctx = Self::no_fail(grp);
            let mut sum = Self::fold(Comb::AddU64, &ctx);
            let (_, ex, total) = self.block_scan(k, &x, &mut sum)?;
            k.emit(Ins::selp(Ty::U64, &b, &ex.v[0], 0, &ex.has));
            Self::mov(k, &t, &total.v[0]);
        } else {
            let m = k.reg(Scalar::U32);
            k.emit(Ins::vote_ballot(&m, keep));
            let n = k.reg(Scalar::U32);
            k.emit(Ins::popc(Ty::B32, &n, &m));
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &t, &n));
            if before {
                let lt = k.reg(Scalar::U32);
                k.emit(Ins::mov(Ty::U32, &lt, Sreg::LanemaskLt));
                k.emit(Ins::and(Ty::B32, &lt, &lt, &m));
                let nb = k.reg(Scalar::U32);
                k.emit(Ins::popc(Ty::B32, &nb, &lt));
                k.emit(Ins::cvt(Ty::U64, Ty::U32, &b, &nb));
            }
        }
        Ok((b, t))
    }

    /// An ordered scan of one optional value per thread over a group: this thread's
    /// inclusive and exclusive prefixes and the group's total (every thread gets it). A
    /// block: [`Gen::block_scan`]; a warp: [`Gen::warp_scan`], the total from lane 31.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn group_scan(
        &mut self,
        k: &mut Kernel,
        grp: &Group,
        x: &Opt,
        fold: &mut Fold<'_, 'f>,
    ) -> R<(Opt, Opt, Opt)> {
        if grp.block {
            return self.block_scan(k, x, fold);
        }
        let (incl, excl) = self.warp_scan(k, x, fold)?;
        let total = Self::shfl_opt(k, &incl, Shfl::Idx, 31);
        Ok((incl, excl, total))
    }

    /// Combines two elements.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn combine(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        a: &[Reg],
        b: &[Reg],
        ctx: &Ctx,
    ) -> R<Vec<Reg>> {
        match comb {
            Comb::AddU64 => {
                let r = k.reg(Scalar::U64);
                k.emit(Ins::add(Ty::S64, &r, &a[0], &b[0]));
                Ok(vec![r])
            }
            Comb::Op(op, ty) => {
                k.env
                    .insert(op.params[0], unflatten(ty, &mut a.iter().cloned())?);
                k.env
                    .insert(op.params[1], unflatten(ty, &mut b.iter().cloned())?);
                self.block(k, &op.body, ctx)?.flatten()
            }
        }
    }

    /// `a ⊕ b` where a missing operand is the identity.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn opt_combine(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        a: &Opt,
        b: &Opt,
        ctx: &Ctx,
    ) -> R<Opt> {
        let v: Vec<Reg> = a.v.iter().map(|r| k.reg(r.ty)).collect();
        for ((d, x), y) in v.iter().zip(&a.v).zip(&b.v) {
            Self::select(k, d, &a.has, x, y);
        }
        let both = k.reg(Scalar::Bool);
        k.emit(Ins::and(Ty::Pred, &both, &a.has, &b.has));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&both));
        let r = self.combine(k, comb, &a.v, &b.v, ctx)?;
        for (d, s) in v.iter().zip(&r) {
            Self::mov(k, d, s);
        }
        k.place(&skip);
        let has = k.reg(Scalar::Bool);
        k.emit(Ins::or(Ty::Pred, &has, &a.has, &b.has));
        Ok(Opt { has, v })
    }

    /// `shfl.sync.up` of one register by `d` lanes.
    fn shfl_up(k: &mut Kernel, r: &Reg, d: u32) -> Reg {
        Self::shfl(k, r, Shfl::Up, d, 0)
    }

    /// `shfl.sync.<mode>` of one register (`bool`s through a 32-bit word, 64-bit values
    /// as two halves); `cl` is the clamp operand.
    pub(super) fn shfl(k: &mut Kernel, r: &Reg, mode: Shfl, d: impl Into<Src>, cl: u32) -> Reg {
        let d: Src = d.into();
        let out = k.reg(r.ty);
        match width(r.ty) {
            1 => {
                let (a, b) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.emit(Ins::selp(Ty::U32, &a, 1, 0, r));
                k.emit(Ins::shfl(mode, &b, &a, d, cl));
                k.emit(Ins::setp(Cmp::Ne, Ty::U32, &out, &b, 0));
            }
            32 => {
                let (a, b) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.emit(Ins::mov(Ty::B32, &a, r));
                k.emit(Ins::shfl(mode, &b, &a, d, cl));
                k.emit(Ins::mov(Ty::B32, &out, &b));
            }
            _ => {
                let (lo, hi, lo2, hi2) = (
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                );
                k.emit(Ins::split64(&lo, &hi, r));
                k.emit(Ins::shfl(mode, &lo2, &lo, d.clone(), cl));
                k.emit(Ins::shfl(mode, &hi2, &hi, d, cl));
                k.emit(Ins::join64(&out, &lo2, &hi2));
            }
        }
        out
    }

    pub(super) fn shfl_opt(k: &mut Kernel, x: &Opt, mode: Shfl, d: u32) -> Opt {
        Opt {
            has: Self::shfl(k, &x.has, mode, d, 31),
            v: x.v.iter().map(|r| Self::shfl(k, r, mode, d, 31)).collect(),
        }
    }

    /// Combines one optional value per lane over the group of a split inner reduction:
    /// a butterfly over the warp, then lane 0's result to every lane (so all lanes go on
    /// with the same value whatever the operator), or the block's total.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn group_combine(
        &mut self,
        k: &mut Kernel,
        x: &Opt,
        block: bool,
        fold: &mut Fold<'_, 'f>,
    ) -> R<Opt> {
        let cur = Self::copy_opt(k, x);
        // Halves first: lane 0 ends with dpl's lane tree ([`dpl_core::order`]; the
        // split reductions' operators are commutative).
        for d in [16, 8, 4, 2, 1] {
            let y = Self::shfl_opt(k, &cur, Shfl::Bfly, d);
            let n = fold(self, k, &cur, &y)?;
            Self::mov_opt(k, &cur, &n);
        }
        let warp_total = Self::shfl_opt(k, &cur, Shfl::Idx, 0);
        if !block {
            return Ok(warp_total);
        }
        // The block: lane 0 of each warp puts its total in shared memory; every thread
        // combines the totals of the block's warps (%ntid.x / 32 of them) in order.
        let arrays = self.warp_values_to_shared(k, &warp_total, 0);
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let total = self.none(k, &ls);
        let nw = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &nw, Sreg::NtidX));
        k.emit(Ins::shr(Ty::U32, &nw, &nw, 5));
        let w = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &w, 0));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let done = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &done, &w, &nw));
        k.emit(Ins::bra_uni(&end).when(&done));
        let t = Self::warp_partial(k, &arrays, &ls, &w);
        let nt = fold(self, k, &total, &t)?;
        Self::mov_opt(k, &total, &nt);
        k.emit(Ins::add(Ty::S32, &w, &w, 1));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        k.emit(Ins::bar_sync());
        Ok(total)
    }

    /// Reduces the optional values `v` of a warp's lanes towards lane 0 in place (a
    /// `shfl.sync.down` tree, adjacent lanes first): lane 0 ends with the combination of
    /// all 32 in lane order (`reversed`: higher lanes first), as an operator that is only
    /// associative (a scan's) needs. The other lanes hold partial combinations.
    pub(super) fn warp_reduce_down(
        &mut self,
        k: &mut Kernel,
        v: &Opt,
        reversed: bool,
        fold: &mut Fold<'_, 'f>,
    ) -> R<()> {
        self.warp_down_steps(k, v, [1, 2, 4, 8, 16], reversed, fold)
    }

    /// Reduces the optional values `v` of a warp's lanes towards lane 0 in place by dpl's
    /// lane tree ([`dpl_core::order`]: `shfl.sync.down` by 16, 8, 4, 2, 1, halves first;
    /// for a reduction's operator, which is commutative).
    pub(super) fn warp_reduce_halves(
        &mut self,
        k: &mut Kernel,
        v: &Opt,
        fold: &mut Fold<'_, 'f>,
    ) -> R<()> {
        self.warp_down_steps(k, v, [16, 8, 4, 2, 1], false, fold)
    }

    /// `v = v ⊕ shfl.down(v, d)` for each distance of `ds` in turn (`reversed`: the lane
    /// below's value first).
    fn warp_down_steps(
        &mut self,
        k: &mut Kernel,
        v: &Opt,
        ds: [u32; 5],
        reversed: bool,
        fold: &mut Fold<'_, 'f>,
    ) -> R<()> {
        for d in ds {
            let y = Self::shfl_opt(k, v, Shfl::Down, d);
            let inside = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Lt, Ty::U32, &inside, &k.lane, 32 - d));
            k.emit(Ins::and(Ty::Pred, &y.has, &y.has, &inside));
            let n = if reversed {
                fold(self, k, &y, v)?
            } else {
                fold(self, k, v, &y)?
            };
            Self::mov_opt(k, v, &n);
        }
        Ok(())
    }

    /// The combination, in thread order, of one optional value per thread of the block,
    /// valid in thread 0 (the other threads hold partial values): each warp reduces
    /// towards its lane 0 ([`Gen::warp_reduce_down`]), the warp totals go through shared
    /// memory, and warp 0 reduces them the same way. Every thread of the block must call
    /// it (it has a barrier).
    pub(super) fn block_reduce(
        &mut self,
        k: &mut Kernel,
        x: &Opt,
        fold: &mut Fold<'_, 'f>,
    ) -> R<Opt> {
        let cur = Self::copy_opt(k, x);
        self.warp_reduce_down(k, &cur, false, fold)?;
        if self.warps() == 1 {
            return Ok(cur);
        }
        let arrays = self.warp_values_to_shared(k, &cur, 0);
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let (skip, _, t) = self.warp0_gather(k, &arrays, &ls);
        self.warp_reduce_down(k, &t, false, fold)?;
        Self::mov_opt(k, &cur, &t);
        k.place(&skip);
        Ok(cur)
    }

    /// An inclusive scan in lane order of the optional values `v` of a warp's lanes, in
    /// place (`shfl.sync.up` steps of 1, 2, 4, 8 and 16 lanes).
    fn warp_scan_up(&mut self, k: &mut Kernel, v: &Opt, fold: &mut Fold<'_, 'f>) -> R<()> {
        let mut d = 1;
        while d < 32 {
            let y = Opt {
                has: Self::shfl_up(k, &v.has, d),
                v: v.v.iter().map(|r| Self::shfl_up(k, r, d)).collect(),
            };
            let p = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Lt, Ty::U32, &p, &k.lane, d));
            let skip = k.label();
            k.emit(Ins::bra(&skip).when(&p));
            let n = fold(self, k, &y, v)?;
            Self::mov_opt(k, v, &n);
            k.place(&skip);
            d *= 2;
        }
        Ok(())
    }

    /// An ordered scan of one value per lane over the warp (`shfl.sync.up`): returns this
    /// lane's inclusive and exclusive prefixes within the warp. Every lane of the warp must
    /// call it.
    pub(super) fn warp_scan(
        &mut self,
        k: &mut Kernel,
        x: &Opt,
        fold: &mut Fold<'_, 'f>,
    ) -> R<(Opt, Opt)> {
        let cur = Self::copy_opt(k, x);
        self.warp_scan_up(k, &cur, fold)?;
        // Exclusive within the warp.
        let ex = Opt {
            has: Self::shfl_up(k, &cur.has, 1),
            v: cur.v.iter().map(|r| Self::shfl_up(k, r, 1)).collect(),
        };
        let nz = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U32, &nz, &k.lane, 0));
        k.emit(Ins::and(Ty::Pred, &ex.has, &ex.has, &nz));
        Ok((cur, ex))
    }

    /// An ordered scan of one value per thread over the block: returns the inclusive and
    /// exclusive prefixes of this thread and the block's total (every thread gets it).
    /// Warp scans with shuffles; the warp totals go through shared memory, where warp 0
    /// scans them the same way; each thread then reads the prefix of the warps before its
    /// own and the total. Every thread of the block must call it (it has barriers).
    pub(super) fn block_scan(
        &mut self,
        k: &mut Kernel,
        x: &Opt,
        fold: &mut Fold<'_, 'f>,
    ) -> R<(Opt, Opt, Opt)> {
        let (cur, ex) = self.warp_scan(k, x, fold)?;
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let warps = self.warps();
        if warps == 1 {
            let total = Opt {
                has: k.reg(Scalar::Bool),
                v: ls.iter().map(|&s| k.reg(s)).collect(),
            };
            let t = Self::shfl_opt(k, &cur, Shfl::Idx, 31);
            Self::mov_opt(k, &total, &t);
            return Ok((cur, ex, total));
        }
        // Warp totals (the last lane's inclusive values) to shared memory; warp 0 scans
        // them in place (lane l: warp l).
        let arrays = self.warp_values_to_shared(k, &cur, 31);
        let (skip, mine, t) = self.warp0_gather(k, &arrays, &ls);
        self.warp_scan_up(k, &t, fold)?;
        let no_write = k.label();
        k.emit(Ins::bra(&no_write).unless(&mine));
        let off = k.reg(Scalar::U32);
        k.emit(Ins::shl(Ty::B32, &off, &k.lane, 3));
        for (r, a) in std::iter::once(&t.has).chain(&t.v).zip(&arrays) {
            let addr = Self::shared_slot(k, a, &off);
            Self::st(k, Space::Shared, &addr, r);
        }
        k.place(&no_write);
        k.place(&skip);
        k.emit(Ins::bar_sync());
        // The warps before this one (none for warp 0), and all of them.
        let prefix = self.none(k, &ls);
        let first = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &first, &k.warp, 0));
        let no_prefix = k.label();
        k.emit(Ins::bra(&no_prefix).when(&first));
        let wp = k.reg(Scalar::U32);
        k.emit(Ins::sub(Ty::S32, &wp, &k.warp, 1));
        let p = Self::warp_partial(k, &arrays, &ls, &wp);
        Self::mov_opt(k, &prefix, &p);
        k.place(&no_prefix);
        let last = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &last, warps - 1));
        let total = Self::warp_partial(k, &arrays, &ls, &last);
        // The arrays are written again if this code runs again (a loop).
        k.emit(Ins::bar_sync());
        let incl = fold(self, k, &prefix, &cur)?;
        let excl = fold(self, k, &prefix, &ex)?;
        Ok((incl, excl, total))
    }

    /// Thread 0 stores `v` at `idx` of the leaf buffers `ptrs` (and its flag in `has`, if
    /// given).
    pub(super) fn store_if_thread0(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        has: Option<&Reg>,
        idx: &Reg,
        v: &Opt,
    ) {
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U32, &p, &k.tid, 0));
        let skip = k.label();
        k.emit(Ins::bra(&skip).when(&p));
        for (r, ptr) in v.v.iter().zip(ptrs) {
            self.store(k, ptr, idx, r);
        }
        if let Some(has) = has {
            self.store(k, has, idx, &v.has);
        }
        k.place(&skip);
    }

    /// The start of a tail that only the last block of the grid to get here runs (the
    /// threadfence-reduction pattern): every thread fences its stores (`membar.gl`), the
    /// block waits, thread 0 counts the block done (`atom.add` on the zeroed `u32` at
    /// `counter`); the block that counts `nctaid - 1` (whichever it is) sets the counter
    /// back to 0, so that the launch can run again (report mode), and goes on after a
    /// second fence, the others jump to the returned label (the caller places it after
    /// the tail; the branch is uniform over the block). No block waits for another, so the
    /// blocks need not all be resident at once. The tail reads what other blocks wrote at
    /// the device scope (`ld.relaxed.gpu`). Also returns `%tid.x`, read again (the
    /// kernel's `tid` and `warp` need not be kept alive until the tail: a kernel of 1024
    /// threads has 64 registers per thread).
    pub(super) fn last_block(k: &mut Kernel, counter: &Reg) -> (Label, Reg) {
        k.emit(Ins::membar_gl());
        k.emit(Ins::bar_sync());
        let last_sh = k.shared(4);
        let tid = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &tid, Sreg::TidX));
        let is0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &is0, &tid, 0));
        let counted = k.label();
        k.emit(Ins::bra(&counted).unless(&is0));
        let before = k.reg(Scalar::U32);
        k.emit(Ins::atom(
            Space::Global,
            AtomOp::Add,
            Ty::U32,
            &before,
            counter,
            1,
        ));
        let ncta = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &ncta, Sreg::NctaidX));
        k.emit(Ins::sub(Ty::S32, &ncta, &ncta, 1));
        let last = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &last, &before, &ncta));
        let flag = k.reg(Scalar::U32);
        k.emit(Ins::selp(Ty::U32, &flag, 1, 0, &last));
        k.emit(Ins::st(Space::Shared, Ty::U32, &last_sh, &flag));
        k.emit(Ins::bra(&counted).unless(&last));
        k.emit(Ins::st(Space::Global, Ty::U32, counter, 0));
        k.place(&counted);
        k.emit(Ins::bar_sync());
        let got = k.reg(Scalar::U32);
        k.emit(Ins::ld(Space::Shared, Ty::U32, &got, &last_sh));
        let finish = k.label();
        let not_last = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &not_last, &got, 0));
        k.emit(Ins::bra_uni(&finish).when(&not_last));
        k.emit(Ins::membar_gl());
        (finish, tid)
    }

    /// Lane `lane` of every warp stores its optional value `v` (the flag, then each leaf)
    /// into the warp's 8-byte slot of fresh per-warp shared arrays, then the block waits
    /// (`bar.sync`); returns the arrays (read back with [`Gen::warp_partial`]). The
    /// block-level step shared by the block reduce ([`Gen::group_combine`]) and the block
    /// scan ([`Gen::block_scan`]).
    fn warp_values_to_shared(&mut self, k: &mut Kernel, v: &Opt, lane: u32) -> Vec<Sym> {
        let arrays: Vec<Sym> = (0..=v.v.len())
            .map(|_| k.shared(self.warps() * 8))
            .collect();
        let off = k.reg(Scalar::U32);
        k.emit(Ins::shl(Ty::B32, &off, &k.warp, 3));
        let writer = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &writer, &k.lane, lane));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&writer));
        for (r, a) in std::iter::once(&v.has).chain(&v.v).zip(&arrays) {
            let addr = Self::shared_slot(k, a, &off);
            Self::st(k, Space::Shared, &addr, r);
        }
        k.place(&skip);
        k.emit(Ins::bar_sync());
        arrays
    }

    /// Warp 0's part of a block collective over per-warp values in the shared `arrays`
    /// (leaves `ls`): the other warps branch to the returned label (the caller places it
    /// after warp 0's work); lane `l` of warp 0 gets warp `l`'s value (none past the
    /// block's warps). Returns the label, whether the lane has a warp's value, the value.
    fn warp0_gather(&mut self, k: &mut Kernel, arrays: &[Sym], ls: &[Scalar]) -> (Label, Reg, Opt) {
        let skip = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &w0, &k.warp, 0));
        k.emit(Ins::bra_uni(&skip).unless(&w0));
        let mine = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U32, &mine, &k.lane, self.warps()));
        let t = self.none(k, ls);
        let none_here = k.label();
        k.emit(Ins::bra(&none_here).unless(&mine));
        let lane = k.lane.clone();
        let got = Self::warp_partial(k, arrays, ls, &lane);
        Self::mov_opt(k, &t, &got);
        k.place(&none_here);
        (skip, mine, t)
    }

    /// The shared address `array + off` (an 8-byte slot of a per-warp or per-lane array).
    pub(super) fn shared_slot(k: &mut Kernel, array: &Sym, off: &Reg) -> Reg {
        let addr = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &addr, array));
        k.emit(Ins::add(Ty::S32, &addr, &addr, off));
        addr
    }

    /// Loads warp `w`'s optional partial (the "has value" flag and one value per leaf of
    /// types `ls`) from the per-warp shared arrays `arrays` (8-byte slots).
    pub(super) fn warp_partial(k: &mut Kernel, arrays: &[Sym], ls: &[Scalar], w: &Reg) -> Opt {
        let woff = k.reg(Scalar::U32);
        k.emit(Ins::shl(Ty::B32, &woff, w, 3));
        let mut got = Vec::new();
        for (ty, a) in std::iter::once(Scalar::Bool)
            .chain(ls.iter().copied())
            .zip(arrays)
        {
            let addr = Self::shared_slot(k, a, &woff);
            got.push(Self::ld(k, Space::Shared, &addr, ty));
        }
        Opt {
            has: got[0].clone(),
            v: got[1..].to_vec(),
        }
    }
}
