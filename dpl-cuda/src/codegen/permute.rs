//! `permute`: each target claims its slot (the largest `!i` wins), then each element
//! whose claim held is written; rows take a sizes pass and an offsets scan more.

use super::*;

impl<'f> Gen<'f> {
    /// `permute`: (1) each target index is checked and claims its slot (`owner`: the
    /// largest `!i` wins); (2) each element whose claim held is written at its target, and
    /// a lost claim is the duplicate error. Rows (elements that are sequences) take two
    /// more steps: pass (2) writes each row's length at its target, an exclusive scan of
    /// those gives the result's offsets, and (3) each row is written at the offset of its
    /// target.
    pub(super) fn permute(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("permute without a sequence type");
        };
        let row = match elem_ty {
            Type::Seq(row) => Some(&**row),
            _ => None,
        };
        let ls = leaves(row.unwrap_or(elem_ty))?;
        let at = Self::at(s, soac);
        let n_count = Count::Var(var(soac.len));
        let owner = self.alloc_leaves(&[Scalar::U64], &n_count, steps)[0];
        // The elements, or the rows' lengths: not zeroed, each target is claimed once, so
        // every one is written (else a check fails and the result is never read).
        let outs = match row {
            None => self.alloc_written(&ls, &n_count, steps),
            Some(_) => self.alloc_written(&[Scalar::U64], &n_count, steps),
        };
        let per_block = u64::from(self.bsize());
        for pass in 0..2 {
            let mut k = self.new_kernel(match (pass, row) {
                (0, _) => "permute_owners",
                (_, None) => "permute",
                (_, Some(_)) => "permute_row_sizes",
            });
            k.env = self.bind_captures(&mut k, &[&soac.elem])?;
            let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
            let own = Self::temp_ptrs(&mut k, &[owner])[0].clone();
            let ptrs = if pass == 1 {
                Self::temp_ptrs(&mut k, &outs)
            } else {
                Vec::new()
            };
            let el = Self::elem_loop(&mut k, &n, None);
            let i = el.i.clone();
            let ctx = el.ctx();
            let e = self.elem(&mut k, &soac.elem, &i, &ctx)?;
            let (idx, signed, value) = self.target(&mut k, e)?;
            let key = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &key, &n, &i));
            let ctx2 = Ctx {
                key,
                fail: Some(el.cont.clone()),
            };
            let bad = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ge, Ty::U64, &bad, &idx, &n));
            let ni = k.reg(Scalar::U64);
            k.emit(Ins::not(Ty::B64, &ni, &i));
            let oa = Self::addr(&mut k, &own, &idx, Scalar::U64);
            if pass == 0 {
                let kind = SiteKind::IndexOutOfRange;
                self.check(&mut k, &ctx2, &bad, kind, at, signed, Some([&idx, &n]));
                k.emit(Ins::red(Space::Global, AtomOp::Max, Ty::U64, &oa, &ni));
            } else {
                k.emit(Ins::bra(&el.cont).when(&bad));
                let o = k.reg(Scalar::U64);
                k.emit(Ins::ld(Space::Global, Ty::U64, &o, &oa));
                let dup = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Ne, Ty::U64, &dup, &o, &ni));
                self.check(
                    &mut k,
                    &ctx2,
                    &dup,
                    SiteKind::Duplicate,
                    at,
                    false,
                    Some([&idx, &n]),
                );
                let vals = match row {
                    None => value.flatten()?,
                    Some(_) => vec![self.seq_len(&mut k, &value, &ctx)?],
                };
                for (r, p) in vals.iter().zip(&ptrs) {
                    self.store(&mut k, p, &idx, r);
                }
            }
            Self::elem_loop_end(&mut k, &el);
            self.launch_stride(k, &n_count, per_block, steps);
        }
        steps.push(Step::CheckErrors);
        let Some(row) = row else {
            steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
            return Ok(());
        };

        // Rows: every target is valid and claimed once (the errors were checked).
        let (offs, total) = self.offsets(outs[0], &n_count, steps)?;
        let values = self.alloc_written(&ls, &Count::Temp(total), steps);
        let mut k = self.new_kernel("permute_row_fill");
        k.env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let op = Self::temp_ptrs(&mut k, &[offs])[0].clone();
        let ptrs = Self::temp_ptrs(&mut k, &values);
        let el = Self::elem_loop(&mut k, &n, None);
        let i = el.i.clone();
        let ctx = el.ctx();
        let e = self.elem(&mut k, &soac.elem, &i, &ctx)?;
        let (idx, _, value) = self.target(&mut k, e)?;
        let a = Self::addr(&mut k, &op, &idx, Scalar::U64);
        let base = k.reg(Scalar::U64);
        k.emit(Ins::ld(Space::Global, Ty::U64, &base, &a));
        let lanes = Lanes::Thread(&ctx);
        self.write_seq(&mut k, &value, &ptrs, &base, lanes, None)?;
        Self::elem_loop_end(&mut k, &el);
        self.launch_stride(k, &n_count, per_block, steps);
        steps.push(Step::CheckErrors);
        steps.push(Step::BindSeq {
            var: var(s.var),
            elem: Type::seq(row.clone()),
            bufs: values.into_iter().map(Buf::Temp).collect(),
            len: n_count,
            offs: Some(Buf::Temp(offs)),
        });
        Ok(())
    }
}
