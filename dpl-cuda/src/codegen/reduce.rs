//! `reduce` in dpl's one order ([`dpl_core::order`]): each warp reduces whole tiles of
//! 2048 elements (lane `j` folds elements `j, j + 32, ...` of the tile, then the
//! `shfl.sync.down` tree by 16, 8, 4, 2, 1) and writes one partial per tile; then, in the
//! same kernel, the last block to finish (counted with an atomic, after a fence) has one
//! warp reduce the partials the same way (lane `j` folds partials `j, j + 32, ...`, then
//! the tree) and put the start value first: one launch, no second kernel. The grid (how
//! many warps, which depends on the device) decides only which warp takes which tile and
//! which block finishes, never the order of combination, so the bits are those of every
//! other place.

use super::*;
use dpl_core::order::{LANES, TILE};

impl<'f> Gen<'f> {
    /// A `reduce` (its start value `init`, if it has one, put first) in one kernel: the
    /// tiles' partials, then one warp of the last block to finish combines them (and the
    /// start value); the result is read back by the host (with whether there was any
    /// element).
    pub(super) fn reduce(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let SoacKind::Reduce { op, init } = &soac.kind else {
            return unsupported("a reduction of another combinator (internal)");
        };
        let init = *init;
        let ty = self.ty(s.var);
        let ls = leaves(ty)?;
        let comb = Comb::Op(op, ty);
        let n_count = Count::Var(var(soac.len));
        let m_count = cdiv(n_count.clone(), TILE as u64);
        // One warp per tile, as many blocks as the tiles need or the device keeps resident.
        let k1_id = self.next_kernel();
        let resident = Count::Resident {
            kernel: k1_id,
            block: self.bsize(),
        };
        let grid = cmax1(cmin(
            cdiv(m_count.clone(), u64::from(self.warps())),
            resident,
        ));
        // Every tile's partial, the result and its flag are written before they are read;
        // the count of blocks done starts at 0 (and the last block sets it back to 0).
        let partials = self.alloc_written(&ls, &m_count, steps);
        let counter = self.alloc_blocks_done(steps);
        let outs = self.alloc_written(&ls, &Count::Const(1), steps);
        let ohas = self.alloc_written(&[Scalar::Bool], &Count::Const(1), steps)[0];

        // Each warp takes tiles `w, w + warps, ...`.
        let mut k = self.new_kernel("reduce");
        // Tiles of host-known counts (unless the element function records checks or loops);
        // the last block reads the `m` partials, whatever a failed check left in them, and
        // writes one value, so the check can wait for the result's read-back.
        k.any_data = true;
        k.env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let pp = Self::temp_ptrs(&mut k, &partials);
        let (ntid, ncta) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.emit(Ins::mov(Ty::U32, &ntid, Sreg::NtidX));
        k.emit(Ins::mov(Ty::U32, &ncta, Sreg::NctaidX));
        let (t, warps) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        let cta = k.reg(Scalar::U32);
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &cta, &k.ctaid64));
        k.emit(Ins::mul_wide(Ty::U32, &t, &ntid, &cta));
        k.emit(Ins::add(Ty::S64, &t, &t, &k.tid64));
        k.emit(Ins::shr(Ty::U64, &t, &t, 5));
        k.emit(Ins::mul_wide(Ty::U32, &warps, &ntid, &ncta));
        k.emit(Ins::shr(Ty::U64, &warps, &warps, 5));
        let m = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &m, &n, TILE as u64 - 1));
        k.emit(Ins::shr(Ty::U64, &m, &m, TILE.trailing_zeros()));
        let lane64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane64, &k.lane));
        let (tiles_top, tiles_end) = (k.label(), k.label());
        k.place(&tiles_top);
        let done = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &done, &t, &m));
        k.emit(Ins::bra(&tiles_end).when(&done));
        // The tile's elements `t0..t1`; this lane's first is `t0 + lane`.
        let (i, t1) = (k.reg(Scalar::Usize), k.reg(Scalar::U64));
        k.emit(Ins::shl(Ty::B64, &i, &t, TILE.trailing_zeros()));
        k.emit(Ins::add(Ty::S64, &t1, &i, TILE as u64));
        k.emit(Ins::min(Ty::U64, &t1, &t1, &n));
        k.emit(Ins::add(Ty::S64, &i, &i, &lane64));
        let acc = self.none(&mut k, &ls);
        let (first_done, rest, tile_done) = (k.label(), k.label(), k.label());
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &acc.has, &i, &t1));
        k.emit(Ins::bra(&tile_done).unless(&acc.has));
        // The lane's first element (a failed check leaves the value unset: the error is
        // reported, the partial never read).
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(first_done.clone()),
        };
        let e = self.elem(&mut k, &soac.elem, &i, &ctx)?.flatten()?;
        for (d, s) in acc.v.iter().zip(&e) {
            Self::mov(&mut k, d, s);
        }
        k.place(&first_done);
        // The rest: `acc = acc op e` every 32 elements, in index order.
        k.place(&rest);
        k.emit(Ins::add(Ty::S64, &i, &i, LANES as u64));
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        // First in runs of `unroll` elements, all evaluated (their loads issued) before the
        // first is combined: one element at a time, a lane waits for each load before
        // issuing the next, so a warp has one load in flight and the reduction runs at the
        // latency of memory, not its bandwidth (a quarter of it, measured on an H200).
        let unroll = reduce_unroll(&soac.elem);
        if unroll > 1 {
            let (runs, singles) = (k.label(), k.label());
            k.place(&runs);
            let last = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &last, &i, (unroll - 1) * LANES as u64));
            let short = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ge, Ty::U64, &short, &last, &t1));
            k.emit(Ins::bra(&singles).when(&short));
            let mut es = Vec::new();
            for u in 0..unroll {
                let iu = k.reg(Scalar::Usize);
                k.emit(Ins::add(Ty::S64, &iu, &i, u * LANES as u64));
                // A failed check leaves the value unset (the error is reported).
                let evaluated = k.label();
                let ctx = Ctx {
                    key: iu.clone(),
                    fail: Some(evaluated.clone()),
                };
                es.push(self.elem(&mut k, &soac.elem, &iu, &ctx)?.flatten()?);
                k.place(&evaluated);
            }
            for e in &es {
                let next = self.combine(&mut k, comb, &acc.v, e, &op_ctx)?;
                for (d, s) in acc.v.iter().zip(&next) {
                    Self::mov(&mut k, d, s);
                }
            }
            k.emit(Ins::add(Ty::S64, &i, &i, unroll * LANES as u64));
            k.emit(Ins::bra(&runs));
            k.place(&singles);
        }
        // Then one at a time.
        let (single, next_single) = (k.label(), k.label());
        k.place(&single);
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &out, &i, &t1));
        k.emit(Ins::bra(&tile_done).when(&out));
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(next_single.clone()),
        };
        let e = self.elem(&mut k, &soac.elem, &i, &ctx)?.flatten()?;
        let next = self.combine(&mut k, comb, &acc.v, &e, &op_ctx)?;
        for (d, s) in acc.v.iter().zip(&next) {
            Self::mov(&mut k, d, s);
        }
        k.place(&next_single);
        k.emit(Ins::add(Ty::S64, &i, &i, LANES as u64));
        k.emit(Ins::bra(&single));
        k.place(&tile_done);
        self.warp_reduce_halves(&mut k, &acc, &mut Self::fold(comb, &op_ctx))?;
        let not0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U32, &not0, &k.lane, 0));
        let stored = k.label();
        k.emit(Ins::bra(&stored).when(&not0));
        for (r, ptr) in acc.v.iter().zip(&pp) {
            self.store(&mut k, ptr, &t, r);
        }
        k.place(&stored);
        k.emit(Ins::add(Ty::S64, &t, &t, &warps));
        k.emit(Ins::bra(&tiles_top));
        k.place(&tiles_end);
        // The pointers the last block needs are loaded there, not held through the tiles.
        let counter = Self::temp_ptrs(&mut k, &[counter])[0].clone();
        self.finish_in_last_block(&mut k, comb, init, &ls, &pp, &m, &counter, &outs, ohas)?;
        let args = k.ptx.args.clone();
        let any_data = k.any_data;
        let k1 = self.push_kernel(k);
        if k1 != k1_id {
            return unsupported("a kernel was generated out of order (internal)");
        }
        steps.push(Step::Launch(Launch {
            kernel: k1,
            grid,
            block: self.bsize(),
            args,
            any_grid: true,
            any_data,
        }));
        steps.push(Step::CheckErrors);
        steps.push(Step::ReadScalars {
            var: var(s.var),
            ty: ty.clone(),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            has: if init.is_none() {
                Some(Buf::Temp(ohas))
            } else {
                None
            },
            origin: origin_of(&soac.kind),
            span: s.span.0,
        });
        Ok(())
    }

    /// The end of [`Gen::reduce`]'s kernel: the last block to finish ([`Gen::last_block`])
    /// combines the tiles' partials (`pp`, `m` of them, leaves `ls`), puts the start value
    /// first and stores the result (temporaries `outs`, and whether there was any element,
    /// `ohas`). Its warp 0 reads the partials at the device scope: lane `j` takes partials
    /// `j, j + 32, ...`, 8 loads issued before they are combined, then the tree, as a
    /// tile's lanes are. (The counter is set back to 0 so that the launch run again in
    /// report mode finishes too: the operator's checks may fail in the finish.)
    #[allow(clippy::too_many_arguments)]
    fn finish_in_last_block(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        init: Option<VarId>,
        ls: &[Scalar],
        pp: &[Reg],
        m: &Reg,
        counter: &Reg,
        outs: &[u32],
        ohas: u32,
    ) -> R<()> {
        let (finish, tid) = Self::last_block(k, counter);
        let is0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &is0, &tid, 0));
        let w0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U32, &w0, &tid, LANES as u64));
        k.emit(Ins::bra_uni(&finish).unless(&w0));

        let op_ctx = Ctx {
            key: m.clone(),
            fail: None,
        };
        let load =
            |k: &mut Kernel, j: &Reg| Self::load_leaves_in(k, Space::RelaxedGpuGlobal, pp, j, ls);
        let acc = self.none(k, ls);
        let j = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &j, &tid));
        // Runs of 8 partials loaded together, then combined in order: one load at a time,
        // the one warp waited about 0.15 us (an L2 hit) per 32 partials, some 600 us for
        // the 2^17 partials of 2^28 elements on an H200.
        let (runs, singles, end) = (k.label(), k.label(), k.label());
        k.place(&runs);
        let last_j = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &last_j, &j, 7 * LANES as u64));
        let short = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &short, &last_j, m));
        k.emit(Ins::bra(&singles).when(&short));
        let mut xs = Vec::new();
        for u in 0..8u64 {
            let ju = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &ju, &j, u * LANES as u64));
            xs.push(load(k, &ju));
        }
        for v in xs {
            let x = Opt {
                has: self.pconst(k, true),
                v,
            };
            let next = self.opt_combine(k, comb, &acc, &x, &op_ctx)?;
            Self::mov_opt(k, &acc, &next);
        }
        k.emit(Ins::add(Ty::S64, &j, &j, 8 * LANES as u64));
        k.emit(Ins::bra(&runs));
        k.place(&singles);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &j, m));
        k.emit(Ins::bra(&end).when(&p));
        let v = load(k, &j);
        let x = Opt {
            has: self.pconst(k, true),
            v,
        };
        let next = self.opt_combine(k, comb, &acc, &x, &op_ctx)?;
        Self::mov_opt(k, &acc, &next);
        k.emit(Ins::add(Ty::S64, &j, &j, LANES as u64));
        k.emit(Ins::bra(&singles));
        k.place(&end);
        self.warp_reduce_halves(k, &acc, &mut Self::fold(comb, &op_ctx))?;
        let mut total = acc;
        if let Some(iv) = self.bind_init(k, init)? {
            let t = self.pconst(k, true);
            let first = Opt { has: t, v: iv };
            total = self.opt_combine(k, comb, &first, &total, &op_ctx)?;
        }
        // Thread 0 stores the result (the leaves of `none` are zeroed registers).
        k.emit(Ins::bra(&finish).unless(&is0));
        let zero = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &zero, 0));
        let outs = Self::temp_ptrs(k, outs);
        let oh = Self::temp_ptrs(k, &[ohas])[0].clone();
        for (r, ptr) in total.v.iter().zip(&outs) {
            self.store(k, ptr, &zero, r);
        }
        self.store(k, &oh, &zero, &total.has);
        k.place(&finish);
        Ok(())
    }
}

/// How many elements a lane of a reduction's first pass evaluates before it combines them
/// ([`Gen::reduce`]): 8 when the element function is short straight-line code (no inner
/// combinator, primitive or loop; at most 16 statements), whose 8 copies stay small; else
/// 1, one at a time.
fn reduce_unroll(l: &Lambda) -> u64 {
    fn straight(b: &Block) -> bool {
        b.stmts.iter().all(|st| match &st.expr {
            Expr::Soac(_) | Expr::Prim { .. } | Expr::Loop(_) => false,
            e => {
                let mut ok = true;
                e.for_each_block(&mut |b| ok &= straight(b));
                ok
            }
        })
    }
    if l.body.stmts.len() <= 16 && straight(&l.body) {
        8
    } else {
        1
    }
}
