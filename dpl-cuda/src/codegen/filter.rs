//! Flat `filter`: a chunk of `32 * FILTER_ROUNDS` consecutive elements per warp, counted
//! with `vote.ballot`/`popc`, the chunk counts scanned by the last block of the same
//! launch ([`Gen::last_block`]), the survivors written in order by a second launch.

use super::*;

/// The work of one round of a filter's chunk in [`Gen::chunk_rounds`]: `(the element's
/// leaves, kept, the warp's ballot of kept)`.
type ChunkBody<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &[Reg], &Reg, &Reg) -> R<()> + 'b;

/// Rounds of 32 elements per warp in a filter's chunk.
const FILTER_ROUNDS: u64 = 16;

impl<'f> Gen<'f> {
    pub(super) fn filter(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        pred: &Lambda,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("filter without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let n_count = Count::Var(var(soac.len));
        // A chunk of `32 * FILTER_ROUNDS` consecutive elements per warp.
        let chunks = cmax1(cdiv(n_count.clone(), 32 * FILTER_ROUNDS));
        let grid = cmax1(cdiv(
            n_count.clone(),
            32 * FILTER_ROUNDS * u64::from(self.warps()),
        ));
        let counts = self.alloc_leaves(&[Scalar::U64], &chunks, steps);

        // Pass 1: survivors per chunk.
        let mut k = self.new_kernel("filter_count");
        k.env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let cp = Self::temp_ptrs(&mut k, &counts)[0].clone();
        let (wc, cbase, end) = self.chunk_begin(&mut k, &n);
        let count = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &count, 0));
        self.chunk_rounds(&mut k, soac, pred, &n, &cbase, &mut |_, k, _, _, ballot| {
            Self::add_popc(k, &count, ballot);
            Ok(())
        })?;
        // Lane 0 writes the chunk's count.
        let lane0 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &lane0, &k.lane, 0));
        k.emit(Ins::bra(&end).unless(&lane0));
        self.store(&mut k, &cp, &wc, &count);
        k.place(&end);
        // Then the last block to finish scans the chunks' counts in place (inclusive): the
        // offsets of the chunks; the last one is the result's length.
        let counter = self.alloc_blocks_done(steps);
        let counter = Self::temp_ptrs(&mut k, &[counter])[0].clone();
        let (scanned, _) = Self::last_block(&mut k, &counter);
        let g = k.param(Scalar::U64, KArg::Count(chunks.clone()));
        let (ls_c, tp) = ([Scalar::U64], [cp]);
        let global = Space::RelaxedGpuGlobal;
        self.scan_totals_in(&mut k, &ls_c, Comb::AddU64, &tp, &n, &g, global)?;
        k.place(&scanned);
        self.launch_on(k, grid.clone(), steps);
        steps.push(Step::CheckErrors);
        let total_t = self.temp();
        steps.push(Step::ReadCount {
            temp: total_t,
            src: Buf::Temp(counts[0]),
            index: Count::Sub(Box::new(chunks.clone()), Box::new(Count::Const(1))),
            guard: n_count.clone(),
        });
        let out_len = Count::Temp(total_t);
        // Every survivor is written: not zeroed.
        let outs = self.alloc_written(&ls, &out_len, steps);

        // Pass 2: survivors written at their offsets: after the chunks before, the
        // warp's earlier rounds and the lanes below in the round.
        let mut k = self.new_kernel("filter");
        k.env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let cp = Self::temp_ptrs(&mut k, &counts)[0].clone();
        let op_p = Self::temp_ptrs(&mut k, &outs);
        let olen = k.param(Scalar::U64, KArg::Count(out_len.clone()));
        let (wc, cbase, end) = self.chunk_begin(&mut k, &n);
        let pos = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &pos, 0));
        let has_prev = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &has_prev, &wc, 0));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&has_prev));
        let prev_i = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &prev_i, &wc, 1));
        let prev = self.load_leaves(&mut k, std::slice::from_ref(&cp), &prev_i, &[Scalar::U64]);
        k.emit(Ins::mov(Ty::U64, &pos, &prev[0]));
        k.place(&skip);
        let lt = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &lt, Sreg::LanemaskLt));
        self.chunk_rounds(
            &mut k,
            soac,
            pred,
            &n,
            &cbase,
            &mut |g, k, x, keep, ballot| {
                let below = k.reg(Scalar::U32);
                k.emit(Ins::and(Ty::B32, &below, ballot, &lt));
                let rank = k.reg(Scalar::U32);
                k.emit(Ins::popc(Ty::B32, &rank, &below));
                let at = k.reg(Scalar::U64);
                k.emit(Ins::cvt(Ty::U64, Ty::U32, &at, &rank));
                k.emit(Ins::add(Ty::S64, &at, &at, &pos));
                let w = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Lt, Ty::U64, &w, &at, &olen));
                k.emit(Ins::and(Ty::Pred, &w, &w, keep));
                let skipw = k.label();
                k.emit(Ins::bra(&skipw).unless(&w));
                for (rg, p) in x.iter().zip(&op_p) {
                    g.store(k, p, &at, rg);
                }
                k.place(&skipw);
                Self::add_popc(k, &pos, ballot);
                Ok(())
            },
        )?;
        k.place(&end);
        self.launch_on(k, grid, steps);
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, out_len));
        Ok(())
    }

    /// `acc += popc(ballot)` (`acc` a `u64`).
    fn add_popc(k: &mut Kernel, acc: &Reg, ballot: &Reg) {
        let pc = k.reg(Scalar::U32);
        k.emit(Ins::popc(Ty::B32, &pc, ballot));
        let pc64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &pc64, &pc));
        k.emit(Ins::add(Ty::S64, acc, acc, &pc64));
    }

    /// This warp's chunk of a filter (warp `w` of block `b`: chunk `b * warps + w`, of
    /// `32 * FILTER_ROUNDS` elements): returns the chunk number, its first index (`u64`
    /// each) and the label a warp whose chunk starts past the end jumps to (the caller
    /// places it at the end of the kernel).
    fn chunk_begin(&mut self, k: &mut Kernel, n: &Reg) -> (Reg, Reg, Label) {
        let wc = k.reg(Scalar::U64);
        k.emit(Ins::mul_lo(Ty::U64, &wc, &k.ctaid64, self.warps()));
        let w64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &w64, &k.warp));
        k.emit(Ins::add(Ty::S64, &wc, &wc, &w64));
        let cbase = k.reg(Scalar::U64);
        k.emit(Ins::mul_lo(Ty::U64, &cbase, &wc, 32 * FILTER_ROUNDS));
        let end = k.label();
        let past = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &past, &cbase, n));
        k.emit(Ins::bra_uni(&end).when(&past));
        (wc, cbase, end)
    }

    /// The rounds of a filter's chunk starting at `cbase`: in each, lane `l` evaluates
    /// element `cbase + 32 r + l` (if inside) and the predicate, the warp takes the ballot
    /// of the kept ones, and `body` gets (the element's leaves, kept, ballot). A failed
    /// check leaves the element not kept.
    #[allow(clippy::too_many_arguments)]
    fn chunk_rounds(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        pred: &Lambda,
        n: &Reg,
        cbase: &Reg,
        body: &mut ChunkBody<'_, 'f>,
    ) -> R<()> {
        let stop = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &stop, cbase, 32 * FILTER_ROUNDS));
        k.emit(Ins::min(Ty::U64, &stop, &stop, n));
        let idx = k.reg(Scalar::U64);
        let lane64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane64, &k.lane));
        k.emit(Ins::add(Ty::S64, &idx, cbase, &lane64));
        let (top, skip, done) = (k.label(), k.label(), k.label());
        k.place(&top);
        // The round's first index (the same in every lane) against the chunk's end.
        let rbase = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &rbase, &idx, &lane64));
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &out, &rbase, &stop));
        k.emit(Ins::bra_uni(&done).when(&out));
        let keep = self.pconst(k, false);
        let valid = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &valid, &idx, n));
        k.emit(Ins::bra(&skip).unless(&valid));
        let (x, kp) = self.elem_at(k, soac, Some(pred), n, &idx, &skip)?;
        if let Some(kp) = kp {
            k.emit(Ins::mov(Ty::Pred, &keep, &kp));
        }
        k.place(&skip);
        let ballot = k.reg(Scalar::U32);
        k.emit(Ins::vote_ballot(&ballot, &keep));
        body(self, k, &x, &keep, &ballot)?;
        k.emit(Ins::add(Ty::S64, &idx, &idx, 32));
        k.emit(Ins::bra_uni(&top));
        k.place(&done);
        Ok(())
    }

    pub(super) fn flag(k: &mut Kernel, keep: Option<&Reg>) -> Reg {
        let flag = k.reg(Scalar::U64);
        match keep {
            Some(p) => k.emit(Ins::selp(Ty::U64, &flag, 1, 0, p)),
            None => k.emit(Ins::mov(Ty::U64, &flag, 0)),
        }
        flag
    }
}
