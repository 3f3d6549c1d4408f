//! The hook through which another backend generates some top-level statements itself
//! ([`Hook`], [`body_with`]): dpl-mpi generates its communication this way, around loops
//! that stay this generator's. [`HookCx`] is what a hook may use of the generator.

use super::value::Rep;
use super::*;

/// Generates top-level statements chosen by another backend: called for each statement of
/// the function's body (and of the branches of its top-level `if`s) before the usual
/// generation; `Some(code)` replaces it.
pub type Hook<'h> = &'h dyn Fn(&mut HookCx<'_, '_>, &Stmt) -> Option<TokenStream>;

/// What a [`Hook`] can use of the generator: names, closures for lambdas, bindings, and
/// the usual generation of a statement.
pub struct HookCx<'g, 'a>(pub(super) &'g mut Gen<'a>);

impl HookCx<'_, '_> {
    /// The Rust identifier of a variable.
    pub fn ident(&self, v: VarId) -> Ident {
        self.0.ident(v)
    }

    /// A `move` closure for `l` (parameters typed from the IR; `by_ref_first`: the first
    /// parameter is taken by reference, as predicates are).
    pub fn lambda(&mut self, l: &Lambda, by_ref_first: bool) -> TokenStream {
        self.0.lambda(l, by_ref_first, &[])
    }

    /// The identity of the operator `op` on values of type `ty` (`op(identity, x) == x`),
    /// as a Rust value, when `dpl_core::ops` knows it.
    pub fn identity(&self, op: &Lambda, ty: &Type) -> Option<TokenStream> {
        self.0.operator_identity(op, ty)
    }

    /// `&'static Location` of a source span.
    pub fn loc(&self, span: Span) -> TokenStream {
        self.0.loc(span)
    }

    /// The owned Rust type of a value of type `t` (sequences as `Vec`s).
    pub fn owned_ty(&self, t: &Type) -> TokenStream {
        self.0.owned_ty(t)
    }

    /// Binds `v` to the owned value `value` (a `Vec` for a sequence, `Vec<Vec<_>>` for
    /// rows); the function's result may move it out.
    pub fn bind_owned(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        self.0.bind_owned(v, value)
    }

    /// Binds the sequence `v` to `value`, anything that slices to `[E]` (a `Cow`): read
    /// through a borrowed slice, copied when it is the function's result.
    pub fn bind_view(&mut self, v: VarId, value: TokenStream) -> TokenStream {
        let (name, own) = (self.0.ident(v), self.0.own_ident(v));
        self.0.reps.insert(v, Rep::Slice);
        quote! {
            let #own = #value;
            let #name = &#own[..];
        }
    }

    /// Binds `v` to `value`, something that dereferences to a value of `like`'s Rust type (a
    /// `Cow` of it): `v` is then read as `like` is (rows of a `Nested` or `Matrix`
    /// included).
    pub fn bind_like(&mut self, v: VarId, value: TokenStream, like: VarId) -> TokenStream {
        let (name, own) = (self.0.ident(v), self.0.own_ident(v));
        let rep = match self.0.rep(like) {
            Rep::Matrix(_) => Rep::Matrix(false),
            r => r,
        };
        self.0.reps.insert(v, rep);
        quote! {
            let #own = #value;
            let #name = &*#own;
        }
    }

    /// The code the generator makes of `s` without the hook.
    pub fn stmt(&mut self, s: &Stmt) -> TokenStream {
        let hook = self.0.hook.take();
        let code = self.0.stmt(s);
        self.0.hook = hook;
        code
    }
}
