//! Lowering a function body to the Prim-level IR, validating as it goes.
//!
//! Names are resolved through [`Env`], a persistent list: a closure remembers the `Env` it
//! was written in, so inlining it later sees the bindings of its definition, not those of
//! the use site. Every expression is lowered to a variable ([`Lowerer::value`]); closures,
//! nested `fn`s, module functions, scalar function paths (`f32::max`) and primitive names
//! used as functions (`map(sum, rows)`) are [`Callable`]s instead, which are only accepted
//! as primitive arguments ([`Lowerer::lambda`]) or as callees ([`Lowerer::apply`]).
//!
//! Errors are recorded and lowering continues with a placeholder variable ("poison"), so
//! one run reports every problem. A callable's body is checked (lowered with errors
//! reported, then thrown away) once where it is defined; each use lowers it again in
//! *quiet* mode, where errors are counted but not reported, so that every error appears
//! once whatever the number of uses.

use std::collections::HashSet;
use std::fmt::Display;
use std::rc::Rc;

use dpl_core::ir::{
    self, BinOp, Block, Const, Expr, Lambda, MathFn, Origin, Prim, Scalar, Stmt, Type, UnOp, Var,
    VarId,
};
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::errors::Errors;
use super::sig::{self, ParamSig, Signature};
use super::{Lowered, Spans, path_text};

/// Past this many variables inlining stops with an error (exponential closure nesting).
mod stencil;

const MAX_VARS: usize = 1 << 16;

const CLOSURE_NOT_VALUE: &str = "a function is not a value here: closures and functions can be passed to primitives, bound with `let f = ...;`, or called";
const MUT_MSG: &str =
    "`mut` is not allowed: bindings are immutable; use a new `let` to shadow the name";
const PATTERN_MSG: &str = "only names, `_` and tuple patterns such as `(a, b)` are allowed here";
const NO_EFFECT: &str = "this statement has no effect: a block is `let` bindings followed by the final expression that gives its value";

/// Recursion errors already reported, shared by the functions of a module so that a cycle
/// found again while lowering another function is not reported twice.
#[derive(Default)]
pub(crate) struct Reported(HashSet<(usize, usize, usize)>);

/// Lowers one function. `module` holds every function of the compilation unit (the
/// function itself for a lone `#[parallel] fn`; all functions of a `#[parallel] mod`) and
/// `index` says which one is lowered.
pub(crate) fn lower_function(
    item: syn::ItemFn,
    module: &[syn::ItemFn],
    index: usize,
    reported: &mut Reported,
) -> Result<Lowered, syn::Error> {
    let in_module = module.len() > 1;
    let mut lw = Lowerer::new(module, index, reported, in_module);
    let (params, sig) = lw.signature(&item);
    lw.stack.push(index);
    let result = lw.block_value(&item.block);
    if lw.errors.is_empty() && lw.quiet_errors > 0 {
        lw.errors.at(
            &item.sig.ident,
            "this function cannot be compiled because a function it calls has errors",
        );
    }
    let stmts = std::mem::take(&mut lw.stmts);
    let Lowerer {
        vars,
        spans,
        errors,
        ..
    } = lw;
    errors.finish()?;
    let Some(sig) = sig else {
        // Unreachable in practice: a failed signature records an error.
        return Err(syn::Error::new_spanned(&item.sig, "unsupported signature"));
    };
    let mut arena = ir::Arena::new();
    for v in vars {
        arena.push(v);
    }
    let func = ir::Function {
        name: item.sig.ident.unraw().to_string(),
        vars: arena,
        params,
        ret: sig.ret.repr.ir_type(),
        body: Block { stmts, result },
    };
    Ok(Lowered {
        func,
        spans: Spans(spans),
        sig,
        item,
    })
}

/// A persistent list of name bindings; cloning shares the tail.
#[derive(Clone, Default)]
struct Env(Option<Rc<EnvNode>>);

struct EnvNode {
    name: String,
    binding: Binding,
    next: Env,
}

impl Env {
    fn with(&self, name: String, binding: Binding) -> Env {
        Env(Some(Rc::new(EnvNode {
            name,
            binding,
            next: self.clone(),
        })))
    }

    fn lookup(&self, name: &str) -> Option<&Binding> {
        let mut cur = self.0.as_deref();
        while let Some(node) = cur {
            if node.name == name {
                return Some(&node.binding);
            }
            cur = node.next.0.as_deref();
        }
        None
    }
}

/// What a name stands for.
#[derive(Clone)]
enum Binding {
    /// A value: parameter, `let` binding, closure parameter.
    Value(VarId),
    /// Something that can be called or passed to a primitive.
    Callable(Callable),
}

/// A closure as written, with the scope it was written in.
struct ClosureDef {
    closure: syn::ExprClosure,
    env: Env,
    items: Env,
}

/// A nested `fn` or a function of the module, its types read once.
struct FnItem {
    name: String,
    item: Rc<syn::ItemFn>,
    params: Vec<(syn::Pat, Type)>,
    ret: Type,
    /// The functions visible from its body (no local variables: Rust items capture nothing).
    env: Env,
    /// A nested `fn` (not a function of the module).
    nested: bool,
}

/// A function-valued expression.
#[derive(Clone)]
enum Callable {
    /// A closure; `checked` once its body has been checked where it was bound.
    Closure { def: Rc<ClosureDef>, checked: bool },
    /// A nested `fn` or module function (index into `Lowerer::fns`); always checked.
    Fn(usize),
    /// `f32::max`, `i32::wrapping_add`, ...: a scalar function of the given type.
    Scalar(ScalarFn, Option<Scalar>),
    /// A one-argument primitive used as a function: `map(sum, rows)`.
    Prim(Prim),
}

impl Callable {
    /// Whether uses lower the body quietly (it was checked where it was defined).
    fn checked(&self) -> bool {
        match self {
            Callable::Closure { checked, .. } => *checked,
            Callable::Fn(_) => true,
            Callable::Scalar(..) | Callable::Prim(_) => false,
        }
    }
}

/// The scalar functions: math (`sqrt`, `max`, ...) and wrapping arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScalarFn {
    Math(MathFn),
    Wrapping(BinOp),
}

impl ScalarFn {
    fn from_name(name: &str) -> Option<ScalarFn> {
        match name {
            "wrapping_add" => Some(ScalarFn::Wrapping(BinOp::Add)),
            "wrapping_sub" => Some(ScalarFn::Wrapping(BinOp::Sub)),
            "wrapping_mul" => Some(ScalarFn::Wrapping(BinOp::Mul)),
            _ => MathFn::from_name(name).map(ScalarFn::Math),
        }
    }

    fn name(self) -> &'static str {
        match self {
            ScalarFn::Math(m) => m.name(),
            ScalarFn::Wrapping(BinOp::Add) => "wrapping_add",
            ScalarFn::Wrapping(BinOp::Sub) => "wrapping_sub",
            ScalarFn::Wrapping(_) => "wrapping_mul",
        }
    }

    fn arity(self) -> usize {
        match self {
            ScalarFn::Math(m) => m.arity(),
            ScalarFn::Wrapping(_) => 2,
        }
    }

    /// Why `f` is not defined for `ty`, if it is not.
    fn unsupported_for(self, ty: Scalar) -> Option<String> {
        match self {
            ScalarFn::Math(m) if m.float_only() && !ty.is_float() => {
                Some(format!("`{}` is only defined for f32 and f64", m.name()))
            }
            ScalarFn::Math(MathFn::Abs) if !(ty.is_float() || ty.is_signed_int()) => {
                Some("`abs` is only defined for f32, f64, i32 and i64".to_string())
            }
            ScalarFn::Math(MathFn::Min | MathFn::Max) if ty == Scalar::Bool => {
                Some("`min` and `max` are not defined for bool".to_string())
            }
            ScalarFn::Wrapping(_) if !ty.is_int() => Some(format!(
                "`{}` is only defined for integer types",
                self.name()
            )),
            _ => None,
        }
    }
}

const METHODS: &str = "len, abs, sqrt, exp, ln, log2, sin, cos, tanh, powf, floor, ceil, round, trunc, min, max, mul_add, wrapping_add, wrapping_sub, wrapping_mul";

/// Whether a primitive takes a function argument (always first).
#[derive(Clone, Copy, PartialEq, Eq)]
enum LambdaArg {
    No,
    Required,
    /// `any(xs)` or `any(pred, xs)`.
    Optional,
}

/// The shape of a primitive's arguments.
struct PrimSpec {
    lambda: LambdaArg,
    min_data: usize,
    max_data: usize,
    form: &'static str,
}

impl PrimSpec {
    fn of(p: Prim) -> PrimSpec {
        let (lambda, min_data, max_data, form) = match p {
            Prim::Map => (
                LambdaArg::Required,
                1,
                8,
                "map(f, xs1, ..., xsn)` with 1 to 8 sequences",
            ),
            Prim::Zip => (LambdaArg::No, 2, 2, "zip(a, b)`"),
            Prim::Unzip => (LambdaArg::No, 1, 1, "unzip(pairs)`"),
            Prim::Gather => (LambdaArg::No, 2, 2, "gather(x, idx)`"),
            Prim::Permute => (LambdaArg::No, 2, 2, "permute(x, idx)`"),
            Prim::Scatter => (LambdaArg::No, 3, 3, "scatter(src, idx, dst)`"),
            Prim::ScatterReduce => (
                LambdaArg::Required,
                3,
                3,
                "scatter_reduce(op, src, idx, dst)`",
            ),
            Prim::Reduce => (LambdaArg::Required, 2, 2, "reduce(op, x, init)`"),
            Prim::Sum => (LambdaArg::No, 1, 1, "sum(x)`"),
            Prim::Min => (LambdaArg::No, 1, 1, "min(x)`"),
            Prim::Max => (LambdaArg::No, 1, 1, "max(x)`"),
            Prim::Any => (LambdaArg::Optional, 1, 1, "any(x)` or `any(pred, x)`"),
            Prim::All => (LambdaArg::Optional, 1, 1, "all(x)` or `all(pred, x)`"),
            Prim::Count => (LambdaArg::Optional, 1, 1, "count(x)` or `count(pred, x)`"),
            Prim::Scan => (LambdaArg::Required, 1, 1, "scan(op, x)`"),
            Prim::ExclusiveScan => (LambdaArg::Required, 2, 2, "exclusive_scan(op, x, init)`"),
            Prim::Filter => (LambdaArg::Required, 1, 1, "filter(pred, x)`"),
            Prim::Replicate => (LambdaArg::No, 2, 2, "replicate(v, n)`"),
            Prim::Indices => (LambdaArg::No, 1, 1, "indices(x)`"),
            Prim::Range => (LambdaArg::No, 1, 1, "range(n)`"),
            Prim::Len => (LambdaArg::No, 1, 1, "len(x)`"),
            Prim::Sort => (LambdaArg::No, 1, 1, "sort(x)`"),
            Prim::SortByKey => (LambdaArg::No, 2, 2, "sort_by_key(keys, vals)`"),
        };
        PrimSpec {
            lambda,
            min_data,
            max_data,
            form,
        }
    }

    /// How many arguments the function argument receives, given the number of data
    /// arguments.
    fn lambda_params(p: Prim, data: usize) -> usize {
        match p {
            Prim::Map => data,
            Prim::Any | Prim::All | Prim::Count | Prim::Filter => 1,
            _ => 2,
        }
    }
}

/// Primitives that take exactly one data argument and no function: usable as functions
/// themselves (`map(sum, rows)`).
fn unary_prim(p: Prim) -> bool {
    let spec = PrimSpec::of(p);
    spec.lambda != LambdaArg::Required && spec.min_data == 1 && spec.max_data == 1
}

fn prim_list() -> String {
    Prim::ALL
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Walks a lambda body: the variables it uses that it does not define, in first-use order.
fn captures(params: &[VarId], body: &Block) -> Vec<VarId> {
    fn note(v: VarId, used: &mut Vec<VarId>, seen: &mut HashSet<VarId>) {
        if seen.insert(v) {
            used.push(v);
        }
    }
    fn walk(
        b: &Block,
        defined: &mut HashSet<VarId>,
        used: &mut Vec<VarId>,
        seen: &mut HashSet<VarId>,
    ) {
        for s in &b.stmts {
            match &s.expr {
                Expr::Prim { lambdas, args, .. } => {
                    for l in lambdas {
                        for c in &l.captures {
                            note(*c, used, seen);
                        }
                    }
                    for a in args {
                        note(*a, used, seen);
                    }
                }
                Expr::If(c, t, e) => {
                    note(*c, used, seen);
                    walk(t, defined, used, seen);
                    walk(e, defined, used, seen);
                }
                other => {
                    for v in other.operands() {
                        note(v, used, seen);
                    }
                }
            }
            defined.insert(s.var);
        }
        note(b.result, used, seen);
    }
    let mut defined: HashSet<VarId> = params.iter().copied().collect();
    let mut used = Vec::new();
    let mut seen = HashSet::new();
    walk(body, &mut defined, &mut used, &mut seen);
    used.into_iter().filter(|v| !defined.contains(v)).collect()
}

/// Strips parentheses and invisible groups.
fn peel(mut e: &syn::Expr) -> &syn::Expr {
    loop {
        match e {
            syn::Expr::Paren(p) => e = &p.expr,
            syn::Expr::Group(g) => e = &g.expr,
            _ => return e,
        }
    }
}

/// Attributes that are harmless on a nested `fn` or a `let`.
fn harmless_attr(attr: &syn::Attribute) -> bool {
    let p = attr.path();
    ["doc", "allow", "warn", "inline", "expect"]
        .iter()
        .any(|n| p.is_ident(n))
}

/// A named constant of a scalar type: `f32::MAX`, `f64::consts::PI`, `std::f32::consts::E`, ...
fn const_path(path: &syn::Path) -> Option<(Const, Scalar)> {
    if path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let segs: &[&str] = match segs.as_slice() {
        ["std" | "core", rest @ ..] if rest.len() >= 2 => rest,
        s => s,
    };
    match segs {
        [ty, name] => {
            let s = Scalar::from_name(ty)?;
            scalar_const(s, name).map(|c| (c, s))
        }
        [ty, "consts", name] => {
            let s = Scalar::from_name(ty)?;
            float_const(s, name).map(|v| (Const::Float(v), s))
        }
        _ => None,
    }
}

fn scalar_const(s: Scalar, name: &str) -> Option<Const> {
    macro_rules! float {
        ($t:ident) => {
            match name {
                "MAX" => Some($t::MAX as f64),
                "MIN" => Some($t::MIN as f64),
                "EPSILON" => Some($t::EPSILON as f64),
                "INFINITY" => Some($t::INFINITY as f64),
                "NEG_INFINITY" => Some($t::NEG_INFINITY as f64),
                "NAN" => Some($t::NAN as f64),
                "MIN_POSITIVE" => Some($t::MIN_POSITIVE as f64),
                _ => None,
            }
            .map(Const::Float)
        };
    }
    macro_rules! int {
        ($t:ident) => {
            match name {
                "MAX" => Some($t::MAX as i128),
                "MIN" => Some($t::MIN as i128),
                _ => None,
            }
            .map(Const::Int)
        };
    }
    match s {
        Scalar::F32 => float!(f32),
        Scalar::F64 => float!(f64),
        Scalar::I32 => int!(i32),
        Scalar::U32 => int!(u32),
        Scalar::I64 => int!(i64),
        Scalar::U64 => int!(u64),
        // `usize` is 64 bits on every target dpl generates code for.
        Scalar::Usize => int!(u64),
        Scalar::Bool => None,
    }
}

fn float_const(s: Scalar, name: &str) -> Option<f64> {
    macro_rules! table {
        ($t:ident) => {{
            use std::$t::consts as c;
            let v = match name {
                "PI" => c::PI,
                "TAU" => c::TAU,
                "E" => c::E,
                "SQRT_2" => c::SQRT_2,
                "FRAC_1_SQRT_2" => c::FRAC_1_SQRT_2,
                "LN_2" => c::LN_2,
                "LN_10" => c::LN_10,
                "LOG2_E" => c::LOG2_E,
                "LOG10_E" => c::LOG10_E,
                "LOG2_10" => c::LOG2_10,
                "LOG10_2" => c::LOG10_2,
                "FRAC_PI_2" => c::FRAC_PI_2,
                "FRAC_PI_3" => c::FRAC_PI_3,
                "FRAC_PI_4" => c::FRAC_PI_4,
                "FRAC_PI_6" => c::FRAC_PI_6,
                "FRAC_PI_8" => c::FRAC_PI_8,
                "FRAC_1_PI" => c::FRAC_1_PI,
                "FRAC_2_PI" => c::FRAC_2_PI,
                "FRAC_2_SQRT_PI" => c::FRAC_2_SQRT_PI,
                _ => return None,
            };
            Some(v as f64)
        }};
    }
    match s {
        Scalar::F32 => table!(f32),
        Scalar::F64 => table!(f64),
        _ => None,
    }
}

/// The inclusive range of values of an integer type (`None`: an unsuffixed literal).
fn int_range(s: Option<Scalar>) -> (i128, i128) {
    match s {
        Some(Scalar::I32) => (i32::MIN.into(), i32::MAX.into()),
        Some(Scalar::U32) => (0, u32::MAX.into()),
        Some(Scalar::I64) => (i64::MIN.into(), i64::MAX.into()),
        Some(Scalar::U64 | Scalar::Usize) => (0, u64::MAX.into()),
        _ => (i64::MIN.into(), u64::MAX.into()),
    }
}

/// The state of lowering one function.
struct Lowerer<'r> {
    vars: Vec<Var>,
    spans: Vec<proc_macro2::Span>,
    errors: Errors,
    /// Nesting depth of quiet lowering (uses of checked callables).
    quiet: u32,
    /// Errors found while quiet.
    quiet_errors: usize,
    /// Every visible name.
    env: Env,
    /// The visible `fn` items only (what a nested `fn` body sees).
    items: Env,
    /// The statements of the block being lowered.
    stmts: Vec<Stmt>,
    fns: Vec<Rc<FnItem>>,
    /// The functions of the module are `fns[..n_module]`.
    n_module: usize,
    /// The module function being lowered.
    owner: usize,
    /// Functions being inlined (recursion check).
    stack: Vec<usize>,
    /// Depth of nested-`fn` bodies being lowered (for a hint in "cannot find").
    fn_depth: u32,
    reported: &'r mut Reported,
    in_module: bool,
    exhausted: bool,
    /// The windows of the `stencil`s being lowered.
    windows: stencil::Windows,
}

impl<'r> Lowerer<'r> {
    fn new(
        module: &[syn::ItemFn],
        owner: usize,
        reported: &'r mut Reported,
        in_module: bool,
    ) -> Self {
        let mut items = Env::default();
        for (i, f) in module.iter().enumerate() {
            items = items.with(
                f.sig.ident.unraw().to_string(),
                Binding::Callable(Callable::Fn(i)),
            );
        }
        let mut scratch = Errors::default();
        let fns = module
            .iter()
            .map(|f| {
                let params = f
                    .sig
                    .inputs
                    .iter()
                    .filter_map(|a| match a {
                        syn::FnArg::Typed(pt) => Some((
                            (*pt.pat).clone(),
                            sig::param_repr(&pt.ty, &mut scratch)
                                .map_or(Type::Infer, |r| r.ir_type()),
                        )),
                        syn::FnArg::Receiver(_) => None,
                    })
                    .collect();
                let ret = sig::ret_sig(&f.sig.output, &f.sig.ident, &mut scratch)
                    .map_or(Type::Infer, |r| r.repr.ir_type());
                Rc::new(FnItem {
                    name: f.sig.ident.unraw().to_string(),
                    item: Rc::new(f.clone()),
                    params,
                    ret,
                    env: items.clone(),
                    nested: false,
                })
            })
            .collect();
        Lowerer {
            vars: Vec::new(),
            spans: vec![proc_macro2::Span::call_site()],
            errors: Errors::default(),
            quiet: 0,
            quiet_errors: 0,
            env: items.clone(),
            items,
            stmts: Vec::new(),
            fns,
            n_module: module.len(),
            owner,
            stack: Vec::new(),
            fn_depth: 0,
            reported,
            in_module,
            exhausted: false,
            windows: stencil::Windows::default(),
        }
    }

    // ----- bookkeeping -----

    fn error(&mut self, node: &(impl ToTokens + ?Sized), msg: impl Display) {
        if self.quiet > 0 {
            self.quiet_errors += 1;
        } else {
            self.errors.push(syn::Error::new_spanned(node, msg));
        }
    }

    fn error_at(&mut self, span: proc_macro2::Span, msg: impl Display) {
        if self.quiet > 0 {
            self.quiet_errors += 1;
        } else {
            self.errors.push(syn::Error::new(span, msg));
        }
    }

    /// Errors so far, reported or quiet.
    fn error_count(&self) -> usize {
        self.errors.count() + self.quiet_errors
    }

    fn span(&mut self, s: proc_macro2::Span) -> ir::Span {
        self.spans.push(s);
        ir::Span(u32::try_from(self.spans.len() - 1).unwrap_or(0))
    }

    fn new_var(&mut self, name: &str, ty: Type, span: proc_macro2::Span) -> VarId {
        let span = self.span(span);
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            span,
        });
        ir::Handle::new(self.vars.len() - 1)
    }

    fn emit(&mut self, name: &str, ty: Type, expr: Expr, span: proc_macro2::Span) -> VarId {
        let var = self.new_var(name, ty, span);
        if let Expr::Var(v) = expr {
            self.windows.copied(v, var);
        }
        let span = self
            .vars
            .get(var.index())
            .map_or(ir::Span::NONE, |v| v.span);
        self.stmts.push(Stmt { var, expr, span });
        var
    }

    /// A placeholder for a value whose expression had an error.
    fn poison(&mut self) -> VarId {
        self.new_var("error", Type::Infer, proc_macro2::Span::call_site())
    }

    fn fail(&mut self, node: &(impl ToTokens + ?Sized), msg: impl Display) -> VarId {
        self.error(node, msg);
        self.poison()
    }

    /// Gives `v` the type `ty`: sets it when unknown, otherwise binds a copy with that type
    /// (type inference then reports any mismatch).
    fn annotate(&mut self, v: VarId, ty: Type, span: proc_macro2::Span) -> VarId {
        if ty == Type::Infer {
            return v;
        }
        match self.vars.get_mut(v.index()) {
            Some(var) if var.ty == Type::Infer => {
                var.ty = ty;
                v
            }
            Some(var) if var.ty == ty => v,
            Some(_) => self.emit("annotated", ty, Expr::Var(v), span),
            None => v,
        }
    }

    fn rename(&mut self, v: VarId, name: &str) {
        if let Some(var) = self.vars.get_mut(v.index()) {
            var.name = name.to_string();
        }
    }

    /// Lowers with the statements going into a fresh block, restoring the scope after.
    fn sub_block(&mut self, f: impl FnOnce(&mut Self) -> VarId) -> Block {
        let saved = std::mem::take(&mut self.stmts);
        let (env, items) = (self.env.clone(), self.items.clone());
        let result = f(self);
        self.env = env;
        self.items = items;
        let stmts = std::mem::replace(&mut self.stmts, saved);
        Block { stmts, result }
    }

    // ----- signature -----

    /// Reads the signature, creates the parameter variables and binds their names.
    fn signature(&mut self, item: &syn::ItemFn) -> (Vec<VarId>, Option<Signature>) {
        let s = &item.sig;
        if let Some(t) = &s.constness {
            self.error(t, "a #[parallel] function cannot be `const`");
        }
        if let Some(t) = &s.asyncness {
            self.error(t, "a #[parallel] function cannot be `async`");
        }
        if let Some(t) = &s.unsafety {
            self.error(
                t,
                "a #[parallel] function cannot be `unsafe`: nothing in it is",
            );
        }
        if let Some(abi) = &s.abi {
            self.error(abi, "a #[parallel] function cannot have an `extern` ABI");
        }
        if let Some(v) = &s.variadic {
            self.error(v, "variadic parameters are not allowed");
        }
        self.generics(&s.generics, "a #[parallel] function");
        // Types naming a generic parameter are already reported by `generics`.
        let generic_names: Vec<String> = s
            .generics
            .params
            .iter()
            .filter_map(|p| match p {
                syn::GenericParam::Type(t) => Some(t.ident.to_string()),
                syn::GenericParam::Const(c) => Some(c.ident.to_string()),
                syn::GenericParam::Lifetime(_) => None,
            })
            .collect();
        let mut params = Vec::new();
        let mut psigs = Vec::new();
        let mut ok = true;
        for arg in &s.inputs {
            match arg {
                syn::FnArg::Receiver(r) => {
                    self.error(r, "`self` parameters are not allowed: a #[parallel] function is a free function");
                    ok = false;
                }
                syn::FnArg::Typed(pt) => {
                    let ident = match &*pt.pat {
                        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            if let Some(m) = &pi.mutability {
                                self.error(
                                    m,
                                    "`mut` parameters are not allowed: values are immutable",
                                );
                            }
                            Some(pi.ident.clone())
                        }
                        other => {
                            self.error(
                                other,
                                "parameters must be plain names, such as `x: &[f32]`",
                            );
                            None
                        }
                    };
                    let repr = if mentions(&pt.ty, &generic_names) {
                        None
                    } else {
                        sig::param_repr(&pt.ty, &mut self.errors)
                    };
                    let ty = repr.as_ref().map_or(Type::Infer, sig::Repr::ir_type);
                    let name = ident
                        .as_ref()
                        .map_or("param".to_string(), |i| i.unraw().to_string());
                    let var = self.new_var(&name, ty, pt.pat.span());
                    params.push(var);
                    if let Some(ident) = &ident {
                        self.env = self.env.with(name.clone(), Binding::Value(var));
                        match repr {
                            Some(repr) => psigs.push(ParamSig {
                                ident: ident.clone(),
                                repr,
                            }),
                            None => ok = false,
                        }
                    } else {
                        ok = false;
                    }
                }
            }
        }
        let ret = match &s.output {
            syn::ReturnType::Type(_, ty) if mentions(ty, &generic_names) => None,
            output => sig::ret_sig(output, &s.ident, &mut self.errors),
        };
        let sig = match (ok, ret) {
            (true, Some(ret)) => Some(Signature { params: psigs, ret }),
            _ => None,
        };
        (params, sig)
    }

    /// Rejects type and const generics (lifetimes are fine) and `where` clauses.
    fn generics(&mut self, g: &syn::Generics, what: &str) {
        for p in &g.params {
            match p {
                syn::GenericParam::Lifetime(_) => {}
                syn::GenericParam::Type(_) | syn::GenericParam::Const(_) => {
                    self.error(p, format!("{what} cannot be generic: write the concrete types (lifetimes are fine)"));
                }
            }
        }
        if let Some(w) = &g.where_clause {
            self.error(w, format!("{what} cannot have a `where` clause"));
        }
    }

    // ----- blocks and statements -----

    /// Lowers a block into the current statements (its names are scoped to it) and returns
    /// its value.
    fn block_value(&mut self, b: &syn::Block) -> VarId {
        let (env, items) = (self.env.clone(), self.items.clone());
        self.register_items(&b.stmts);
        let mut result = None;
        let n = b.stmts.len();
        for (i, stmt) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                syn::Stmt::Local(l) => {
                    self.local(l);
                    if last {
                        self.error(l, "a block cannot end with `let`: end it with the expression that gives its value");
                        result = Some(self.poison());
                    }
                }
                syn::Stmt::Item(syn::Item::Fn(_)) => {}
                syn::Stmt::Item(item) => {
                    self.error(
                        item,
                        "only nested `fn` items are allowed inside a #[parallel] body",
                    );
                }
                syn::Stmt::Expr(e, None) => {
                    if last {
                        result = Some(self.value(e));
                    } else {
                        let before = self.error_count();
                        self.value(e);
                        if self.error_count() == before {
                            self.error(e, NO_EFFECT);
                        }
                    }
                }
                syn::Stmt::Expr(e, Some(semi)) => {
                    let before = self.error_count();
                    self.value(e);
                    if self.error_count() == before {
                        if last {
                            self.error(semi, "remove this `;`: the value of a block is its final expression, written without `;`");
                        } else {
                            self.error(stmt, NO_EFFECT);
                        }
                    }
                    if last {
                        result = Some(self.poison());
                    }
                }
                syn::Stmt::Macro(m) => {
                    self.error(m, "macros are not supported in #[parallel] code");
                    if last {
                        result = Some(self.poison());
                    }
                }
            }
        }
        self.env = env;
        self.items = items;
        match result {
            Some(r) => r,
            None => {
                self.error_at(
                    b.brace_token.span.join(),
                    "this block has no value: end it with an expression",
                );
                self.poison()
            }
        }
    }

    /// Registers the `fn` items of a block (visible in the whole block, as in Rust) and
    /// checks their bodies once.
    fn register_items(&mut self, stmts: &[syn::Stmt]) {
        let fns: Vec<&syn::ItemFn> = stmts
            .iter()
            .filter_map(|s| match s {
                syn::Stmt::Item(syn::Item::Fn(f)) => Some(f),
                _ => None,
            })
            .collect();
        if fns.is_empty() {
            return;
        }
        let first = self.fns.len();
        let mut items = self.items.clone();
        for (k, f) in fns.iter().enumerate() {
            items = items.with(
                f.sig.ident.unraw().to_string(),
                Binding::Callable(Callable::Fn(first + k)),
            );
        }
        for f in &fns {
            let s = &f.sig;
            for attr in &f.attrs {
                if !harmless_attr(attr) {
                    self.error(attr, "attributes are not supported on nested functions");
                }
            }
            if let Some(t) = &s.constness {
                self.error(t, "a nested fn cannot be `const`");
            }
            if let Some(t) = &s.asyncness {
                self.error(t, "a nested fn cannot be `async`");
            }
            if let Some(t) = &s.unsafety {
                self.error(t, "a nested fn cannot be `unsafe`");
            }
            if let Some(abi) = &s.abi {
                self.error(abi, "a nested fn cannot have an `extern` ABI");
            }
            if let Some(v) = &s.variadic {
                self.error(v, "variadic parameters are not allowed");
            }
            self.generics(&s.generics, "a nested fn");
            let mut params = Vec::new();
            for arg in &s.inputs {
                match arg {
                    syn::FnArg::Receiver(r) => self.error(r, "`self` parameters are not allowed"),
                    syn::FnArg::Typed(pt) => {
                        let ty = sig::annotation(&pt.ty, &mut self.errors);
                        params.push(((*pt.pat).clone(), ty));
                    }
                }
            }
            let ret = match &s.output {
                syn::ReturnType::Default => {
                    self.error(&s.ident, "a nested fn must declare its result type: `-> T`");
                    Type::Infer
                }
                syn::ReturnType::Type(_, ty) => sig::annotation(ty, &mut self.errors),
            };
            self.fns.push(Rc::new(FnItem {
                name: s.ident.unraw().to_string(),
                item: Rc::new((*f).clone()),
                params,
                ret,
                env: items.clone(),
                nested: true,
            }));
        }
        for (k, f) in fns.iter().enumerate() {
            let name = f.sig.ident.unraw().to_string();
            self.env = self
                .env
                .with(name.clone(), Binding::Callable(Callable::Fn(first + k)));
            self.items = self
                .items
                .with(name, Binding::Callable(Callable::Fn(first + k)));
        }
        for (k, f) in fns.iter().enumerate() {
            self.check(&Callable::Fn(first + k), &f.sig.ident, f.sig.ident.span());
        }
    }

    /// `let pat = init;`
    fn local(&mut self, l: &syn::Local) {
        for attr in &l.attrs {
            if !harmless_attr(attr) {
                self.error(
                    attr,
                    "attributes are not supported on `let` in #[parallel] code",
                );
            }
        }
        let Some(init) = &l.init else {
            self.error(
                l,
                "`let` needs a value: `let x = ...;` (bindings are immutable)",
            );
            let p = self.poison();
            let from = p.index();
            self.bind_pat(&l.pat, p, from);
            return;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.error(
                else_token,
                "`let ... else` is not supported: bind with `let` and use `if c { a } else { b }`",
            );
        }
        if let Some(c) = self.as_callable(&init.expr) {
            let c = match c {
                Callable::Closure {
                    def,
                    checked: false,
                } => {
                    self.check(
                        &Callable::Closure {
                            def: def.clone(),
                            checked: false,
                        },
                        &init.expr,
                        cheap_span(&init.expr),
                    );
                    Callable::Closure { def, checked: true }
                }
                other => other,
            };
            match &l.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    if let Some(m) = &pi.mutability {
                        self.error(m, MUT_MSG);
                    }
                    self.env = self
                        .env
                        .with(pi.ident.unraw().to_string(), Binding::Callable(c));
                }
                syn::Pat::Wild(_) => {}
                syn::Pat::Type(pt) => {
                    self.error(&pt.ty, "a closure binding cannot have a type annotation: annotate the closure's parameters instead");
                    if let syn::Pat::Ident(pi) = &*pt.pat {
                        self.env = self
                            .env
                            .with(pi.ident.unraw().to_string(), Binding::Callable(c));
                    }
                }
                other => self.error(
                    other,
                    "a function can only be bound to a plain name: `let f = |x| ...;`",
                ),
            }
            return;
        }
        let from = self.vars.len();
        let v = self.value(&init.expr);
        self.bind_pat(&l.pat, v, from);
    }

    /// Binds the names of `pat` to `v` (tuple patterns take fields). Variables from index
    /// `fresh_from` on were made for this binding and take the bound name.
    fn bind_pat(&mut self, pat: &syn::Pat, v: VarId, fresh_from: usize) {
        match pat {
            syn::Pat::Ident(pi) => {
                if let Some(r) = &pi.by_ref {
                    self.error(r, "`ref` bindings are not supported: write the name alone");
                }
                if let Some(m) = &pi.mutability {
                    self.error(m, MUT_MSG);
                }
                if let Some((at, _)) = &pi.subpat {
                    self.error(at, "`@` patterns are not supported");
                }
                let name = pi.ident.unraw().to_string();
                if v.index() >= fresh_from {
                    self.rename(v, &name);
                }
                self.env = self.env.with(name, Binding::Value(v));
            }
            syn::Pat::Wild(_) => {}
            syn::Pat::Tuple(t) => {
                for (i, p) in t.elems.iter().enumerate() {
                    if let syn::Pat::Rest(r) = p {
                        self.error(r, "`..` is not supported in tuple patterns: name every element, using `_` for the unused ones");
                        continue;
                    }
                    let index = u32::try_from(i).unwrap_or(u32::MAX);
                    let f = self.emit("field", Type::Infer, Expr::Field(v, index), p.span());
                    self.bind_pat(p, f, f.index());
                }
            }
            syn::Pat::Type(pt) => {
                let ty = sig::annotation(&pt.ty, &mut self.errors);
                let v = self.annotate(v, ty, pt.ty.span());
                self.bind_pat(&pt.pat, v, fresh_from);
            }
            syn::Pat::Reference(r) => {
                if let Some(m) = &r.mutability {
                    self.error(m, "`&mut` patterns are not supported: values are immutable");
                }
                self.bind_pat(&r.pat, v, fresh_from);
            }
            syn::Pat::Paren(p) => self.bind_pat(&p.pat, v, fresh_from),
            other => self.error(other, PATTERN_MSG),
        }
    }

    // ----- callables -----

    /// Whether an expression denotes a callable (as [`Lowerer::as_callable`], without
    /// building it).
    fn is_callable(&self, e: &syn::Expr) -> bool {
        match peel(e) {
            syn::Expr::Closure(_) => true,
            syn::Expr::Path(_) => self.as_callable(e).is_some(),
            _ => false,
        }
    }

    /// The callable an expression denotes, if it denotes one.
    fn as_callable(&self, e: &syn::Expr) -> Option<Callable> {
        match peel(e) {
            syn::Expr::Closure(c) => Some(Callable::Closure {
                def: Rc::new(ClosureDef {
                    closure: c.clone(),
                    env: self.env.clone(),
                    items: self.items.clone(),
                }),
                checked: false,
            }),
            syn::Expr::Path(p) if p.qself.is_none() => {
                if let Some(ident) = p.path.get_ident() {
                    return match self.env.lookup(&ident.unraw().to_string()) {
                        Some(Binding::Callable(c)) => Some(c.clone()),
                        Some(Binding::Value(_)) => None,
                        None => Prim::from_name(&ident.to_string())
                            .filter(|p| unary_prim(*p))
                            .map(Callable::Prim),
                    };
                }
                let mut segs = p.path.segments.iter();
                match (p.path.leading_colon, segs.next(), segs.next(), segs.next()) {
                    (None, Some(ty), Some(f), None)
                        if ty.arguments.is_none() && f.arguments.is_none() =>
                    {
                        let s = Scalar::from_name(&ty.ident.to_string())?;
                        let f = ScalarFn::from_name(&f.ident.to_string())?;
                        Some(Callable::Scalar(f, Some(s)))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn arity(&self, c: &Callable) -> usize {
        match c {
            Callable::Closure { def, .. } => def.closure.inputs.len(),
            Callable::Fn(id) => self.fns.get(*id).map_or(0, |f| f.params.len()),
            Callable::Scalar(f, _) => f.arity(),
            Callable::Prim(_) => 1,
        }
    }

    fn describe(&self, c: &Callable) -> String {
        match c {
            Callable::Closure { .. } => "this closure".to_string(),
            Callable::Fn(id) => self
                .fns
                .get(*id)
                .map_or("this function".to_string(), |f| format!("`{}`", f.name)),
            Callable::Scalar(f, Some(s)) => format!("`{s}::{}`", f.name()),
            Callable::Scalar(f, None) => format!("`{}`", f.name()),
            Callable::Prim(p) => format!("`{}`", p.name()),
        }
    }

    /// Checks a callable's body where it is defined: lowers it once with errors reported,
    /// then drops what was produced.
    fn check(&mut self, c: &Callable, site: &(impl ToTokens + ?Sized), span: Span) {
        let (nv, ns) = (self.vars.len(), self.spans.len());
        let _ = self.lambda(c, site, span, false);
        self.vars.truncate(nv);
        self.spans.truncate(ns);
    }

    /// The callable as a lambda with fresh parameters (one per parameter of the callable).
    fn lambda(
        &mut self,
        c: &Callable,
        site: &(impl ToTokens + ?Sized),
        span: Span,
        quiet: bool,
    ) -> Lambda {
        let n = self.arity(c);
        let saved = std::mem::take(&mut self.stmts);
        let params: Vec<VarId> = (0..n)
            .map(|_| self.new_var("arg", Type::Infer, span))
            .collect();
        let result = self.apply(c, &params, site, span, quiet);
        let stmts = std::mem::replace(&mut self.stmts, saved);
        let body = Block { stmts, result };
        let captures = captures(&params, &body);
        Lambda {
            params,
            captures,
            body,
        }
    }

    /// Lowers the body of `c` into the current statements with its parameters bound to
    /// `args` (fresh variables, used only here); returns its value. `quiet` for a body that
    /// was checked already.
    fn apply(
        &mut self,
        c: &Callable,
        args: &[VarId],
        site: &(impl ToTokens + ?Sized),
        span: Span,
        quiet: bool,
    ) -> VarId {
        if self.exhausted {
            self.quiet_errors += 1;
            return self.poison();
        }
        if self.vars.len() > MAX_VARS {
            self.exhausted = true;
            self.errors.push(syn::Error::new_spanned(
                site,
                "this body is too large after inlining its closures and functions",
            ));
            return self.poison();
        }
        match c {
            Callable::Closure { def, .. } => {
                if quiet {
                    self.quiet += 1;
                }
                let (env, items) = (self.env.clone(), self.items.clone());
                self.env = def.env.clone();
                self.items = def.items.clone();
                let cl = &def.closure;
                if let Some(l) = &cl.lifetimes {
                    self.error(l, "`for<...>` closures are not supported");
                }
                if let Some(t) = &cl.constness {
                    self.error(t, "`const` closures are not supported");
                }
                if let Some(t) = &cl.movability {
                    self.error(t, "`static` closures are not supported");
                }
                if let Some(t) = &cl.asyncness {
                    self.error(t, "async closures are not supported");
                }
                for (pat, v) in cl.inputs.iter().zip(args) {
                    self.bind_pat(pat, *v, v.index());
                }
                let mut r = self.value(&cl.body);
                if let syn::ReturnType::Type(_, ty) = &cl.output {
                    let t = sig::annotation(ty, &mut self.errors);
                    r = self.annotate(r, t, ty.span());
                }
                self.env = env;
                self.items = items;
                if quiet {
                    self.quiet -= 1;
                }
                r
            }
            Callable::Fn(id) => {
                let Some(f) = self.fns.get(*id).cloned() else {
                    return self.poison();
                };
                if self.stack.contains(id) {
                    let caller = self.stack.last().copied().unwrap_or(*id);
                    let owner = if caller >= self.n_module || *id >= self.n_module {
                        self.owner
                    } else {
                        usize::MAX
                    };
                    self.quiet_errors += 1;
                    if self.reported.0.insert((owner, caller, *id)) {
                        self.errors.push(syn::Error::new_spanned(
                            site,
                            format!("recursive call of `{}`: recursion is not supported in #[parallel] code (calls are inlined)", f.name),
                        ));
                    }
                    return self.poison();
                }
                if quiet {
                    self.quiet += 1;
                }
                if f.nested {
                    self.fn_depth += 1;
                }
                self.stack.push(*id);
                let (env, items) = (self.env.clone(), self.items.clone());
                self.env = f.env.clone();
                self.items = f.env.clone();
                for ((pat, ty), v) in f.params.iter().zip(args) {
                    let v = self.annotate(*v, ty.clone(), span);
                    self.bind_pat(pat, v, v.index());
                }
                let r = self.block_value(&f.item.block);
                let r = self.annotate(r, f.ret.clone(), span);
                self.env = env;
                self.items = items;
                self.stack.pop();
                if f.nested {
                    self.fn_depth -= 1;
                }
                if quiet {
                    self.quiet -= 1;
                }
                r
            }
            Callable::Scalar(f, ty) => self.scalar_fn(*f, *ty, args.to_vec(), site, span),
            Callable::Prim(p) => {
                let arg = args.first().copied().unwrap_or_else(|| self.poison());
                self.prim_on(*p, Vec::new(), vec![arg], span)
            }
        }
    }

    /// Calls a callable on argument expressions: the body is inlined.
    fn inline_call(&mut self, c: &Callable, call: &syn::ExprCall) -> VarId {
        let n = self.arity(c);
        if call.args.len() != n {
            let what = match (c, peel(&call.func)) {
                (Callable::Closure { .. }, syn::Expr::Path(p)) => {
                    format!("`{}`", path_text(&p.path))
                }
                _ => self.describe(c),
            };
            return self.fail(
                call,
                format!(
                    "{what} takes {n} argument{} but {} {} given",
                    if n == 1 { "" } else { "s" },
                    call.args.len(),
                    if call.args.len() == 1 { "was" } else { "were" }
                ),
            );
        }
        let mut copies = Vec::new();
        for a in &call.args {
            let v = self.value(a);
            // A closure or fn body binds its parameters; a scalar function takes the values.
            copies.push(match c {
                Callable::Closure { .. } | Callable::Fn(_) => {
                    self.emit("arg", Type::Infer, Expr::Var(v), cheap_span(a))
                }
                Callable::Scalar(..) | Callable::Prim(_) => v,
            });
        }
        let quiet = c.checked();
        self.apply(c, &copies, call, call_span(call), quiet)
    }

    // ----- expressions -----

    /// Lowers an expression to the variable holding its value.
    fn value(&mut self, e: &syn::Expr) -> VarId {
        use syn::Expr as E;
        match e {
            E::Lit(l) => self.literal(&l.lit, false),
            E::Path(p) => self.path_value(p),
            E::Paren(p) => self.value(&p.expr),
            E::Group(g) => self.value(&g.expr),
            E::Tuple(t) => {
                if t.elems.is_empty() {
                    return self.fail(e, "the unit value `()` is not supported: every expression must produce a value");
                }
                let vs: Vec<VarId> = t.elems.iter().map(|x| self.value(x)).collect();
                self.emit("tuple", Type::Infer, Expr::Tuple(vs), cheap_span(e))
            }
            E::Field(f) => match &f.member {
                syn::Member::Unnamed(i) => {
                    let v = self.value(&f.base);
                    self.emit("field", Type::Infer, Expr::Field(v, i.index), cheap_span(e))
                }
                syn::Member::Named(n) => self.fail(n, "named fields are not supported: tuple fields are written `t.0`"),
            },
            E::Block(b) => {
                if let Some(l) = &b.label {
                    return self.fail(l, "labeled blocks are not supported");
                }
                self.block_value(&b.block)
            }
            E::If(i) => self.if_expr(i),
            E::Binary(b) => self.binary(b),
            E::Unary(u) => self.unary(u),
            E::Cast(c) => {
                let v = self.value(&c.expr);
                match sig::scalar_of(&c.ty) {
                    Some(Scalar::Bool) => self.fail(&c.ty, "cannot cast to `bool`: compare instead, such as `x != 0`"),
                    Some(s) => self.emit("cast", Type::Scalar(s), Expr::Cast(v, s), cheap_span(e)),
                    None => self.fail(&c.ty, "`as` converts between scalar types only: f32, f64, i32, u32, i64, u64, usize"),
                }
            }
            E::Index(i) => {
                if let E::Range(r) = peel(&i.index) {
                    return self.fail(r, "slicing is not supported: index single elements, `x[i]`, or use `gather(x, idx)`");
                }
                let seq = self.value(&i.expr);
                if let Some(vals) = self.windows.get(seq) {
                    let vals = vals.to_vec();
                    return self.window_elem(&vals, &i.index);
                }
                let index = self.value(&i.index);
                self.emit("elem", Type::Infer, Expr::Index { seq, index, checked: Some(Origin::Index) }, cheap_span(e))
            }
            E::MethodCall(m) => self.method_call(m),
            E::Call(c) => self.call(c),
            E::Reference(r) => {
                if let Some(m) = &r.mutability {
                    return self.fail(m, "`&mut` is not allowed: values are immutable");
                }
                self.value(&r.expr)
            }
            E::Closure(_) => self.fail(e, CLOSURE_NOT_VALUE),
            E::Array(_) | E::Repeat(_) => self.fail(e, "array expressions are not supported: use a sequence parameter, `replicate(v, n)` or `range(n)`"),
            E::Assign(_) => self.fail(e, "assignment is not allowed: bindings are immutable; use a new `let`"),
            E::Async(_) | E::Await(_) => self.fail(e, "async code is not supported in #[parallel] functions"),
            E::Break(_) | E::Continue(_) => self.fail(e, "`break` and `continue` are not supported: there are no loops; use primitives such as `map`, `reduce`, `scan` or `filter`"),
            E::ForLoop(f) => self.fail(
                &f.for_token,
                "`for` loops are not supported: use primitives such as `map(f, xs)`, `reduce(op, xs, init)` or `scan(op, xs)` (`range(n)` gives 0..n)",
            ),
            E::While(w) => self.fail(&w.while_token, "`while` loops are not supported: use primitives such as `map`, `reduce`, `scan` or `filter`"),
            E::Loop(l) => self.fail(&l.loop_token, "`loop` is not supported: use primitives such as `map`, `reduce`, `scan` or `filter`"),
            E::Match(m) => self.fail(&m.match_token, "`match` is not supported: use `if c { a } else { b }`"),
            E::Let(_) => self.fail(e, "`let` expressions (`if let`) are not supported: use `if c { a } else { b }`"),
            E::Macro(m) => self.fail(&m.mac, "macros are not supported in #[parallel] code"),
            E::Range(_) => self.fail(e, "ranges are not supported: use `range(n)` for the sequence 0..n"),
            E::Return(r) => self.fail(&r.return_token, "`return` is not allowed: the value of the body is its final expression"),
            E::Struct(_) => self.fail(e, "struct literals are not supported: use tuples"),
            E::Try(t) => self.fail(
                &t.question_token,
                "`?` is not part of the language: declare the function to return `Result<T, dpl::Error>` and write the body as for `T`",
            ),
            E::TryBlock(_) => self.fail(e, "`try` blocks are not supported"),
            E::Unsafe(u) => self.fail(&u.unsafe_token, "`unsafe` blocks are not allowed in #[parallel] code"),
            E::Yield(_) => self.fail(e, "`yield` is not supported"),
            E::Const(_) => self.fail(e, "`const` blocks are not supported"),
            E::Infer(_) => self.fail(e, "`_` is not a value"),
            _ => self.fail(e, "this expression is not supported in #[parallel] code"),
        }
    }

    fn literal(&mut self, lit: &syn::Lit, negate: bool) -> VarId {
        let span = lit.span();
        match lit {
            syn::Lit::Bool(b) => self.emit("lit", Type::bool(), Expr::Const(Const::Bool(b.value)), span),
            syn::Lit::Int(li) => {
                let suffix = li.suffix();
                if suffix == "f32" || suffix == "f64" {
                    return self.float_literal(li.base10_digits(), suffix, negate, lit);
                }
                let scalar = match suffix {
                    "" => None,
                    s => match Scalar::from_name(s) {
                        Some(sc) if sc.is_int() => Some(sc),
                        _ => {
                            return self.fail(lit, format!("unsupported literal suffix `{s}`; allowed: i32, u32, i64, u64, usize, f32, f64"));
                        }
                    },
                };
                let Ok(v) = li.base10_parse::<i128>() else {
                    return self.fail(lit, "integer literal is too large");
                };
                let v = if negate { -v } else { v };
                let (lo, hi) = int_range(scalar);
                if v < lo || v > hi {
                    let ty = scalar.map_or("any dpl integer type".to_string(), |s| format!("`{s}`"));
                    return self.fail(lit, format!("literal out of range for {ty}"));
                }
                let ty = scalar.map_or(Type::Infer, Type::Scalar);
                self.emit("lit", ty, Expr::Const(Const::Int(v)), span)
            }
            syn::Lit::Float(lf) => {
                let suffix = lf.suffix();
                if !matches!(suffix, "" | "f32" | "f64") {
                    return self.fail(lit, format!("unsupported literal suffix `{suffix}`; allowed: f32, f64"));
                }
                self.float_literal(lf.base10_digits(), suffix, negate, lit)
            }
            _ => self.fail(lit, "string, character and byte literals are not supported: dpl values are numbers, booleans, tuples and sequences"),
        }
    }

    fn float_literal(&mut self, digits: &str, suffix: &str, negate: bool, lit: &syn::Lit) -> VarId {
        let parsed = if suffix == "f32" {
            digits
                .parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .map(f64::from)
        } else {
            digits.parse::<f64>().ok().filter(|v| v.is_finite())
        };
        let Some(v) = parsed else {
            return self.fail(lit, "floating-point literal out of range");
        };
        let v = if negate { -v } else { v };
        let ty = Scalar::from_name(suffix).map_or(Type::Infer, Type::Scalar);
        self.emit("lit", ty, Expr::Const(Const::Float(v)), lit.span())
    }

    fn path_value(&mut self, p: &syn::ExprPath) -> VarId {
        if p.qself.is_some() {
            return self.fail(p, "qualified paths (`<T>::x`) are not supported");
        }
        if let Some(ident) = p.path.get_ident() {
            let name = ident.unraw().to_string();
            return match self.env.lookup(&name) {
                Some(Binding::Value(v)) => *v,
                Some(Binding::Callable(_)) => self.fail(p, CLOSURE_NOT_VALUE),
                None if Prim::from_name(&name).is_some() => self.fail(
                    p,
                    format!(
                        "`{name}` is a primitive: call it, as in `{name}(...)`, or pass it to `map`"
                    ),
                ),
                None => {
                    let hint = if self.fn_depth > 0 {
                        " (a nested `fn` cannot use the local variables of the enclosing function: use a closure)"
                    } else {
                        ""
                    };
                    self.fail(p, format!("cannot find `{name}` in this scope{hint}"))
                }
            };
        }
        if let Some((c, s)) = const_path(&p.path) {
            return self.emit("const", Type::Scalar(s), Expr::Const(c), path_span(&p.path));
        }
        if self.as_callable(&syn::Expr::Path(p.clone())).is_some() {
            return self.fail(p, CLOSURE_NOT_VALUE);
        }
        let text = path_text(&p.path);
        self.fail(
            p,
            format!("`{text}` is not supported: a #[parallel] body can use its parameters, its local bindings and constants such as `f32::MAX` or `f64::consts::PI`"),
        )
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> VarId {
        let c = self.value(&i.cond);
        let Some((_, else_branch)) = &i.else_branch else {
            return self.fail(
                &i.if_token,
                "`if` without `else` has no value: add an `else` branch",
            );
        };
        let then_b = self.sub_block(|s| s.block_value(&i.then_branch));
        let else_b = self.sub_block(|s| s.value(else_branch));
        self.emit(
            "if",
            Type::Infer,
            Expr::If(c, then_b, else_b),
            i.if_token.span,
        )
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> VarId {
        use syn::BinOp as B;
        let span = b.op.span();
        let op = match b.op {
            B::And(_) | B::Or(_) => {
                let is_and = matches!(b.op, B::And(_));
                let c = self.value(&b.left);
                let rhs = self.sub_block(|s| s.value(&b.right));
                let constant = self.sub_block(|s| {
                    s.emit("lit", Type::bool(), Expr::Const(Const::Bool(!is_and)), span)
                });
                let (t, e) = if is_and {
                    (rhs, constant)
                } else {
                    (constant, rhs)
                };
                return self.emit(
                    if is_and { "and" } else { "or" },
                    Type::bool(),
                    Expr::If(c, t, e),
                    span,
                );
            }
            B::Add(_) => BinOp::Add,
            B::Sub(_) => BinOp::Sub,
            B::Mul(_) => BinOp::Mul,
            B::Div(_) => BinOp::Div,
            B::Rem(_) => BinOp::Rem,
            B::BitAnd(_) => BinOp::BitAnd,
            B::BitOr(_) => BinOp::BitOr,
            B::BitXor(_) => BinOp::BitXor,
            B::Shl(_) => BinOp::Shl,
            B::Shr(_) => BinOp::Shr,
            B::Eq(_) => BinOp::Eq,
            B::Ne(_) => BinOp::Ne,
            B::Lt(_) => BinOp::Lt,
            B::Le(_) => BinOp::Le,
            B::Gt(_) => BinOp::Gt,
            B::Ge(_) => BinOp::Ge,
            _ => {
                return self.fail(
                    &b.op,
                    "compound assignment is not allowed: bindings are immutable; write `let x = x + ...;`",
                );
            }
        };
        let l = self.value(&b.left);
        let r = self.value(&b.right);
        let ty = if op.is_comparison() {
            Type::bool()
        } else {
            Type::Infer
        };
        self.emit(op_name(op), ty, Expr::Binary(op, l, r), span)
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> VarId {
        match u.op {
            syn::UnOp::Neg(_) => {
                if let syn::Expr::Lit(l) = &*u.expr {
                    if matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_)) {
                        return self.literal(&l.lit, true);
                    }
                }
                let v = self.value(&u.expr);
                self.emit("neg", Type::Infer, Expr::Unary(UnOp::Neg, v), u.op.span())
            }
            syn::UnOp::Not(_) => {
                let v = self.value(&u.expr);
                self.emit("not", Type::Infer, Expr::Unary(UnOp::Not, v), u.op.span())
            }
            // Values are never references in the DSL: `*v` is `v`.
            syn::UnOp::Deref(_) => self.value(&u.expr),
            _ => self.fail(&u.op, "this operator is not supported"),
        }
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> VarId {
        if let Some(t) = &m.turbofish {
            return self.fail(t, "turbofish `::<...>` is not supported here");
        }
        let name = m.method.unraw().to_string();
        if name == "len" {
            if !m.args.is_empty() {
                return self.fail(&m.args, "`len` takes no arguments: `x.len()`");
            }
            let v = self.value(&m.receiver);
            return self.emit("len", Type::usize(), Expr::Len(v), m.method.span());
        }
        if let Some(f) = ScalarFn::from_name(&name) {
            let want = f.arity() - 1;
            if m.args.len() != want {
                let form = match want {
                    0 => format!("`x.{name}()`"),
                    1 => format!("`x.{name}(y)`"),
                    _ => format!("`x.{name}(y, z)`"),
                };
                return self.fail(
                    m,
                    format!(
                        "`{name}` takes {want} argument{}: {form}",
                        if want == 1 { "" } else { "s" }
                    ),
                );
            }
            let mut args = vec![self.value(&m.receiver)];
            for a in &m.args {
                args.push(self.value(a));
            }
            return self.scalar_fn(f, None, args, &m.method, m.method.span());
        }
        let msg = match name.as_str() {
            "iter" | "into_iter" | "iter_mut" | "map" | "sum" | "fold" | "collect" | "filter"
            | "zip" | "enumerate" | "product" | "rev" => {
                "iterator methods are not supported: use the primitives, such as `map(f, xs)`, `reduce(op, xs, init)`, `sum(xs)` or `filter(pred, xs)`".to_string()
            }
            "clone" | "to_vec" | "to_owned" | "copied" | "cloned" => {
                format!(
                    "`.{name}()` is not needed: values are immutable and can be used any number of times"
                )
            }
            "pow" | "powi" => "use `powf`: `x.powf(y)` on floats".to_string(),
            _ => format!("unknown method `{name}`; allowed methods: {METHODS}"),
        };
        self.fail(&m.method, msg)
    }

    /// A scalar function applied to lowered arguments (`ty` from an `f32::max` path).
    fn scalar_fn(
        &mut self,
        f: ScalarFn,
        ty: Option<Scalar>,
        mut args: Vec<VarId>,
        site: &(impl ToTokens + ?Sized),
        span: Span,
    ) -> VarId {
        if let Some(t) = ty {
            if let Some(why) = f.unsupported_for(t) {
                return self.fail(site, why);
            }
            for a in &mut args {
                *a = self.annotate(*a, Type::Scalar(t), span);
            }
        }
        let ty = ty.map_or(Type::Infer, Type::Scalar);
        match f {
            ScalarFn::Math(m) => self.emit(m.name(), ty, Expr::Math(m, args), span),
            ScalarFn::Wrapping(op) => match args.as_slice() {
                [a, b] => self.emit(op_name(op), ty, Expr::Binary(op, *a, *b), span),
                _ => self.fail(site, format!("`{}` takes two operands", f.name())),
            },
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> VarId {
        let func = peel(&c.func);
        if let syn::Expr::Path(p) = func {
            if p.qself.is_none() {
                if let Some(ident) = p.path.get_ident() {
                    let name = ident.unraw().to_string();
                    match self.env.lookup(&name).cloned() {
                        Some(Binding::Value(_)) => {
                            return self
                                .fail(&c.func, format!("`{name}` is a value, not a function"));
                        }
                        Some(Binding::Callable(callable)) => return self.inline_call(&callable, c),
                        None => {}
                    }
                    if let Some(prim) = Prim::from_name(&name) {
                        return self.prim_call(prim, c);
                    }
                    if name == "stencil" {
                        return self.stencil(c);
                    }
                    let scope = if self.in_module {
                        "a dpl primitive or a function of this #[parallel] module"
                    } else {
                        "a dpl primitive, a closure or a nested fn (to call another #[parallel] function, put both in a `#[parallel] mod`)"
                    };
                    return self.fail(
                        &c.func,
                        format!(
                            "`{name}` is not {scope}; allowed primitives: {}",
                            prim_list()
                        ),
                    );
                }
                if let Some(callable @ Callable::Scalar(f, Some(_))) = self.as_callable(func) {
                    if c.args.len() != f.arity() {
                        let n = f.arity();
                        let what = self.describe(&callable);
                        return self.fail(
                            c,
                            format!("{what} takes {n} argument{}", if n == 1 { "" } else { "s" }),
                        );
                    }
                    return self.inline_call(&callable, c);
                }
                if const_path(&p.path).is_some() {
                    return self.fail(
                        &c.func,
                        format!("`{}` is a constant, not a function", path_text(&p.path)),
                    );
                }
                let text = path_text(&p.path);
                return self.fail(
                    &c.func,
                    format!("`{text}` is not a dpl primitive or scalar function; allowed: the primitives ({}), closures, nested fns and scalar functions such as `f32::sqrt`", prim_list()),
                );
            }
        }
        match self.as_callable(func) {
            Some(callable) => self.inline_call(&callable, c),
            None => self.fail(
                &c.func,
                "only primitives, closures and nested fns can be called",
            ),
        }
    }

    fn prim_call(&mut self, prim: Prim, c: &syn::ExprCall) -> VarId {
        let spec = PrimSpec::of(prim);
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let has_lambda = match spec.lambda {
            LambdaArg::No => false,
            LambdaArg::Required => true,
            LambdaArg::Optional => args.len() == spec.max_data + 1,
        };
        let n_data = args.len().saturating_sub(usize::from(has_lambda));
        if (has_lambda && args.is_empty()) || n_data < spec.min_data || n_data > spec.max_data {
            return self.fail(
                c,
                format!(
                    "wrong number of arguments for `{}`: expected `{}",
                    prim.name(),
                    spec.form
                ),
            );
        }
        let mut rest: &[&syn::Expr] = &args;
        let mut lambdas = Vec::new();
        if let (true, Some((first, tail))) = (has_lambda, args.split_first()) {
            if !self.is_callable(first) && tail.iter().any(|a| self.is_callable(a)) {
                return self.fail(c, format!("the function comes first: `{}", spec.form));
            }
        }
        if has_lambda {
            if let Some((first, tail)) = rest.split_first() {
                rest = tail;
                let expected = PrimSpec::lambda_params(prim, n_data);
                match self.as_callable(first) {
                    Some(callable) => {
                        let n = self.arity(&callable);
                        if n != expected {
                            let what = self.describe(&callable);
                            let why = if prim == Prim::Map {
                                format!(
                                    "`map` over {n_data} sequence{} calls its function with {expected} argument{}",
                                    if n_data == 1 { "" } else { "s" },
                                    if expected == 1 { "" } else { "s" }
                                )
                            } else {
                                format!(
                                    "`{}` calls its function with {expected} argument{}",
                                    prim.name(),
                                    if expected == 1 { "" } else { "s" }
                                )
                            };
                            self.error(*first, format!("{why}, but {what} takes {n}"));
                        } else {
                            let quiet = callable.checked();
                            lambdas.push(self.lambda(&callable, *first, cheap_span(first), quiet));
                        }
                    }
                    None => {
                        let example = match expected {
                            1 => "`|x| ...`",
                            2 => "`|a, b| ...`",
                            _ => "`|x, y, ...| ...`",
                        };
                        self.error(
                            *first,
                            format!("the first argument of `{}` must be a function: a closure such as {example}, the name of one, or a path such as `f32::max`", prim.name()),
                        );
                    }
                }
            }
        }
        let mut data = Vec::new();
        for a in rest {
            if self.is_callable(a) {
                let what = if spec.lambda == LambdaArg::No {
                    format!("`{}` takes no function argument", prim.name())
                } else {
                    format!("only the first argument of `{}` is a function", prim.name())
                };
                self.error(*a, format!("{what}: this argument must be a value"));
                data.push(self.poison());
            } else {
                data.push(self.value(a));
            }
        }
        if lambdas.len() != usize::from(has_lambda) {
            return self.poison();
        }
        self.prim_on(prim, lambdas, data, call_span(c))
    }

    /// Binds a primitive applied to lowered arguments (`len` becomes [`Expr::Len`]).
    fn prim_on(
        &mut self,
        prim: Prim,
        lambdas: Vec<Lambda>,
        args: Vec<VarId>,
        span: proc_macro2::Span,
    ) -> VarId {
        if prim == Prim::Len {
            let v = args.first().copied().unwrap_or_else(|| self.poison());
            return self.emit("len", Type::usize(), Expr::Len(v), span);
        }
        let ty = match prim {
            Prim::Any | Prim::All => Type::bool(),
            Prim::Count => Type::usize(),
            Prim::Indices | Prim::Range => Type::seq(Type::usize()),
            _ => Type::Infer,
        };
        self.emit(
            prim.name(),
            ty,
            Expr::Prim {
                prim,
                lambdas,
                args,
            },
            span,
        )
    }
}

/// A span for an expression without converting it to tokens (which `Spanned::span` does,
/// at a cost proportional to its size): the span of a token that identifies it.
fn cheap_span(e: &syn::Expr) -> Span {
    use syn::Expr as E;
    match e {
        E::Path(p) => path_span(&p.path),
        E::Lit(l) => l.lit.span(),
        E::Call(c) => call_span(c),
        E::MethodCall(m) => m.method.span(),
        E::Binary(b) => b.op.span(),
        E::Unary(u) => u.op.span(),
        E::Paren(p) => p.paren_token.span.join(),
        E::Tuple(t) => t.paren_token.span.join(),
        E::Closure(c) => c.or1_token.span,
        E::If(i) => i.if_token.span,
        E::Block(b) => b.block.brace_token.span.join(),
        E::Index(i) => i.bracket_token.span.join(),
        E::Field(f) => match &f.member {
            syn::Member::Named(n) => n.span(),
            syn::Member::Unnamed(i) => i.span,
        },
        E::Reference(r) => r.and_token.span,
        E::Cast(c) => c.as_token.span,
        E::Group(g) => cheap_span(&g.expr),
        _ => Span::call_site(),
    }
}

/// The span of a call: its callee's.
fn call_span(c: &syn::ExprCall) -> Span {
    cheap_span(&c.func)
}

/// The span of a path's last segment.
fn path_span(p: &syn::Path) -> Span {
    p.segments
        .last()
        .map_or_else(Span::call_site, |s| s.ident.span())
}

/// True when the tokens of `ty` contain one of `names` as an identifier.
fn mentions(ty: &syn::Type, names: &[String]) -> bool {
    fn walk(ts: proc_macro2::TokenStream, names: &[String]) -> bool {
        ts.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => names.iter().any(|n| i == n),
            proc_macro2::TokenTree::Group(g) => walk(g.stream(), names),
            _ => false,
        })
    }
    !names.is_empty() && walk(ty.to_token_stream(), names)
}

/// A readable variable name for the result of a binary operator: its name in the text
/// form, `cmp` for the comparisons.
fn op_name(op: BinOp) -> &'static str {
    if op.is_comparison() { "cmp" } else { op.name() }
}
