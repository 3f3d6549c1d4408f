//! Normalization: Prim level to Soac level, with shape analysis.
//!
//! Every primitive becomes a [`Soac`] over an index space whose element function reads the
//! inputs (`map(f, x, y)` becomes `soac map n |i| f(x[i], y[i])`, `gather(x, idx)` becomes
//! `soac map n |i| x[idx[i]]`, `sum(x)` a reduce with `+`, ...). Reads that are in range by
//! construction are marked unchecked; the conditions that make them so become explicit
//! [`Assertion`]s.
//!
//! Shape analysis keeps, per scope, the symbolic length (a `usize` variable) of each
//! sequence whose length is known: the length of `map(f, x)` is the length of `x`, that of
//! `scan` its input's, and so on. Two sequences with the same symbolic length need no
//! run-time equality check, and `len(y)` of a known `y` is the variable itself.

use crate::captures::fix_captures;
use crate::ir::*;
use std::collections::HashMap;

/// Rewrites a typed Prim-level function into the Soac level.
pub fn normalize(f: &Function) -> Function {
    let mut out = f.clone();
    let body = std::mem::take(&mut out.body.stmts);
    let result = out.body.result;
    let mut n = Norm {
        f: &mut out,
        scopes: Vec::new(),
        copies: HashMap::new(),
    };
    let body = n.block(Block {
        stmts: body,
        result,
    });
    out.body = body;
    fix_captures(&mut out);
    out
}

struct Norm<'f> {
    f: &'f mut Function,
    /// Symbolic lengths known in each enclosing scope, innermost last.
    scopes: Vec<HashMap<VarId, VarId>>,
    /// Sequences that are copies of another (`y = x`, as an inlined call binds its
    /// arguments), to the sequence they copy: they share its length, so `dot(x, x)` needs
    /// no check that its two arguments have the same length.
    copies: HashMap<VarId, VarId>,
}

impl Norm<'_> {
    fn var(&mut self, name: &str, ty: Type, span: Span) -> VarId {
        self.f.new_var(name, ty, span)
    }

    fn block(&mut self, b: Block) -> Block {
        self.scopes.push(HashMap::new());
        let mut out = Vec::with_capacity(b.stmts.len());
        for s in b.stmts {
            self.stmt(s, &mut out);
        }
        self.scopes.pop();
        Block {
            stmts: out,
            result: b.result,
        }
    }

    fn lambda(&mut self, l: Lambda) -> Lambda {
        let body = self.block(l.body);
        Lambda {
            params: l.params,
            captures: Vec::new(),
            body,
        }
    }

    /// The sequence `seq` copies, or `seq`.
    fn original(&self, seq: VarId) -> VarId {
        self.copies.get(&seq).copied().unwrap_or(seq)
    }

    fn known_len(&self, seq: VarId) -> Option<VarId> {
        let seq = self.original(seq);
        self.scopes.iter().rev().find_map(|s| s.get(&seq).copied())
    }

    fn record_len(&mut self, seq: VarId, len: VarId) {
        let seq = self.original(seq);
        if let Some(s) = self.scopes.last_mut() {
            s.insert(seq, len);
        }
    }

    /// The symbolic length of `seq`, emitting `len(seq)` if it is not known yet.
    fn len_of(&mut self, seq: VarId, span: Span, out: &mut Vec<Stmt>) -> VarId {
        if let Some(n) = self.known_len(seq) {
            return n;
        }
        let seq = self.original(seq);
        let name = format!("len_{}", self.f.vars[seq].name);
        let n = self.var(&name, Type::usize(), span);
        out.push(Stmt {
            var: n,
            expr: Expr::Len(seq),
            span,
        });
        self.record_len(seq, n);
        n
    }

    /// Lengths of all `seqs`, the first being the index space; asserts the others equal.
    fn same_len(&mut self, prim: Prim, seqs: &[VarId], span: Span, out: &mut Vec<Stmt>) -> VarId {
        let n = self.len_of(seqs[0], span, out);
        for &s in &seqs[1..] {
            let m = self.len_of(s, span, out);
            if m != n {
                let v = self.var("check", Type::unit(), span);
                let a = Assertion::EqLen {
                    origin: Origin::Prim(prim),
                    a: n,
                    b: m,
                };
                out.push(Stmt {
                    var: v,
                    expr: Expr::Assert(a),
                    span,
                });
                // From here on both have the same symbolic length.
                self.record_len(s, n);
            }
        }
        n
    }

    fn elem_ty(&self, seq: VarId) -> Type {
        self.f.vars[seq].ty.elem().cloned().unwrap_or(Type::Infer)
    }

    /// `let v = seq[i]` (unchecked), a statement of an element function.
    fn read(&mut self, seq: VarId, i: VarId, span: Span) -> Stmt {
        let name = format!("{}_i", self.f.vars[seq].name);
        let v = self.var(&name, self.elem_ty(seq), span);
        Stmt {
            var: v,
            expr: Expr::Index {
                seq,
                index: i,
                checked: None,
            },
            span,
        }
    }

    /// The element function `|i| (a[i], b[i])` (the pair bound as `name`): the (index,
    /// value) elements of `permute`/`scatter`/`scatter_reduce`, the (key, value) ones of
    /// `sort_by_key`.
    fn pair_elem(&mut self, name: &str, a: VarId, b: VarId, span: Span) -> Lambda {
        let i = self.index_param(span);
        let x = self.read(a, i, span);
        let y = self.read(b, i, span);
        let pair_ty = Type::Tuple(vec![
            self.f.vars[x.var].ty.clone(),
            self.f.vars[y.var].ty.clone(),
        ]);
        let pair = self.fresh_stmt(name, pair_ty, Expr::Tuple(vec![x.var, y.var]), span);
        let pv = pair.var;
        self.elem(i, vec![x, y, pair], pv)
    }

    /// The index parameter of a new element function.
    /// The length of `x` and the element function `|i| x[i]` of a combinator over its
    /// elements.
    fn over_elements(&mut self, x: VarId, span: Span, out: &mut Vec<Stmt>) -> (VarId, Lambda) {
        let n = self.len_of(x, span, out);
        let i = self.index_param(span);
        let r = self.read(x, i, span);
        let rv = r.var;
        (n, self.elem(i, vec![r], rv))
    }

    fn index_param(&mut self, span: Span) -> VarId {
        self.var("i", Type::usize(), span)
    }

    fn bind(&mut self, var: VarId, expr: Expr, span: Span) -> Stmt {
        Stmt { var, expr, span }
    }

    fn fresh_stmt(&mut self, name: &str, ty: Type, expr: Expr, span: Span) -> Stmt {
        let v = self.var(name, ty, span);
        Stmt { var: v, expr, span }
    }

    /// An element function `|i| { stmts; result }`, normalized (it may contain primitives).
    fn elem(&mut self, i: VarId, stmts: Vec<Stmt>, result: VarId) -> Lambda {
        let body = self.block(Block { stmts, result });
        Lambda {
            params: vec![i],
            captures: Vec::new(),
            body,
        }
    }

    /// The binary operator lambda `|a, b| a op b` over `ty`.
    fn op_lambda(
        &mut self,
        ty: &Type,
        span: Span,
        make: impl FnOnce(VarId, VarId) -> Expr,
    ) -> Lambda {
        let a = self.var("a", ty.clone(), span);
        let b = self.var("b", ty.clone(), span);
        let r = self.var("r", ty.clone(), span);
        Lambda {
            params: vec![a, b],
            captures: Vec::new(),
            body: Block {
                stmts: vec![Stmt {
                    var: r,
                    expr: make(a, b),
                    span,
                }],
                result: r,
            },
        }
    }

    fn constant(&mut self, ty: &Type, c: Const, span: Span, out: &mut Vec<Stmt>) -> VarId {
        let v = self.var("c", ty.clone(), span);
        out.push(Stmt {
            var: v,
            expr: Expr::Const(c),
            span,
        });
        v
    }

    fn soac(&mut self, var: VarId, kind: SoacKind, len: VarId, elem: Lambda, span: Span) -> Stmt {
        Stmt {
            var,
            expr: Expr::Soac(Box::new(Soac { kind, len, elem })),
            span,
        }
    }

    fn stmt(&mut self, s: Stmt, out: &mut Vec<Stmt>) {
        let Stmt { var, expr, span } = s;
        match expr {
            Expr::If(c, a, b) => {
                let (a, b) = (self.block(a), self.block(b));
                out.push(Stmt {
                    var,
                    expr: Expr::If(c, a, b),
                    span,
                });
            }
            Expr::Loop(l) => {
                let Loop {
                    params,
                    inits,
                    cond,
                    body,
                } = *l;
                let (cond, body) = (self.block(cond), self.block(body));
                out.push(Stmt {
                    var,
                    expr: Expr::Loop(Box::new(Loop {
                        params,
                        inits,
                        cond,
                        body,
                    })),
                    span,
                });
            }
            Expr::Len(x) => {
                let n = self.len_of(x, span, out);
                out.push(Stmt {
                    var,
                    expr: Expr::Var(n),
                    span,
                });
            }
            Expr::Var(x) if self.f.vars[x].ty.elem().is_some() => {
                let original = self.original(x);
                self.copies.insert(var, original);
                out.push(Stmt {
                    var,
                    expr: Expr::Var(x),
                    span,
                });
            }
            Expr::Prim {
                prim,
                lambdas,
                args,
            } => self.prim(var, prim, lambdas, args, span, out),
            Expr::Soac(mut soac) => {
                soac.elem = self.lambda(soac.elem.clone());
                out.push(Stmt {
                    var,
                    expr: Expr::Soac(soac),
                    span,
                });
            }
            other => out.push(Stmt {
                var,
                expr: other,
                span,
            }),
        }
    }

    fn prim(
        &mut self,
        var: VarId,
        prim: Prim,
        mut lambdas: Vec<Lambda>,
        args: Vec<VarId>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) {
        let result_ty = self.f.vars[var].ty.clone();
        let elem_of_result = result_ty.elem().cloned().unwrap_or(Type::Infer);
        let has_lambda = !lambdas.is_empty();
        let mut take_lambda = |k: usize| {
            std::mem::replace(
                &mut lambdas[k],
                Lambda {
                    params: vec![],
                    captures: vec![],
                    body: Block {
                        stmts: vec![],
                        result: var,
                    },
                },
            )
        };
        match prim {
            Prim::Map | Prim::Zip => {
                let n = self.same_len(prim, &args, span, out);
                let i = self.index_param(span);
                let mut stmts = Vec::new();
                let result = if prim == Prim::Map {
                    let f = take_lambda(0);
                    for (p, &x) in f.params.iter().zip(&args) {
                        stmts.push(Stmt {
                            var: *p,
                            expr: Expr::Index {
                                seq: x,
                                index: i,
                                checked: None,
                            },
                            span,
                        });
                    }
                    stmts.extend(f.body.stmts);
                    f.body.result
                } else {
                    let mut parts = Vec::new();
                    for &x in &args {
                        let r = self.read(x, i, span);
                        parts.push(r.var);
                        stmts.push(r);
                    }
                    let t =
                        self.fresh_stmt("pair", elem_of_result.clone(), Expr::Tuple(parts), span);
                    let tv = t.var;
                    stmts.push(t);
                    tv
                };
                let elem = self.elem(i, stmts, result);
                out.push(self.soac(var, SoacKind::Map, n, elem, span));
                self.record_len(var, n);
            }
            Prim::Unzip => {
                let s = args[0];
                let n = self.len_of(s, span, out);
                let Type::Tuple(parts) = self.elem_ty(s) else {
                    unreachable!("type inference checked that unzip takes a sequence of tuples")
                };
                let mut seqs = Vec::new();
                for (k, t) in parts.iter().enumerate() {
                    let i = self.index_param(span);
                    let r = self.read(s, i, span);
                    let fv = self.fresh_stmt("part", t.clone(), Expr::Field(r.var, k as u32), span);
                    let fvar = fv.var;
                    let elem = self.elem(i, vec![r, fv], fvar);
                    let u = self.var("unzipped", Type::seq(t.clone()), span);
                    out.push(self.soac(u, SoacKind::Map, n, elem, span));
                    self.record_len(u, n);
                    seqs.push(u);
                }
                out.push(Stmt {
                    var,
                    expr: Expr::Tuple(seqs),
                    span,
                });
            }
            Prim::Gather => {
                let (x, idx) = (args[0], args[1]);
                let n = self.len_of(idx, span, out);
                let i = self.index_param(span);
                let j = self.read(idx, i, span);
                let jv = j.var;
                let v = self.fresh_stmt(
                    "gathered",
                    self.elem_ty(x),
                    Expr::Index {
                        seq: x,
                        index: jv,
                        checked: Some(Origin::Prim(Prim::Gather)),
                    },
                    span,
                );
                let vv = v.var;
                let elem = self.elem(i, vec![j, v], vv);
                out.push(self.soac(var, SoacKind::Map, n, elem, span));
                self.record_len(var, n);
            }
            Prim::Permute | Prim::Scatter | Prim::ScatterReduce => {
                let (src, idx) = (args[0], args[1]);
                let n = self.same_len(prim, &[src, idx], span, out);
                let elem = self.pair_elem("target", idx, src, span);
                let (kind, len) = match prim {
                    Prim::Permute => (SoacKind::Permute, n),
                    Prim::Scatter => {
                        let dst = args[2];
                        let m = self.len_of(dst, span, out);
                        (SoacKind::Scatter { dst }, m)
                    }
                    _ => {
                        let dst = args[2];
                        let m = self.len_of(dst, span, out);
                        let op = take_lambda(0);
                        (
                            SoacKind::ScatterReduce {
                                op: self.lambda(op),
                                dst,
                            },
                            m,
                        )
                    }
                };
                out.push(self.soac(var, kind, n, elem, span));
                self.record_len(var, len);
            }
            Prim::Reduce | Prim::Scan | Prim::ExclusiveScan | Prim::Filter => {
                let x = args[0];
                let (n, elem) = self.over_elements(x, span, out);
                let l = take_lambda(0);
                let l = self.lambda(l);
                let kind = match prim {
                    Prim::Reduce => SoacKind::Reduce {
                        op: l,
                        init: Some(args[1]),
                    },
                    Prim::Scan => SoacKind::Scan { op: l },
                    Prim::ExclusiveScan => SoacKind::ExclusiveScan {
                        op: l,
                        init: args[1],
                    },
                    _ => SoacKind::Filter { pred: l },
                };
                out.push(self.soac(var, kind, n, elem, span));
                if prim != Prim::Filter {
                    self.record_len(var, n);
                }
            }
            Prim::Sum | Prim::Min | Prim::Max => {
                let x = args[0];
                let ty = self.elem_ty(x);
                let (n, elem) = self.over_elements(x, span, out);
                let (op, init) = match prim {
                    Prim::Sum => {
                        // `-0.0` for floats, as Rust's `Iterator::sum`: the identity of `+`
                        // (the sum of nothing or of `-0.0`s is `-0.0`).
                        let zero = if ty.scalar().is_some_and(Scalar::is_float) {
                            Const::Float(-0.0)
                        } else {
                            Const::Int(0)
                        };
                        let init = self.constant(&ty, zero, span, out);
                        (
                            self.op_lambda(&ty, span, |a, b| Expr::Binary(BinOp::Add, a, b)),
                            Some(init),
                        )
                    }
                    Prim::Min => (
                        self.op_lambda(&ty, span, |a, b| Expr::Math(MathFn::Min, vec![a, b])),
                        None,
                    ),
                    _ => (
                        self.op_lambda(&ty, span, |a, b| Expr::Math(MathFn::Max, vec![a, b])),
                        None,
                    ),
                };
                out.push(self.soac(var, SoacKind::Reduce { op, init }, n, elem, span));
            }
            Prim::Any | Prim::All | Prim::Count => {
                let x = *args.last().expect("any/all/count have an argument");
                let n = self.len_of(x, span, out);
                let i = self.index_param(span);
                let r = self.read(x, i, span);
                let mut stmts = vec![];
                let flag = if !has_lambda {
                    let rv = r.var;
                    stmts.push(r);
                    rv
                } else {
                    let pred = take_lambda(0);
                    stmts.push(Stmt {
                        var: pred.params[0],
                        expr: r.expr,
                        span,
                    });
                    stmts.extend(pred.body.stmts);
                    pred.body.result
                };
                let bool_t = Type::bool();
                let (op, init, result) = match prim {
                    Prim::Count => {
                        let u = Type::usize();
                        let c = self.fresh_stmt(
                            "one",
                            u.clone(),
                            Expr::Cast(flag, Scalar::Usize),
                            span,
                        );
                        let cv = c.var;
                        stmts.push(c);
                        let init = self.constant(&u, Const::Int(0), span, out);
                        (
                            self.op_lambda(&u, span, |a, b| Expr::Binary(BinOp::Add, a, b)),
                            init,
                            cv,
                        )
                    }
                    Prim::Any => {
                        let init = self.constant(&bool_t, Const::Bool(false), span, out);
                        (
                            self.op_lambda(&bool_t, span, |a, b| Expr::Binary(BinOp::BitOr, a, b)),
                            init,
                            flag,
                        )
                    }
                    _ => {
                        let init = self.constant(&bool_t, Const::Bool(true), span, out);
                        (
                            self.op_lambda(&bool_t, span, |a, b| Expr::Binary(BinOp::BitAnd, a, b)),
                            init,
                            flag,
                        )
                    }
                };
                let elem = self.elem(i, stmts, result);
                out.push(self.soac(
                    var,
                    SoacKind::Reduce {
                        op,
                        init: Some(init),
                    },
                    n,
                    elem,
                    span,
                ));
            }
            Prim::Replicate => {
                let (v, n) = (args[0], args[1]);
                let i = self.index_param(span);
                let elem = self.elem(i, vec![], v);
                out.push(self.soac(var, SoacKind::Map, n, elem, span));
                self.record_len(var, n);
            }
            Prim::Indices | Prim::Range => {
                let n = if prim == Prim::Indices {
                    self.len_of(args[0], span, out)
                } else {
                    args[0]
                };
                let i = self.index_param(span);
                let elem = self.elem(i, vec![], i);
                out.push(self.soac(var, SoacKind::Map, n, elem, span));
                self.record_len(var, n);
            }
            Prim::Len => {
                let n = self.len_of(args[0], span, out);
                out.push(self.bind(var, Expr::Var(n), span));
            }
            Prim::Sort => {
                let x = args[0];
                let (n, elem) = self.over_elements(x, span, out);
                out.push(self.soac(var, SoacKind::Sort, n, elem, span));
                self.record_len(var, n);
            }
            Prim::SortByKey => {
                let (keys, vals) = (args[0], args[1]);
                let n = self.same_len(prim, &[keys, vals], span, out);
                let elem = self.pair_elem("keyed", keys, vals, span);
                out.push(self.soac(var, SoacKind::SortByKey, n, elem, span));
                self.record_len(var, n);
            }
        }
    }
}
