//! Blocks and statements: `let` with its patterns, and the value of a block (the
//! statements that change variables, `if` statements and loops are in [`super::loops`]).

use dpl_core::ir::{Expr, Type, VarId};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::env::Binding;
use super::loops::is_statement;
use super::{Lowerer, harmless_attr, peel};
use crate::front::sig;

const MUT_CLOSURE: &str = "a closure binding cannot be `mut`: closures cannot be changed";
const PATTERN_MSG: &str = "only names, `_` and tuple patterns such as `(a, b)` are allowed here";
const NO_EFFECT: &str = "this statement has no effect: a block is `let` bindings followed by the final expression that gives its value";

impl Lowerer<'_> {
    /// Lowers a block into the current statements (its names are scoped to it) and returns
    /// its value.
    pub(super) fn block_value(&mut self, b: &syn::Block) -> VarId {
        self.block_value_of(b, false)
    }

    /// The body of a function declared without a result (it changes `&mut` parameters):
    /// statements only, its value unit.
    pub(super) fn unit_body(&mut self, b: &syn::Block) -> VarId {
        self.block_value_of(b, true)
    }

    /// A block's value; with `unit`, a block of statements whose value is unit.
    fn block_value_of(&mut self, b: &syn::Block, unit: bool) -> VarId {
        let (env, items) = (self.env.clone(), self.items.clone());
        self.register_consts(&b.stmts);
        self.register_items(&b.stmts);
        let mut result = None;
        let n = b.stmts.len();
        for (i, stmt) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                // An empty statement (`;;`): nothing, as in Rust.
                syn::Stmt::Expr(syn::Expr::Verbatim(v), Some(semi)) if v.is_empty() => {
                    if last {
                        self.error(semi, "remove this `;`: the value of a block is its final expression, written without `;`");
                        result = Some(self.poison());
                    }
                }
                syn::Stmt::Local(l) => {
                    self.local(l);
                    if last && !unit {
                        self.error(l, "a block cannot end with `let`: end it with the expression that gives its value");
                        result = Some(self.poison());
                    }
                }
                syn::Stmt::Item(syn::Item::Fn(_) | syn::Item::Const(_)) => {}
                syn::Stmt::Item(item) => {
                    self.error(
                        item,
                        "only nested `fn` and `const` items are allowed inside a #[parallel] body",
                    );
                }
                // A statement (assignment, loop, `if` without a value); the last expression
                // of the block, without `;`, is its value.
                syn::Stmt::Expr(e, semi)
                    if is_statement(e)
                        && !(last
                            && semi.is_none()
                            && matches!(peel(e), syn::Expr::If(_) | syn::Expr::Loop(_))) =>
                {
                    let before = self.error_count();
                    self.effect(e, false);
                    if last && self.error_count() > before {
                        // Already reported: not also "this block has no value".
                        result = Some(self.poison());
                    }
                }
                syn::Stmt::Expr(e, None) if last && unit => {
                    self.value(e);
                    self.error(e, "this function has no result (it changes its `&mut` parameters): end the body with a statement, as in `*y = e;`, or declare the result type");
                    result = Some(self.poison());
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
                        if last && !unit {
                            self.error(semi, "remove this `;`: the value of a block is its final expression, written without `;`");
                        } else {
                            self.error(stmt, NO_EFFECT);
                        }
                    }
                    if last && !unit {
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
            None if unit => self.emit(
                "unit",
                Type::unit(),
                Expr::Tuple(Vec::new()),
                b.brace_token.span.join(),
            ),
            None => {
                self.error_at(
                    b.brace_token.span.join(),
                    "this block has no value: end it with an expression",
                );
                self.poison()
            }
        }
    }

    /// `let pat = init;`
    pub(super) fn local(&mut self, l: &syn::Local) {
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
                "`let` needs a value: `let x = ...;` (`let mut x = ...;` for a variable assigned later)",
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
            self.let_bound(&c);
            match &l.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    if let Some(m) = &pi.mutability {
                        self.error(m, MUT_CLOSURE);
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
    pub(super) fn bind_pat(&mut self, pat: &syn::Pat, v: VarId, fresh_from: usize) {
        match pat {
            syn::Pat::Ident(pi) => {
                if let Some(r) = &pi.by_ref {
                    self.error(r, "`ref` bindings are not supported: write the name alone");
                }
                if let Some((at, _)) = &pi.subpat {
                    self.error(at, "`@` patterns are not supported");
                }
                let name = pi.ident.unraw().to_string();
                if v.index() >= fresh_from {
                    self.rename(v, &name);
                }
                let binding = if pi.mutability.is_some() {
                    self.declare_mut(&name, v)
                } else {
                    Binding::Value(v)
                };
                self.env = self.env.with(name, binding);
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
                    self.error(m, "`&mut` patterns are not supported: there are no mutable references; bind with `let mut x` and assign to `x`");
                }
                self.bind_pat(&r.pat, v, fresh_from);
            }
            syn::Pat::Paren(p) => self.bind_pat(&p.pat, v, fresh_from),
            other => self.error(other, PATTERN_MSG),
        }
    }
}
