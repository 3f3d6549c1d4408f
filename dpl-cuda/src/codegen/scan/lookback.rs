//! The single-pass scan with decoupled look-back (Merrill and Garland): every block takes
//! the next tile from an atomic counter (so a block waits only for tiles taken before
//! its own, which are running or done, whatever order the blocks are scheduled in),
//! loads it into shared memory, each thread combines its consecutive items, one block
//! scan of the thread totals gives the tile's aggregate, published (flag 1); then its
//! first warp looks back over the tiles before it, 32 at a time, combining aggregates
//! in order until one with its inclusive prefix published (flag 2); the block then
//! publishes its own inclusive prefix, each thread scans its items from its prefix and
//! the tile is written out. Status: per tile a `u32` flag, and the aggregate and
//! inclusive prefix as optional values (a "has" byte plus the leaves), written before
//! the flag with a `membar.gl` between (and read after it with one); flags are read
//! and written `volatile`, values read `ld.relaxed.gpu`. In report mode (the launch
//! again, the counter past the end) tile `t mod grid` is taken and every flag is set.

use super::*;

/// The look-back status of a scan's tiles (temporaries): the tile counter and one flag per
/// tile (one zeroed buffer, so one memset per call), the aggregates and the inclusive
/// prefixes (one buffer per leaf, plus the "has" bytes).
pub(super) struct Status {
    /// The tile counter (word 0), then the tiles' flags.
    counter_flags: u32,
    aggs: Vec<u32>,
    agg_has: u32,
    incs: Vec<u32>,
    inc_has: u32,
}

/// [`Status`] as kernel parameters.
pub(super) struct StatusPtrs {
    /// The tile counter.
    pub(super) counter: Reg,
    flags: Reg,
    aggs: Vec<Reg>,
    agg_has: Reg,
    incs: Vec<Reg>,
    inc_has: Reg,
}

impl<'f> Gen<'f> {
    /// The row offsets of a ragged result from the row sizes (`sizes`, `n` of them, `u64`)
    /// in one pass with decoupled look-back: `offs[i + 1]` is the inclusive sum up to `i`
    /// and thread 0 of tile 0 writes `offs[0] = 0` (the allocation is not zeroed). Returns
    /// the offsets.
    pub(super) fn offsets_lookback(
        &mut self,
        sizes: u32,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<u32> {
        let ls = [Scalar::U64];
        let tile_len = u64::from(self.bsize()) * self.scan_items(&ls);
        let grid = cmax1(cdiv(n_count.clone(), tile_len));
        let status = self.alloc_status(&ls, &grid, steps);
        let n1 = Count::Add(Box::new(n_count.clone()), Box::new(Count::Const(1)));
        let offs = self.alloc_written(&[Scalar::U64], &n1, steps)[0];

        let mut k = self.new_kernel("offsets_lookback");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
        let opp = Self::temp_ptrs(&mut k, &[offs])[0].clone();
        let st = Self::status_ptrs(&mut k, &status);
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let mut elem = |g: &mut Self, k: &mut Kernel, idx: &Reg, _: &Label| {
            Ok(g.load_leaves(k, std::slice::from_ref(&sp), idx, &[Scalar::U64]))
        };
        let comb = Comb::AddU64;
        let (tile, is0) = Self::take_tile(&mut k, &st.counter);
        let first = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &first, &tile, 0));
        k.emit(Ins::and(Ty::Pred, &first, &first, &is0));
        let written = k.label();
        k.emit(Ins::bra(&written).unless(&first));
        let zero = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &zero, 0));
        self.store(&mut k, &opp, &zero, &zero);
        k.place(&written);
        let (t, mine) = self.tile_reduced(&mut k, comb, &op_ctx, &ls, &tile, &n, &mut elem)?;
        let (before, excl) = self.tile_look_back(&mut k, &st, &tile, &is0, &mine, comb, &op_ctx)?;
        let prefix = self.opt_combine(&mut k, comb, &before, &excl, &op_ctx)?;
        self.tile_scan(&mut k, comb, &t, &prefix, false, &op_ctx)?;
        let mut store = |g: &mut Self, k: &mut Kernel, idx: &Reg, v: &[Reg]| {
            let at = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &at, idx, 1));
            g.store(k, &opp, &at, &v[0]);
            Ok(())
        };
        self.tile_store(&mut k, &t, &mut store)?;
        self.launch_on(k, grid, steps);
        Ok(offs)
    }

    /// Allocates the look-back status of `grid` tiles for elements of leaves `ls`: the
    /// tile counter and the flags, zeroed, in one buffer; the aggregates and inclusive prefixes (each with
    /// its "has" flags), not zeroed: a tile's entry is written before its flag says so,
    /// and read only after.
    pub(super) fn alloc_status(
        &mut self,
        ls: &[Scalar],
        grid: &Count,
        steps: &mut Vec<Step>,
    ) -> Status {
        Status {
            counter_flags: self.alloc_leaves(
                &[Scalar::U32],
                &Count::Add(Box::new(Count::Const(1)), Box::new(grid.clone())),
                steps,
            )[0],
            aggs: self.alloc_written(ls, grid, steps),
            agg_has: self.alloc_written(&[Scalar::Bool], grid, steps)[0],
            incs: self.alloc_written(ls, grid, steps),
            inc_has: self.alloc_written(&[Scalar::Bool], grid, steps)[0],
        }
    }

    /// The look-back status buffers as kernel parameters.
    pub(super) fn status_ptrs(k: &mut Kernel, s: &Status) -> StatusPtrs {
        let counter = Self::temp_ptrs(k, &[s.counter_flags])[0].clone();
        let flags = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &flags, &counter, 4));
        StatusPtrs {
            counter,
            flags,
            aggs: Self::temp_ptrs(k, &s.aggs),
            agg_has: Self::temp_ptrs(k, &[s.agg_has])[0].clone(),
            incs: Self::temp_ptrs(k, &s.incs),
            inc_has: Self::temp_ptrs(k, &[s.inc_has])[0].clone(),
        }
    }

    /// Takes the block's tile: thread 0 takes the next number from the zeroed `u32` tile
    /// counter at `counter` (modulo the grid, so a launch again in report mode takes each
    /// tile once more), the block reads it from shared memory. Returns the tile (`u64`)
    /// and whether the thread is thread 0.
    pub(in crate::codegen) fn take_tile(k: &mut Kernel, counter: &Reg) -> (Reg, Reg) {
        let tsh = k.shared(8);
        let is0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &is0, &k.tid, 0));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&is0));
        let t = k.reg(Scalar::U32);
        k.emit(Ins::atom(
            Space::Global,
            AtomOp::Add,
            Ty::U32,
            &t,
            counter,
            1,
        ));
        let ncta = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &ncta, Sreg::NctaidX));
        k.emit(Ins::rem(Ty::U32, &t, &t, &ncta));
        k.emit(Ins::st(Space::Shared, Ty::U32, &tsh, &t));
        k.place(&skip);
        k.emit(Ins::bar_sync());
        let t32 = k.reg(Scalar::U32);
        k.emit(Ins::ld(Space::Shared, Ty::U32, &t32, &tsh));
        let tile = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &tile, &t32));
        (tile, is0)
    }

    /// The look-back of tile `tile` (taken by [`Gen::take_tile`], `is0`: the thread is
    /// thread 0) whose threads' items combine to `mine` (see the module's introduction):
    /// scans the thread totals over the block, publishes the tile's aggregate (tile 0: its
    /// inclusive prefix), looks back with warp 0 and publishes the inclusive prefix.
    /// Returns the prefix of the tiles before (no value for tile 0) and this thread's
    /// exclusive prefix within the tile.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tile_look_back(
        &mut self,
        k: &mut Kernel,
        st: &StatusPtrs,
        tile: &Reg,
        is0: &Reg,
        mine: &Opt,
        comb: Comb<'_>,
        op_ctx: &Ctx,
    ) -> R<(Opt, Opt)> {
        let ls: Vec<Scalar> = mine.v.iter().map(|r| r.ty).collect();
        let (_, excl, carry) = self.block_scan(k, mine, &mut Self::fold(comb, op_ctx))?;

        // Publish the aggregate (tile 0: its inclusive prefix).
        let first = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &first, tile, 0));
        let later = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &later, tile, 0));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(is0));
        let (agg_pub, inc_pub, done_pub) = (k.label(), k.label(), k.label());
        k.emit(Ins::bra(&inc_pub).when(&first));
        k.place(&agg_pub);
        self.publish(k, &st.aggs, &st.agg_has, &st.flags, tile, &carry, 1);
        k.emit(Ins::bra_uni(&done_pub));
        k.place(&inc_pub);
        self.publish(k, &st.incs, &st.inc_has, &st.flags, tile, &carry, 2);
        k.place(&done_pub);
        k.place(&skip);

        // Look-back by warp 0 (tiles after the first).
        let prefix = self.none(k, &ls);
        let psh: Vec<Sym> = (0..=ls.len()).map(|_| k.shared(8)).collect();
        let skip_lb = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &w0, &k.warp, 0));
        let lb = k.reg(Scalar::Bool);
        k.emit(Ins::and(Ty::Pred, &lb, &w0, &later));
        k.emit(Ins::bra(&skip_lb).unless(&lb));
        self.look_back(k, st, tile, &prefix, comb, op_ctx)?;
        // Lane 0 publishes the inclusive prefix and shares the exclusive one.
        let lane0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &lane0, &k.lane, 0));
        k.emit(Ins::bra(&skip_lb).unless(&lane0));
        let inc = self.opt_combine(k, comb, &prefix, &carry, op_ctx)?;
        self.publish(k, &st.incs, &st.inc_has, &st.flags, tile, &inc, 2);
        for (r, a) in std::iter::once(&prefix.has).chain(&prefix.v).zip(&psh) {
            Self::st(k, Space::Shared, a, r);
        }
        k.place(&skip_lb);
        k.emit(Ins::bar_sync());
        // Every thread: the prefix of the tiles before (none for tile 0).
        let got = {
            let zero = k.reg(Scalar::U32);
            k.emit(Ins::mov(Ty::U32, &zero, 0));
            Self::warp_partial(k, &psh, &ls, &zero)
        };
        let before = Opt {
            has: k.reg(Scalar::Bool),
            v: got.v.clone(),
        };
        k.emit(Ins::and(Ty::Pred, &before.has, &got.has, &later));
        Ok((before, excl))
    }

    /// Stores the optional value `v` as tile `tile`'s entry of the status arrays `ptrs`
    /// (leaves) and `has`, then, after a fence, `flag` into the tile's flag (volatile).
    #[allow(clippy::too_many_arguments)]
    fn publish(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        has: &Reg,
        flags: &Reg,
        tile: &Reg,
        v: &Opt,
        flag: u32,
    ) {
        for (r, p) in v.v.iter().zip(ptrs) {
            self.store(k, p, tile, r);
        }
        self.store(k, has, tile, &v.has);
        k.emit(Ins::membar_gl());
        let a = Self::addr(k, flags, tile, Scalar::U32);
        k.emit(Ins::st(Space::VolatileGlobal, Ty::U32, &a, flag));
    }

    /// The look-back of [`Gen::tile_look_back`], run by a whole warp: lane `l` looks at tile
    /// `base - 1 - l` (`base` starts at `tile`), waits for its flag, and the warp finds the
    /// nearest tile with an inclusive prefix (`vote.ballot`); the values of the tiles from
    /// that one (its inclusive prefix) to the nearest (their aggregates) are combined in
    /// tile order by a shuffle-down reduction towards lane 0 and put before `prefix`. With
    /// no inclusive prefix in the window, the next 32 tiles follow.
    #[allow(clippy::too_many_arguments)]
    fn look_back(
        &mut self,
        k: &mut Kernel,
        st: &StatusPtrs,
        tile: &Reg,
        prefix: &Opt,
        comb: Comb<'_>,
        ctx: &Ctx,
    ) -> R<()> {
        let ls: Vec<Scalar> = prefix.v.iter().map(|r| r.ty).collect();
        let (fp, ap, ahp, ip, ihp) = (&st.flags, &st.aggs, &st.agg_has, &st.incs, &st.inc_has);
        let base = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &base, tile));
        let lane64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane64, &k.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        // Lane l: tile base - 1 - l, if there is one.
        let exists = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Gt, Ty::U64, &exists, &base, &lane64));
        let j = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &j, &base, 1));
        k.emit(Ins::sub(Ty::S64, &j, &j, &lane64));
        let f = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &f, 0));
        let (spin, spun) = (k.label(), k.label());
        k.emit(Ins::bra(&spun).unless(&exists));
        let fa = Self::addr(k, fp, &j, Scalar::U32);
        let first_try = k.label();
        k.emit(Ins::bra(&first_try));
        k.place(&spin);
        // Back off before reading again (the block published nothing yet).
        k.emit(Ins::nanosleep(64));
        k.place(&first_try);
        k.emit(Ins::ld(Space::VolatileGlobal, Ty::U32, &f, &fa));
        let waiting = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &waiting, &f, 0));
        k.emit(Ins::bra(&spin).when(&waiting));
        k.place(&spun);
        k.emit(Ins::membar_gl());
        // The nearest lane with an inclusive prefix (32: none).
        let incl = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &incl, &f, 2));
        let ballot = k.reg(Scalar::U32);
        k.emit(Ins::vote_ballot(&ballot, &incl));
        let low = k.reg(Scalar::U32);
        k.emit(Ins::neg(Ty::S32, &low, &ballot));
        k.emit(Ins::and(Ty::B32, &low, &low, &ballot));
        let stop = k.reg(Scalar::U32);
        k.emit(Ins::bfind(Ty::U32, &stop, &low));
        let none = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &none, &ballot, 0));
        k.emit(Ins::selp(Ty::U32, &stop, 32, &stop, &none));
        // This lane's value: the inclusive prefix at the stop, aggregates before it.
        let v = self.none(k, &ls);
        let take = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Le, Ty::U32, &take, &k.lane, &stop));
        k.emit(Ins::and(Ty::Pred, &take, &take, &exists));
        let at_stop = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &at_stop, &k.lane, &stop));
        let (skip, agg, got) = (k.label(), k.label(), k.label());
        k.emit(Ins::bra(&skip).unless(&take));
        k.emit(Ins::bra(&agg).unless(&at_stop));
        let x = Self::load_status(k, ip, ihp, &j, &ls);
        Self::mov_opt(k, &v, &x);
        k.emit(Ins::bra_uni(&got));
        k.place(&agg);
        let x = Self::load_status(k, ap, ahp, &j, &ls);
        Self::mov_opt(k, &v, &x);
        k.place(&got);
        k.place(&skip);
        // In tile order (higher lanes first) towards lane 0.
        self.warp_reduce_down(k, &v, true, &mut Self::fold(comb, ctx))?;
        let w = Self::shfl_opt(k, &v, Shfl::Idx, 0);
        let n = self.opt_combine(k, comb, &w, prefix, ctx)?;
        Self::mov_opt(k, prefix, &n);
        k.emit(Ins::bra_uni(&end).unless(&none));
        k.emit(Ins::sub(Ty::S64, &base, &base, 32));
        let past = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Le, Ty::S64, &past, &base, 0));
        k.emit(Ins::bra_uni(&end).when(&past));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        Ok(())
    }

    /// Loads entry `j` of a status array (leaves `ptrs`, flags `has`) coherently at the
    /// device scope.
    fn load_status(k: &mut Kernel, ptrs: &[Reg], has: &Reg, j: &Reg, ls: &[Scalar]) -> Opt {
        let v = Self::load_leaves_in(k, Space::RelaxedGpuGlobal, ptrs, j, ls);
        let a = Self::addr(k, has, j, Scalar::Bool);
        let h = Self::ld(k, Space::RelaxedGpuGlobal, &a, Scalar::Bool);
        Opt { has: h, v }
    }
}
