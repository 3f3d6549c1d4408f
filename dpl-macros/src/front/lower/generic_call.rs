//! Calls of a generic function of the module from `#[parallel]` code: `dot(x, y)` with
//! `fn dot<T: Float>(x: &[T], y: &[T]) -> T`, from another function of the module.
//!
//! A call is inlined like any call of a module function, at the types it gives the
//! callee's parameters. Those come from type inference over the caller, so the function is
//! lowered in rounds ([`lower_function`](super::lower_function)):
//!
//! 1. Each call whose types are not known yet is lowered as a *stub*: its arguments get the
//!    callee's parameter types and its value the callee's result type, with each type
//!    parameter a [`Type::Param`] (one number per parameter and call, bounded as the
//!    parameter is), and no body.
//! 2. Type inference over that body decides each parameter (`dpl_core::typeck::infer_params`)
//!    — or reports the caller's type errors, a bound violated by an argument among them.
//! 3. The body is lowered again, each of those calls now inlining the callee's tokens with
//!    the decided types put in ([`generic::callee_instance`]); a generic call inside the
//!    inlined body is a stub of the next round.
//!
//! A call is known from one round to the next by its *key*: its ordinal among the generic
//! calls lowered in the same inlined body, after the keys of the generic calls being
//! inlined around it. Lowering is deterministic and a round changes only what stubs
//! become, so the keys of a round are those of the one before, with new ones below the
//! calls just inlined. Rounds end when a lowering makes no stub; each round inlines one
//! more level of generic calls, and recursion is an error, so there are as many rounds as
//! levels of generic calls.
//!
//! Integer literals in an inlined generic body may become floats (`v * 2` with `T: Float`),
//! as in the instantiations the callee is compiled to on its own.

use std::collections::HashMap;
use std::rc::Rc;

use dpl_core::ir::{Bound, Scalar, Type, VarId};
use proc_macro2::Span;
use quote::ToTokens;

use super::Lowerer;
use super::env::FnItem;
use crate::front::{Options, sig};
use crate::generic;

/// Where a generic call is: the ordinals of the generic calls inlined around it, then its
/// own among its siblings.
pub(crate) type Key = Vec<u32>;

/// The types decided for the generic calls of earlier rounds, by key.
pub(crate) type Decided = HashMap<Key, Vec<Scalar>>;

/// A generic call lowered as a stub, waiting for its types.
pub(crate) struct Pending {
    /// Its key.
    pub(crate) key: Key,
    /// The callee's name.
    pub(crate) callee: String,
    /// Where the call is.
    pub(crate) span: Span,
    /// Per type parameter: its [`Type::Param`] number, its name and the types generated.
    pub(crate) params: Vec<(u32, String, Vec<Scalar>)>,
}

/// The state of generic calls during one round of lowering.
#[derive(Default)]
pub(super) struct GenericCalls {
    /// The options of the attribute (`types(...)` narrows the callees' types).
    pub(super) opts: Options,
    /// The types of the calls decided in earlier rounds.
    pub(super) decided: Rc<Decided>,
    /// The stubs of this round.
    pub(super) pending: Vec<Pending>,
    /// The key of the generic call being inlined (empty at the top).
    path: Key,
    /// The generic calls lowered so far in each inlined body of `path`, outermost first.
    counts: Vec<u32>,
    /// The next [`Type::Param`] number.
    next_param: u32,
    /// Depth of inlined generic bodies (their integer literals may become floats).
    pub(super) depth: u32,
    /// Depth of lowerings whose result is dropped (a body checked once): their stubs wait
    /// for nothing.
    pub(super) discarding: u32,
    /// The instantiations inlined so far: the callee and the types, to its entry in `fns`.
    instances: HashMap<(usize, Vec<Scalar>), usize>,
    /// The types of the turbofish of the call being inlined (`dot::<f32>(x, y)`).
    pub(super) explicit: Option<Vec<Scalar>>,
}

impl GenericCalls {
    /// A fresh [`Type::Param`] number.
    pub(super) fn fresh_param(&mut self) -> u32 {
        self.next_param += 1;
        self.next_param - 1
    }

    /// The key of the next generic call in the body being lowered.
    fn next_key(&mut self) -> Key {
        if self.counts.len() <= self.path.len() {
            self.counts.resize(self.path.len() + 1, 0);
        }
        let level = self.path.len();
        let n = self.counts[level];
        self.counts[level] += 1;
        let mut key = self.path.clone();
        key.push(n);
        key
    }
}

/// The bound that describes `types` (the narrowest of dpl's four that holds them all).
fn bound_of(types: &[Scalar]) -> Bound {
    if types.iter().all(|s| s.is_float()) {
        Bound::Float
    } else if types.iter().all(|s| s.is_int()) {
        Bound::Int
    } else if types.iter().all(|s| s.is_int() || s.is_float()) {
        Bound::Num
    } else {
        Bound::Scalar
    }
}

/// The signature types of `f` (parameters, result) at `types`, or `None` when they are not
/// types dpl passes (the callee's own compilation reports that).
fn sig_types(
    f: &syn::ItemFn,
    opts: &Options,
    types: &[Scalar],
) -> Option<(Vec<(syn::Pat, Type)>, Type)> {
    let inst = generic::callee_instance(f, opts, types).ok()?;
    let mut scratch = crate::front::errors::Errors::default();
    let mut params = Vec::new();
    for a in &inst.sig.inputs {
        if let syn::FnArg::Typed(pt) = a {
            let t = sig::param_repr(&pt.ty, &mut scratch)?.ir_type();
            params.push(((*pt.pat).clone(), t));
        }
    }
    let ret = sig::ret_sig(&inst.sig.output, &inst.sig.ident, &mut scratch)?
        .repr
        .ir_type();
    Some((params, ret))
}

/// `base` with each scalar that differs in `variants[j]` replaced by `params[j]`: the
/// signature written with its type parameters, from instantiations that differ in one
/// parameter each.
fn mark(base: &Type, variants: &[&Type], params: &[Type]) -> Type {
    match base {
        Type::Scalar(_) => variants
            .iter()
            .position(|v| *v != base)
            .map_or_else(|| base.clone(), |j| params[j].clone()),
        Type::Seq(e) => {
            let inner: Vec<&Type> = variants.iter().map(|v| v.elem().unwrap_or(v)).collect();
            Type::seq(mark(e, &inner, params))
        }
        Type::Tuple(ts) => Type::Tuple(
            ts.iter()
                .enumerate()
                .map(|(i, t)| {
                    let parts: Vec<&Type> = variants
                        .iter()
                        .map(|v| match v {
                            Type::Tuple(vs) => vs.get(i).unwrap_or(t),
                            other => other,
                        })
                        .collect();
                    mark(t, &parts, params)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

impl Lowerer<'_> {
    /// Lowers a call of the generic module function `fns[id]` on `args`: the callee
    /// inlined at the types decided for this call, or a stub until they are.
    pub(super) fn generic_apply(
        &mut self,
        id: usize,
        f: &FnItem,
        args: &[VarId],
        site: &(impl ToTokens + ?Sized),
        span: Span,
        quiet: bool,
    ) -> VarId {
        let explicit = self.generic.explicit.take();
        let key = self.generic.next_key();
        let Ok(params) = generic::callee_params(&f.item, &self.generic.opts) else {
            // The callee's own expansion reports its bounds.
            self.quiet_errors += 1;
            return self.poison();
        };
        let decided = explicit.or_else(|| self.generic.decided.get(&key).cloned());
        match decided {
            Some(types) => self.generic_inline(id, f, types, key, args, site, span, quiet),
            None => self.generic_stub(f, &params, key, args, span),
        }
    }

    /// The callee inlined at `types`.
    #[allow(clippy::too_many_arguments)]
    fn generic_inline(
        &mut self,
        id: usize,
        f: &FnItem,
        types: Vec<Scalar>,
        key: Key,
        args: &[VarId],
        site: &(impl ToTokens + ?Sized),
        span: Span,
        quiet: bool,
    ) -> VarId {
        let cached = self.generic.instances.get(&(id, types.clone())).copied();
        let inst = match cached {
            Some(i) => i,
            None => {
                let item = generic::callee_instance(&f.item, &self.generic.opts, &types);
                let sig = sig_types(&f.item, &self.generic.opts, &types);
                let (Ok(item), Some((params, ret))) = (item, sig) else {
                    self.quiet_errors += 1;
                    return self.poison();
                };
                self.fns.push(Rc::new(FnItem {
                    name: f.name.clone(),
                    item: Rc::new(item),
                    params,
                    ret,
                    env: f.env.clone(),
                    nested: false,
                }));
                let i = self.fns.len() - 1;
                self.generic.instances.insert((id, types), i);
                i
            }
        };
        // The generic function itself is on the stack, so a call of it from its own body
        // is the recursion it is.
        self.stack.push(id);
        self.generic.path = key;
        self.generic.depth += 1;
        let r = self.apply(&super::Callable::Fn(inst), args, site, span, quiet);
        self.generic.depth -= 1;
        let level = self.generic.path.len();
        self.generic.counts.truncate(level);
        self.generic.path.pop();
        self.stack.pop();
        r
    }

    /// The stub of a call whose types are not decided yet (see the module documentation).
    fn generic_stub(
        &mut self,
        f: &FnItem,
        params: &[generic::CalleeParam],
        key: Key,
        args: &[VarId],
        span: Span,
    ) -> VarId {
        // The signature at a base type and with each parameter changed in turn.
        let base = vec![Scalar::U8; params.len()];
        let sigs: Option<Vec<_>> = std::iter::once(base.clone())
            .chain((0..params.len()).map(|j| {
                let mut t = base.clone();
                t[j] = Scalar::U16;
                t
            }))
            .map(|t| sig_types(&f.item, &self.generic.opts, &t))
            .collect();
        let Some(sigs) = sigs else {
            self.quiet_errors += 1;
            return self.poison();
        };
        let mut numbered = Vec::new();
        let mut marks = Vec::new();
        for p in params {
            let n = self.generic.fresh_param();
            marks.push(Type::Param(n, bound_of(&p.types)));
            numbered.push((n, p.name.clone(), p.types.clone()));
        }
        let (base_params, base_ret) = &sigs[0];
        for (k, v) in args.iter().enumerate() {
            let Some((pat, t)) = base_params.get(k) else {
                continue;
            };
            let variants: Vec<&Type> = sigs[1..].iter().map(|(ps, _)| &ps[k].1).collect();
            let ty = mark(t, &variants, &marks);
            let v = self.annotate(*v, ty, span);
            // Named as the callee's parameter, for messages about it.
            if let (Some(var), syn::Pat::Ident(p)) = (self.vars.get_mut(v.index()), pat) {
                var.name = p.ident.to_string();
            }
        }
        let variants: Vec<&Type> = sigs[1..].iter().map(|(_, r)| r).collect();
        let ret = mark(base_ret, &variants, &marks);
        if self.generic.discarding == 0 {
            self.generic.pending.push(Pending {
                key,
                callee: f.name.clone(),
                span,
                params: numbered,
            });
        }
        self.new_var(&f.name, ret, span)
    }
}

impl Lowerer<'_> {
    /// `f::<T, ...>(args)` where `f` is a generic function of the module: the call at those
    /// types (checked against the callee's bounds). `None` for a path without a turbofish;
    /// an error for a turbofish on anything else.
    pub(super) fn turbofish_call(&mut self, p: &syn::ExprPath, c: &syn::ExprCall) -> Option<VarId> {
        let [seg] = p.path.segments.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
            return None;
        };
        if p.path.leading_colon.is_some() {
            return None;
        }
        let name = seg.ident.to_string();
        let callee = match self.env.lookup(&name) {
            Some(super::Binding::Callable(super::Callable::Fn(id))) => self
                .fns
                .get(*id)
                .filter(|f| generic::is_generic(&f.item))
                .map(|f| (*id, f.clone())),
            _ => None,
        };
        let Some((id, f)) = callee else {
            return Some(self.fail(
                args,
                format!("`::<...>` names the types of a generic function of the module; `{name}` is not one"),
            ));
        };
        let Ok(params) = generic::callee_params(&f.item, &self.generic.opts) else {
            self.quiet_errors += 1;
            return Some(self.poison());
        };
        if args.args.len() != params.len() {
            return Some(self.fail(
                args,
                format!(
                    "`{name}` has {} type parameter{}, and {} {} given",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.args.len(),
                    if args.args.len() == 1 { "is" } else { "are" }
                ),
            ));
        }
        let mut types = Vec::new();
        for (a, p) in args.args.iter().zip(&params) {
            let s = match a {
                syn::GenericArgument::Type(t) => sig::scalar_of(t),
                _ => None,
            };
            match s {
                Some(s) if p.types.contains(&s) => types.push(s),
                Some(s) => {
                    return Some(self.fail(
                        a,
                        format!("`{s}` does not satisfy `{}` of `{name}`", p.origin),
                    ));
                }
                None => {
                    return Some(self.fail(
                        a,
                        format!("`{}` must be a scalar type here, such as `f32`", p.name),
                    ));
                }
            }
        }
        Some(self.inline_call_at(&super::Callable::Fn(id), c, Some(types)))
    }
}
