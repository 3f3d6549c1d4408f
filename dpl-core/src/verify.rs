//! The IR verifier: checks the invariants that [`ir`](crate::ir) documents, so that every
//! pass can be followed by a check (as Cranelift's `verify_if`).
//!
//! * [`verify`] checks structure: every variable handle is in the arena and defined exactly
//!   once (function and lambda parameters, statements), every use is in scope (defined
//!   earlier in the same block or an enclosing one, or a parameter), every lambda lists as
//!   `captures` exactly the variables of enclosing scopes its body uses (in any order), and
//!   primitives, math functions and combinators have the number of arguments and lambda
//!   parameters the IR's tables give.
//! * [`verify_types`] checks types, after type inference: every variable has a known type
//!   and every statement is well typed (operators on the types Rust allows them on, the
//!   result types of the primitive table in [`Prim`] and of [`SoacKind`]).
//!
//! Both collect every error instead of stopping at the first. Neither panics on malformed
//! IR; `verify_types` quietly skips what `verify` reports (such as handles outside the
//! arena), so run `verify` first.

use std::collections::HashSet;

use crate::ir::*;

/// One violated invariant, naming the variable or statement concerned. Statements are named
/// by the variable they define (`%7`); a use inside a nested block is reported against the
/// statement that contains the block.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// A handle that is not in the function's arena.
    #[error("{var:?} is not a variable of this function (used {})", at_text(*.at))]
    NoSuchVar {
        /// The bad handle.
        var: VarId,
        /// The statement where it occurs (`None`: the function's parameters or result).
        at: Option<VarId>,
    },
    /// A variable defined by more than one parameter or statement.
    #[error("{var:?} is defined more than once")]
    Redefined {
        /// The variable.
        var: VarId,
    },
    /// A use of a variable that is not in scope there.
    #[error("{var:?} is used {} but is not in scope there", at_text(*.at))]
    NotInScope {
        /// The variable used.
        var: VarId,
        /// The statement containing the use (`None`: the function's result).
        at: Option<VarId>,
    },
    /// A lambda whose body uses a variable of an enclosing scope that its `captures` omit.
    #[error("a lambda in the statement defining {stmt:?} uses {var:?} but does not capture it")]
    MissingCapture {
        /// The captured variable.
        var: VarId,
        /// The statement whose expression holds the lambda.
        stmt: VarId,
    },
    /// A lambda that captures a variable its body does not use from an enclosing scope (or
    /// lists it twice).
    #[error(
        "a lambda in the statement defining {stmt:?} captures {var:?}, which its body does not use from an enclosing scope (or which is listed twice)"
    )]
    ExtraCapture {
        /// The listed variable.
        var: VarId,
        /// The statement whose expression holds the lambda.
        stmt: VarId,
    },
    /// Wrong number of arguments, lambdas or lambda parameters.
    #[error("the statement defining {stmt:?}: {message}")]
    Arity {
        /// The statement.
        stmt: VarId,
        /// What is expected.
        message: String,
    },
    /// A variable whose type is not known (contains [`Type::Infer`]).
    #[error("{var:?} has no known type")]
    UnknownType {
        /// The variable.
        var: VarId,
    },
    /// An ill-typed statement (or function result).
    #[error("{}: {message}", match .stmt { Some(s) => format!("the statement defining {s:?}"), None => "the function's result".to_string() })]
    Type {
        /// The statement (`None`: the function's result).
        stmt: Option<VarId>,
        /// What is wrong.
        message: String,
    },
}

fn at_text(at: Option<VarId>) -> String {
    match at {
        Some(s) => format!("in the statement defining {s:?}"),
        None => "by the function".to_string(),
    }
}

/// Checks the structural invariants of `f` (see the [module docs](self)).
pub fn verify(f: &Function) -> Result<(), Vec<VerifyError>> {
    let mut v = Structure {
        f,
        errors: Vec::new(),
        in_scope: vec![false; f.vars.len()],
    };
    v.definitions();
    for &p in &f.params {
        v.define(p);
    }
    v.block(&f.body, None);
    if v.errors.is_empty() {
        Ok(())
    } else {
        Err(v.errors)
    }
}

struct Structure<'a> {
    f: &'a Function,
    errors: Vec<VerifyError>,
    in_scope: Vec<bool>,
}

/// Calls `on_def` for every definition site and `on_use` for every use inside `b`,
/// recursively (nested blocks and lambda bodies, not lambda capture lists).
fn visit_block(b: &Block, on_def: &mut impl FnMut(VarId), on_use: &mut impl FnMut(VarId)) {
    for s in &b.stmts {
        on_def(s.var);
        s.expr.operands().into_iter().for_each(&mut *on_use);
        match &s.expr {
            Expr::If(_, t, e) => {
                visit_block(t, on_def, on_use);
                visit_block(e, on_def, on_use);
            }
            Expr::Loop(l) => {
                l.params.iter().copied().for_each(&mut *on_def);
                visit_block(&l.cond, on_def, on_use);
                visit_block(&l.body, on_def, on_use);
            }
            e => e.for_each_lambda(&mut |l| {
                l.params.iter().copied().for_each(&mut *on_def);
                visit_block(&l.body, on_def, on_use);
            }),
        }
    }
    on_use(b.result);
}

/// The variables a lambda's body uses that are not defined inside the lambda, in first-use
/// order without repetitions.
pub fn free_vars(l: &Lambda) -> Vec<VarId> {
    let mut defined: HashSet<VarId> = l.params.iter().copied().collect();
    let mut uses = Vec::new();
    visit_block(
        &l.body,
        &mut |d| {
            defined.insert(d);
        },
        &mut |u| uses.push(u),
    );
    let mut seen = HashSet::new();
    uses.into_iter()
        .filter(|u| !defined.contains(u) && seen.insert(*u))
        .collect()
}

impl Structure<'_> {
    fn exists(&self, v: VarId) -> bool {
        v.index() < self.f.vars.len()
    }

    /// Every definition site in the arena and defined once.
    fn definitions(&mut self) {
        let mut count = vec![0u32; self.f.vars.len()];
        let mut bad = Vec::new();
        let mut def = |v: VarId, at: Option<VarId>| match count.get_mut(v.index()) {
            Some(c) => *c += 1,
            None => bad.push(VerifyError::NoSuchVar { var: v, at }),
        };
        for &p in &self.f.params {
            def(p, None);
        }
        fn block(b: &Block, def: &mut impl FnMut(VarId, Option<VarId>)) {
            for s in &b.stmts {
                def(s.var, Some(s.var));
                match &s.expr {
                    Expr::If(_, t, e) => {
                        block(t, def);
                        block(e, def);
                    }
                    Expr::Loop(l) => {
                        l.params.iter().for_each(|&p| def(p, Some(s.var)));
                        block(&l.cond, def);
                        block(&l.body, def);
                    }
                    e => e.for_each_lambda(&mut |l| {
                        l.params.iter().for_each(|&p| def(p, Some(s.var)));
                        block(&l.body, def);
                    }),
                }
            }
        }
        block(&self.f.body, &mut def);
        self.errors.extend(bad);
        for (i, &c) in count.iter().enumerate() {
            if c > 1 {
                self.errors
                    .push(VerifyError::Redefined { var: VarId::new(i) });
            }
        }
    }

    fn define(&mut self, v: VarId) {
        if let Some(s) = self.in_scope.get_mut(v.index()) {
            *s = true;
        }
    }

    fn undefine(&mut self, v: VarId) {
        if let Some(s) = self.in_scope.get_mut(v.index()) {
            *s = false;
        }
    }

    fn use_var(&mut self, v: VarId, at: Option<VarId>) {
        match self.in_scope.get(v.index()) {
            None => self.errors.push(VerifyError::NoSuchVar { var: v, at }),
            Some(false) => self.errors.push(VerifyError::NotInScope { var: v, at }),
            Some(true) => {}
        }
    }

    /// Checks `b`; `owner` is the statement whose expression holds it.
    fn block(&mut self, b: &Block, owner: Option<VarId>) {
        let mut local = Vec::new();
        for s in &b.stmts {
            for v in s.expr.operands() {
                self.use_var(v, Some(s.var));
            }
            self.arity(s);
            match &s.expr {
                Expr::If(_, t, e) => {
                    self.block(t, Some(s.var));
                    self.block(e, Some(s.var));
                }
                Expr::Loop(l) => {
                    // The params are in scope in the loop's blocks only.
                    let fresh: Vec<VarId> = l
                        .params
                        .iter()
                        .copied()
                        .filter(|&p| self.exists(p) && !self.in_scope[p.index()])
                        .collect();
                    fresh.iter().for_each(|&p| self.define(p));
                    self.block(&l.cond, Some(s.var));
                    self.block(&l.body, Some(s.var));
                    fresh.iter().for_each(|&p| self.undefine(p));
                }
                e => e.for_each_lambda(&mut |l| self.lambda(l, s.var)),
            }
            // Redefinitions are reported once by `definitions`; do not shadow the scope of
            // a variable already in scope, so that leaving this block keeps it.
            if self.exists(s.var) && !self.in_scope[s.var.index()] {
                self.define(s.var);
                local.push(s.var);
            }
        }
        self.use_var(b.result, owner);
        for v in local {
            self.undefine(v);
        }
    }

    fn lambda(&mut self, l: &Lambda, stmt: VarId) {
        let free = free_vars(l);
        let mut listed = HashSet::new();
        for &c in &l.captures {
            if !free.contains(&c) || !listed.insert(c) {
                self.errors.push(VerifyError::ExtraCapture { var: c, stmt });
            }
        }
        for &v in &free {
            if !listed.contains(&v) {
                self.errors
                    .push(VerifyError::MissingCapture { var: v, stmt });
            }
        }
        let mut local = Vec::new();
        for &p in &l.params {
            if self.exists(p) && !self.in_scope[p.index()] {
                self.define(p);
                local.push(p);
            }
        }
        self.block(&l.body, Some(stmt));
        for p in local {
            self.undefine(p);
        }
    }

    fn arity(&mut self, s: &Stmt) {
        let mut problems = Vec::new();
        match &s.expr {
            Expr::Math(m, args) if args.len() != m.arity() => problems.push(format!(
                "`{}` takes {} argument(s), found {}",
                m.name(),
                m.arity(),
                args.len()
            )),
            Expr::Prim {
                prim,
                lambdas,
                args,
            } => {
                prim_arity(*prim, lambdas, args, &mut problems);
            }
            Expr::Soac(soac) => {
                if soac.elem.params.len() != 1 {
                    problems.push(format!(
                        "the index function of `soac {}` takes exactly one parameter (the index), found {}",
                        soac.kind.name(),
                        soac.elem.params.len()
                    ));
                }
                let (what, want) = match &soac.kind {
                    SoacKind::Filter { .. } => ("predicate", 1),
                    _ => ("operator", 2),
                };
                for l in soac.kind.lambdas() {
                    if l.params.len() != want {
                        problems.push(format!(
                            "the {what} of `soac {}` takes {want} parameter(s), found {}",
                            soac.kind.name(),
                            l.params.len()
                        ));
                    }
                }
            }
            Expr::Loop(l) if l.params.len() != l.inits.len() => problems.push(format!(
                "a loop has {} variable(s) but {} initial value(s)",
                l.params.len(),
                l.inits.len()
            )),
            _ => {}
        }
        for message in problems {
            self.errors.push(VerifyError::Arity {
                stmt: s.var,
                message,
            });
        }
    }
}

/// The argument conventions of the table in [`Prim`].
fn prim_arity(prim: Prim, lambdas: &[Lambda], args: &[VarId], problems: &mut Vec<String>) {
    let name = prim.name();
    // (allowed lambda counts, parameters of each lambda, data arguments)
    let (lambda_counts, params, nargs): (&[usize], usize, usize) = match prim {
        Prim::Map => {
            if !(1..=8).contains(&args.len()) {
                problems.push(format!(
                    "`map` takes 1 to 8 sequences, found {}",
                    args.len()
                ));
            }
            (&[1], args.len(), args.len())
        }
        Prim::Zip | Prim::Gather | Prim::Permute | Prim::Replicate | Prim::SortByKey => {
            (&[0], 0, 2)
        }
        Prim::Unzip
        | Prim::Sum
        | Prim::Min
        | Prim::Max
        | Prim::Indices
        | Prim::Range
        | Prim::Len
        | Prim::Sort => (&[0], 0, 1),
        Prim::Scatter => (&[0], 0, 3),
        Prim::ScatterReduce => (&[1], 2, 3),
        Prim::Reduce | Prim::ExclusiveScan => (&[1], 2, 2),
        Prim::Scan => (&[1], 2, 1),
        Prim::Any | Prim::All | Prim::Count => (&[0, 1], 1, 1),
        Prim::Filter => (&[1], 1, 1),
    };
    if prim != Prim::Map && args.len() != nargs {
        problems.push(format!(
            "`{name}` takes {nargs} data argument(s), found {}",
            args.len()
        ));
    }
    if !lambda_counts.contains(&lambdas.len()) {
        let want = match lambda_counts {
            [0] => "no function argument".to_string(),
            [1] => "one function argument".to_string(),
            _ => "at most one function argument".to_string(),
        };
        problems.push(format!("`{name}` takes {want}, found {}", lambdas.len()));
        return;
    }
    for l in lambdas {
        if l.params.len() != params {
            problems.push(format!(
                "the function argument of `{name}` must take {params} parameter(s), found {}",
                l.params.len()
            ));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Types

/// Checks the types of `f` (see the [module docs](self)); meant to run after type
/// inference and after [`verify`] succeeded.
pub fn verify_types(f: &Function) -> Result<(), Vec<VerifyError>> {
    let mut t = Types {
        f,
        errors: Vec::new(),
    };
    for (v, var) in f.vars.iter() {
        if !var.ty.is_known() {
            t.errors.push(VerifyError::UnknownType { var: v });
        }
    }
    if let Some(result) = t.block(&f.body)
        && f.ret.is_known()
        && result != f.ret
    {
        t.errors.push(VerifyError::Type {
            stmt: None,
            message: format!("the body gives {result} but the function returns {}", f.ret),
        });
    }
    if t.errors.is_empty() {
        Ok(())
    } else {
        Err(t.errors)
    }
}

struct Types<'a> {
    f: &'a Function,
    errors: Vec<VerifyError>,
}

type TResult<T> = Result<T, String>;

fn is_int(t: &Type) -> bool {
    t.scalar().is_some_and(Scalar::is_int)
}

fn is_float(t: &Type) -> bool {
    t.scalar().is_some_and(Scalar::is_float)
}

fn is_numeric(t: &Type) -> bool {
    is_int(t) || is_float(t)
}

impl Types<'_> {
    /// The type of a variable (known or not); `Err` for a handle outside the arena.
    fn ty(&self, v: VarId) -> TResult<Type> {
        if v.index() < self.f.vars.len() {
            Ok(self.f.vars[v].ty.clone())
        } else {
            Err(format!("{v:?} is not a variable of this function"))
        }
    }

    fn seq_elem(&self, v: VarId, what: &str) -> TResult<Type> {
        match self.ty(v)? {
            Type::Seq(e) => Ok(*e),
            t => Err(format!("{what} must be a sequence, found {v:?}: {t}")),
        }
    }

    fn int_seq(&self, v: VarId, what: &str) -> TResult<()> {
        let e = self.seq_elem(v, what)?;
        if is_int(&e) {
            Ok(())
        } else {
            Err(format!(
                "{what} must be a sequence of integers, found {v:?}: [{e}]"
            ))
        }
    }

    fn expect(&self, v: VarId, want: &Type, what: &str) -> TResult<()> {
        let t = self.ty(v)?;
        if &t == want {
            Ok(())
        } else {
            Err(format!("{what} must be {want}, found {v:?}: {t}"))
        }
    }

    /// Checks the statements of `b` and gives the type of its result (`None` when the
    /// result handle is bad).
    fn block(&mut self, b: &Block) -> Option<Type> {
        for s in &b.stmts {
            if let Err(message) = self.stmt(s) {
                self.errors.push(VerifyError::Type {
                    stmt: Some(s.var),
                    message,
                });
            }
        }
        self.ty(b.result).ok()
    }

    /// Checks a lambda's parameter types against `params` and gives its result type.
    fn lambda(&mut self, l: &Lambda, params: &[Type], what: &str) -> TResult<Type> {
        if l.params.len() != params.len() {
            return Err(format!(
                "{what} takes {} parameter(s), found {}",
                params.len(),
                l.params.len()
            ));
        }
        let mut bad = Vec::new();
        for (i, (&p, want)) in l.params.iter().zip(params).enumerate() {
            let t = self.ty(p)?;
            if &t != want {
                bad.push(format!(
                    "parameter {i} ({p:?}) of {what} must be {want}, found {t}"
                ));
            }
        }
        let result = self.block(&l.body);
        if !bad.is_empty() {
            return Err(bad.join("; "));
        }
        result.ok_or_else(|| format!("{what} has a bad result handle"))
    }

    /// An operator `|a: T, b: T| -> T`.
    fn op(&mut self, l: &Lambda, t: &Type, what: &str) -> TResult<()> {
        let r = self.lambda(l, &[t.clone(), t.clone()], what)?;
        if &r == t {
            Ok(())
        } else {
            Err(format!("{what} must give {t}, found {r}"))
        }
    }

    /// A predicate `|e: T| -> bool`.
    fn pred(&mut self, l: &Lambda, t: &Type, what: &str) -> TResult<()> {
        let r = self.lambda(l, std::slice::from_ref(t), what)?;
        if r == Type::bool() {
            Ok(())
        } else {
            Err(format!("{what} must give bool, found {r}"))
        }
    }

    fn stmt(&mut self, s: &Stmt) -> TResult<()> {
        let declared = self.ty(s.var)?;
        if let Expr::Const(c) = &s.expr {
            return match (c, declared.scalar()) {
                (Const::Bool(_), Some(Scalar::Bool)) => Ok(()),
                (Const::Float(_), Some(sc)) if sc.is_float() => Ok(()),
                (Const::Int(i), Some(sc)) if sc.is_int() => {
                    let (lo, hi) = sc.int_range();
                    if (lo..=hi).contains(i) {
                        Ok(())
                    } else {
                        Err(format!("the literal {i} does not fit {sc}"))
                    }
                }
                _ => Err(format!("a literal {c:?} cannot have type {declared}")),
            };
        }
        let actual = self.expr(&s.expr)?;
        if actual == declared {
            Ok(())
        } else {
            Err(format!(
                "the expression gives {actual} but the variable has type {declared}"
            ))
        }
    }

    fn expr(&mut self, e: &Expr) -> TResult<Type> {
        match e {
            Expr::Const(_) => unreachable!("handled by `stmt`"),
            Expr::Var(v) => self.ty(*v),
            Expr::Unary(op, v) => {
                let t = self.ty(*v)?;
                let ok = match op {
                    UnOp::Neg => t
                        .scalar()
                        .is_some_and(|s| s.is_signed_int() || s.is_float()),
                    UnOp::Not => t.scalar().is_some_and(|s| s.is_int() || s == Scalar::Bool),
                };
                if ok {
                    Ok(t)
                } else {
                    let allowed = match op {
                        UnOp::Neg => "signed integers and floats",
                        UnOp::Not => "integers and bool",
                    };
                    Err(format!("`{op:?}` applies to {allowed}, not {t}"))
                }
            }
            Expr::Binary(op, a, b) => {
                let (ta, tb) = (self.ty(*a)?, self.ty(*b)?);
                let sym = op.symbol();
                if matches!(op, BinOp::Shl | BinOp::Shr) {
                    return if is_int(&ta) && is_int(&tb) {
                        Ok(ta)
                    } else {
                        Err(format!(
                            "`{sym}` shifts an integer by an integer, found {ta} {sym} {tb}"
                        ))
                    };
                }
                if ta != tb {
                    return Err(format!("the operands of `{sym}` differ: {ta} vs {tb}"));
                }
                let Some(s) = ta.scalar() else {
                    return Err(format!("`{sym}` applies to scalars, not {ta}"));
                };
                match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => {
                        if s == Scalar::Bool {
                            Err(format!("`{sym}` applies to numbers, not bool"))
                        } else {
                            Ok(ta)
                        }
                    }
                    BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
                        if s.is_float() {
                            Err(format!("`{sym}` applies to integers and bool, not {s}"))
                        } else {
                            Ok(ta)
                        }
                    }
                    _ => Ok(Type::bool()),
                }
            }
            Expr::Cast(v, to) => {
                let t = self.ty(*v)?;
                let Some(from) = t.scalar() else {
                    return Err(format!("`as` converts scalars, not {t}"));
                };
                let ok = match (from, *to) {
                    (Scalar::Bool, to) => to == Scalar::Bool || to.is_int(),
                    (_, Scalar::Bool) => false,
                    _ => true,
                };
                if ok {
                    Ok(Type::Scalar(*to))
                } else {
                    Err(format!("`{from} as {to}` is not a Rust cast"))
                }
            }
            Expr::Tuple(vs) => Ok(Type::Tuple(
                vs.iter().map(|v| self.ty(*v)).collect::<TResult<_>>()?,
            )),
            Expr::Field(v, n) => match self.ty(*v)? {
                Type::Tuple(ts) if (*n as usize) < ts.len() => Ok(ts[*n as usize].clone()),
                t => Err(format!("`.{n}` of {v:?}: {t}, which has no field {n}")),
            },
            Expr::If(c, t, e) => {
                let cond = self.ty(*c);
                let tt = self.block(t);
                let te = self.block(e);
                if cond? != Type::bool() {
                    return Err(format!("the condition {c:?} must be bool"));
                }
                match (tt, te) {
                    (Some(a), Some(b)) if a == b => Ok(a),
                    (Some(a), Some(b)) => Err(format!("the branches differ: {a} vs {b}")),
                    _ => Err("a branch has a bad result handle".into()),
                }
            }
            Expr::Index { seq, index, .. } => {
                let e = self.seq_elem(*seq, "the indexed value")?;
                let ti = self.ty(*index)?;
                if is_int(&ti) {
                    Ok(e)
                } else {
                    Err(format!(
                        "an index must be an integer, found {index:?}: {ti}"
                    ))
                }
            }
            Expr::Len(v) => {
                self.seq_elem(*v, "the argument of `len`")?;
                Ok(Type::usize())
            }
            Expr::Math(m, args) => {
                let name = m.name();
                let Some(&first) = args.first() else {
                    return Err(format!("`{name}` without arguments"));
                };
                let t = self.ty(first)?;
                for &a in &args[1..] {
                    let ta = self.ty(a)?;
                    if ta != t {
                        return Err(format!("the arguments of `{name}` differ: {t} vs {ta}"));
                    }
                }
                let ok = match m {
                    _ if m.float_only() => is_float(&t),
                    MathFn::Abs => t
                        .scalar()
                        .is_some_and(|s| s.is_float() || s.is_signed_int()),
                    _ => is_numeric(&t),
                };
                if ok {
                    Ok(t)
                } else {
                    let allowed = if m.float_only() {
                        "floats"
                    } else if *m == MathFn::Abs {
                        "floats and signed integers"
                    } else {
                        "numbers"
                    };
                    Err(format!("`{name}` applies to {allowed}, not {t}"))
                }
            }
            Expr::Prim {
                prim,
                lambdas,
                args,
            } => self.prim(*prim, lambdas, args),
            Expr::Soac(s) => self.soac(s),
            Expr::Assert(a) => {
                let usize = Type::usize();
                match a {
                    Assertion::EqLen { a, b, .. } => {
                        self.expect(*a, &usize, "a length")?;
                        self.expect(*b, &usize, "a length")?;
                    }
                    Assertion::IndicesInRange { idx, len, .. } => {
                        // A sequence of integers, or of rows of integers.
                        match self.seq_elem(*idx, "the indices")? {
                            Type::Seq(_) => {}
                            _ => self.int_seq(*idx, "the indices")?,
                        }
                        self.expect(*len, &usize, "the bound")?;
                    }
                    Assertion::InBounds { index, len, .. } => {
                        let t = self.ty(*index)?;
                        if !is_int(&t) {
                            return Err(format!(
                                "an index must be an integer, found {index:?}: {t}"
                            ));
                        }
                        self.expect(*len, &usize, "the bound")?;
                    }
                    Assertion::NonEmpty { len, .. } => self.expect(*len, &usize, "a length")?,
                }
                Ok(Type::unit())
            }
            Expr::Loop(l) => {
                let params = l
                    .params
                    .iter()
                    .map(|&p| self.ty(p))
                    .collect::<TResult<Vec<_>>>()?;
                for (&init, t) in l.inits.iter().zip(&params) {
                    self.expect(init, t, "the initial value of a loop variable")?;
                }
                let cond = self.block(&l.cond);
                let body = self.block(&l.body);
                let tuple = Type::Tuple(params);
                if cond != Some(Type::bool()) {
                    return Err("the condition of a loop must be a bool".into());
                }
                match body {
                    Some(t) if t == tuple => Ok(tuple),
                    Some(t) => Err(format!(
                        "a loop body gives {t}, not the tuple of its variables {tuple}"
                    )),
                    None => Err("a loop body has a bad result handle".into()),
                }
            }
        }
    }

    fn prim(&mut self, prim: Prim, lambdas: &[Lambda], args: &[VarId]) -> TResult<Type> {
        let name = prim.name();
        let arity = || format!("`{name}` has the wrong number of arguments");
        let arg = |i: usize| args.get(i).copied().ok_or_else(arity);
        let lam = |i: usize| lambdas.get(i).ok_or_else(arity);
        let seq = Type::seq;
        match prim {
            Prim::Map => {
                let elems = args
                    .iter()
                    .map(|&a| self.seq_elem(a, "an argument of `map`"))
                    .collect::<TResult<Vec<_>>>()?;
                let r = self.lambda(lam(0)?, &elems, "the function of `map`")?;
                Ok(seq(r))
            }
            Prim::Zip => {
                let a = self.seq_elem(arg(0)?, "the first argument of `zip`")?;
                let b = self.seq_elem(arg(1)?, "the second argument of `zip`")?;
                Ok(seq(Type::Tuple(vec![a, b])))
            }
            Prim::Unzip => match self.seq_elem(arg(0)?, "the argument of `unzip`")? {
                Type::Tuple(ts) if !ts.is_empty() => {
                    Ok(Type::Tuple(ts.into_iter().map(Type::seq).collect()))
                }
                t => Err(format!("`unzip` takes a sequence of tuples, found [{t}]")),
            },
            Prim::Gather | Prim::Permute => {
                let t = self.seq_elem(arg(0)?, &format!("the values of `{name}`"))?;
                self.int_seq(arg(1)?, &format!("the indices of `{name}`"))?;
                Ok(seq(t))
            }
            Prim::Scatter | Prim::ScatterReduce => {
                let t = self.seq_elem(arg(0)?, &format!("the source of `{name}`"))?;
                self.int_seq(arg(1)?, &format!("the indices of `{name}`"))?;
                self.expect(
                    arg(2)?,
                    &seq(t.clone()),
                    &format!("the destination of `{name}`"),
                )?;
                if prim == Prim::ScatterReduce {
                    self.op(lam(0)?, &t, "the operator of `scatter_reduce`")?;
                }
                Ok(seq(t))
            }
            Prim::Reduce => {
                let t = self.seq_elem(arg(0)?, "the sequence of `reduce`")?;
                self.expect(arg(1)?, &t, "the start value of `reduce`")?;
                self.op(lam(0)?, &t, "the operator of `reduce`")?;
                Ok(t)
            }
            Prim::Sum | Prim::Min | Prim::Max => {
                let t = self.seq_elem(arg(0)?, &format!("the argument of `{name}`"))?;
                if is_numeric(&t) {
                    Ok(t)
                } else {
                    Err(format!(
                        "`{name}` applies to sequences of numbers, not [{t}]"
                    ))
                }
            }
            Prim::Any | Prim::All | Prim::Count => {
                let t = self.seq_elem(arg(0)?, &format!("the argument of `{name}`"))?;
                match lambdas.first() {
                    Some(p) => self.pred(p, &t, &format!("the predicate of `{name}`"))?,
                    None if t != Type::bool() => {
                        return Err(format!(
                            "`{name}` without a predicate takes [bool], not [{t}]"
                        ));
                    }
                    None => {}
                }
                Ok(if prim == Prim::Count {
                    Type::usize()
                } else {
                    Type::bool()
                })
            }
            Prim::Scan => {
                let t = self.seq_elem(arg(0)?, "the sequence of `scan`")?;
                self.op(lam(0)?, &t, "the operator of `scan`")?;
                Ok(seq(t))
            }
            Prim::ExclusiveScan => {
                let t = self.seq_elem(arg(0)?, "the sequence of `exclusive_scan`")?;
                self.expect(arg(1)?, &t, "the start value of `exclusive_scan`")?;
                self.op(lam(0)?, &t, "the operator of `exclusive_scan`")?;
                Ok(seq(t))
            }
            Prim::Filter => {
                let t = self.seq_elem(arg(0)?, "the sequence of `filter`")?;
                self.pred(lam(0)?, &t, "the predicate of `filter`")?;
                Ok(seq(t))
            }
            Prim::Replicate => {
                let t = self.ty(arg(0)?)?;
                self.expect(arg(1)?, &Type::usize(), "the count of `replicate`")?;
                Ok(seq(t))
            }
            Prim::Indices => {
                self.seq_elem(arg(0)?, "the argument of `indices`")?;
                Ok(seq(Type::usize()))
            }
            Prim::Range => {
                self.expect(arg(0)?, &Type::usize(), "the argument of `range`")?;
                Ok(seq(Type::usize()))
            }
            Prim::Len => {
                self.seq_elem(arg(0)?, "the argument of `len`")?;
                Ok(Type::usize())
            }
            Prim::Sort => Ok(seq(self.seq_elem(arg(0)?, "the argument of `sort`")?)),
            Prim::SortByKey => {
                self.seq_elem(arg(0)?, "the keys of `sort_by_key`")?;
                Ok(seq(self.seq_elem(arg(1)?, "the values of `sort_by_key`")?))
            }
        }
    }

    fn soac(&mut self, s: &Soac) -> TResult<Type> {
        let name = s.kind.name();
        self.expect(
            s.len,
            &Type::usize(),
            &format!("the length of `soac {name}`"),
        )?;
        let e = self.lambda(
            &s.elem,
            &[Type::usize()],
            &format!("the index function of `soac {name}`"),
        )?;
        let seq = Type::seq;
        // `E = (index, value)` for the scattering kinds: gives `V`.
        let pair = |e: &Type| match e {
            Type::Tuple(ts) if ts.len() == 2 && is_int(&ts[0]) => Ok(ts[1].clone()),
            _ => Err(format!(
                "the index function of `soac {name}` must give (integer, value), found {e}"
            )),
        };
        match &s.kind {
            SoacKind::Map => Ok(seq(e)),
            SoacKind::Reduce { op, init } => {
                if let Some(i) = init {
                    self.expect(*i, &e, "the start value of `soac reduce`")?;
                }
                self.op(op, &e, "the operator of `soac reduce`")?;
                Ok(e)
            }
            SoacKind::Scan { op } => {
                self.op(op, &e, "the operator of `soac scan`")?;
                Ok(seq(e))
            }
            SoacKind::ExclusiveScan { op, init } => {
                self.expect(*init, &e, "the start value of `soac exclusive_scan`")?;
                self.op(op, &e, "the operator of `soac exclusive_scan`")?;
                Ok(seq(e))
            }
            SoacKind::Filter { pred } => {
                self.pred(pred, &e, "the predicate of `soac filter`")?;
                Ok(seq(e))
            }
            SoacKind::Scatter { dst } => {
                let v = pair(&e)?;
                self.expect(*dst, &seq(v.clone()), "the destination of `soac scatter`")?;
                Ok(seq(v))
            }
            SoacKind::ScatterReduce { op, dst } => {
                let v = pair(&e)?;
                self.expect(
                    *dst,
                    &seq(v.clone()),
                    "the destination of `soac scatter_reduce`",
                )?;
                self.op(op, &v, "the operator of `soac scatter_reduce`")?;
                Ok(seq(v))
            }
            SoacKind::Permute => Ok(seq(pair(&e)?)),
            SoacKind::Sort => Ok(seq(e)),
            SoacKind::SortByKey => match e {
                Type::Tuple(mut ts) if ts.len() == 2 => Ok(seq(ts.swap_remove(1))),
                e => Err(format!(
                    "the index function of `soac sort_by_key` must give (key, value), found {e}"
                )),
            },
        }
    }
}
