//! Type inference.
//!
//! Unification over type terms with three kinds of unknowns: any type, an integer type (an
//! unsuffixed integer literal) and a float type (an unsuffixed float literal), following
//! Rust's rules: literals without a suffix default to `i32` and `f64` when nothing else
//! decides, an integer used as an index becomes `usize`. Parameter and result types come
//! from the Rust signature; annotations in the body are already on the variables.
//!
//! The walk visits data arguments of a primitive before its lambdas, so a lambda's
//! parameters get their types from the sequences it is applied to (as Rust's closure
//! inference does). After solving, a second walk checks that every operator is applied to
//! types it supports (no `-` on unsigned integers, no bit operations on floats, ...), then
//! the concrete types are written back into [`Var::ty`](crate::ir::Var).

use crate::diag::Diagnostic;
use crate::ir::*;

/// Infers the type of every variable of `f` and writes it into the IR. Returns every error
/// found (several at once where they are independent).
pub fn infer(f: &mut Function) -> Result<(), Vec<Diagnostic>> {
    infer_with(f, Literals::Rust)
}

/// What type an unsuffixed integer literal may take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Literals {
    /// As in Rust: an integer type (`1` is never a float).
    #[default]
    Rust,
    /// The body of a generic function instantiated at concrete types: any number type the
    /// context asks for (`v * 2` with `v: T`, `T: Float`), so that one body serves integer
    /// and float instantiations. An integer literal that becomes a float is rewritten into
    /// a float constant (exact up to 2^53).
    Generic,
}

/// [`infer`], with the rule for unsuffixed integer literals given.
pub fn infer_with(f: &mut Function, literals: Literals) -> Result<(), Vec<Diagnostic>> {
    infer_params(f, literals).map(|_| ())
}

/// [`infer_with`], also giving the type each [`Type::Param`] number became (none for one
/// that nothing decided; its variables are then errors unless unused). A `Param` is
/// decided by what it meets, like [`Type::Infer`], but only within its bound; it is not
/// defaulted the way a literal is unless it meets one (`f(1)` with `fn f<T: Num>(x: T)`
/// makes `T` an `i32`, as in Rust).
pub fn infer_params(
    f: &mut Function,
    literals: Literals,
) -> Result<std::collections::BTreeMap<u32, Scalar>, Vec<Diagnostic>> {
    let mut cx = Cx::new(f);
    cx.int_literal = match literals {
        Literals::Rust => Kind::Int,
        Literals::Generic => Kind::Num,
    };
    let body = f.body.clone();
    cx.block(f, &body);
    let ret = cx.type_term(&f.ret.clone());
    let result_span = f.vars[body.result].span;
    let result_ty = cx.var_ty[body.result.index()];
    // The hint is worked out first: a failed unification may have merged the two types.
    let hint = cx.result_hint(result_ty, ret);
    let (shown, declared) = (cx.show(result_ty), cx.show(ret));
    if cx.unify(result_ty, ret).is_err() {
        let mut message = format!(
            "mismatched types: the function's result has type `{shown}`, expected `{declared}`"
        );
        if let Some(hint) = hint {
            message.push_str("; ");
            message.push_str(&hint);
        }
        cx.errors.push(Diagnostic::new(result_span, message));
    }
    cx.default_literals();
    let params: Vec<(u32, Ty)> = cx.params.iter().map(|(&n, &t)| (n, t)).collect();
    let mut decided = std::collections::BTreeMap::new();
    for (n, t) in params {
        if let Some(Type::Scalar(s)) = cx.resolve(t) {
            decided.insert(n, s);
        }
    }
    let types: Vec<Option<Type>> = (0..f.vars.len())
        .map(|i| cx.resolve(cx.var_ty[i]))
        .collect();
    // A mismatch leaves the types it met undecided: only the mismatch is reported.
    let mismatched = !cx.errors.is_empty();
    for (i, t) in types.iter().enumerate() {
        match t {
            Some(t) => f.vars[Handle::new(i)].ty = t.clone(),
            None => {
                let var = &f.vars[Handle::new(i)];
                if cx.used[i] && !mismatched {
                    cx.errors.push(Diagnostic::new(
                        var.span,
                        format!(
                            "cannot infer the type of `{}`; add a type annotation",
                            var.name
                        ),
                    ));
                } else {
                    // An unused variable of unknown type (e.g. a `let _ = ...` whose value
                    // was never constrained): give it unit type.
                    f.vars[Handle::new(i)].ty = Type::unit();
                }
            }
        }
    }
    // An integer literal can become a float where it may take any number type (a generic
    // function's body, or a function called from one).
    let vars = &f.vars;
    float_literals(&mut f.body, &|v| {
        vars[v].ty.scalar().is_some_and(Scalar::is_float)
    });
    if cx.errors.is_empty() {
        check_ops(f, &f.body, &mut cx.errors);
    }
    if cx.errors.is_empty() {
        Ok(decided)
    } else {
        Err(dedup(cx.errors))
    }
}

/// Rewrites each integer constant whose variable `is_float` into the same float constant.
fn float_literals(b: &mut Block, is_float: &impl Fn(VarId) -> bool) {
    for s in &mut b.stmts {
        if let Expr::Const(Const::Int(i)) = s.expr
            && is_float(s.var)
        {
            s.expr = Expr::Const(Const::Float(i as f64));
        }
        crate::captures::for_each_block_mut(&mut s.expr, &mut |b, kind| match kind {
            crate::captures::BlockKind::Branch => float_literals(b, is_float),
            crate::captures::BlockKind::Lambda(l) => float_literals(&mut l.body, is_float),
        });
    }
}

fn dedup(mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut seen = std::collections::HashSet::new();
    errors.retain(|e| seen.insert((e.span, e.message.clone())));
    errors
}

type Ty = usize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Any,
    /// Any scalar type (a type parameter bounded by `Scalar`).
    Scalar,
    Int,
    Float,
    /// An integer or a float (an unsuffixed integer literal of a generic function).
    Num,
}

#[derive(Clone, Debug)]
enum Node {
    Unknown(Kind),
    Scalar(Scalar),
    Seq(Ty),
    Tuple(Vec<Ty>),
}

struct Cx {
    nodes: Vec<Node>,
    parent: Vec<Ty>,
    var_ty: Vec<Ty>,
    used: Vec<bool>,
    errors: Vec<Diagnostic>,
    /// The kind of an unsuffixed integer literal (see [`Literals`]).
    int_literal: Kind,
    /// The term of each [`Type::Param`] number.
    params: std::collections::HashMap<u32, Ty>,
    /// Per term (meaningful at roots): whether its class holds a [`Type::Param`], and
    /// whether it holds a literal. A class is given a default type (`i32`, `f64`) unless
    /// it holds a param and no literal.
    holds: Vec<(bool, bool)>,
}

impl Cx {
    fn new(f: &Function) -> Cx {
        let mut cx = Cx {
            nodes: Vec::new(),
            parent: Vec::new(),
            var_ty: Vec::new(),
            used: vec![false; f.vars.len()],
            errors: Vec::new(),
            int_literal: Kind::Int,
            params: std::collections::HashMap::new(),
            holds: Vec::new(),
        };
        for (_, v) in f.vars.iter() {
            let t = cx.type_term(&v.ty);
            cx.var_ty.push(t);
        }
        for p in &f.params {
            cx.used[p.index()] = true;
        }
        cx
    }

    fn node(&mut self, n: Node) -> Ty {
        self.nodes.push(n);
        self.holds.push((false, false));
        self.parent.push(self.parent.len());
        self.parent.len() - 1
    }

    fn type_term(&mut self, t: &Type) -> Ty {
        match t {
            Type::Infer => self.node(Node::Unknown(Kind::Any)),
            Type::Param(n, b) => {
                if let Some(&t) = self.params.get(n) {
                    return t;
                }
                let kind = match b {
                    Bound::Scalar => Kind::Scalar,
                    Bound::Num => Kind::Num,
                    Bound::Int => Kind::Int,
                    Bound::Float => Kind::Float,
                };
                let t = self.node(Node::Unknown(kind));
                self.holds[t].0 = true;
                self.params.insert(*n, t);
                t
            }
            Type::Scalar(s) => self.node(Node::Scalar(*s)),
            Type::Seq(e) => {
                let e = self.type_term(e);
                self.node(Node::Seq(e))
            }
            Type::Tuple(ts) => {
                let ts = ts.iter().map(|t| self.type_term(t)).collect();
                self.node(Node::Tuple(ts))
            }
        }
    }

    fn find(&mut self, t: Ty) -> Ty {
        let mut r = t;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut c = t;
        while self.parent[c] != r {
            let next = self.parent[c];
            self.parent[c] = r;
            c = next;
        }
        r
    }

    fn scalar(&mut self, s: Scalar) -> Ty {
        self.node(Node::Scalar(s))
    }

    fn fresh(&mut self, k: Kind) -> Ty {
        self.node(Node::Unknown(k))
    }

    fn seq_of(&mut self, e: Ty) -> Ty {
        self.node(Node::Seq(e))
    }

    /// Unifies two terms; on failure returns a message describing both.
    fn unify(&mut self, a: Ty, b: Ty) -> Result<(), ()> {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return Ok(());
        }
        match (self.nodes[a].clone(), self.nodes[b].clone()) {
            (Node::Unknown(ka), Node::Unknown(kb)) => {
                let k = match (ka, kb) {
                    (Kind::Any, k) | (k, Kind::Any) => k,
                    (Kind::Scalar, k) | (k, Kind::Scalar) => k,
                    (Kind::Num, k) | (k, Kind::Num) => k,
                    (x, y) if x == y => x,
                    _ => return Err(()),
                };
                self.nodes[b] = Node::Unknown(k);
                self.holds[b].0 |= self.holds[a].0;
                self.holds[b].1 |= self.holds[a].1;
                self.parent[a] = b;
                Ok(())
            }
            (Node::Unknown(k), other) | (other, Node::Unknown(k)) => {
                let ok = match (&other, k) {
                    (_, Kind::Any) => true,
                    (Node::Scalar(_), Kind::Scalar) => true,
                    (Node::Scalar(s), Kind::Int) => s.is_int(),
                    (Node::Scalar(s), Kind::Float) => s.is_float(),
                    (Node::Scalar(s), Kind::Num) => s.is_int() || s.is_float(),
                    _ => false,
                };
                if !ok {
                    return Err(());
                }
                let (unknown, known) = if matches!(self.nodes[a], Node::Unknown(_)) {
                    (a, b)
                } else {
                    (b, a)
                };
                self.parent[unknown] = known;
                Ok(())
            }
            (Node::Scalar(x), Node::Scalar(y)) => {
                if x == y {
                    Ok(())
                } else {
                    Err(())
                }
            }
            (Node::Seq(x), Node::Seq(y)) => {
                self.parent[a] = b;
                self.unify(x, y)
            }
            (Node::Tuple(xs), Node::Tuple(ys)) => {
                if xs.len() != ys.len() {
                    return Err(());
                }
                self.parent[a] = b;
                for (x, y) in xs.into_iter().zip(ys) {
                    self.unify(x, y)?;
                }
                Ok(())
            }
            _ => Err(()),
        }
    }

    /// Unifies and reports a mismatch at `span`, saying what was being checked.
    fn unify_at(&mut self, actual: Ty, expected: Ty, span: Span, what: &str) -> bool {
        let (ta, te) = (self.show(actual), self.show(expected));
        if self.unify(actual, expected).is_err() {
            self.errors.push(Diagnostic::new(
                span,
                format!("mismatched types: {what} has type `{ta}`, expected `{te}`"),
            ));
            false
        } else {
            true
        }
    }

    /// A suggestion for a result whose type differs from the declared one only by a level
    /// of nesting: a sequence of sequences declared as a flat `Vec<T>` (or the reverse).
    fn result_hint(&mut self, actual: Ty, declared: Ty) -> Option<String> {
        let (a, d) = (self.get(actual), self.get(declared));
        match (a, d) {
            (Node::Tuple(xs), Node::Tuple(ys)) if xs.len() == ys.len() => {
                xs.into_iter().zip(ys).enumerate().find_map(|(i, (x, y))| {
                    self.result_hint(x, y)
                        .map(|h| format!("component {i}: {h}"))
                })
            }
            (Node::Seq(x), Node::Seq(y)) => match (self.get(x), self.get(y)) {
                (Node::Seq(inner), Node::Scalar(_) | Node::Unknown(_)) => {
                    let t = self.show(inner);
                    Some(format!(
                        "a sequence of rows (each a `[{t}]`) is returned as `Nested<{t}>`, \
                         dpl's ragged sequence of sequences: declare it `Nested<{t}>`"
                    ))
                }
                (Node::Scalar(_) | Node::Unknown(_), Node::Seq(_)) => {
                    Some("help: this result is a flat sequence; declare it as `Vec<T>`".to_string())
                }
                _ => None,
            },
            _ => None,
        }
    }

    fn show(&mut self, t: Ty) -> String {
        let t = self.find(t);
        match self.nodes[t].clone() {
            Node::Unknown(Kind::Any) => "_".into(),
            Node::Unknown(Kind::Scalar) => "{scalar}".into(),
            Node::Unknown(Kind::Int) => "{integer}".into(),
            Node::Unknown(Kind::Float) => "{float}".into(),
            Node::Unknown(Kind::Num) => "{number}".into(),
            Node::Scalar(s) => s.name().into(),
            Node::Seq(e) => format!("[{}]", self.show(e)),
            Node::Tuple(ts) => {
                let parts: Vec<String> = ts.into_iter().map(|t| self.show(t)).collect();
                if parts.len() == 1 {
                    format!("({},)", parts[0])
                } else {
                    format!("({})", parts.join(", "))
                }
            }
        }
    }

    /// The resolved node of a term.
    fn get(&mut self, t: Ty) -> Node {
        let r = self.find(t);
        self.nodes[r].clone()
    }

    fn default_literals(&mut self) {
        for i in 0..self.nodes.len() {
            if self.find(i) == i && (!self.holds[i].0 || self.holds[i].1) {
                match self.nodes[i] {
                    Node::Unknown(Kind::Int | Kind::Num) => {
                        self.nodes[i] = Node::Scalar(Scalar::I32)
                    }
                    Node::Unknown(Kind::Float) => self.nodes[i] = Node::Scalar(Scalar::F64),
                    _ => {}
                }
            }
        }
    }

    fn resolve(&mut self, t: Ty) -> Option<Type> {
        match self.get(t) {
            Node::Unknown(_) => None,
            Node::Scalar(s) => Some(Type::Scalar(s)),
            Node::Seq(e) => Some(Type::seq(self.resolve(e)?)),
            Node::Tuple(ts) => {
                let mut out = Vec::with_capacity(ts.len());
                for t in ts {
                    out.push(self.resolve(t)?);
                }
                Some(Type::Tuple(out))
            }
        }
    }

    fn ty(&mut self, v: VarId) -> Ty {
        self.used[v.index()] = true;
        self.var_ty[v.index()]
    }

    /// The element type of a sequence variable, or an error at `span`.
    fn elem_of(&mut self, f: &Function, v: VarId, span: Span, what: &str) -> Ty {
        let t = self.ty(v);
        match self.get(t) {
            Node::Seq(e) => e,
            Node::Unknown(Kind::Any) => {
                let e = self.fresh(Kind::Any);
                let s = self.seq_of(e);
                let _ = self.unify(t, s);
                e
            }
            _ => {
                // Point at the argument itself (its own span) and describe it by its type:
                // the variable may be a compiler temporary whose name means nothing to
                // the user.
                let shown = self.show(t);
                self.errors.push(Diagnostic::new(
                    f.vars[v].span.or(span),
                    format!("{what} must be a sequence, found `{shown}`"),
                ));
                self.fresh(Kind::Any)
            }
        }
    }

    /// Requires an integer type for an index; an undecided integer becomes `usize`.
    fn index_ty(&mut self, f: &Function, t: Ty, span: Span, what: &str) {
        match self.get(t) {
            Node::Unknown(_) => {
                let u = self.scalar(Scalar::Usize);
                let _ = self.unify(t, u);
            }
            Node::Scalar(s) if s.is_int() => {}
            _ => {
                let shown = self.show(t);
                let _ = f;
                self.errors.push(Diagnostic::new(
                    span,
                    format!("{what} must be an integer, found `{shown}`"),
                ));
            }
        }
    }

    fn block(&mut self, f: &Function, b: &Block) {
        for s in &b.stmts {
            self.stmt(f, s);
        }
        self.used[b.result.index()] = true;
    }

    /// Types a lambda applied to arguments of types `args`; returns its result type.
    fn lambda(&mut self, f: &Function, l: &Lambda, args: &[Ty], span: Span, what: &str) -> Ty {
        if l.params.len() != args.len() {
            self.errors.push(Diagnostic::new(
                span,
                format!(
                    "{what} takes {} argument(s), but the closure has {}",
                    args.len(),
                    l.params.len()
                ),
            ));
        }
        for (p, a) in l.params.iter().zip(args) {
            let pt = self.ty(*p);
            let pspan = f.vars[*p].span;
            let pspan = if pspan == Span::NONE { span } else { pspan };
            self.unify_at(
                pt,
                *a,
                pspan,
                &format!("the closure parameter `{}`", f.vars[*p].name),
            );
        }
        self.block(f, &l.body);
        self.ty(l.body.result)
    }

    fn stmt(&mut self, f: &Function, s: &Stmt) {
        let out = self.ty(s.var);
        let span = s.span;
        let t = match &s.expr {
            Expr::Const(c) => match c {
                Const::Bool(_) => self.scalar(Scalar::Bool),
                // A literal declared as any number (`Type::Param` bounded by `Num`: one
                // in a generic body inlined into this one) may become a float.
                Const::Int(_) => {
                    let t = match f.vars[s.var].ty {
                        Type::Param(_, Bound::Num) => self.fresh(Kind::Num),
                        _ => self.fresh(self.int_literal),
                    };
                    self.holds[t].1 = true;
                    t
                }
                Const::Float(_) => {
                    let t = self.fresh(Kind::Float);
                    self.holds[t].1 = true;
                    t
                }
            },
            Expr::Var(v) => self.ty(*v),
            Expr::Unary(_, v) => self.ty(*v),
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.ty(*a), self.ty(*b));
                match op {
                    BinOp::Shl | BinOp::Shr => {
                        self.index_ty(f, tb, span, "a shift amount");
                        ta
                    }
                    _ => {
                        let sym = op.symbol();
                        // An operand that is a sequence (e.g. a row used as a number): say
                        // so about that operand, and keep the result unknown so the mistake
                        // is not reported again where the result is used.
                        let seq_operand = [(ta, *a, "left"), (tb, *b, "right")]
                            .into_iter()
                            .find(|(t, _, _)| matches!(self.get(*t), Node::Seq(_)));
                        if let Some((t, v, side)) = seq_operand {
                            let shown = self.show(t);
                            self.errors.push(Diagnostic::new(
                                f.vars[v].span.or(span),
                                format!(
                                    "`{sym}` works on numbers, but its {side} operand is a sequence \
                                     `{shown}`; to apply it to every element use \
                                     `map(|v| ..., seq)`"
                                ),
                            ));
                            return;
                        }
                        self.unify_at(tb, ta, span, &format!("the right operand of `{sym}`"));
                        if op.is_comparison() {
                            self.scalar(Scalar::Bool)
                        } else {
                            ta
                        }
                    }
                }
            }
            Expr::Cast(v, s) => {
                let _ = self.ty(*v);
                self.scalar(*s)
            }
            Expr::Tuple(vs) => {
                let ts = vs.iter().map(|v| self.ty(*v)).collect();
                self.node(Node::Tuple(ts))
            }
            Expr::Field(v, n) => {
                let tv = self.ty(*v);
                match self.get(tv) {
                    Node::Tuple(ts) if (*n as usize) < ts.len() => ts[*n as usize],
                    Node::Tuple(ts) => {
                        self.errors.push(Diagnostic::new(
                            span,
                            format!("no field `{n}` on a tuple of {} element(s)", ts.len()),
                        ));
                        self.fresh(Kind::Any)
                    }
                    Node::Unknown(Kind::Any) => {
                        self.errors.push(Diagnostic::new(
                            span,
                            format!(
                                "the type of `{}` must be known here; add a type annotation",
                                f.vars[*v].name
                            ),
                        ));
                        self.fresh(Kind::Any)
                    }
                    _ => {
                        let shown = self.show(tv);
                        self.errors.push(Diagnostic::new(
                            span,
                            format!("`.{n}` needs a tuple, found `{shown}`"),
                        ));
                        self.fresh(Kind::Any)
                    }
                }
            }
            Expr::If(c, a, b) => {
                let tc = self.ty(*c);
                let bool_t = self.scalar(Scalar::Bool);
                self.unify_at(
                    tc,
                    bool_t,
                    f.vars[*c].span.or(span),
                    "the condition of `if`",
                );
                self.block(f, a);
                self.block(f, b);
                let (ta, tb) = (self.ty(a.result), self.ty(b.result));
                self.unify_at(tb, ta, f.vars[b.result].span.or(span), "the `else` branch");
                ta
            }
            Expr::Index { seq, index, .. } => {
                let e = self.elem_of(f, *seq, span, "an indexed value");
                let ti = self.ty(*index);
                self.index_ty(f, ti, span, "an index");
                e
            }
            Expr::Len(v) => {
                let _ = self.elem_of(f, *v, span, "the argument of `len`");
                self.scalar(Scalar::Usize)
            }
            Expr::Math(m, args) => {
                let ts: Vec<Ty> = args.iter().map(|a| self.ty(*a)).collect();
                for (k, t) in ts.iter().enumerate().skip(1) {
                    self.unify_at(
                        *t,
                        ts[0],
                        span,
                        &format!("argument {} of `{}`", k + 1, m.name()),
                    );
                }
                if m.float_only()
                    && let Some(t0) = ts.first()
                    && let Node::Unknown(Kind::Any | Kind::Scalar | Kind::Num) = self.get(*t0)
                {
                    let fl = self.fresh(Kind::Float);
                    let _ = self.unify(*t0, fl);
                }
                ts.first().copied().unwrap_or_else(|| self.fresh(Kind::Any))
            }
            Expr::Prim {
                prim,
                lambdas,
                args,
            } => self.prim(f, *prim, lambdas, args, span),
            Expr::Soac(soac) => self.soac(f, soac, span),
            Expr::Assert(_) => self.node(Node::Tuple(Vec::new())),
            Expr::Loop(l) => {
                // Each param has its init's type; the condition is a bool and the body gives
                // the tuple of the params' next values.
                let mut params = Vec::with_capacity(l.params.len());
                for (&p, &init) in l.params.iter().zip(&l.inits) {
                    let (tp, ti) = (self.ty(p), self.ty(init));
                    let what = format!("the loop variable `{}`", f.vars[p].name);
                    self.unify_at(tp, ti, f.vars[init].span.or(span), &what);
                    params.push(tp);
                }
                self.block(f, &l.cond);
                let (tc, bool_t) = (self.ty(l.cond.result), self.scalar(Scalar::Bool));
                let cspan = f.vars[l.cond.result].span.or(span);
                self.unify_at(tc, bool_t, cspan, "the condition of a loop");
                self.block(f, &l.body);
                let t = self.node(Node::Tuple(params));
                let bspan = f.vars[l.body.result].span.or(span);
                let tb = self.ty(l.body.result);
                self.unify_at(tb, t, bspan, "the next values of a loop's variables");
                t
            }
        };
        let name = f.vars[s.var].name.clone();
        self.unify_at(t, out, f.vars[s.var].span.or(span), &format!("`{name}`"));
    }

    fn prim(
        &mut self,
        f: &Function,
        prim: Prim,
        lambdas: &[Lambda],
        args: &[VarId],
        span: Span,
    ) -> Ty {
        let name = prim.name();
        let arg = |k: usize| args.get(k).copied();
        let what = |k: usize| format!("argument {} of `{name}`", k + 1);
        // Element type of data argument k.
        macro_rules! elem {
            ($k:expr) => {
                match arg($k) {
                    Some(v) => self.elem_of(f, v, span, &what($k)),
                    None => self.fresh(Kind::Any),
                }
            };
        }
        macro_rules! scalar_arg {
            ($k:expr) => {
                match arg($k) {
                    Some(v) => self.ty(v),
                    None => self.fresh(Kind::Any),
                }
            };
        }
        let lambda = |cx: &mut Cx, k: usize, ins: &[Ty]| -> Ty {
            match lambdas.get(k) {
                Some(l) => cx.lambda(
                    f,
                    l,
                    ins,
                    span,
                    &format!("the function argument of `{name}`"),
                ),
                None => cx.fresh(Kind::Any),
            }
        };
        match prim {
            Prim::Map => {
                let ins: Vec<Ty> = (0..args.len()).map(|k| elem!(k)).collect();
                let r = lambda(self, 0, &ins);
                self.seq_of(r)
            }
            Prim::Zip => {
                let ins: Vec<Ty> = (0..args.len()).map(|k| elem!(k)).collect();
                let t = self.node(Node::Tuple(ins));
                self.seq_of(t)
            }
            Prim::Unzip => {
                let e = elem!(0);
                match self.get(e) {
                    Node::Tuple(ts) => {
                        let seqs = ts.into_iter().map(|t| self.seq_of(t)).collect();
                        self.node(Node::Tuple(seqs))
                    }
                    _ => {
                        let shown = self.show(e);
                        self.errors.push(Diagnostic::new(
                            span,
                            format!("`unzip` needs a sequence of tuples, found `[{shown}]`"),
                        ));
                        self.fresh(Kind::Any)
                    }
                }
            }
            Prim::Gather => {
                let e = elem!(0);
                let i = elem!(1);
                self.index_ty(f, i, span, "the elements of the index sequence");
                self.seq_of(e)
            }
            Prim::Permute => {
                let e = elem!(0);
                let i = elem!(1);
                self.index_ty(f, i, span, "the elements of the index sequence");
                self.seq_of(e)
            }
            Prim::Scatter | Prim::ScatterReduce => {
                let e = elem!(0);
                let i = elem!(1);
                self.index_ty(f, i, span, "the elements of the index sequence");
                let d = elem!(2);
                self.unify_at(
                    d,
                    e,
                    span,
                    &format!("the elements of the destination of `{name}`"),
                );
                if prim == Prim::ScatterReduce {
                    let r = lambda(self, 0, &[e, e]);
                    self.unify_at(
                        r,
                        e,
                        span,
                        &format!("the result of the operator of `{name}`"),
                    );
                }
                self.seq_of(e)
            }
            Prim::Reduce | Prim::ExclusiveScan => {
                let e = elem!(0);
                let init = scalar_arg!(1);
                self.unify_at(init, e, span, &format!("the start value of `{name}`"));
                let r = lambda(self, 0, &[e, e]);
                self.unify_at(
                    r,
                    e,
                    span,
                    &format!("the result of the operator of `{name}`"),
                );
                if prim == Prim::Reduce {
                    e
                } else {
                    self.seq_of(e)
                }
            }
            Prim::Scan => {
                let e = elem!(0);
                let r = lambda(self, 0, &[e, e]);
                self.unify_at(r, e, span, "the result of the operator of `scan`");
                self.seq_of(e)
            }
            Prim::Sum | Prim::Min | Prim::Max => elem!(0),
            Prim::Any | Prim::All | Prim::Count => {
                let e = elem!(0);
                let b = self.scalar(Scalar::Bool);
                if lambdas.is_empty() {
                    self.unify_at(
                        e,
                        b,
                        span,
                        &format!("the elements of the argument of `{name}`"),
                    );
                } else {
                    let r = lambda(self, 0, &[e]);
                    self.unify_at(
                        r,
                        b,
                        span,
                        &format!("the result of the predicate of `{name}`"),
                    );
                }
                if prim == Prim::Count {
                    self.scalar(Scalar::Usize)
                } else {
                    b
                }
            }
            Prim::Filter => {
                let e = elem!(0);
                let b = self.scalar(Scalar::Bool);
                let r = lambda(self, 0, &[e]);
                self.unify_at(r, b, span, "the result of the predicate of `filter`");
                self.seq_of(e)
            }
            Prim::Replicate => {
                let v = scalar_arg!(0);
                let n = scalar_arg!(1);
                let u = self.scalar(Scalar::Usize);
                self.unify_at(n, u, span, "the count of `replicate`");
                self.seq_of(v)
            }
            Prim::Indices => {
                let _ = elem!(0);
                let u = self.scalar(Scalar::Usize);
                self.seq_of(u)
            }
            Prim::Range => {
                let n = scalar_arg!(0);
                let u = self.scalar(Scalar::Usize);
                self.unify_at(n, u, span, "the argument of `range`");
                let u = self.scalar(Scalar::Usize);
                self.seq_of(u)
            }
            Prim::Len => {
                let _ = elem!(0);
                self.scalar(Scalar::Usize)
            }
            Prim::Sort => {
                let e = elem!(0);
                self.seq_of(e)
            }
            Prim::SortByKey => {
                let _ = elem!(0);
                let v = elem!(1);
                self.seq_of(v)
            }
        }
    }

    fn soac(&mut self, f: &Function, s: &Soac, span: Span) -> Ty {
        let u = self.scalar(Scalar::Usize);
        let tl = self.ty(s.len);
        self.unify_at(tl, u, span, "the length of a combinator");
        let u = self.scalar(Scalar::Usize);
        let e = self.lambda(f, &s.elem, &[u], span, "an index function");
        let name = s.kind.name();
        let op = |cx: &mut Cx, l: &Lambda, ins: &[Ty]| cx.lambda(f, l, ins, span, name);
        match &s.kind {
            SoacKind::Map => self.seq_of(e),
            SoacKind::Reduce { op: l, init } => {
                if let Some(i) = init {
                    let ti = self.ty(*i);
                    self.unify_at(ti, e, span, "the start value");
                }
                let r = op(self, l, &[e, e]);
                self.unify_at(r, e, span, "the operator's result");
                e
            }
            SoacKind::Scan { op: l } => {
                let r = op(self, l, &[e, e]);
                self.unify_at(r, e, span, "the operator's result");
                self.seq_of(e)
            }
            SoacKind::ExclusiveScan { op: l, init } => {
                let ti = self.ty(*init);
                self.unify_at(ti, e, span, "the start value");
                let r = op(self, l, &[e, e]);
                self.unify_at(r, e, span, "the operator's result");
                self.seq_of(e)
            }
            SoacKind::Filter { pred } => {
                let r = op(self, pred, &[e]);
                let b = self.scalar(Scalar::Bool);
                self.unify_at(r, b, span, "the predicate's result");
                self.seq_of(e)
            }
            SoacKind::Scatter { .. } | SoacKind::ScatterReduce { .. } | SoacKind::Permute => {
                let parts = match self.get(e) {
                    Node::Tuple(t) if t.len() == 2 => t,
                    _ => {
                        self.errors.push(Diagnostic::new(
                            span,
                            format!(
                                "the index function of `{name}` must return an (index, value) pair"
                            ),
                        ));
                        return self.fresh(Kind::Any);
                    }
                };
                self.index_ty(f, parts[0], span, "a target index");
                let v = parts[1];
                if let SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } = &s.kind {
                    let d = self.elem_of(f, *dst, span, "the destination");
                    self.unify_at(d, v, span, "the destination's elements");
                }
                if let SoacKind::ScatterReduce { op: l, .. } = &s.kind {
                    let r = op(self, l, &[v, v]);
                    self.unify_at(r, v, span, "the operator's result");
                }
                self.seq_of(v)
            }
            SoacKind::Sort => self.seq_of(e),
            SoacKind::SortByKey => match self.get(e) {
                Node::Tuple(t) if t.len() == 2 => self.seq_of(t[1]),
                _ => {
                    self.errors.push(Diagnostic::new(
                        span,
                        "the index function of `sort_by_key` must return a (key, value) pair",
                    ));
                    self.fresh(Kind::Any)
                }
            },
        }
    }
}

trait OrSpan {
    fn or(self, other: Span) -> Span;
}

impl OrSpan for Span {
    fn or(self, other: Span) -> Span {
        if self == Span::NONE { other } else { self }
    }
}

/// Checks, with final types, that each operator is applied to types that support it.
fn check_ops(f: &Function, b: &Block, errors: &mut Vec<Diagnostic>) {
    b.walk(&mut |s| {
        let ty = |v: VarId| &f.vars[v].ty;
        let scalar = |v: VarId| ty(v).scalar();
        let mut err = |m: String| errors.push(Diagnostic::new(s.span, m));
        match &s.expr {
            Expr::Const(Const::Int(i)) => {
                if let Some(t) = scalar(s.var).filter(|t| t.is_int()) {
                    let (lo, hi) = t.int_range();
                    if *i < lo {
                        err(if lo == 0 {
                            format!(
                                "`{i}` is negative where a `{t}` is expected: an index, a \
                                 length or a count is never negative"
                            )
                        } else {
                            format!("the literal `{i}` is below `{t}::MIN`")
                        })
                    } else if *i > hi {
                        err(format!("the literal `{i}` is above `{t}::MAX`"))
                    }
                }
            }
            // As rustc's `overflowing_literals`: a finite literal that `f32` rounds to an
            // infinity.
            Expr::Const(Const::Float(x))
                if x.is_finite()
                    && scalar(s.var).is_some_and(|t| {
                        let rounded = match t {
                            Scalar::F32 => f64::from(*x as f32),
                            Scalar::F16 => crate::float16::from_f64::<crate::float16::f16>(*x).to_f64(),
                            Scalar::BF16 => crate::float16::from_f64::<crate::float16::bf16>(*x).to_f64(),
                            _ => 0.0,
                        };
                        !rounded.is_finite()
                    }) =>
            {
                let t = scalar(s.var).map_or("", Scalar::name);
                err(format!("the literal `{x:e}` is out of range for `{t}`"))
            }
            Expr::Unary(op, v) => match (op, scalar(*v)) {
                (UnOp::Neg, Some(t)) if t.is_float() || t.is_signed_int() => {}
                (UnOp::Neg, _) => err(format!(
                    "cannot negate a value of type `{}`; `-` needs a signed integer or a float",
                    ty(*v)
                )),
                (UnOp::Not, Some(t)) if t.is_int() || t == Scalar::Bool => {}
                (UnOp::Not, _) => {
                    err(format!("`!` needs a bool or an integer, found `{}`", ty(*v)))
                }
            },
            Expr::Binary(op, a, _) => {
                let t = scalar(*a);
                let ok = match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                        t.is_some_and(|t| t != Scalar::Bool)
                    }
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                        t.is_some_and(|t| t.is_int() || t == Scalar::Bool)
                    }
                    BinOp::Shl | BinOp::Shr => t.is_some_and(Scalar::is_int),
                    BinOp::Eq | BinOp::Ne => t.is_some(),
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => t.is_some(),
                };
                if !ok {
                    err(format!(
                        "`{}` cannot be applied to values of type `{}`",
                        op.symbol(),
                        ty(*a)
                    ));
                }
            }
            Expr::Cast(v, to) => match scalar(*v) {
                None => err(format!("only scalars can be cast with `as`, found `{}`", ty(*v))),
                Some(from) => {
                    let ok = from == *to
                        || (from == Scalar::Bool && to.is_int())
                        || (from != Scalar::Bool && *to != Scalar::Bool);
                    if !ok {
                        err(format!(
                            "cannot cast `{from}` as `{to}`; `as` converts between numbers, and from bool to integers"
                        ))
                    }
                }
            },
            Expr::Math(m, args) => {
                let t = args.first().and_then(|a| scalar(*a));
                if args.len() != m.arity() {
                    err(format!("`{}` takes {} argument(s)", m.name(), m.arity()));
                }
                let ok = match t {
                    Some(t) if t.is_float() => true,
                    Some(t) if t.is_int() && !m.float_only() => {
                        *m != MathFn::Abs || t.is_signed_int()
                    }
                    _ => false,
                };
                if !ok {
                    let what = if m.float_only() { "a float" } else { "a number" };
                    let found = args.first().map(|a| ty(*a));
                    err(format!(
                        "`{}` needs {what}, found `{}`{}",
                        m.name(),
                        found.map(Type::to_string).unwrap_or_default(),
                        tuple_hint(*m, found)
                    ));
                }
            }
            Expr::Prim { prim: p @ (Prim::Sum | Prim::Min | Prim::Max), args, .. } => {
                let e = args.first().and_then(|a| ty(*a).elem()).and_then(Type::scalar);
                if e.is_none_or(|e| e == Scalar::Bool) {
                    let found = args.first().map(|a| ty(*a));
                    let hint = match p {
                        Prim::Min => tuple_hint(MathFn::Min, found.and_then(Type::elem)),
                        Prim::Max => tuple_hint(MathFn::Max, found.and_then(Type::elem)),
                        _ => String::new(),
                    };
                    err(format!(
                        "`{}` needs a sequence of numbers, found `{}`{hint}",
                        p.name(),
                        found.map(Type::to_string).unwrap_or_default()
                    ));
                }
            }
            Expr::Prim { prim: p @ (Prim::Scatter | Prim::ScatterReduce), args, .. } => {
                if let Some(e) = args.first().and_then(|a| ty(*a).elem()).filter(|e| e.holds_seq()) {
                    err(format!(
                        "`{}` of elements that are sequences (`{e}`) is not supported: to reorder rows use `gather(rows, idx)` or `permute(rows, idx)`",
                        p.name()
                    ));
                }
            }
            Expr::Prim {
                prim: p @ (Prim::Sort | Prim::SortByKey),
                args,
                ..
            } => {
                let elem = |k: usize| args.get(k).and_then(|a| ty(*a).elem());
                if let Some(m) = sort_elems(p.name(), elem(0), elem(1)) {
                    err(m);
                }
            }
            Expr::Soac(soac) if matches!(soac.kind, SoacKind::Sort | SoacKind::SortByKey) => {
                let e = Some(&f.vars[soac.elem.body.result].ty);
                let m = match (&soac.kind, e) {
                    (SoacKind::SortByKey, Some(Type::Tuple(kv))) if kv.len() == 2 => {
                        sort_elems("sort_by_key", kv.first(), kv.get(1))
                    }
                    (SoacKind::SortByKey, _) => Some(
                        "the index function of `sort_by_key` must return a (key, value) pair"
                            .into(),
                    ),
                    _ => sort_elems("sort", e, None),
                };
                if let Some(m) = m {
                    err(m);
                }
            }
            _ => {}
        }
    });
}

/// Why `sort` / `sort_by_key` cannot order keys of type `key` (or carry values of type
/// `val`), if they cannot: keys are scalars or tuples of them (compared lexicographically),
/// values anything without sequences in it.
fn sort_elems(name: &str, key: Option<&Type>, val: Option<&Type>) -> Option<String> {
    fn orderable(t: &Type) -> bool {
        match t {
            Type::Scalar(_) => true,
            Type::Tuple(ts) => !ts.is_empty() && ts.iter().all(orderable),
            Type::Seq(_) | Type::Infer | Type::Param(..) => false,
        }
    }
    fn flat(t: &Type) -> bool {
        match t {
            Type::Scalar(_) => true,
            Type::Tuple(ts) => ts.iter().all(flat),
            Type::Seq(_) | Type::Infer | Type::Param(..) => false,
        }
    }
    let shown = |t: Option<&Type>| t.map(|t| format!("[{t}]")).unwrap_or_default();
    if !key.is_some_and(orderable) {
        let what = if name == "sort" { "a sequence" } else { "keys" };
        return Some(format!(
            "`{name}` needs {what} of scalars or tuples of scalars, found `{}`",
            shown(key)
        ));
    }
    match val {
        Some(v) if !flat(v) => Some(format!(
            "`{name}` reorders values that are scalars or tuples of scalars, found `{}`",
            shown(val)
        )),
        _ => None,
    }
}

/// For `min`/`max` of tuples (Rust would order them lexicographically; dpl does not): the
/// forms that say which order is meant.
fn tuple_hint(m: MathFn, found: Option<&Type>) -> String {
    let arg = match m {
        MathFn::Min => "argmin",
        MathFn::Max => "argmax",
        _ => return String::new(),
    };
    if !matches!(found, Some(Type::Tuple(_))) {
        return String::new();
    }
    format!(
        ": tuples have no order in dpl; for the position of the {} element use `{arg}(x)`, and to compare tuples by a key of your choice write it with `reduce(|a, b| if .. {{ a }} else {{ b }}, x, init)`",
        if m == MathFn::Min {
            "smallest"
        } else {
            "largest"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `fn f(x: param) -> ret { let a: declared = x; ...extra; result }`: `a` stands for a
    /// generic call's argument, typed by the callee's signature.
    fn copy_of(param: Type, declared: Type) -> (Function, VarId) {
        let mut f = Function::new("f", Type::Infer);
        let x = f.new_var("x", param, Span::NONE);
        f.params.push(x);
        let a = f.new_var("a", declared, Span::NONE);
        f.body.stmts.push(Stmt {
            var: a,
            expr: Expr::Var(x),
            span: Span::NONE,
        });
        f.body.result = a;
        (f, a)
    }

    fn f32s() -> Type {
        Type::seq(Type::Scalar(Scalar::F32))
    }

    #[test]
    fn a_param_takes_the_type_it_meets_within_its_bound() {
        let (mut f, a) = copy_of(f32s(), Type::seq(Type::Param(0, Bound::Float)));
        let decided = infer_params(&mut f, Literals::Rust).unwrap();
        assert_eq!(decided.get(&0), Some(&Scalar::F32));
        assert_eq!(f.vars[a].ty, f32s());
        // Outside the bound: a mismatch, reported once (no "cannot infer" after it).
        let ints = Type::seq(Type::Scalar(Scalar::I32));
        let (mut f, _) = copy_of(ints.clone(), Type::seq(Type::Param(0, Bound::Float)));
        let e = infer_params(&mut f, Literals::Rust).unwrap_err();
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].message.contains("expected `[{float}]`"), "{e:?}");
        // `Scalar` admits `bool` and every number, not a sequence.
        let (mut f, _) = copy_of(Type::bool(), Type::Param(0, Bound::Scalar));
        assert_eq!(
            infer_params(&mut f, Literals::Rust).unwrap().get(&0),
            Some(&Scalar::Bool)
        );
        let (mut f, _) = copy_of(ints, Type::Param(0, Bound::Scalar));
        assert!(infer_params(&mut f, Literals::Rust).is_err());
    }

    #[test]
    fn a_param_is_defaulted_only_with_a_literal() {
        // A `Num` parameter that meets only an integer literal becomes `i32`, as in Rust.
        let mut f = Function::new("f", Type::Infer);
        let one = f.new_var("one", Type::Infer, Span::NONE);
        let a = f.new_var("a", Type::Param(0, Bound::Num), Span::NONE);
        f.body.stmts.push(Stmt {
            var: one,
            expr: Expr::Const(Const::Int(1)),
            span: Span::NONE,
        });
        f.body.stmts.push(Stmt {
            var: a,
            expr: Expr::Var(one),
            span: Span::NONE,
        });
        f.body.result = a;
        let decided = infer_params(&mut f, Literals::Rust).unwrap();
        assert_eq!(decided.get(&0), Some(&Scalar::I32));
        // Nothing but the bound: undecided, and the value that needs it is an error.
        let mut f = Function::new("f", Type::Infer);
        let a = f.new_var("a", Type::Param(0, Bound::Float), Span::NONE);
        f.body.result = a;
        let e = infer_params(&mut f, Literals::Rust).unwrap_err();
        assert!(e[0].message.contains("cannot infer"), "{e:?}");
    }

    /// `v * 2` with `v: f32` and the literal `2` declared as `declared`: the function and
    /// the literal's variable.
    fn times_two(declared: Type) -> (Function, VarId) {
        let (mut f, a) = copy_of(Type::Scalar(Scalar::F32), Type::Infer);
        let two = f.new_var("two", declared, Span::NONE);
        let r = f.new_var("r", Type::Infer, Span::NONE);
        f.body.stmts.push(Stmt {
            var: two,
            expr: Expr::Const(Const::Int(2)),
            span: Span::NONE,
        });
        f.body.stmts.push(Stmt {
            var: r,
            expr: Expr::Binary(BinOp::Mul, a, two),
            span: Span::NONE,
        });
        f.body.result = r;
        (f, two)
    }

    #[test]
    fn a_literal_declared_as_any_number_can_become_a_float() {
        // From an inlined generic body: any number type.
        let (mut f, two) = times_two(Type::Param(1, Bound::Num));
        infer_params(&mut f, Literals::Rust).unwrap();
        assert_eq!(f.vars[two].ty, Type::Scalar(Scalar::F32));
        assert_eq!(f.body.stmts[1].expr, Expr::Const(Const::Float(2.0)));
        // The same literal undeclared is an integer, as in Rust.
        let (mut f, _) = times_two(Type::Infer);
        assert!(infer_params(&mut f, Literals::Rust).is_err());
    }
}
