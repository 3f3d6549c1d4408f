//! The element compiler: the statements of element functions and operator lambdas
//! compiled inline (scalars in registers, tuples flattened, captured sequences as kernel
//! parameters), inner combinators (sequential loops, split reductions, lazy sequences).

use super::*;

mod index;
pub(super) mod math;
mod ordered;
mod scalar;
mod scan_order;
pub(super) mod stream;
mod write;

impl<'f> Gen<'f> {
    pub(in crate::codegen) fn block(&mut self, k: &mut Kernel, b: &Block, ctx: &Ctx) -> R<KVal> {
        self.check_size(Some(k))?;
        for s in &b.stmts {
            let v = self.stmt(k, s, ctx)?;
            k.env.insert(s.var, v);
        }
        match k.env.get(&b.result) {
            Some(v) => Ok(v.clone()),
            None => unsupported(format!(
                "variable %{} is not available in the kernel",
                b.result.index()
            )),
        }
    }

    /// A loop in one thread: the params live in registers set from the inits; the
    /// condition is evaluated at the top, the body's next values go through temporaries
    /// (a body may swap params) back into the params' registers.
    fn loop_(&mut self, k: &mut Kernel, l: &Loop, ctx: &Ctx) -> R<KVal> {
        // Its trip count may come from the data (see `Kernel::any_data`).
        k.any_data = false;
        let mut params = Vec::with_capacity(l.params.len());
        let mut regs = Vec::new();
        for (&p, &init) in l.params.iter().zip(&l.inits) {
            let ty = self.ty(p).clone();
            if ty.holds_seq() {
                return unsupported("a loop carrying a sequence");
            }
            let start = Self::get(&k.env, init)?.scalars(false)?;
            let own: Vec<Reg> = scalar_leaves(&ty, false)?
                .into_iter()
                .map(|leaf| k.reg(leaf))
                .collect();
            for (d, s) in own.iter().zip(&start) {
                Self::mov(k, d, s);
            }
            let v = unflatten(&ty, &mut own.clone().into_iter())?;
            k.env.insert(p, v.clone());
            params.push(v);
            regs.extend(own);
        }
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let go = self.block(k, &l.cond, ctx)?.reg()?.clone();
        k.emit(Ins::bra(&end).unless(&go));
        let next = self.block(k, &l.body, ctx)?.scalars(false)?;
        let temps: Vec<Reg> = next.iter().map(|r| k.reg(r.ty)).collect();
        for (t, s) in temps.iter().zip(&next) {
            Self::mov(k, t, s);
        }
        for (d, t) in regs.iter().zip(&temps) {
            Self::mov(k, d, t);
        }
        k.emit(Ins::bra(&top));
        k.place(&end);
        Ok(KVal::Tup(params))
    }

    pub(in crate::codegen) fn get(env: &Env, v: VarId) -> R<KVal> {
        match env.get(&v) {
            Some(x) => Ok(x.clone()),
            None => unsupported(format!(
                "variable %{} is not available in the kernel",
                v.index()
            )),
        }
    }

    fn stmt(&mut self, k: &mut Kernel, s: &Stmt, ctx: &Ctx) -> R<KVal> {
        let ty = self.ty(s.var);
        let span = s.span.0;
        Ok(match &s.expr {
            Expr::Const(cst) => {
                let Some(sc) = ty.scalar() else {
                    return unsupported("a non-scalar constant");
                };
                KVal::S(Self::constant(k, sc, *cst)?)
            }
            Expr::Var(v) => Self::get(&k.env, *v)?,
            Expr::Unary(op, v) => {
                let x = Self::get(&k.env, *v)?.reg()?.clone();
                KVal::S(Self::unary(k, *op, &x))
            }
            Expr::Binary(op, a, b) => {
                let x = Self::get(&k.env, *a)?.reg()?.clone();
                let y = Self::get(&k.env, *b)?.reg()?.clone();
                KVal::S(self.binary(k, ctx, *op, &x, &y, span)?)
            }
            Expr::Cast(v, to) => {
                let x = Self::get(&k.env, *v)?.reg()?.clone();
                KVal::S(Self::cast(k, &x, *to))
            }
            Expr::Tuple(vs) => {
                KVal::Tup(vs.iter().map(|v| Self::get(&k.env, *v)).collect::<R<_>>()?)
            }
            Expr::Field(v, n) => match Self::get(&k.env, *v)? {
                KVal::Tup(vs) if (*n as usize) < vs.len() => vs[*n as usize].clone(),
                _ => return unsupported("a field of a non-tuple (internal)"),
            },
            Expr::If(cv, t, e) if matches!(ty, Type::Seq(_)) => KVal::Cond(Rc::new(CondSeq {
                cond: Self::get(&k.env, *cv)?.reg()?.clone(),
                then: t.clone(),
                els: e.clone(),
                path: Vec::new(),
            })),
            Expr::If(cv, t, e) => {
                // A tuple holding sequences: its scalars are chosen here, each sequence
                // where it is consumed (a `KVal::Cond` selecting it in the branches).
                let cond = Self::get(&k.env, *cv)?.reg()?.clone();
                let seqs = ty.holds_seq();
                let ls = scalar_leaves(ty, seqs)?;
                let res: Vec<Reg> = ls.iter().map(|&l| k.reg(l)).collect();
                let (els, end) = (k.label(), k.label());
                k.emit(Ins::bra(&els).unless(&cond));
                let tv = self.block(k, t, ctx)?.scalars(seqs)?;
                for (d, s) in res.iter().zip(&tv) {
                    Self::mov(k, d, s);
                }
                k.emit(Ins::bra(&end));
                k.place(&els);
                let ev = self.block(k, e, ctx)?.scalars(seqs)?;
                for (d, s) in res.iter().zip(&ev) {
                    Self::mov(k, d, s);
                }
                k.place(&end);
                unflatten_with(ty, &mut res.into_iter(), &mut Vec::new(), &mut |p| {
                    Ok(KVal::Cond(Rc::new(CondSeq {
                        cond: cond.clone(),
                        then: t.clone(),
                        els: e.clone(),
                        path: p.to_vec(),
                    })))
                })?
            }
            Expr::Loop(l) => self.loop_(k, l, ctx)?,
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                let i = Self::get(&k.env, *index)?.reg()?.clone();
                if !i.ty.is_int() {
                    return unsupported("a non-integer index");
                }
                let i64r = self.widen_index(k, &i);
                let sv = Self::get(&k.env, *seq)?;
                if let Some(origin) = checked {
                    let len = self.seq_len(k, &sv, ctx)?;
                    let at = At {
                        origin: *origin,
                        span,
                    };
                    self.check_index(k, ctx, &i64r, &len, i.ty.is_signed_int(), at);
                }
                let pre = self
                    .prefetched
                    .as_ref()
                    .and_then(|(at, rows)| (at.name == i64r.name).then(|| rows.get(seq)).flatten());
                match (pre, &sv) {
                    (
                        Some((start, stop)),
                        KVal::Seq {
                            ptrs,
                            elem,
                            offs: Some(_),
                            layout,
                            ..
                        },
                    ) => {
                        let (start, stop) = (start.clone(), stop.clone());
                        let step = layout.as_ref().map(|l| Self::row_step(k, l));
                        self.row_view(k, ptrs, elem, &start, &stop, step)?
                    }
                    _ => self.index(k, &sv, &i64r, ctx)?,
                }
            }
            Expr::Len(v) => {
                let sv = Self::get(&k.env, *v)?;
                let only_lengths = !self.other_use.contains(&s.var);
                match &sv {
                    KVal::Lazy(l) | KVal::Cur { of: l, .. }
                        if only_lengths && matches!(l.soac.kind, SoacKind::Filter { .. }) =>
                    {
                        // Only used as the length of combinators, which stream the filter
                        // instead of counting it first.
                        KVal::unit()
                    }
                    _ => KVal::S(self.seq_len(k, &sv, ctx)?),
                }
            }
            Expr::Math(m, vs) => {
                let xs = vs
                    .iter()
                    .map(|v| Self::get(&k.env, *v)?.reg().cloned())
                    .collect::<R<Vec<_>>>()?;
                KVal::S(self.math(k, *m, &xs)?)
            }
            Expr::Assert(a) => {
                match a {
                    Assertion::InBounds { origin, index, len } => {
                        let i = Self::get(&k.env, *index)?.reg()?.clone();
                        let l = Self::get(&k.env, *len)?.reg()?.clone();
                        let i64r = self.widen_index(k, &i);
                        let at = At {
                            origin: *origin,
                            span,
                        };
                        self.check_index(k, ctx, &i64r, &l, i.ty.is_signed_int(), at);
                    }
                    Assertion::EqLen { origin, a, b } => {
                        let x = Self::get(&k.env, *a)?.reg()?.clone();
                        let y = Self::get(&k.env, *b)?.reg()?.clone();
                        let bad = k.reg(Scalar::Bool);
                        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &bad, &x, &y));
                        let at = At {
                            origin: *origin,
                            span,
                        };
                        self.check(
                            k,
                            ctx,
                            &bad,
                            SiteKind::LengthMismatch,
                            at,
                            false,
                            Some([&x, &y]),
                        );
                    }
                    Assertion::NonEmpty { origin, len } => {
                        let l = Self::get(&k.env, *len)?.reg()?.clone();
                        let bad = k.reg(Scalar::Bool);
                        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &bad, &l, 0));
                        let at = At {
                            origin: *origin,
                            span,
                        };
                        self.check(k, ctx, &bad, SiteKind::Empty, at, false, Some([&l, &l]));
                    }
                    Assertion::IndicesInRange { .. } => {
                        return unsupported("the indices_in_range assertion inside a kernel");
                    }
                }
                KVal::unit()
            }
            Expr::Soac(inner) => self.inner_soac(k, s, inner, ctx)?,
            Expr::Prim { prim, .. } => {
                return unsupported(format!("primitive `{}` at the Prim level", prim.name()));
            }
        })
    }

    /// A combinator inside an element function: a reduction runs as a sequential loop in
    /// the thread; a sequence is not built, it stays [`KVal::Lazy`] and is streamed by
    /// its consumers.
    fn inner_soac(&mut self, k: &mut Kernel, s: &Stmt, soac: &Soac, ctx: &Ctx) -> R<KVal> {
        if soac.elem.params.len() != 1 {
            return unsupported("an element function without exactly one index parameter");
        }
        if matches!(soac.kind, SoacKind::Sort | SoacKind::SortByKey) {
            return self.sort_in_row(k, s, soac, ctx);
        }
        let (op, init) = match &soac.kind {
            SoacKind::Reduce { op, init } => (op, init),
            _ => {
                let Some(elem_ty) = self.ty(s.var).elem() else {
                    return unsupported("a sequence combinator without a sequence type");
                };
                let lazy = Rc::new(LazySeq {
                    var: s.var,
                    soac: soac.clone(),
                    elem_ty: elem_ty.clone(),
                    span: s.span.0,
                });
                let scattered = matches!(
                    soac.kind,
                    SoacKind::Scatter { .. } | SoacKind::ScatterReduce { .. } | SoacKind::Permute
                );
                // A scattered sequence read again, or one too large to compile again at
                // each of its reads (`share`), is stored.
                let stored = (scattered && self.operand_use.contains(&s.var))
                    || self.stored.contains(&s.var);
                if stored && let Some(per) = self.host_soac_len(&lazy.soac) {
                    return self.materialize(k, &lazy, per, ctx);
                }
                return Ok(KVal::Lazy(lazy));
            }
        };
        // dpl's order: split across the group when the elements can be read at any index,
        // else by this thread (also every thread of a group, for a streamed sequence).
        let chosen = matches!(
            self.len_of.get(&soac.len).and_then(|v| k.env.get(v)),
            Some(KVal::Cond(_))
        );
        let split = self.split.take();
        let group = split
            .clone()
            .filter(|_| !chosen && self.streamed_source(&k.env, soac).is_none());
        let r = self.ordered_reduce(k, s, soac, op, *init, ctx, group);
        self.split = split;
        r
    }

    /// Emits `if cond { f(then's sequence) } else { f(else's sequence) }` for a sequence an
    /// `if` chose: each branch's block is evaluated in its branch, then consumed by `f`.
    pub(in crate::codegen) fn branch_seq(
        &mut self,
        k: &mut Kernel,
        cs: &CondSeq,
        ctx: &Ctx,
        f: &mut dyn FnMut(&mut Self, &mut Kernel, KVal) -> R<()>,
    ) -> R<()> {
        let (els, end) = (k.label(), k.label());
        k.emit(Ins::bra(&els).unless(&cs.cond));
        let v = self.block(k, &cs.then, ctx)?.at(&cs.path)?;
        f(self, k, v)?;
        k.emit(Ins::bra(&end));
        k.place(&els);
        let v = self.block(k, &cs.els, ctx)?.at(&cs.path)?;
        f(self, k, v)?;
        k.place(&end);
        Ok(())
    }
}
