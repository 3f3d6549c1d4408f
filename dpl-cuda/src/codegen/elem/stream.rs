//! Lazy sequences: a combinator inside an element function is not built; its consumers
//! stream it ([`Gen::stream`], [`Gen::for_each`]). The loops are written once over the
//! lanes that run them ([`Lanes`]): one thread, position after position, or a group of
//! threads (a warp or a block) in chunks of the group's width, where a `scan` combines a
//! group scan of each chunk with the carry of the chunks before and a `filter` places its
//! survivors by a group count of its flags.

use super::*;

/// Who runs a loop over the positions of a sequence.
#[derive(Clone, Copy)]
pub(in crate::codegen) enum Lanes<'a> {
    /// One thread, position after position; failed checks go where the context says.
    Thread(&'a Ctx),
    /// A group of threads (a warp or a block), in chunks of the group's width: thread
    /// `lane` takes position `start + lane` of each chunk, where it may have no element.
    Group(&'a Group),
}

/// The per-position callback of the loops over a sequence: `(position, valid, element)`,
/// `valid` saying where a thread of a group has an element (`None`: one thread, which
/// always has one).
pub(in crate::codegen) type Body<'b, 'f> =
    dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, Option<&Reg>, KVal) -> R<()> + 'b;

/// A position's work in [`Gen::positions`]: `(position, valid)` as for [`Body`].
type AtPosition<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, Option<&Reg>) -> R<()> + 'b;

/// A value evaluated at a position ([`Gen::at_position`]), with the context its checks
/// use.
type Guarded<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Ctx) -> R<KVal> + 'b;

impl<'f> Gen<'f> {
    /// The loop over positions `0..len` run by `lanes`: `body(position, valid)` at each
    /// (one thread: `j` from 0 by 1; a group: chunks from 0 by the group's width, the
    /// same in every thread, `j = start + lane`, valid below `len`).
    pub(in crate::codegen) fn positions(
        &mut self,
        k: &mut Kernel,
        lanes: Lanes<'_>,
        len: &Reg,
        body: &mut AtPosition<'_, 'f>,
    ) -> R<()> {
        let grp = match lanes {
            Lanes::Thread(_) => None,
            Lanes::Group(grp) => Some(grp),
        };
        // A group's threads branch together.
        let bra = |l: &Label| match grp {
            Some(_) => Ins::bra_uni(l),
            None => Ins::bra(l),
        };
        let start = k.reg(if grp.is_some() {
            Scalar::U64
        } else {
            Scalar::Usize
        });
        k.emit(Ins::mov(Ty::U64, &start, 0));
        let lane64 = grp.map(|grp| {
            let r = k.reg(Scalar::U64);
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &r, &grp.lane));
            r
        });
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &start, len));
        k.emit(bra(&end).when(&p));
        match &lane64 {
            None => body(self, k, &start, None)?,
            Some(lane64) => {
                let j = k.reg(Scalar::Usize);
                k.emit(Ins::add(Ty::S64, &j, &start, lane64));
                let valid = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Lt, Ty::U64, &valid, &j, len));
                body(self, k, &j, Some(&valid))?;
            }
        }
        match grp {
            Some(grp) => k.emit(Ins::add(Ty::S64, &start, &start, &grp.width)),
            None => k.emit(Ins::add(Ty::S64, &start, &start, 1)),
        }
        k.emit(bra(&top));
        k.place(&end);
        Ok(())
    }

    /// Evaluates `f` (an element, a predicate: a value of type `ty` holding scalars) at a
    /// position of a loop run by `lanes`: in one thread with its context; in a group,
    /// where `valid` holds, sequentially in each thread (no split reduction), the others
    /// getting zeros. A failed check in a group marks the thread; when `f` has checks,
    /// the group then agrees (`vote.sync.any` / `bar.red.or`) and leaves the row
    /// together, to [`Group::fail`], so its collective steps stay uniform.
    pub(in crate::codegen) fn at_position(
        &mut self,
        k: &mut Kernel,
        lanes: Lanes<'_>,
        valid: Option<&Reg>,
        ty: &Type,
        f: &mut Guarded<'_, 'f>,
    ) -> R<KVal> {
        let grp = match lanes {
            Lanes::Thread(ctx) => return f(self, k, ctx),
            Lanes::Group(grp) => grp,
        };
        let valid = flag(valid)?;
        let ls = leaves(ty)?;
        let out: Vec<Reg> = ls.iter().map(|&s| self.zero(k, s)).collect();
        let failed = self.pconst(k, false);
        let (fail, join) = (k.label(), k.label());
        let sites = self.sites.len();
        k.emit(Ins::bra(&join).unless(valid));
        let ctx = Ctx {
            key: grp.key.clone(),
            fail: Some(fail.clone()),
        };
        let split = self.split.take();
        let v = f(self, k, &ctx);
        self.split = split;
        for (d, s) in out.iter().zip(&v?.flatten()?) {
            Self::mov(k, d, s);
        }
        k.emit(Ins::bra(&join));
        k.place(&fail);
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

    /// A filter's predicate on element `e` at a position of a loop run by `lanes`
    /// ([`Gen::at_position`]; false where a thread of a group has no element).
    #[allow(clippy::too_many_arguments)]
    fn keep(
        &mut self,
        k: &mut Kernel,
        lanes: Lanes<'_>,
        pred: &Lambda,
        valid: Option<&Reg>,
        e: KVal,
    ) -> R<Reg> {
        k.env.insert(pred.params[0], e);
        let bool_ty = Type::Scalar(Scalar::Bool);
        let keep = self.at_position(k, lanes, valid, &bool_ty, &mut |g, k, ctx| {
            g.block(k, &pred.body, ctx)
        })?;
        Ok(keep.reg()?.clone())
    }

    /// The length of a row (an element function's result) measured by a group: a
    /// `filter` in it is counted in chunks of the group's width ([`Gen::group_count`]).
    /// In report mode every thread counts alone, in order ([`Gen::seq_len`]), so the
    /// failure recorded first is the first in sequential order.
    pub(in crate::codegen) fn group_len(
        &mut self,
        k: &mut Kernel,
        v: &KVal,
        grp: &Group,
    ) -> R<Reg> {
        let n = k.reg(Scalar::Usize);
        let rep = Self::report_mode(k);
        let (alone, done) = (k.label(), k.label());
        k.emit(Ins::bra(&alone).when(&rep));
        let m = self.len_grouped(k, v, grp)?;
        Self::mov(k, &n, &m);
        k.emit(Ins::bra(&done));
        k.place(&alone);
        let ctx = Ctx {
            key: grp.key.clone(),
            fail: Some(grp.fail.clone()),
        };
        let m = self.seq_len(k, v, &ctx)?;
        Self::mov(k, &n, &m);
        k.place(&done);
        Ok(n)
    }

    /// [`Gen::seq_len`] by a group (see [`Gen::group_len`]); fails for sequences a group
    /// does not produce ([`Gen::stream`]).
    fn len_grouped(&mut self, k: &mut Kernel, v: &KVal, grp: &Group) -> R<Reg> {
        let l = match v {
            KVal::Seq { offs: None, .. } => return self.seq_len(k, v, &Self::no_fail(grp)),
            KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
            _ => return unsupported("this row by a group of threads"),
        };
        match &l.soac.kind {
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &cnt, 0));
                let saved = k.env.get(&l.var).cloned();
                let lanes = Lanes::Group(grp);
                self.for_each(k, &l.soac, lanes, &mut |g, k, _, ok, e| {
                    let keep = g.keep(k, lanes, pred, ok, e)?;
                    let (_, total) = g.group_count(k, grp, &keep, false)?;
                    k.emit(Ins::add(Ty::S64, &cnt, &cnt, &total));
                    Ok(())
                })?;
                if let Some(sv) = saved {
                    k.env.insert(l.var, sv);
                }
                Ok(cnt)
            }
            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. } => {
                match self.streamed_source(&k.env, &l.soac) {
                    Some((_, src)) => self.len_grouped(k, &src, grp),
                    None => Ok(Self::get(&k.env, l.soac.len)?.reg()?.clone()),
                }
            }
            _ => unsupported("this row by a group of threads"),
        }
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

    /// Runs `body(j, valid, elem(j))` for every element of a combinator's index space, in
    /// order, by `lanes`: a loop over the positions ([`Gen::positions`]), or — when the
    /// index space is the length of a lazy sequence — inside the loop that produces that
    /// sequence (`j` is then the position in it). One thread also runs it over a sequence
    /// an `if` chose (the loop in each branch).
    pub(in crate::codegen) fn for_each(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        lanes: Lanes<'_>,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        if let Some(&src) = self.len_of.get(&soac.len)
            && let Some(KVal::Cond(cs)) = k.env.get(&src).cloned()
        {
            let Lanes::Thread(ctx) = lanes else {
                return unsupported("a sequence an `if` chooses, by a group of threads");
            };
            // Over the length of a sequence an `if` chose: the loop in each branch, over
            // that branch's sequence.
            let r = self.branch_seq(k, &cs, ctx, &mut |g, k, v| {
                k.env.insert(src, v);
                g.for_each(k, soac, lanes, body)
            });
            k.env.insert(src, KVal::Cond(cs));
            return r;
        }
        let ety = self.ty(soac.elem.body.result).clone();
        let elem = |g: &mut Self, k: &mut Kernel, j: &Reg, ok: Option<&Reg>| {
            g.at_position(k, lanes, ok, &ety, &mut |g, k, ctx| {
                g.elem(k, &soac.elem, j, ctx)
            })
        };
        if let Some((src, saved)) = self.streamed_source(&k.env, soac) {
            let of = match &saved {
                KVal::Lazy(l) | KVal::Cur { of: l, .. } => l.clone(),
                _ => return unsupported("a lazy sequence was expected (internal)"),
            };
            let r = self.stream(k, &of, lanes, &mut |g, k, j, ok, e| {
                k.env.insert(
                    src,
                    KVal::Cur {
                        idx: j.clone(),
                        val: Box::new(e),
                        of: of.clone(),
                    },
                );
                let x = elem(g, k, j, ok)?;
                body(g, k, j, ok, x)
            });
            k.env.insert(src, saved);
            return r;
        }
        let len = Self::get(&k.env, soac.len)?.reg()?.clone();
        self.positions(k, lanes, &len, &mut |g, k, j, ok| {
            let x = elem(g, k, j, ok)?;
            body(g, k, j, ok, x)
        })
    }

    /// Produces the elements of a lazy sequence in order, by `lanes`: `body(position,
    /// valid, element)`. A `map` evaluates its element function at each position; a float
    /// `scan` follows dpl's order ([`Gen::stream_in_order`]); another `scan` carries the combination of the elements before (by a group: a group scan of
    /// each chunk, [`Gen::group_scan`], combined with the carry of the chunks before); a
    /// `filter` gives its survivors consecutive positions (by a group: after those of the
    /// chunks before, by a group count of its flags, [`Gen::group_count`], keeping their
    /// order). Fails for the other combinators.
    pub(in crate::codegen) fn stream(
        &mut self,
        k: &mut Kernel,
        l: &Rc<LazySeq>,
        lanes: Lanes<'_>,
        body: &mut Body<'_, 'f>,
    ) -> R<()> {
        let ety = &l.elem_ty;
        match &l.soac.kind {
            SoacKind::Map => self.for_each(k, &l.soac, lanes, body),
            SoacKind::Scan { op } | SoacKind::ExclusiveScan { op, .. } => {
                let ls = leaves(ety)?;
                let comb = Comb::Op(op, ety);
                if scan::ordered::is_ordered(&ls) {
                    let init = match &l.soac.kind {
                        SoacKind::ExclusiveScan { init, .. } => {
                            Some(Self::get(&k.env, *init)?.flatten()?)
                        }
                        _ => None,
                    };
                    return self.stream_in_order(k, &l.soac, comb, &ls, init, lanes, body);
                }
                let acc = self.none(k, &ls);
                let exclusive = match &l.soac.kind {
                    SoacKind::ExclusiveScan { init, .. } => {
                        let v = Self::get(&k.env, *init)?.flatten()?;
                        for (d, s) in acc.v.iter().zip(&v) {
                            Self::mov(k, d, s);
                        }
                        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 0, 0));
                        true
                    }
                    _ => false,
                };
                let soac = &l.soac;
                match lanes {
                    Lanes::Thread(ctx) => {
                        self.for_each(k, soac, lanes, &mut |g, k, j, ok, e| {
                            let e = e.flatten()?;
                            if exclusive {
                                let cur = unflatten(ety, &mut acc.v.clone().into_iter())?;
                                body(g, k, j, ok, cur)?;
                            }
                            let t = g.pconst(k, true);
                            let x = Opt { has: t, v: e };
                            let n = g.opt_combine(k, comb, &acc, &x, ctx)?;
                            Self::mov_opt(k, &acc, &n);
                            if !exclusive {
                                // Copies, so the consumer sees this step's value even if it loops.
                                let cur: Vec<Reg> = acc.v.iter().map(|r| k.reg(r.ty)).collect();
                                for (d, s) in cur.iter().zip(&acc.v) {
                                    Self::mov(k, d, s);
                                }
                                body(g, k, j, ok, unflatten(ety, &mut cur.into_iter())?)?;
                            }
                            Ok(())
                        })
                    }
                    Lanes::Group(grp) => {
                        let op_ctx = Self::no_fail(grp);
                        self.for_each(k, soac, lanes, &mut |g, k, j, ok, e| {
                            let x = Opt {
                                has: flag(ok)?.clone(),
                                v: e.flatten()?,
                            };
                            let (incl, excl, total) =
                                g.group_scan(k, grp, &x, &mut Self::fold(comb, &op_ctx))?;
                            let mine = if exclusive { &excl } else { &incl };
                            let out = g.opt_combine(k, comb, &acc, mine, &op_ctx)?;
                            let next = g.opt_combine(k, comb, &acc, &total, &op_ctx)?;
                            Self::mov_opt(k, &acc, &next);
                            body(g, k, j, ok, unflatten(ety, &mut out.v.into_iter())?)
                        })
                    }
                }
            }
            SoacKind::Filter { pred } => {
                let cnt = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &cnt, 0));
                self.for_each(k, &l.soac, lanes, &mut |g, k, _j, ok, e| {
                    let keep = g.keep(k, lanes, pred, ok, e.clone())?;
                    let Lanes::Group(grp) = lanes else {
                        let skip = k.label();
                        k.emit(Ins::bra(&skip).unless(&keep));
                        let pos = k.reg(Scalar::Usize);
                        k.emit(Ins::mov(Ty::U64, &pos, &cnt));
                        body(g, k, &pos, ok, e)?;
                        k.emit(Ins::add(Ty::S64, &cnt, &cnt, 1));
                        k.place(&skip);
                        return Ok(());
                    };
                    let (before, total) = g.group_count(k, grp, &keep, true)?;
                    let pos = k.reg(Scalar::Usize);
                    k.emit(Ins::add(Ty::S64, &pos, &cnt, &before));
                    k.emit(Ins::add(Ty::S64, &cnt, &cnt, &total));
                    body(g, k, &pos, Some(&keep), e)
                })
            }
            _ if matches!(lanes, Lanes::Group(_)) => unsupported("this row by a group of threads"),
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
    pub(in crate::codegen) fn seq_len(&mut self, k: &mut Kernel, v: &KVal, ctx: &Ctx) -> R<Reg> {
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
                self.branch_seq(k, cs, ctx, &mut |g, k, v| {
                    let m = g.seq_len(k, &v, ctx)?;
                    Self::mov(k, &n, &m);
                    Ok(())
                })?;
                return Ok(n);
            }
            _ => return unsupported("the length of a non-sequence (internal)"),
        };
        match &l.soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                let dv = Self::get(&k.env, *dst)?;
                self.seq_len(k, &dv, ctx)
            }
            SoacKind::Map
            | SoacKind::Scan { .. }
            | SoacKind::ExclusiveScan { .. }
            | SoacKind::Permute => match self.streamed_source(&k.env, &l.soac) {
                Some((_, src)) => self.seq_len(k, &src, ctx),
                None => Ok(Self::get(&k.env, l.soac.len)?.reg()?.clone()),
            },
            _ => {
                let n = k.reg(Scalar::Usize);
                k.emit(Ins::mov(Ty::U64, &n, 0));
                let saved = k.env.get(&l.var).cloned();
                self.stream(k, &l, Lanes::Thread(ctx), &mut |_, k, _, _, _| {
                    k.emit(Ins::add(Ty::S64, &n, &n, 1));
                    Ok(())
                })?;
                if let Some(sv) = saved {
                    k.env.insert(l.var, sv);
                }
                Ok(n)
            }
        }
    }
}

/// The flag of a group's position (an internal error where there is none).
pub(in crate::codegen) fn flag(ok: Option<&Reg>) -> R<&Reg> {
    match ok {
        Some(ok) => Ok(ok),
        None => unsupported("a group's position without a flag (internal)"),
    }
}
