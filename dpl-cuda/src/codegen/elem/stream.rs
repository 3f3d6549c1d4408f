//! Lazy sequences: a combinator inside an element function is not built; its consumers
//! stream it ([`Gen::stream`], [`Gen::for_each`]), by one thread or by a group of threads
//! in chunks of the group's width ([`Gen::stream_grouped`]).

use super::*;

/// The per-element callback of [`Gen::for_each`] and [`Gen::stream`]: `(position, element)`.
type Body<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, KVal) -> R<()> + 'b;

/// The per-chunk callback of a group's streaming ([`Gen::stream_grouped`]):
/// `(position, valid, element)`.
type GroupBody<'b, 'f> =
    dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, &Reg, KVal) -> R<()> + 'b;

/// An element of a group's chunk loop at a position ([`Gen::chunks`]), with the context
/// its checks use.
type GroupElem<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Reg, &Ctx) -> R<KVal> + 'b;

/// A value evaluated where a thread has an element ([`Gen::guarded`]), with the context
/// its checks use.
type Guarded<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &mut Env, &Ctx) -> R<KVal> + 'b;

impl<'f> Gen<'f> {
    /// The length of a row (an element function's result) measured by a group: a
    /// `filter` in it is counted in chunks of the group's width ([`Gen::group_count`]).
    /// In report mode every thread counts alone, in order ([`Gen::seq_len`]), so the
    /// failure recorded first is the first in sequential order.
    pub(in crate::codegen) fn group_len(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        grp: &Group,
    ) -> R<Reg> {
        let n = k.reg(Scalar::Usize);
        let rep = Self::report_mode(k, c);
        let (alone, done) = (k.label(), k.label());
        k.emit(Ins::bra(&alone).when(&rep));
        let m = self.len_grouped(k, c, env, v, grp)?;
        Self::mov(k, &n, &m);
        k.emit(Ins::bra(&done));
        k.place(&alone);
        let ctx = Ctx {
            key: grp.key.clone(),
            fail: Some(grp.fail.clone()),
        };
        let m = self.seq_len(k, c, env, v, &ctx)?;
        Self::mov(k, &n, &m);
        k.place(&done);
        Ok(n)
    }

    /// [`Gen::seq_len`] by a group (see [`Gen::group_len`]); fails for sequences a group
    /// does not produce ([`Gen::stream_grouped`]).
    fn len_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        grp: &Group,
    ) -> R<Reg> {
        let l = match v {
            KVal::Seq { offs: None, .. } => return self.seq_len(k, c, env, v, &Self::no_fail(grp)),
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
            _ => return unsupported("this row by a group of threads"),
        };
        match &l.soac.kind {
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &cnt, 0));
                let saved = env.get(&l.var).cloned();
                self.for_each_grouped(k, c, env, &l.soac, grp, &mut |g, k, env, _j, ok, e| {
                    let keep = g.group_keep(k, c, env, grp, pred, ok, e)?;
                    let (_, total) = g.group_count(k, c, env, grp, &keep, false)?;
                    k.emit(Ins::add(Ty::S64, &cnt, &cnt, &total));
                    Ok(())
                })?;
                if let Some(sv) = saved {
                    env.insert(l.var, sv);
                }
                Ok(cnt)
            }
            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. } => {
                match self.streamed_source(env, &l.soac) {
                    Some((_, src)) => self.len_grouped(k, c, env, &src, grp),
                    None => Ok(Self::get(env, l.soac.len)?.reg()?.clone()),
                }
            }
            _ => unsupported("this row by a group of threads"),
        }
    }

    /// [`Gen::stream`] by a group: produces the elements of a lazy sequence in chunks of
    /// the group's width, `body(position, produced, element)` in every thread of the
    /// group at each chunk (`produced` false where the thread has no element). A `map`
    /// evaluates its element function at the thread's position; a `scan` combines a
    /// group scan of the chunk ([`Gen::group_scan`]) with the carry of the chunks before;
    /// a `filter` places its survivors after those of the chunks before by a group count
    /// of its flags ([`Gen::group_count`]), keeping their order. Fails for the other
    /// combinators.
    pub(in crate::codegen) fn stream_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        grp: &Group,
        body: &mut GroupBody<'_, 'f>,
    ) -> R<()> {
        let ety = &l.elem_ty;
        match &l.soac.kind {
            SoacKind::Map => self.for_each_grouped(k, c, env, &l.soac, grp, body),
            SoacKind::Scan { op } | SoacKind::ExclusiveScan { op, .. } => {
                let ls = leaves(ety)?;
                let comb = Comb::Op(op, ety);
                let carry = self.none(k, &ls);
                let exclusive = match &l.soac.kind {
                    SoacKind::ExclusiveScan { init, .. } => {
                        let v = Self::get(env, *init)?.flatten()?;
                        for (d, s) in carry.v.iter().zip(&v) {
                            Self::mov(k, d, s);
                        }
                        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &carry.has, 0, 0));
                        true
                    }
                    _ => false,
                };
                let op_ctx = Self::no_fail(grp);
                self.for_each_grouped(k, c, env, &l.soac, grp, &mut |g, k, env, j, ok, e| {
                    let x = Opt {
                        has: ok.clone(),
                        v: e.flatten()?,
                    };
                    let (incl, excl, total) = g.group_scan(k, c, env, grp, comb, &x, &op_ctx)?;
                    let mine = if exclusive { &excl } else { &incl };
                    let out = g.opt_combine(k, c, env, comb, &carry, mine, &op_ctx)?;
                    let next = g.opt_combine(k, c, env, comb, &carry, &total, &op_ctx)?;
                    Self::mov_opt(k, &carry, &next);
                    body(g, k, env, j, ok, unflatten(ety, &mut out.v.into_iter())?)
                })
            }
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &cnt, 0));
                self.for_each_grouped(k, c, env, &l.soac, grp, &mut |g, k, env, _j, ok, e| {
                    let keep = g.group_keep(k, c, env, grp, pred, ok, e.clone())?;
                    let (before, total) = g.group_count(k, c, env, grp, &keep, true)?;
                    let pos = k.reg(Scalar::Usize);
                    k.emit(Ins::add(Ty::S64, &pos, &cnt, &before));
                    k.emit(Ins::add(Ty::S64, &cnt, &cnt, &total));
                    body(g, k, env, &pos, &keep, e)
                })
            }
            _ => unsupported("this row by a group of threads"),
        }
    }

    /// [`Gen::for_each`] by a group: `body(position, valid, element)` over a combinator's
    /// index space in chunks of the group's width, or inside [`Gen::stream_grouped`] of
    /// the lazy sequence whose length it is.
    fn for_each_grouped(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        soac: &Soac,
        grp: &Group,
        body: &mut GroupBody<'_, 'f>,
    ) -> R<()> {
        let ety = self.ty(soac.elem.body.result).clone();
        if let Some(&src) = self.len_of.get(&soac.len)
            && matches!(env.get(&src), Some(KVal::Cond(_)))
        {
            return unsupported("a sequence an `if` chooses, by a group of threads");
        }
        if let Some((src, saved)) = self.streamed_source(env, soac) {
            let of = match &saved {
                KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
                _ => return unsupported("a lazy sequence was expected (internal)"),
            };
            let r = self.stream_grouped(k, c, env, &of, grp, &mut |g, k, env, j, ok, e| {
                env.insert(
                    src,
                    KVal::Cur {
                        idx: j.clone(),
                        val: Box::new(e),
                        of: of.clone(),
                    },
                );
                let x = g.guarded(k, env, grp, ok, &ety, &mut |g, k, env, ctx| {
                    g.elem(k, c, env, &soac.elem, j, ctx)
                })?;
                body(g, k, env, j, ok, x)
            });
            env.insert(src, saved);
            return r;
        }
        let len = Self::get(env, soac.len)?.reg()?.clone();
        self.chunks(
            k,
            env,
            grp,
            &len,
            &ety,
            &mut |g, k, env, j, ctx| g.elem(k, c, env, &soac.elem, j, ctx),
            body,
        )
    }

    /// The chunk loop of a group over positions `0..len` (the same in every thread):
    /// thread `lane` takes position `start + lane` of each chunk; `elem(position)` is
    /// evaluated where the position is below `len` ([`Gen::guarded`]), then
    /// `body(position, valid, element)` runs in every thread.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn chunks(
        &mut self,
        k: &mut Kernel,
        env: &mut Env,
        grp: &Group,
        len: &Reg,
        ety: &Type,
        elem: &mut GroupElem<'_, 'f>,
        body: &mut GroupBody<'_, 'f>,
    ) -> R<()> {
        let start = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &start, 0));
        let lane64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane64, &grp.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &start, len));
        k.emit(Ins::bra_uni(&end).when(&p));
        let j = k.reg(Scalar::Usize);
        k.emit(Ins::add(Ty::S64, &j, &start, &lane64));
        let valid = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &valid, &j, len));
        let e = self.guarded(k, env, grp, &valid, ety, &mut |g, k, env, ctx| {
            elem(g, k, env, &j, ctx)
        })?;
        body(self, k, env, &j, &valid, e)?;
        k.emit(Ins::add(Ty::S64, &start, &start, &grp.width));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        Ok(())
    }

    /// Evaluates `f` (an element, a predicate: a value of type `ty` holding scalars) in
    /// the threads where `valid` holds, sequentially in each (no split reduction); the
    /// others get zeros. A failed check marks the thread; when `f` has checks, the group
    /// then agrees (`vote.sync.any` / `bar.red.or`) and leaves the row together, to
    /// [`Group::fail`], so its collective steps stay uniform.
    #[allow(clippy::too_many_arguments)]
    fn guarded(
        &mut self,
        k: &mut Kernel,
        env: &mut Env,
        grp: &Group,
        valid: &Reg,
        ty: &Type,
        f: &mut Guarded<'_, 'f>,
    ) -> R<KVal> {
        let ls = leaves(ty)?;
        let out: Vec<Reg> = ls.iter().map(|&s| self.zero(k, s)).collect();
        let failed = self.pconst(k, false);
        let (flag, join) = (k.label(), k.label());
        let sites = self.sites.len();
        k.emit(Ins::bra(&join).unless(valid));
        let ctx = Ctx {
            key: grp.key.clone(),
            fail: Some(flag.clone()),
        };
        let split = self.split.take();
        let v = f(self, k, env, &ctx);
        self.split = split;
        for (d, s) in out.iter().zip(&v?.flatten()?) {
            Self::mov(k, d, s);
        }
        k.emit(Ins::bra(&join));
        k.place(&flag);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &failed, 0, 0));
        k.place(&join);
        if self.sites.len() > sites {
            let any = k.reg(Scalar::Bool);
            if grp.block {
                k.emit(Ins::bar_red_or(&any, &failed));
            } else {
                k.emit(Ins::vote_any(&any, &failed));
            }
            k.emit(Ins::bra_uni(&grp.fail).when(&any));
        }
        unflatten(ty, &mut out.into_iter())
    }

    /// A filter's predicate on element `e` of a group's chunk, where `valid` (false
    /// elsewhere).
    #[allow(clippy::too_many_arguments)]
    fn group_keep(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        grp: &Group,
        pred: &Lambda,
        valid: &Reg,
        e: KVal,
    ) -> R<Reg> {
        env.insert(pred.params[0], e);
        let keep = self.guarded(
            k,
            env,
            grp,
            valid,
            &Type::Scalar(Scalar::Bool),
            &mut |g, k, env, ctx| g.block(k, c, env, &pred.body, ctx),
        )?;
        Ok(keep.reg()?.clone())
    }

    /// The lazy sequence a combinator streams: the one whose length is its index space,
    /// when that sequence is lazy.
    pub(super) fn streamed_source(&self, env: &Env, soac: &Soac) -> Option<(VarId, KVal)> {
        if let Some(src) = self.len_of.get(&soac.len)
            && let Some(v @ (KVal::Lazy(_) | KVal::Cur { .. })) = env.get(src)
        {
            return Some((*src, v.clone()));
        }
        // A lazy scan (or map) over the same index space read at the element's own index
        // (the pipeline gives `map(f, scan(..))` the scan's length, not `len` of it).
        let p0 = *soac.elem.params.first()?;
        soac.elem.body.stmts.iter().find_map(|st| match &st.expr {
            Expr::Index { seq, index, .. } if *index == p0 => match env.get(seq)? {
                v @ (KVal::Lazy(l) | KVal::Cur { of: l, .. })
                    if l.soac.len == soac.len
                        && matches!(
                            l.soac.kind,
                            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
                        ) =>
                {
                    Some((*seq, v.clone()))
                }
                _ => None,
            },
            _ => None,
        })
    }

    /// Runs `body(j, elem(j))` for every element of a combinator's index space, in order:
    /// a counted loop, or — when the index space is the length of a lazy sequence — inside
    /// the loop that produces that sequence (`j` is then the position in it).
    pub(in crate::codegen) fn for_each(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        soac: &Soac,
        ctx: &Ctx,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        if let Some(&src) = self.len_of.get(&soac.len)
            && let Some(KVal::Cond(cs)) = env.get(&src).cloned()
        {
            // Over the length of a sequence an `if` chose: the loop in each branch, over
            // that branch's sequence.
            let r = self.branch_seq(k, c, env, &cs, ctx, &mut |g, k, env, v| {
                env.insert(src, v);
                g.for_each(k, c, env, soac, ctx, body)
            });
            env.insert(src, KVal::Cond(cs));
            return r;
        }
        if let Some((src, saved)) = self.streamed_source(env, soac) {
            let of = match &saved {
                KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
                _ => return unsupported("a lazy sequence was expected (internal)"),
            };
            let r = self.stream(k, c, env, &of, ctx, &mut |g, k, env, j, e| {
                env.insert(
                    src,
                    KVal::Cur {
                        idx: j.clone(),
                        val: Box::new(e),
                        of: of.clone(),
                    },
                );
                let x = g.elem(k, c, env, &soac.elem, j, ctx)?;
                body(g, k, env, j, x)
            });
            env.insert(src, saved);
            return r;
        }
        let len = Self::get(env, soac.len)?.reg()?.clone();
        let j = k.reg(Scalar::Usize);
        k.emit(Ins::mov(Ty::U64, &j, 0));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &j, &len));
        k.emit(Ins::bra(&end).when(&p));
        let e = self.elem(k, c, env, &soac.elem, &j, ctx)?;
        body(self, k, env, &j, e)?;
        k.emit(Ins::add(Ty::S64, &j, &j, 1));
        k.emit(Ins::bra(&top));
        k.place(&end);
        Ok(())
    }

    /// Produces the elements of a lazy sequence in order: `body(position, element)`.
    pub(in crate::codegen) fn stream(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        l: &Rc<LazySeq>,
        ctx: &Ctx,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        let ety = &l.elem_ty;
        match &l.soac.kind {
            SoacKind::Map => self.for_each(k, c, env, &l.soac, ctx, body),
            SoacKind::Scan { op } | SoacKind::ExclusiveScan { op, .. } => {
                let ls = leaves(ety)?;
                let comb = Comb::Op(op, ety);
                let acc = self.none(k, &ls);
                let exclusive = match &l.soac.kind {
                    SoacKind::ExclusiveScan { init, .. } => {
                        let v = Self::get(env, *init)?.flatten()?;
                        for (d, s) in acc.v.iter().zip(&v) {
                            Self::mov(k, d, s);
                        }
                        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 0, 0));
                        true
                    }
                    _ => false,
                };
                self.for_each(k, c, env, &l.soac, ctx, &mut |g, k, env, j, e| {
                    let e = e.flatten()?;
                    if exclusive {
                        let cur = unflatten(ety, &mut acc.v.clone().into_iter())?;
                        body(g, k, env, j, cur)?;
                    }
                    let t = g.pconst(k, true);
                    let n = g.opt_combine(k, c, env, comb, &acc, &Opt { has: t, v: e }, ctx)?;
                    Self::mov_opt(k, &acc, &n);
                    if !exclusive {
                        // Copies, so the consumer sees this step's value even if it loops.
                        let cur: Vec<Reg> = acc.v.iter().map(|r| k.reg(r.ty)).collect();
                        for (d, s) in cur.iter().zip(&acc.v) {
                            Self::mov(k, d, s);
                        }
                        body(g, k, env, j, unflatten(ety, &mut cur.into_iter())?)?;
                    }
                    Ok(())
                })
            }
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &cnt, 0));
                self.for_each(k, c, env, &l.soac, ctx, &mut |g, k, env, _j, e| {
                    env.insert(pred.params[0], e.clone());
                    let keep = g.block(k, c, env, &pred.body, ctx)?.reg()?.clone();
                    let skip = k.label();
                    k.emit(Ins::bra(&skip).unless(&keep));
                    let pos = k.reg(Scalar::Usize);
                    k.emit(Ins::mov(Ty::U64, &pos, &cnt));
                    body(g, k, env, &pos, e)?;
                    k.emit(Ins::add(Ty::S64, &cnt, &cnt, 1));
                    k.place(&skip);
                    Ok(())
                })
            }
            kind => unsupported(format!(
                "a nested `{}` used other than as the result of an element function, \
                 whose length is not known before the launch (read again, it is stored \
                 per thread when its length is bounded by a captured sequence's, a \
                 constant, a top-level `usize` or the longest row of a nested parameter, \
                 or derived from one by `map`, `scan`, `filter`, `gather`, `scatter` or `if`)",
                kind.name()
            )),
        }
    }

    /// The length of a sequence value (a filter is counted by a loop).
    pub(in crate::codegen) fn seq_len(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        v: &KVal,
        ctx: &Ctx,
    ) -> R<Reg> {
        let l = match v {
            KVal::Seq { len, .. } => {
                return Ok(Reg {
                    ty: Scalar::Usize,
                    ..len.clone()
                });
            }
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
            KVal::Cond(cs) => {
                let n = k.reg(Scalar::Usize);
                self.branch_seq(k, c, env, cs, ctx, &mut |g, k, env, v| {
                    let m = g.seq_len(k, c, env, &v, ctx)?;
                    Self::mov(k, &n, &m);
                    Ok(())
                })?;
                return Ok(n);
            }
            _ => return unsupported("the length of a non-sequence (internal)"),
        };
        match &l.soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                let dv = Self::get(env, *dst)?;
                self.seq_len(k, c, env, &dv, ctx)
            }
            SoacKind::Map
            | SoacKind::Scan { .. }
            | SoacKind::ExclusiveScan { .. }
            | SoacKind::Permute => match self.streamed_source(env, &l.soac) {
                Some((_, src)) => self.seq_len(k, c, env, &src, ctx),
                None => Ok(Self::get(env, l.soac.len)?.reg()?.clone()),
            },
            _ => {
                let n = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &n, 0));
                let saved = env.get(&l.var).cloned();
                self.stream(k, c, env, &l, ctx, &mut |_, k, _, _, _| {
                    k.emit(Ins::add(Ty::S64, &n, &n, 1));
                    Ok(())
                })?;
                if let Some(sv) = saved {
                    env.insert(l.var, sv);
                }
                Ok(n)
            }
        }
    }
}
