//! Callables: recognising them, checking their bodies once, inlining them at each use.
//!
//! A closure's body is lowered at each use, and checked (lowered with its errors reported)
//! only the first time: later uses, and every lowering inside a quiet one, are quiet. A
//! `let`-bound closure that is never used is checked when the body that binds it ends. So a
//! definition nested in another closure is checked once in all, not once per lowering of
//! its enclosing body, and the work is linear in the size of the code (checking at each
//! definition and again at each use would double it at each level of nesting).

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

use dpl_core::ir::{Block, Expr, Lambda, Prim, Scalar, Type, VarId};
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::call::unary_prim;
use super::env::{Binding, Callable, ClosureDef};
use super::scalar::ScalarFn;
use super::{Lowerer, call_span, cheap_span, peel};
use crate::front::{path_text, sig};

/// Past this many variables inlining stops with an error (exponential closure nesting).
const MAX_VARS: usize = 1 << 16;

/// Walks a lambda body: the variables it uses that it does not define, in first-use order.
pub(super) fn captures(params: &[VarId], body: &Block) -> Vec<VarId> {
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
                Expr::Loop(l) => {
                    for v in &l.inits {
                        note(*v, used, seen);
                    }
                    defined.extend(l.params.iter().copied());
                    walk(&l.cond, defined, used, seen);
                    walk(&l.body, defined, used, seen);
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

impl Lowerer<'_> {
    /// Whether an expression denotes a callable (as [`Lowerer::as_callable`], without
    /// building it).
    pub(super) fn is_callable(&self, e: &syn::Expr) -> bool {
        match peel(e) {
            syn::Expr::Closure(_) => true,
            syn::Expr::Path(_) => self.as_callable(e).is_some(),
            _ => false,
        }
    }

    /// The callable an expression denotes, if it denotes one.
    pub(super) fn as_callable(&self, e: &syn::Expr) -> Option<Callable> {
        match peel(e) {
            syn::Expr::Closure(c) => Some(Callable::Closure(Rc::new(ClosureDef {
                closure: c.clone(),
                env: self.env.frozen(|slot| self.mut_value(slot)),
                items: self.items.clone(),
                checked: Cell::new(false),
            }))),
            syn::Expr::Path(p) if p.qself.is_none() => {
                if let Some(ident) = p.path.get_ident() {
                    return match self.env.lookup(&ident.unraw().to_string()) {
                        Some(Binding::Callable(c)) => Some(c.clone()),
                        Some(Binding::Value(_) | Binding::Mut(_) | Binding::Captured(_)) => None,
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

    pub(super) fn arity(&self, c: &Callable) -> usize {
        match c {
            Callable::Closure(def) => def.closure.inputs.len(),
            Callable::Fn(id) => self.fns.get(*id).map_or(0, |f| f.params.len()),
            Callable::Scalar(f, _) => f.arity(),
            Callable::Prim(_) => 1,
        }
    }

    pub(super) fn describe(&self, c: &Callable) -> String {
        match c {
            Callable::Closure(_) => "this closure".to_string(),
            Callable::Fn(id) => self
                .fns
                .get(*id)
                .map_or("this function".to_string(), |f| format!("`{}`", f.name)),
            Callable::Scalar(f, Some(s)) => format!("`{s}::{}`", f.name()),
            Callable::Scalar(f, None) => format!("`{}`", f.name()),
            Callable::Prim(p) => format!("`{}`", p.name()),
        }
    }

    /// Notes a callable bound by `let`: a closure bound outside quiet lowering is checked
    /// at its first use, or by [`Lowerer::check_unused`] when it has none.
    pub(super) fn let_bound(&mut self, c: &Callable) {
        if let Callable::Closure(def) = c {
            if self.quiet > 0 {
                // Checked where the enclosing body was first lowered.
                def.checked.set(true);
            } else {
                self.unchecked.push(def.clone());
            }
        }
    }

    /// Checks the closures bound since `unchecked` had `from` entries and not used since.
    pub(super) fn check_unused(&mut self, from: usize) {
        let defs = self.unchecked.split_off(from.min(self.unchecked.len()));
        for def in defs {
            if !def.checked.get() {
                let span = def.closure.or1_token.span;
                self.check(&Callable::Closure(def.clone()), &def.closure, span);
            }
        }
    }

    /// Checks a callable's body where it is defined: lowers it once with errors reported,
    /// then drops what was produced.
    pub(super) fn check(&mut self, c: &Callable, site: &(impl ToTokens + ?Sized), span: Span) {
        let (nv, ns) = (self.vars.len(), self.spans.len());
        self.generic.discarding += 1;
        let _ = self.lambda(c, site, span, false);
        self.generic.discarding -= 1;
        self.vars.truncate(nv);
        self.spans.truncate(ns);
    }

    /// The callable as a lambda with fresh parameters (one per parameter of the callable).
    pub(super) fn lambda(
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
        self.elem_depth += 1;
        let result = self.apply(c, &params, site, span, quiet);
        self.elem_depth -= 1;
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
    pub(super) fn apply(
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
            Callable::Closure(def) => {
                // The first lowering reports the body's errors.
                let quiet = def.checked.replace(true) || quiet;
                if quiet {
                    self.quiet += 1;
                }
                let unchecked = self.unchecked.len();
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
                self.check_unused(unchecked);
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
                if crate::generic::is_generic(&f.item) {
                    return self.generic_apply(*id, &f, args, site, span, quiet);
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
                let unchecked = self.unchecked.len();
                let r = self.block_value(&f.item.block);
                self.check_unused(unchecked);
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
    pub(super) fn inline_call(&mut self, c: &Callable, call: &syn::ExprCall) -> VarId {
        self.inline_call_at(c, call, None)
    }

    /// [`Lowerer::inline_call`], a generic callee at the types of a turbofish when given.
    pub(super) fn inline_call_at(
        &mut self,
        c: &Callable,
        call: &syn::ExprCall,
        types: Option<Vec<Scalar>>,
    ) -> VarId {
        let n = self.arity(c);
        if call.args.len() != n {
            let what = match (c, peel(&call.func)) {
                (Callable::Closure(_), syn::Expr::Path(p)) => {
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
        // A function of the module that the call cannot inline as a value.
        if let Callable::Fn(id) = c
            && let Some(f) = self.fns.get(*id).filter(|f| !f.nested).cloned()
        {
            let name = &f.name;
            let mutated = f.item.sig.inputs.iter().find_map(|a| match a {
                syn::FnArg::Typed(pt) if matches!(&*pt.ty, syn::Type::Reference(r) if r.mutability.is_some()) => {
                    Some(pt.pat.to_token_stream().to_string())
                }
                _ => None,
            });
            if let Some(y) = mutated {
                return self.fail(
                    call,
                    format!(
                        "`{name}` changes its `&mut` parameter `{y}`, so it cannot be called from #[parallel] code: call a function of the module that returns the new value instead (`{name}` itself can assign it: `*{y} = f(...);`)"
                    ),
                );
            }
        }
        let mut copies = Vec::new();
        for a in &call.args {
            let v = self.value(a);
            // A closure or fn body binds its parameters; a scalar function takes the values.
            copies.push(match c {
                Callable::Closure(_) | Callable::Fn(_) => {
                    self.emit("arg", Type::Infer, Expr::Var(v), cheap_span(a))
                }
                Callable::Scalar(..) | Callable::Prim(_) => v,
            });
        }
        let quiet = c.checked();
        self.generic.explicit = types;
        let r = self.apply(c, &copies, call, call_span(call), quiet);
        // Taken by the generic call, unless it stopped before (recursion).
        self.generic.explicit = None;
        r
    }
}
