//! Writing a sequence value out: a row of a ragged result (by a thread or a group), a
//! per-element `scatter`/`permute`, a per-thread temporary ([`Gen::materialize`]).

use super::*;

impl<'f> Gen<'f> {
    /// Writes the elements of a sequence value at `base`, `base + 1`, ... of `ptrs`, by
    /// `lanes`: one thread in order, or a group in chunks of its width (thread `t` takes
    /// positions `t, t + width, ...`, [`Gen::stream`], so the stores of a chunk are
    /// consecutive; positions past `size`, the row's length from the sizes pass, are not
    /// written). Fails, by a group, for rows a group does not produce: then the map runs a
    /// thread per row.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn write_seq(
        &mut self,
        k: &mut Kernel,
        v: &KVal,
        ptrs: &[Reg],
        base: &Reg,
        lanes: Lanes<'_>,
        size: Option<&Reg>,
    ) -> R<()> {
        let put = |g: &mut Self, k: &mut Kernel, j: &Reg, ok: Option<&Reg>, e: KVal| -> R<()> {
            let skip = match (ok, size) {
                (Some(ok), Some(size)) => {
                    let w = k.reg(Scalar::Bool);
                    k.emit(Ins::setp_and(Cmp::Lt, Ty::U64, &w, j, size, ok));
                    let skip = k.label();
                    k.emit(Ins::bra(&skip).unless(&w));
                    Some(skip)
                }
                _ => None,
            };
            let at = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &at, base, j));
            for (r, p) in e.flatten()?.iter().zip(ptrs) {
                g.store(k, p, &at, r);
            }
            if let Some(skip) = skip {
                k.place(&skip);
            }
            Ok(())
        };
        let thread = match lanes {
            Lanes::Thread(ctx) => Some(ctx),
            Lanes::Group(_) => None,
        };
        match (v, thread) {
            (KVal::Cond(cs), Some(ctx)) => self.branch_seq(k, cs, ctx, &mut |g, k, v| {
                g.write_seq(k, &v, ptrs, base, lanes, size)
            }),
            (KVal::Seq { offs: Some(_), .. }, Some(_)) => unsupported("three levels of nesting"),
            (
                KVal::Seq {
                    offs: None,
                    len,
                    elem,
                    ..
                },
                _,
            ) => self.positions(k, lanes, len, &mut |g, k, j, ok| {
                let e =
                    g.at_position(k, lanes, ok, elem, &mut |g, k, ctx| g.index(k, v, j, ctx))?;
                put(g, k, j, ok, e)
            }),
            (KVal::Lazy(l) | KVal::Cur { of: l, .. }, _) => {
                let l = l.clone();
                if let Some(ctx) = thread
                    && matches!(
                        l.soac.kind,
                        SoacKind::Scatter { .. }
                            | SoacKind::ScatterReduce { .. }
                            | SoacKind::Permute
                    )
                {
                    return self.write_scattered(k, &l, ptrs, base, ctx);
                }
                self.stream(k, &l, lanes, &mut |g, k, j, ok, e| put(g, k, j, ok, e))
            }
            (_, Some(_)) => unsupported("a sequence was expected (internal)"),
            (_, None) => unsupported("this row by a group of threads"),
        }
    }

    /// Stores a per-element `scatter`/`scatter_reduce`/`permute` that is read again (not
    /// only the element's result), or a `map` that `share` says to store, in a per-thread
    /// temporary ([`KArg::Scratch`]: the
    /// executor allocates `per` elements per leaf for every thread of the launch), and
    /// returns it as a sequence in memory. Thread `t` (of the whole grid) uses elements
    /// `t * per ..` of it, written as [`Gen::write_scattered`] writes a ragged result's
    /// row (a `permute` gets per-thread duplicate flags the same way). `per`, a bound on
    /// its length, is known before the launch ([`Gen::host_soac_len`]); when none is, the
    /// sequence stays lazy, which suffices where it is only written out as the element's
    /// result.
    pub(in crate::codegen) fn materialize(
        &mut self,
        k: &mut Kernel,
        l: &Rc<LazySeq>,
        per: Count,
        ctx: &Ctx,
    ) -> R<KVal> {
        let ls = leaves(&l.elem_ty)?;
        let scratch = |k: &mut Kernel, elem: Scalar| {
            k.pointer(KArg::Scratch {
                elem,
                per_thread: per.clone(),
            })
        };
        let ptrs: Vec<Reg> = ls.iter().map(|&e| scratch(k, e)).collect();
        let owner = matches!(l.soac.kind, SoacKind::Permute).then(|| scratch(k, Scalar::Bool));
        let base = Self::scratch_base(k, &per, &k.tid64.clone());
        if matches!(l.soac.kind, SoacKind::Map) {
            let lv = KVal::Lazy(l.clone());
            self.write_seq(k, &lv, &ptrs, &base, Lanes::Thread(ctx), None)?;
        } else {
            let saved = std::mem::replace(&mut self.owner, owner);
            let written = self.write_scattered(k, l, &ptrs, &base, ctx);
            self.owner = saved;
            written?;
        }
        let len = self.seq_len(k, &KVal::Lazy(l.clone()), ctx)?;
        let stop = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &stop, &base, &len));
        self.row_view(
            k,
            &ptrs,
            &Type::Seq(Box::new(l.elem_ty.clone())),
            &base,
            &stop,
            None,
        )
    }

    /// Where the part of thread `tid` of the block (a `u64`) of a per-thread temporary
    /// ([`KArg::Scratch`]) of `per` elements per thread starts: the thread's index in the
    /// launch times `per`.
    pub(in crate::codegen) fn scratch_base(k: &mut Kernel, per: &Count, tid: &Reg) -> Reg {
        let per_reg = k.param(Scalar::U64, KArg::Count(per.clone()));
        let (thread, base) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::mad_lo(Ty::U64, &thread, &k.ctaid64, k.ptx.block, tid));
        k.emit(Ins::mul_lo(Ty::U64, &base, &thread, &per_reg));
        base
    }

    /// Writes a per-element `scatter` / `scatter_reduce` (a copy of `dst`, then each
    /// `(index, value)` written or combined in order) or `permute` (each value at its
    /// index; a second write to a position is the "appears twice" error, found with the
    /// owner flags [`Gen::owner`] of the output) at `base` of `ptrs`, sequentially.
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn write_scattered(
        &mut self,
        k: &mut Kernel,
        l: &Rc<LazySeq>,
        ptrs: &[Reg],
        base: &Reg,
        ctx: &Ctx,
    ) -> R<()> {
        let at = At {
            origin: origin_of(&l.soac.kind),
            span: l.span,
        };
        let (bound, op) = match &l.soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                let dv = Self::get(&k.env, *dst)?;
                let n = self.seq_len(k, &dv, ctx)?;
                self.write_seq(k, &dv, ptrs, base, Lanes::Thread(ctx), None)?;
                let op = match &l.soac.kind {
                    SoacKind::ScatterReduce { op, .. } => Some(op),
                    _ => None,
                };
                (n, op)
            }
            _ => {
                let lv = KVal::Lazy(l.clone());
                (self.seq_len(k, &lv, ctx)?, None)
            }
        };
        let permute = matches!(l.soac.kind, SoacKind::Permute);
        let owner = match self.owner.clone() {
            None if permute => {
                return unsupported("a nested `permute` outside a nested map (internal)");
            }
            owner => owner.filter(|_| permute),
        };
        if let Some(o) = &owner {
            // Clear this element's flags first, so a re-run (report mode) sees the same.
            let j = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &j, 0));
            let (top, end) = (k.label(), k.label());
            k.place(&top);
            let p = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &j, &bound));
            k.emit(Ins::bra(&end).when(&p));
            let pos = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &pos, base, &j));
            let a = Self::addr(k, o, &pos, Scalar::Bool);
            k.emit(Ins::st(Space::Global, Ty::U8, &a, 0));
            k.emit(Ins::add(Ty::S64, &j, &j, 1));
            k.emit(Ins::bra(&top));
            k.place(&end);
        }
        let ety = l.elem_ty.clone();
        let ls = leaves(&ety)?;
        let lanes = Lanes::Thread(ctx);
        self.for_each(k, &l.soac, lanes, &mut |g, k, _, _, e| {
            let (idx, signed, vals) = g.pair(k, e)?;
            g.check_index(k, ctx, &idx, &bound, signed, at);
            let pos = k.reg(Scalar::U64);
            k.emit(Ins::add(Ty::S64, &pos, base, &idx));
            if let Some(o) = &owner {
                let a = Self::addr(k, o, &pos, Scalar::Bool);
                let seen = Self::ld(k, Space::Global, &a, Scalar::Bool);
                g.check(
                    k,
                    ctx,
                    &seen,
                    SiteKind::Duplicate,
                    at,
                    false,
                    Some([&idx, &bound]),
                );
                let t = g.pconst(k, true);
                Self::st(k, Space::Global, &a, &t);
            }
            let vals = match op {
                None => vals,
                Some(op) => {
                    let old = g.load_leaves(k, ptrs, &pos, &ls);
                    k.env
                        .insert(op.params[0], unflatten(&ety, &mut old.into_iter())?);
                    k.env
                        .insert(op.params[1], unflatten(&ety, &mut vals.into_iter())?);
                    g.block(k, &op.body, ctx)?.flatten()?
                }
            };
            for (r, p) in vals.iter().zip(ptrs) {
                g.store(k, p, &pos, r);
            }
            Ok(())
        })
    }
}
