//! The host level: the top-level statements become [`Step`]s of the plan (top-level `if`s
//! and loops host control flow over steps of their own), and bounds on
//! lengths known before a launch ([`Gen::host_seq_len`]) for per-thread temporaries.

use super::*;

impl<'f> Gen<'f> {
    /// The steps of a top-level block (the function body or a branch of a top-level `if`).
    pub(super) fn host_block(&mut self, b: &Block) -> R<Vec<Step>> {
        let mut steps = Vec::new();
        for s in &b.stmts {
            self.host_stmt(s, &mut steps)?;
        }
        if self.deferred.contains_key(&b.result) {
            return unsupported(format!("a result of type `{}`", self.ty(b.result)));
        }
        Ok(steps)
    }

    fn host_stmt(&mut self, s: &Stmt, steps: &mut Vec<Step>) -> R<()> {
        let v = var(s.var);
        let span = s.span.0;
        let origin = match &s.expr {
            Expr::Soac(soac) => Some(origin_of(&soac.kind)),
            _ => None,
        };
        self.stmt_origin = (origin, span);
        let ty = self.ty(s.var).clone();
        let host = |expr| Step::Host {
            var: v,
            ty: ty.clone(),
            expr,
            span,
        };
        if let Some(d) = s
            .expr
            .operands()
            .into_iter()
            .find(|o| self.deferred.contains_key(o))
        {
            if let (Expr::Len(_), Some(soac)) = (&s.expr, self.deferred.get(&d)) {
                steps.push(host(HostExpr::Var(var(soac.len))));
                return Ok(());
            }
            return unsupported(format!(
                "a sequence of `{}` used other than by element functions",
                self.ty(d).elem().map(|t| t.to_string()).unwrap_or_default()
            ));
        }
        match &s.expr {
            Expr::Const(c) => steps.push(host(HostExpr::Const(*c))),
            Expr::Var(x) => steps.push(host(HostExpr::Var(var(*x)))),
            Expr::Unary(op, x) => steps.push(host(HostExpr::Unary(*op, var(*x)))),
            Expr::Binary(op, a, b) => steps.push(host(HostExpr::Binary(*op, var(*a), var(*b)))),
            Expr::Cast(x, to) => steps.push(host(HostExpr::Cast(var(*x), *to))),
            Expr::Tuple(xs) => {
                steps.push(host(HostExpr::Tuple(xs.iter().map(|x| var(*x)).collect())))
            }
            Expr::Field(x, n) => steps.push(host(HostExpr::Field(var(*x), *n))),
            Expr::Math(m, xs) => steps.push(host(HostExpr::Math(
                *m,
                xs.iter().map(|x| var(*x)).collect(),
            ))),
            Expr::Len(x) => steps.push(host(HostExpr::Len(var(*x)))),
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                if let Some(e) = self.ty(*seq).elem()
                    && leaves(e).is_err()
                    && e.elem().is_none_or(|t| leaves(t).is_err())
                {
                    return unsupported(format!("indexing a sequence of `{e}` on the host"));
                }
                steps.push(host(HostExpr::Index {
                    seq: var(*seq),
                    index: var(*index),
                    checked: *checked,
                }))
            }
            Expr::If(c, t, e) => {
                let then = self.host_block(t)?;
                let else_ = self.host_block(e)?;
                steps.push(Step::If {
                    var: v,
                    cond: var(*c),
                    then,
                    then_result: var(t.result),
                    else_,
                    else_result: var(e.result),
                });
            }
            Expr::Loop(l) => {
                let cond = self.host_block(&l.cond)?;
                let body = self.host_block(&l.body)?;
                steps.push(Step::Loop {
                    var: v,
                    params: l.params.iter().map(|p| var(*p)).collect(),
                    inits: l.inits.iter().map(|p| var(*p)).collect(),
                    cond,
                    cond_result: var(l.cond.result),
                    body,
                    body_result: var(l.body.result),
                });
            }
            Expr::Assert(a) => {
                let check = match a {
                    Assertion::EqLen { origin, a, b } => HostAssert::EqLen {
                        origin: *origin,
                        a: var(*a),
                        b: var(*b),
                    },
                    Assertion::InBounds { origin, index, len } => HostAssert::InBounds {
                        origin: *origin,
                        index: var(*index),
                        len: var(*len),
                    },
                    Assertion::NonEmpty { origin, len } => HostAssert::NonEmpty {
                        origin: *origin,
                        len: var(*len),
                    },
                    Assertion::IndicesInRange { .. } => {
                        return unsupported("the indices_in_range assertion");
                    }
                };
                steps.push(host(HostExpr::Tuple(Vec::new())));
                steps.push(Step::Assert { check, span });
            }
            Expr::Prim { prim, .. } => {
                return unsupported(format!(
                    "primitive `{}` at the Prim level: compile the fused function",
                    prim.name()
                ));
            }
            Expr::Soac(soac) => self.soac(s, soac, steps)?,
        }
        Ok(())
    }

    /// A bound on the length of the sequence combinator `soac` produces as a host
    /// [`Count`]: a `scatter`/`scatter_reduce` is as long as its destination, a
    /// `map`/`scan`/`permute` (a `gather` is a `map` over its indices) as its index space,
    /// and a `filter` at most as long.
    pub(super) fn host_soac_len(&self, soac: &Soac) -> Option<Count> {
        match &soac.kind {
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                self.host_seq_len(*dst)
            }
            SoacKind::Reduce { .. } => None,
            SoacKind::Map
            | SoacKind::Scan { .. }
            | SoacKind::ExclusiveScan { .. }
            | SoacKind::Filter { .. }
            | SoacKind::Permute
            | SoacKind::Sort
            | SoacKind::SortByKey => self.host_scalar(soac.len),
        }
    }

    /// A bound on the length of sequence `v` as a host [`Count`]: a top-level sequence's
    /// length, the longest row of a top-level nested sequence `v` is a row of, or the
    /// bound [`Gen::host_soac_len`] gives for the combinator defining `v` (from its
    /// input's bound, recursively: e.g. a `filter` of a row is bounded by the longest row),
    /// or the larger of the bounds of the sequences an `if` chooses from.
    fn host_seq_len(&self, v: VarId) -> Option<Count> {
        if self.host_vars.contains(&v) && !self.deferred.contains_key(&v) {
            return Some(Count::Len {
                var: var(v),
                path: Vec::new(),
            });
        }
        match self.defs.get(&v)? {
            Expr::Index { seq: x, .. }
                if self.host_vars.contains(x)
                    && !self.deferred.contains_key(x)
                    && matches!(self.ty(*x).elem(), Some(Type::Seq(_))) =>
            {
                Some(Count::Longest {
                    var: var(*x),
                    path: Vec::new(),
                })
            }
            Expr::Var(x) => self.host_seq_len(*x),
            Expr::Soac(soac) => self.host_soac_len(soac),
            Expr::If(_, a, b) => self.host_either(a, b, Self::host_seq_len),
            _ => None,
        }
    }

    /// A bound on a `usize` variable as a host [`Count`]: a top-level variable, a
    /// constant, a copy of one, the length of a sequence [`Gen::host_seq_len`] bounds, or
    /// the larger of the bounds of the values an `if` chooses from.
    fn host_scalar(&self, v: VarId) -> Option<Count> {
        if self.host_vars.contains(&v) {
            return Some(Count::Var(var(v)));
        }
        match self.defs.get(&v)? {
            Expr::Const(Const::Int(n)) => u64::try_from(*n).ok().map(Count::Const),
            Expr::Var(x) => self.host_scalar(*x),
            Expr::Len(x) => self.host_seq_len(*x),
            Expr::If(_, a, b) => self.host_either(a, b, Self::host_scalar),
            _ => None,
        }
    }

    /// The larger of the bounds `bound` gives for the results of the two branches of an
    /// `if`, when both have one.
    fn host_either(
        &self,
        a: &Block,
        b: &Block,
        bound: fn(&Self, VarId) -> Option<Count>,
    ) -> Option<Count> {
        let (x, y) = (bound(self, a.result)?, bound(self, b.result)?);
        Some(if x == y {
            x
        } else {
            Count::Max(Box::new(x), Box::new(y))
        })
    }
}
