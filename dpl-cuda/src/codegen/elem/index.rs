//! Indexing: elements of sequences in memory, rows of nested sequences (views, from
//! offsets or strided), elements of lazy sequences and of sequences an `if` chose.

use super::*;

impl<'f> Gen<'f> {
    /// The row `start..stop` of a nested sequence whose leaves are at `ptrs`.
    pub(super) fn row_view(
        &mut self,
        k: &mut Kernel,
        ptrs: &[Reg],
        elem: &Type,
        start: &Reg,
        stop: &Reg,
        step: Option<Reg>,
    ) -> R<KVal> {
        let Some(inner) = elem.elem() else {
            return unsupported("rows of a flat sequence (internal)");
        };
        let ls = leaves(inner)?;
        let len = k.reg(Scalar::Usize);
        k.emit(Ins::sub(Ty::S64, &len, stop, start));
        let rows = ptrs
            .iter()
            .zip(&ls)
            .map(|(p, &l)| Self::addr(k, p, start, l))
            .collect();
        Ok(KVal::Seq {
            ptrs: rows,
            len,
            elem: inner.clone(),
            offs: None,
            layout: None,
            step,
        })
    }

    /// For a strided matrix (the layout's flag set), replaces the bounds of row `i` (`start`,
    /// `stop`, element positions in the leaves) with `i * rs` and `i * rs + cols`.
    pub(in crate::codegen) fn strided_bounds(
        k: &mut Kernel,
        l: &RowLayout,
        i: &Reg,
        start: &Reg,
        stop: &Reg,
    ) {
        let (strided, _) = l.strided(k);
        let (rs, cols) = (l.load(k, 1), l.load(k, 3));
        let s = k.reg(Scalar::U64);
        k.emit(Ins::mul_lo(Ty::U64, &s, i, &rs));
        let e = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &e, &s, &cols));
        k.emit(Ins::selp(Ty::B64, start, &s, start, &strided));
        k.emit(Ins::selp(Ty::B64, stop, &e, stop, &strided));
    }

    /// The distance between consecutive elements of a row: `cs` for a strided matrix, 1
    /// for rows found from offsets (the host passes either in field 2).
    pub(super) fn row_step(k: &mut Kernel, l: &RowLayout) -> Reg {
        l.load(k, 2)
    }

    /// Element `i` (a `u64`, in range) of a sequence value.
    pub(in crate::codegen) fn index(
        &mut self,
        k: &mut Kernel,
        sv: &KVal,
        i: &Reg,
        ctx: &Ctx,
    ) -> R<KVal> {
        match sv {
            KVal::Seq {
                ptrs,
                elem,
                offs: None,
                step,
                ..
            } => {
                let ls = leaves(elem)?;
                let regs = match step {
                    Some(st) => {
                        let at = k.reg(Scalar::U64);
                        k.emit(Ins::mul_lo(Ty::U64, &at, i, st));
                        self.load_leaves(k, ptrs, &at, &ls)
                    }
                    None => self.load_leaves(k, ptrs, i, &ls),
                };
                unflatten(elem, &mut regs.into_iter())
            }
            KVal::Seq {
                ptrs,
                elem,
                offs: Some(o),
                layout,
                ..
            } => {
                // A row: a view into the leaves, from offs[i] to offs[i + 1] (or strided).
                let a = Self::addr(k, o, i, Scalar::U64);
                let start = k.reg(Scalar::U64);
                let stop = k.reg(Scalar::U64);
                match layout {
                    Some(l) => {
                        k.emit(Ins::mov(Ty::U64, &start, 0));
                        k.emit(Ins::mov(Ty::U64, &stop, 0));
                        let (_, off) = l.strided(k);
                        k.emit(Ins::ld(Space::Global, Ty::U64, &start, &a).when(&off));
                        k.emit(
                            Ins::ld(Space::Global, Ty::U64, &stop, Addr::from(&a).plus(8))
                                .when(&off),
                        );
                        Self::strided_bounds(k, l, i, &start, &stop);
                        let step = Self::row_step(k, l);
                        self.row_view(k, ptrs, elem, &start, &stop, Some(step))
                    }
                    None => {
                        k.emit(Ins::ld(Space::Global, Ty::U64, &start, &a));
                        k.emit(Ins::ld(
                            Space::Global,
                            Ty::U64,
                            &stop,
                            Addr::from(&a).plus(8),
                        ));
                        self.row_view(k, ptrs, elem, &start, &stop, None)
                    }
                }
            }
            KVal::Cur { idx, val, .. } if idx.name == i.name => Ok((**val).clone()),
            KVal::Cond(cs) => {
                let Some(Type::Seq(elem)) = type_at(self.ty(cs.then.result), &cs.path) else {
                    return unsupported("an `if` of sequences without a sequence type (internal)");
                };
                let out: Vec<Reg> = leaves(elem)?.iter().map(|&s| k.reg(s)).collect();
                self.branch_seq(k, cs, ctx, &mut |g, k, v| {
                    let e = g.index(k, &v, i, ctx)?.flatten()?;
                    for (d, s) in out.iter().zip(&e) {
                        Self::mov(k, d, s);
                    }
                    Ok(())
                })?;
                unflatten(elem, &mut out.into_iter())
            }
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => match &l.soac.kind {
                SoacKind::Map if self.streamed_source(&k.env, &l.soac).is_none() => {
                    self.elem(k, &l.soac.elem.clone(), i, ctx)
                }
                _ => {
                    // Stream up to position i and keep that element.
                    let ls = leaves(&l.elem_ty)?;
                    let out: Vec<Reg> = ls.iter().map(|&s| k.reg(s)).collect();
                    let saved = k.env.get(&l.var).cloned();
                    self.stream(k, l, Lanes::Thread(ctx), &mut |_, k, j, _, e| {
                        let e = e.flatten()?;
                        let hit = k.reg(Scalar::Bool);
                        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &hit, j, i));
                        for (d, s) in out.iter().zip(&e) {
                            Self::select(k, d, &hit, s, d);
                        }
                        Ok(())
                    })?;
                    if let Some(sv) = saved {
                        k.env.insert(l.var, sv);
                    }
                    unflatten(&l.elem_ty, &mut out.into_iter())
                }
            },
            _ => unsupported("indexing a non-sequence (internal)"),
        }
    }
}
