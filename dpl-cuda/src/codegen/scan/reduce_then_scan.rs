//! Reduce-then-scan: the tiles' totals, one block scanning them, each tile again with
//! the carry of the tiles before it (also the offsets of ragged results when asked for).

use super::*;

impl<'f> Gen<'f> {
    /// The exclusive scan of `n` `u64` sizes into `n + 1` offsets (`offs[0]` is 0, `offs[n]`
    /// the total), with the look-back scan ([`Gen::offsets_lookback`]) unless
    /// reduce-then-scan is asked for: then over tiles, as [`Gen::scan`]; returns the
    /// offsets' temporary.
    pub(in crate::codegen) fn exclusive_offsets(
        &mut self,
        sizes: u32,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<u32> {
        if self.opts.scan == crate::Scan::LookBack {
            return self.offsets_lookback(sizes, n_count, steps);
        }
        let grid = cmax1(cdiv(n_count.clone(), self.tile()));
        let tiles = self.alloc_leaves(&[Scalar::U64], &grid, steps);
        let n1 = Count::Add(Box::new(n_count.clone()), Box::new(Count::Const(1)));
        let offs = self.alloc_leaves(&[Scalar::U64], &n1, steps)[0];
        for pass in 0..2 {
            let mut k = self.new_kernel(if pass == 0 {
                "offsets_tiles"
            } else {
                "offsets"
            });
            let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
            let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
            let tp = Self::temp_ptrs(&mut k, &tiles)[0].clone();
            let opp = Self::temp_ptrs(&mut k, &[offs])[0].clone();
            let op_ctx = Ctx {
                key: n.clone(),
                fail: None,
            };
            let carry = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &carry, 0));
            if pass == 1 {
                let (prev_i, skip) = Self::previous_tile(&mut k);
                let prev =
                    self.load_leaves(&mut k, std::slice::from_ref(&tp), &prev_i, &[Scalar::U64]);
                k.emit(Ins::mov(Ty::U64, &carry, &prev[0]));
                k.place(&skip);
            }
            let (r, top, end) = Self::rounds_head(&mut k, ROUNDS);
            let idx = k.reg(Scalar::U64);
            k.emit(Ins::mul_lo(Ty::U64, &idx, &k.ctaid64, self.tile()));
            let off = k.reg(Scalar::U64);
            k.emit(Ins::mul_wide(Ty::U32, &off, &r, self.bsize()));
            k.emit(Ins::add(Ty::S64, &idx, &idx, &off));
            k.emit(Ins::add(Ty::S64, &idx, &idx, &k.tid64));
            let valid = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Lt, Ty::U64, &valid, &idx, &n));
            let x = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &x, 0));
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(&valid));
            let v = self.load_leaves(&mut k, std::slice::from_ref(&sp), &idx, &[Scalar::U64]);
            k.emit(Ins::mov(Ty::U64, &x, &v[0]));
            k.place(&skip);
            let t = self.pconst(&mut k, true);
            let xo = Opt { has: t, v: vec![x] };
            let (incl, _, total) =
                self.block_scan(&mut k, &xo, &mut Self::fold(Comb::AddU64, &op_ctx))?;
            if pass == 1 {
                let skipw = k.label();
                k.emit(Ins::bra(&skipw).unless(&valid));
                let val = k.reg(Scalar::U64);
                k.emit(Ins::add(Ty::S64, &val, &carry, &incl.v[0]));
                let at = k.reg(Scalar::U64);
                k.emit(Ins::add(Ty::S64, &at, &idx, 1));
                self.store(&mut k, &opp, &at, &val);
                k.place(&skipw);
            }
            k.emit(Ins::add(Ty::S64, &carry, &carry, &total.v[0]));
            Self::rounds_tail(&mut k, &r, &top, &end);
            if pass == 0 {
                let t = self.pconst(&mut k, true);
                let cc = Opt {
                    has: t,
                    v: vec![carry],
                };
                let tile = k.ctaid64.clone();
                self.store_if_thread0(&mut k, std::slice::from_ref(&tp), None, &tile, &cc);
            }
            self.launch_on(k, grid.clone(), steps);
            if pass == 0 {
                self.scan_totals(
                    &[Scalar::U64],
                    Comb::AddU64,
                    None,
                    &tiles,
                    &grid,
                    n_count,
                    steps,
                )?;
            }
        }
        Ok(offs)
    }

    /// The first passes of a reduce-then-scan over `grid` tiles of `soac`'s elements:
    /// each tile's total (a block per tile), then one block scanning the totals in place
    /// ([`Gen::scan_totals`]); returns the totals' temporaries (one per leaf).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn tile_totals(
        &mut self,
        soac: &Soac,
        op: &Lambda,
        comb: Comb<'_>,
        ls: &[Scalar],
        grid: &Count,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<Vec<u32>> {
        let totals = self.alloc_leaves(ls, grid, steps);
        let mut k = self.new_kernel("scan_tiles");
        k.env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let tp = Self::temp_ptrs(&mut k, &totals);
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let mut elem = Self::scan_elem(soac, &n);
        let tile = k.ctaid64.clone();
        let (_, mine) = self.tile_reduced(&mut k, comb, &op_ctx, ls, &tile, &n, &mut elem)?;
        let total = self.block_reduce(&mut k, &mine, &mut Self::fold(comb, &op_ctx))?;
        self.store_if_thread0(&mut k, &tp, None, &tile, &total);
        self.launch_on(k, grid.clone(), steps);
        steps.push(Step::CheckErrors);
        self.scan_totals(ls, comb, Some(op), &totals, grid, n_count, steps)?;
        Ok(totals)
    }

    /// Combines into `carry` the scanned total of the tiles before this block's (entry
    /// `ctaid - 1` of the totals `tp`; none for the first tile).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn add_earlier_tiles(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        ctx: &Ctx,
        carry: &Opt,
        tp: &[Reg],
    ) -> R<()> {
        let (prev_i, skip) = Self::previous_tile(k);
        let ls: Vec<Scalar> = carry.v.iter().map(|r| r.ty).collect();
        let prev = self.load_leaves(k, tp, &prev_i, &ls);
        let tr = self.pconst(k, true);
        let prev = Opt { has: tr, v: prev };
        let next = self.opt_combine(k, comb, carry, &prev, ctx)?;
        Self::mov_opt(k, carry, &next);
        k.place(&skip);
        Ok(())
    }

    /// The tile before this block's (`ctaid - 1`), and the label the first block, which
    /// has none, jumps to (the caller places it after reading the tile before).
    fn previous_tile(k: &mut Kernel) -> (Reg, Label) {
        let has_prev = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &has_prev, &k.ctaid64, 0));
        let prev_i = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &prev_i, &k.ctaid64, 1));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&has_prev));
        (prev_i, skip)
    }

    /// One block scans the `grid` tile totals in place (inclusive), in chunks of a block's
    /// threads: a kernel of one block ([`Gen::scan_totals_in`]).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn scan_totals(
        &mut self,
        ls: &[Scalar],
        comb: Comb<'_>,
        op: Option<&Lambda>,
        totals: &[u32],
        grid: &Count,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let mut k = self.new_kernel("scan_totals");
        // The `grid` totals, at host-known places (see `Kernel::any_data`).
        k.any_data = true;
        if let Some(op) = op {
            k.env = self.bind_captures(&mut k, &[op])?;
        }
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let g = k.param(Scalar::U64, KArg::Count(grid.clone()));
        let tp = Self::temp_ptrs(&mut k, totals);
        self.scan_totals_in(&mut k, ls, comb, &tp, &n, &g, Space::Global)?;
        self.launch_on(k, Count::Const(1), steps);
        Ok(())
    }

    /// The scan of [`Gen::scan_totals`] emitted into kernel `k`, run by its whole block:
    /// the `g` totals at `tp` (leaves `ls`) scanned in place, loaded from `space` (at the
    /// device scope where other blocks of the same launch wrote them); `n` keys the
    /// operator's failures.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn scan_totals_in(
        &mut self,
        k: &mut Kernel,
        ls: &[Scalar],
        comb: Comb<'_>,
        tp: &[Reg],
        n: &Reg,
        g: &Reg,
        space: Space,
    ) -> R<()> {
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let carry = self.none(k, ls);
        let cbase = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &cbase, 0));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &cbase, g));
        k.emit(Ins::bra_uni(&end).when(&p));
        let j = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &j, &cbase, &k.tid64));
        let valid = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &valid, &j, g));
        let x = self.none(k, ls);
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&valid));
        let v = Self::load_leaves_in(k, space, tp, &j, ls);
        for (d, s) in x.v.iter().zip(&v) {
            Self::mov(k, d, s);
        }
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &x.has, 1, 1));
        k.place(&skip);
        let (incl, _, total) = self.block_scan(k, &x, &mut Self::fold(comb, &op_ctx))?;
        let res = self.opt_combine(k, comb, &carry, &incl, &op_ctx)?;
        let skipw = k.label();
        k.emit(Ins::bra(&skipw).unless(&valid));
        for (rg, ptr) in res.v.iter().zip(tp) {
            self.store(k, ptr, &j, rg);
        }
        k.place(&skipw);
        let next = self.opt_combine(k, comb, &carry, &total, &op_ctx)?;
        Self::mov_opt(k, &carry, &next);
        k.emit(Ins::add(Ty::S64, &cbase, &cbase, self.bsize()));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        Ok(())
    }
}
