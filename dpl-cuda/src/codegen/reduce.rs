//! `reduce`: per-thread accumulation over a grid-stride loop and a block reduction into
//! per-block partials, then one block combines the partials and the start value.

use super::*;

/// Elements per thread before a reduction uses more blocks than half the resident ones
/// (the block-level combination costs a few hundred instructions per thread, so each
/// thread should accumulate many).
const REDUCE_PER_THREAD: u64 = 64;

/// The fewest elements per thread of a reduction: below [`REDUCE_PER_THREAD`] per thread
/// it still takes up to half the resident blocks, so that every multiprocessor has work
/// (64 per thread would leave most of a large GPU idle on a million elements).
const REDUCE_MIN_PER_THREAD: u64 = 8;

impl<'f> Gen<'f> {
    /// A `reduce` (its start value `init`, if it has one, put first): each thread
    /// accumulates its elements of a grid-stride loop, each block combines its threads'
    /// results into a partial; one block then combines the partials (and the start
    /// value), the result read back by the host (with whether there was any element).
    pub(super) fn reduce(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let SoacKind::Reduce { op, init } = &soac.kind else {
            return unsupported("a reduction of another combinator (internal)");
        };
        let init = *init;
        let ty = self.ty(s.var);
        let ls = leaves(ty)?;
        let comb = Comb::Op(op, ty);
        let n_count = Count::Var(var(soac.len));
        // The partials are as many as the first pass's blocks: enough for
        // `REDUCE_PER_THREAD` elements per thread or half the resident blocks, whichever
        // is more, but no more than `REDUCE_MIN_PER_THREAD` elements per thread need and
        // the resident blocks hold.
        let k1_id = self.next_kernel();
        let resident = Count::Resident {
            kernel: k1_id,
            block: self.bsize(),
        };
        let per_block = u64::from(self.bsize());
        let wanted = Count::Max(
            Box::new(cdiv(n_count.clone(), per_block * REDUCE_PER_THREAD)),
            Box::new(cdiv(resident.clone(), 2)),
        );
        let grid = cmax1(cmin(
            cdiv(n_count.clone(), per_block * REDUCE_MIN_PER_THREAD),
            cmin(wanted, resident),
        ));
        let partials = self.alloc_leaves(&ls, &grid, steps);
        let phas = self.alloc_leaves(&[Scalar::Bool], &grid, steps)[0];

        // Pass 1: per-thread accumulation over a grid-stride loop, then the block. The
        // thread's first element is peeled off, so the loop body combines plain values:
        // only the thread (which may have no element) and the block tree carry a flag.
        let mut k = self.new_kernel("reduce");
        k.env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let pp = Self::temp_ptrs(&mut k, &partials);
        let ph = Self::temp_ptrs(&mut k, &[phas])[0].clone();
        let acc = self.none(&mut k, &ls);
        let ElemLoop { i, step, end, .. } = Self::elem_loop(&mut k, &n, None);
        // The first element (a failed check leaves the zeroed value: the error is
        // reported, the partial never read).
        let first_done = k.label();
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(first_done.clone()),
        };
        let e = self.elem(&mut k, &soac.elem, &i, &ctx)?.flatten()?;
        for (d, s) in acc.v.iter().zip(&e) {
            Self::mov(&mut k, d, s);
        }
        k.place(&first_done);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 1, 1));
        // The rest: `acc = acc op e`.
        let rest = k.label();
        k.place(&rest);
        k.emit(Ins::add(Ty::S64, &i, &i, &step));
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &i, &n));
        k.emit(Ins::bra(&end).when(&p));
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(rest.clone()),
        };
        let e = self.elem(&mut k, &soac.elem, &i, &ctx)?.flatten()?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let next = self.combine(&mut k, comb, &acc.v, &e, &op_ctx)?;
        for (d, s) in acc.v.iter().zip(&next) {
            Self::mov(&mut k, d, s);
        }
        k.emit(Ins::bra_uni(&rest));
        k.place(&end);
        let total = self.block_reduce(&mut k, &acc, &mut Self::fold(comb, &op_ctx))?;
        let tile = k.ctaid64.clone();
        self.store_if_thread0(&mut k, &pp, Some(&ph), &tile, &total);
        let args = k.ptx.args.clone();
        let k1 = self.push_kernel(k);
        if k1 != k1_id {
            return unsupported("a kernel was generated out of order (internal)");
        }
        steps.push(Step::Launch(Launch {
            kernel: k1,
            grid: grid.clone(),
            block: self.bsize(),
            args,
            any_grid: true,
        }));
        steps.push(Step::CheckErrors);

        // Pass 2: one block combines the partials (and the start value).
        let outs = self.alloc_leaves(&ls, &Count::Const(1), steps);
        let ohas = self.alloc_leaves(&[Scalar::Bool], &Count::Const(1), steps)[0];
        let mut k = self.new_kernel("reduce_finish");
        k.env = self.bind_captures(&mut k, &[op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let g = k.param(Scalar::U64, KArg::Count(grid.clone()));
        let pp = Self::temp_ptrs(&mut k, &partials);
        let ph = Self::temp_ptrs(&mut k, &[phas])[0].clone();
        let init_v = self.bind_init(&mut k, init)?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let op_ptrs = Self::temp_ptrs(&mut k, &outs);
        let oh = Self::temp_ptrs(&mut k, &[ohas])[0].clone();
        let acc = self.none(&mut k, &ls);
        let j = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &j, &k.tid64));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &j, &g));
        k.emit(Ins::bra(&end).when(&p));
        let x = self.load_opt(&mut k, &pp, &ph, &j, &ls);
        let next = self.opt_combine(&mut k, comb, &acc, &x, &op_ctx)?;
        Self::mov_opt(&mut k, &acc, &next);
        k.emit(Ins::add(Ty::S64, &j, &j, self.bsize()));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        let mut total = self.block_reduce(&mut k, &acc, &mut Self::fold(comb, &op_ctx))?;
        if let Some(iv) = init_v {
            let t = self.pconst(&mut k, true);
            let first = Opt { has: t, v: iv };
            total = self.opt_combine(&mut k, comb, &first, &total, &op_ctx)?;
        }
        let zero = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &zero, 0));
        self.store_if_thread0(&mut k, &op_ptrs, Some(&oh), &zero, &total);
        self.launch_on(k, Count::Const(1), steps);
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
}
