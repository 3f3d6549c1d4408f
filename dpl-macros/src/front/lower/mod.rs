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
//! reported) once: a closure at its first use (or where its scope ends when it has none), a
//! `fn` where it is defined; the other uses lower it again in *quiet* mode, where errors are
//! counted but not reported, so that every error appears once whatever the number of uses.

use std::collections::HashSet;
use std::fmt::Display;
use std::rc::Rc;

use dpl_core::ir::{self, Block, Expr, Stmt, Type, Var, VarId};
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::errors::Errors;
use super::sig;
use super::{Lowered, Spans};

mod call;
mod callable;
mod env;
mod expr;
mod generic_call;
mod items;
mod loops;
mod scalar;
mod stencil;
mod stmt;
mod vocab;

use env::{Binding, Callable, Env, FnItem};

/// Recursion errors already reported, shared by the functions of a module so that a cycle
/// found again while lowering another function is not reported twice.
#[derive(Default)]
pub(crate) struct Reported(HashSet<(usize, usize, usize)>);

/// The most rounds of lowering one function (levels of generic calls inside each other).
const MAX_ROUNDS: usize = 32;

/// Lowers one function. `module` holds every function of the compilation unit (the
/// function itself for a lone `#[parallel] fn`; all functions of a `#[parallel] mod`) and
/// `index` says which one is lowered; `literals` says what its integer literals may become.
/// A body that calls generic functions of the module is lowered in rounds, each deciding
/// the types of the calls the one before met ([`generic_call`]).
pub(crate) fn lower_function(
    item: syn::ItemFn,
    module: &[syn::ItemFn],
    index: usize,
    reported: &mut Reported,
    opts: &super::Options,
    literals: dpl_core::typeck::Literals,
) -> Result<Lowered, syn::Error> {
    let mut decided = generic_call::Decided::new();
    for _ in 0..MAX_ROUNDS {
        let (mut lowered, pending) = lower_round(
            item.clone(),
            module,
            index,
            reported,
            opts,
            Rc::new(decided.clone()),
        )?;
        lowered.literals = literals;
        if pending.is_empty() {
            return Ok(lowered);
        }
        let mut typed = lowered.func.clone();
        let types = dpl_core::typeck::infer_params(&mut typed, literals)
            .map_err(|d| crate::emit::diagnostics_to_error(&lowered, d))?;
        let mut errors = Errors::default();
        for p in pending {
            let mut chosen = Vec::new();
            for (n, name, allowed) in &p.params {
                match types.get(n) {
                    Some(s) if allowed.contains(s) => chosen.push(*s),
                    Some(s) => errors.push(syn::Error::new(
                        p.span,
                        format!(
                            "this call of `{}` needs `{name} = {s}`, and `{}` is generated for `{name}` = {} only",
                            p.callee,
                            p.callee,
                            allowed.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
                        ),
                    )),
                    None => errors.push(syn::Error::new(
                        p.span,
                        format!(
                            "cannot tell which type `{name}` of `{}` is at this call: neither its arguments nor the use of its result decide it; name the types: `{}::<f32>(...)`",
                            p.callee, p.callee
                        ),
                    )),
                }
            }
            decided.insert(p.key, chosen);
        }
        errors.finish()?;
    }
    Err(syn::Error::new_spanned(
        &item.sig.ident,
        format!("generic calls are nested more than {MAX_ROUNDS} levels deep"),
    ))
}

/// One round of [`lower_function`]: the body with the generic calls of `decided` inlined,
/// and the stubs of the others.
fn lower_round(
    item: syn::ItemFn,
    module: &[syn::ItemFn],
    index: usize,
    reported: &mut Reported,
    opts: &super::Options,
    decided: Rc<generic_call::Decided>,
) -> Result<(Lowered, Vec<generic_call::Pending>), syn::Error> {
    let in_module = module.len() > 1;
    let mut lw = Lowerer::new(module, index, reported, in_module);
    lw.generic.opts = opts.clone();
    lw.generic.decided = decided;
    let (params, mut sig) = lw.signature(&item);
    lw.stack.push(index);
    lw.top_stmts = item
        .block
        .stmts
        .iter()
        .filter_map(|s| match s {
            syn::Stmt::Expr(e, _) => Some(e as *const syn::Expr),
            _ => None,
        })
        .collect();
    let declared = if sig.as_ref().is_some_and(|s| s.unit) {
        lw.unit_body(&item.block)
    } else {
        lw.block_value(&item.block)
    };
    let result = lw.with_writes(declared, &item, sig.as_mut());
    lw.check_unused(0);
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
        generic,
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
    let lowered = Lowered {
        name: item.sig.ident.unraw().to_string(),
        func,
        spans: Spans(spans),
        sig,
        item,
        literals: dpl_core::typeck::Literals::Rust,
    };
    Ok((lowered, generic.pending))
}

impl Lowerer<'_> {
    /// The function's result with the new values of its `&mut` parameters: `declared`
    /// alone without them; the new values (one, or a tuple) for a function declared without
    /// a result; otherwise the tuple of `declared` and the new values. Fills in the
    /// signature's writes and result representation.
    fn with_writes(
        &mut self,
        declared: VarId,
        item: &syn::ItemFn,
        sig: Option<&mut sig::Signature>,
    ) -> VarId {
        if self.writes.is_empty() {
            return declared;
        }
        let mut values = Vec::new();
        let mut writes = Vec::new();
        let pending = std::mem::take(&mut self.writes);
        let params: Vec<sig::ParamSig> = sig.as_ref().map(|s| s.params.clone()).unwrap_or_default();
        for w in &pending {
            let p = params.iter().find(|p| p.ident.unraw() == w.name);
            match (w.value, p) {
                (Some((v, at)), Some(p)) => {
                    values.push(v);
                    if let Some(kind) = p.write {
                        writes.push((
                            sig::WriteSig {
                                ident: p.ident.clone(),
                                kind,
                                at,
                            },
                            p.repr.elem(),
                        ));
                    }
                }
                (None, _) if w.misplaced => {}
                (None, _) => {
                    let at = p.map_or(item.sig.ident.span(), |p| p.ident.span());
                    self.error_at(
                        at,
                        format!("`{}` is `&mut` but never assigned: assign its new value once with `*{} = e;`, or take it as `&[T]`", w.name, w.name),
                    );
                }
                (Some(_), None) => {}
            }
        }
        let Some(sig) = sig else {
            return declared;
        };
        let span = item.sig.ident.span();
        let mut reprs: Vec<sig::Repr> = writes
            .iter()
            .map(|(w, e)| w.kind.result_repr(e.clone()))
            .collect();
        let result = if sig.unit && values.len() == 1 {
            values[0]
        } else {
            let mut parts = Vec::new();
            if !sig.unit {
                parts.push(declared);
                reprs.insert(0, sig.ret.repr.clone());
            }
            parts.extend(values);
            self.emit("result", Type::Infer, Expr::Tuple(parts), span)
        };
        sig.ret.repr = if reprs.len() == 1 {
            reprs.remove(0)
        } else {
            sig::Repr::Tuple(reprs)
        };
        sig.writes = writes.into_iter().map(|(w, _)| w).collect();
        result
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
    /// Lowering the value of a `const` item (for a hint in "cannot find").
    in_const: bool,
    reported: &'r mut Reported,
    in_module: bool,
    exhausted: bool,
    /// The windows of the `stencil`s being lowered.
    windows: stencil::Windows,
    /// Every `let mut` variable made so far, indexed by [`env::Binding::Mut`]: its current
    /// value ([`loops`]).
    muts: Vec<loops::Slot>,
    /// The loops being lowered, innermost last.
    loops: Vec<loops::LoopCtx>,
    /// Depth of element-function bodies (lambdas) being lowered (0: the top level).
    elem_depth: u32,
    /// While the value of a `break` is lowered after its loop: what it may not read.
    break_scope: Option<loops::BreakScope>,
    /// Closures bound by `let` and not yet checked, innermost last (see
    /// [`Lowerer::check_unused`]).
    unchecked: Vec<Rc<env::ClosureDef>>,
    /// The `&mut` parameters, in order, and their new values once assigned.
    writes: Vec<loops::Pending>,
    /// The statements of the function's own body (where `*y = e;` may be), by address.
    top_stmts: Vec<*const syn::Expr>,
    /// Calls of generic functions of the module ([`generic_call`]).
    generic: generic_call::GenericCalls,
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
            in_const: false,
            reported,
            in_module,
            exhausted: false,
            windows: stencil::Windows::default(),
            muts: Vec::new(),
            loops: Vec::new(),
            elem_depth: 0,
            break_scope: None,
            unchecked: Vec::new(),
            writes: Vec::new(),
            top_stmts: Vec::new(),
            generic: generic_call::GenericCalls::default(),
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

    /// Lowers with the statements going into a fresh block, restoring the scope after. The
    /// block cannot change `mut` variables (only [`Lowerer::merge_if`]'s branches and loop
    /// bodies can).
    fn sub_block(&mut self, f: impl FnOnce(&mut Self) -> VarId) -> Block {
        let saved = std::mem::take(&mut self.stmts);
        let (env, items) = (self.env.clone(), self.items.clone());
        let before = self.mut_values();
        let result = f(self);
        self.keep_muts(&before);
        self.env = env;
        self.items = items;
        let stmts = std::mem::replace(&mut self.stmts, saved);
        Block { stmts, result }
    }
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
        // The rest are rare (mostly rejected): their tokens' span, at its cost.
        _ => e.span(),
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
