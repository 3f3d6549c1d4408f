//! Generic `#[parallel]` functions: `fn dot<T: Float>(x: &[T], y: &[T]) -> T`.
//!
//! A generic function is compiled once per instantiation. Its type parameters are bounded
//! by dpl's sealed traits (`Scalar`, `Num`, `Int`, `Float`), so the set of types each one
//! admits is closed and known here; `#[parallel(types(T = "f32, f64"))]` narrows it. For
//! every combination of types the function's tokens are copied with each parameter replaced
//! by its type (its uses keep their spans) and go through the whole pipeline as an ordinary
//! function, named `__dpl_<name>__<type>...` and hidden; its unsuffixed integer literals may
//! take float types ([`Literals::Generic`]), so that `v * 2` serves `T: Num` at every type.
//! The function the user calls keeps the written signature and dispatches:
//!
//! ```text
//! pub fn dot<T: Float>(x: &[T], y: &[T]) -> T {
//!     if T::__IS_F32 { return unsafe { retype(__dpl_dot__f32::<()>(retype(x), retype(y))) }; }
//!     if T::__IS_F64 { return unsafe { retype(__dpl_dot__f64::<()>(retype(x), retype(y))) }; }
//!     unreachable!()
//! }
//! ```
//!
//! The conditions are the sealed `Scalar` trait's per-type flags (`<T as Scalar>::__IS_F32`),
//! constants that the Rust compiler decides when it monomorphizes the caller, so the
//! dispatch costs nothing and the branches not taken are not even compiled: the
//! instantiations are themselves generic (in an unused parameter, called at `()`), so Rust
//! generates machine code only for those a program calls. `retype` moves a value between a
//! type written with the parameters and the same type written with the concrete types (the
//! results are owned values, so no borrow outlives its call). With `types(...)`, the signature also requires a hidden trait
//! implemented for the listed combinations only, so a call with another type is a compile
//! error that names the allowed types.
//!
//! In a `#[parallel] mod`, each generic function is expanded the same way inside the module
//! ([`expand_module_fns`]); its instantiations are lowered with the module's other
//! functions in scope, so they may call them. A call of a generic function from
//! `#[parallel]` code is inlined at the types the call gives it, found by type inference
//! over the caller (`front::lower::generic_call`).
//!
//! Errors are reported once: the instantiations are compiled in order and the first that
//! fails gives its errors, each saying which types it was compiled for (a bound violation
//! such as `v & w` with `T: Float` shows as the error of `T = f32`, at `&`).

use dpl_core::ir::Scalar;
use dpl_core::typeck::Literals;
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::front::{self, Options};

/// The most instantiations one function may have (the product over its type parameters
/// of the types each admits). Past it, `types(...)` must narrow the sets.
pub const MAX_INSTANCES: usize = 64;

/// True when `f` has type or const parameters (lifetimes alone are not generic here).
pub fn is_generic(f: &syn::ItemFn) -> bool {
    f.sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)))
}

/// One type parameter: its name and the types it is generated for.
struct Param {
    ident: syn::Ident,
    /// What admits the types, for messages (`T: Float`, or `types(T = "...")`).
    origin: String,
    types: Vec<Scalar>,
}

/// dpl's bounds and the scalar types each admits.
fn bound_types(name: &str) -> Option<Vec<Scalar>> {
    let keep = |f: fn(Scalar) -> bool| Scalar::ALL.into_iter().filter(|&s| f(s)).collect();
    Some(match name {
        "Scalar" => keep(|_| true),
        "Num" => keep(|s| s.is_int() || s.is_float()),
        "Int" => keep(Scalar::is_int),
        "Float" => keep(Scalar::is_float),
        _ => return None,
    })
}

/// Bounds every scalar type satisfies: accepted and ignored.
const HARMLESS: [&str; 8] = [
    "Copy",
    "Clone",
    "Send",
    "Sync",
    "Debug",
    "Default",
    "PartialEq",
    "PartialOrd",
];

/// Reads the type parameters, their bounds (in the list and the `where` clause) and
/// `types(...)`. Every problem is reported.
fn params(f: &syn::ItemFn, opts: &Options) -> Result<Vec<Param>, syn::Error> {
    let mut errors = front::errors::Errors::default();
    let mut out: Vec<(syn::Ident, Vec<&syn::TypeParamBound>)> = Vec::new();
    for p in &f.sig.generics.params {
        match p {
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Const(c) => errors.at(
                c,
                "a #[parallel] function cannot have const parameters: pass the value as an ordinary parameter",
            ),
            syn::GenericParam::Type(t) => {
                if let Some(d) = &t.default {
                    errors.at(d, "a type parameter of a function cannot have a default");
                }
                out.push((t.ident.clone(), t.bounds.iter().collect()));
            }
        }
    }
    if let Some(w) = &f.sig.generics.where_clause {
        for pred in &w.predicates {
            match pred {
                syn::WherePredicate::Type(pt) => {
                    let target = match &pt.bounded_ty {
                        syn::Type::Path(tp) if tp.qself.is_none() => tp.path.get_ident(),
                        _ => None,
                    };
                    match target.and_then(|id| out.iter_mut().find(|(p, _)| p == id)) {
                        Some((_, bounds)) if pt.lifetimes.is_none() => {
                            bounds.extend(pt.bounds.iter());
                        }
                        _ => errors.at(
                            pred,
                            "a `where` clause of a #[parallel] function bounds its type parameters, as in `T: Float`",
                        ),
                    }
                }
                syn::WherePredicate::Lifetime(_) => {}
                other => errors.at(other, "this `where` predicate is not supported"),
            }
        }
    }
    let mut params = Vec::new();
    for (ident, bounds) in out {
        let mut set: Option<(Vec<Scalar>, Vec<String>)> = None;
        for b in bounds {
            match b {
                syn::TypeParamBound::Trait(tb)
                    if tb.lifetimes.is_none()
                        && matches!(tb.modifier, syn::TraitBoundModifier::None) =>
                {
                    let Some(last) = tb.path.segments.last() else {
                        continue;
                    };
                    let name = last.ident.to_string();
                    if let Some(types) = bound_types(&name).filter(|_| last.arguments.is_none()) {
                        let (have, names) = set.get_or_insert_with(|| (types.clone(), Vec::new()));
                        have.retain(|s| types.contains(s));
                        names.push(name);
                    } else if !HARMLESS.contains(&name.as_str()) {
                        errors.at(
                            tb,
                            format!(
                                "`{}` is not a bound dpl knows: bound a type parameter by `Scalar`, `Num`, `Int` or `Float` (dpl's sealed traits, in `dpl::prelude`)",
                                tb.path.to_token_stream().to_string().replace(' ', "")
                            ),
                        );
                    }
                }
                syn::TypeParamBound::Lifetime(l) if l.ident == "static" => {}
                other => errors.at(other, "this bound is not supported: bound a type parameter by `Scalar`, `Num`, `Int` or `Float`"),
            }
        }
        match set {
            Some((types, names)) => {
                let origin = format!("{ident}: {}", names.join(" + "));
                if types.is_empty() {
                    errors.at(&ident, format!("no type satisfies `{origin}`"));
                }
                params.push(Param {
                    ident,
                    origin,
                    types,
                });
            }
            None => errors.at(
                &ident,
                format!(
                    "`{ident}` needs one of dpl's bounds, which say the types it is generated for: `{ident}: Scalar` (every scalar type), `{ident}: Num` (integers and floats), `{ident}: Int` or `{ident}: Float`"
                ),
            ),
        }
    }
    for (id, list) in &opts.types {
        let Some(p) = params.iter_mut().find(|p| p.ident == *id) else {
            if errors.is_empty() {
                errors.at(
                    id,
                    format!("`types` names `{id}`, which is not a type parameter of this function"),
                );
            }
            continue;
        };
        let mut chosen = Vec::new();
        for name in list.value().split(',').map(str::trim) {
            match Scalar::from_name(name) {
                Some(s) if !p.types.contains(&s) => {
                    errors.at(list, format!("`{name}` does not satisfy `{}`", p.origin))
                }
                Some(s) if chosen.contains(&s) => {
                    errors.at(list, format!("`{name}` is listed twice"));
                }
                Some(s) => chosen.push(s),
                None => errors.at(
                    list,
                    format!(
                        "`{name}` is not a scalar type; allowed: {}",
                        Scalar::names_where(|s| p.types.contains(&s))
                    ),
                ),
            }
        }
        p.types.retain(|s| chosen.contains(s));
        p.origin = format!("types({id} = {:?})", list.value());
    }
    errors.finish()?;
    let count: usize = params.iter().map(|p| p.types.len()).product();
    if count > MAX_INSTANCES {
        let each: Vec<String> = params
            .iter()
            .map(|p| format!("`{}` admits {}", p.origin, p.types.len()))
            .collect();
        return Err(syn::Error::new(
            f.sig.generics.span(),
            format!(
                "`{}` would be generated for {count} combinations of types ({}); the limit is {MAX_INSTANCES}: name the types to generate with #[parallel(types({} = \"f32, f64\"))]",
                f.sig.ident,
                each.join(", "),
                params[0].ident
            ),
        ));
    }
    Ok(params)
}

/// A type parameter of a generic function as a call from `#[parallel]` code sees it
/// (`front::lower`'s generic calls).
pub(crate) struct CalleeParam {
    /// Its name.
    pub(crate) name: String,
    /// The types it is generated for.
    pub(crate) types: Vec<Scalar>,
    /// What admits them, for messages (`T: Float`).
    pub(crate) origin: String,
}

/// The type parameters of a generic function of a `#[parallel] mod`.
pub(crate) fn callee_params(
    f: &syn::ItemFn,
    opts: &Options,
) -> Result<Vec<CalleeParam>, syn::Error> {
    Ok(params(f, &with_own_types(opts, f))?
        .into_iter()
        .map(|p| CalleeParam {
            name: p.ident.to_string(),
            types: p.types,
            origin: p.origin,
        })
        .collect())
}

/// `f` with its type parameters replaced by `types` (a call from `#[parallel]` code inlines
/// it); its name is that of the instantiation.
pub(crate) fn callee_instance(
    f: &syn::ItemFn,
    opts: &Options,
    types: &[Scalar],
) -> Result<syn::ItemFn, syn::Error> {
    instance(f, &params(f, &with_own_types(opts, f))?, types)
}

/// `opts` with the `types(...)` of `f`'s own `#[parallel(types(...))]` added: a generic
/// function of a `#[parallel] mod` names its types there (the module's attribute holds
/// the other options; `front::expand_mod` rejects anything else on a function). A lone
/// function's attribute is the macro's own, already in `opts`.
pub(crate) fn with_own_types(opts: &Options, f: &syn::ItemFn) -> Options {
    let mut opts = opts.clone();
    for attr in f.attrs.iter().filter(|a| front::is_parallel_attr(a)) {
        if let syn::Meta::List(list) = &attr.meta
            && let Ok(own) = Options::parse(list.tokens.clone())
        {
            opts.types.extend(own.types);
        }
    }
    opts
}

/// Every combination of the parameters' types, the first parameter varying slowest.
fn combinations(params: &[Param]) -> Vec<Vec<Scalar>> {
    params.iter().fold(vec![Vec::new()], |acc, p| {
        acc.iter()
            .flat_map(|prefix| {
                p.types.iter().map(move |&t| {
                    let mut c = prefix.clone();
                    c.push(t);
                    c
                })
            })
            .collect()
    })
}

/// `tokens` with each identifier naming a parameter replaced by its type (keeping the
/// use's span, so errors point at it).
fn substitute(tokens: TokenStream, params: &[Param], types: &[Scalar]) -> TokenStream {
    tokens
        .into_iter()
        .map(|t| match t {
            TokenTree::Ident(i) => match params.iter().position(|p| p.ident == i) {
                Some(k) => TokenTree::Ident(syn::Ident::new(types[k].name(), i.span())),
                None => TokenTree::Ident(i),
            },
            TokenTree::Group(g) => {
                let mut n = Group::new(g.delimiter(), substitute(g.stream(), params, types));
                n.set_span(g.span());
                TokenTree::Group(n)
            }
            other => other,
        })
        .collect()
}

/// The name of an instantiation: `__dpl_dot__f32`, `__dpl_pair__f32__i32`.
pub fn instance_ident(name: &syn::Ident, types: &[impl std::fmt::Display]) -> syn::Ident {
    use syn::ext::IdentExt;
    let mut s = format!("__dpl_{}", name.unraw());
    for t in types {
        s.push_str("__");
        s.push_str(&t.to_string());
    }
    syn::Ident::new(&s, name.span())
}

/// `T = f32, U = i32`, for messages.
fn describe(params: &[Param], types: &[Scalar]) -> String {
    params
        .iter()
        .zip(types)
        .map(|(p, t)| format!("{} = {t}", p.ident))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The errors of `e`, each saying for which types the function was being compiled.
fn in_instance(e: syn::Error, params: &[Param], types: &[Scalar]) -> syn::Error {
    let admitted: Vec<String> = params.iter().map(|p| format!("`{}`", p.origin)).collect();
    let context = format!(
        "compiled for {} (admitted by {})",
        describe(params, types),
        admitted.join(", ")
    );
    let mut all = front::errors::Errors::default();
    for one in e {
        all.push(syn::Error::new(one.span(), format!("{one} [{context}]")));
    }
    all.into_error()
        .unwrap_or_else(|| syn::Error::new(Span::call_site(), context))
}

/// The instantiation of `f` at `types`: the function with its type parameters replaced,
/// renamed and hidden.
fn instance(
    f: &syn::ItemFn,
    params: &[Param],
    types: &[Scalar],
) -> Result<syn::ItemFn, syn::Error> {
    let mut g = f.clone();
    g.attrs
        .retain(|a| !front::is_parallel_attr(a) && !a.path().is_ident("doc"));
    g.attrs.push(syn::parse_quote!(#[doc(hidden)]));
    g.sig.generics.params = g
        .sig
        .generics
        .params
        .into_iter()
        .filter(|p| matches!(p, syn::GenericParam::Lifetime(_)))
        .collect();
    g.sig.generics.where_clause = None;
    let tokens = substitute(g.to_token_stream(), params, types);
    let mut g: syn::ItemFn = syn::parse2(tokens)?;
    g.sig.ident = instance_ident(
        &f.sig.ident,
        &types.iter().map(|t| t.name()).collect::<Vec<_>>(),
    );
    Ok(g)
}

/// The whole expansion of a generic function: the instantiations, then the function that
/// dispatches to them.
pub fn expand(opts: &Options, f: &syn::ItemFn) -> Result<TokenStream, syn::Error> {
    expand_with(opts, f, |inst| front::expand_fn(opts, inst))
}

/// The generic functions of the `#[parallel] mod` `m`, each expanded as a lone one is (its
/// instantiations and the function that dispatches to them, placed in the module), its
/// instantiations lowered with the module's other functions in scope, so that they can
/// call them.
pub fn expand_module_fns(opts: &Options, m: &syn::ItemMod) -> Result<TokenStream, syn::Error> {
    let fns = front::module_fns(m);
    let mut out = TokenStream::new();
    let mut errors = crate::front::errors::Errors::default();
    for (i, f) in fns.iter().enumerate().filter(|(_, f)| is_generic(f)) {
        let items = expand_with(opts, f, |inst| front::expand_instance(opts, inst, &fns, i));
        if let Some(items) = errors.ok(items) {
            out.extend(items);
        }
    }
    errors.finish()?;
    Ok(out)
}

/// [`expand`], each instantiation lowered by `lower`.
fn expand_with(
    opts: &Options,
    f: &syn::ItemFn,
    lower: impl Fn(syn::ItemFn) -> Result<front::Lowered, syn::Error>,
) -> Result<TokenStream, syn::Error> {
    let opts = &with_own_types(opts, f);
    let params = params(f, opts)?;
    let mut items = TokenStream::new();
    let mut instances = Vec::new();
    for types in combinations(&params) {
        let inst = instance(f, &params, &types)?;
        let lowered = lower(inst.clone()).and_then(|mut l| {
            l.literals = Literals::Generic;
            // Generic in an unused parameter, so that Rust compiles only the instantiations
            // a program calls (see `dispatcher`).
            l.item
                .sig
                .generics
                .params
                .push(syn::parse_quote!(__DplOnce));
            l.name = format!(
                "{}::<{}>",
                f.sig.ident,
                types
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            crate::emit::emit(opts, vec![l], None, TokenStream::new())
        });
        items.extend(lowered.map_err(|e| in_instance(e, &params, &types))?);
        instances.push((types, inst));
    }
    items.extend(dispatcher(opts, f, &params, &instances));
    Ok(items)
}

/// The function the user calls (see the module documentation), the alias of its first
/// instantiation's `dpl::inspect!` record, and with `types(...)` the trait that admits the
/// generated combinations only.
fn dispatcher(
    opts: &Options,
    f: &syn::ItemFn,
    params: &[Param],
    instances: &[(Vec<Scalar>, syn::ItemFn)],
) -> TokenStream {
    let private = quote!(::dpl::__private);
    let vis = &f.vis;
    let name = &f.sig.ident;
    let span = name.span();
    let idents: Vec<&syn::Ident> = params.iter().map(|p| &p.ident).collect();
    let mut sig = f.sig.clone();
    let mut extra = TokenStream::new();
    if !opts.types.is_empty() {
        // Implemented for the generated types (a tuple of them with several parameters).
        let tr = format_ident!("__dpl_types_{}", name);
        let one = params.len() == 1;
        let tuple = |ts: Vec<String>| {
            if one {
                ts.join(", ")
            } else {
                format!("({})", ts.join(", "))
            }
        };
        let listed: Vec<String> = instances
            .iter()
            .map(|(t, _)| tuple(t.iter().map(|t| t.name().to_string()).collect()))
            .collect();
        let head = tuple(params.iter().map(|p| p.ident.to_string()).collect());
        let message = format!(
            "`{name}` is not generated for `{{Self}}`: #[parallel(types(...))] generates it for {head} = {} only",
            listed.join(", ")
        );
        let impls = instances.iter().map(|(types, _)| {
            let ts = types.iter().map(|t| format_ident!("{}", t.name()));
            if one {
                quote!(impl #tr for #(#ts)* {})
            } else {
                quote!(impl #tr for (#(#ts,)*) {})
            }
        });
        extra.extend(quote_spanned! {span=>
            #[doc(hidden)]
            #[allow(non_camel_case_types)]
            #[diagnostic::on_unimplemented(message = #message, label = "not generated for this type")]
            #vis trait #tr {}
            #(#impls)*
        });
        let bounded: syn::Type = if one {
            syn::parse_quote!(#(#idents)*)
        } else {
            syn::parse_quote!((#(#idents,)*))
        };
        sig.generics
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(#bounded: #tr));
    }
    let args: Vec<(syn::Ident, &syn::Type)> = f
        .sig
        .inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => Some((pi.ident.clone(), &*pt.ty)),
                _ => None,
            },
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let ret = match &f.sig.output {
        syn::ReturnType::Default => quote!(()),
        syn::ReturnType::Type(_, t) => t.to_token_stream(),
    };
    let arms = instances.iter().map(|(types, inst)| {
        let tys: Vec<syn::Ident> = types
            .iter()
            .map(|t| format_ident!("{}", t.name()))
            .collect();
        let callee = &inst.sig.ident;
        let passed = args.iter().map(|(x, ty)| {
            let concrete = substitute(ty.to_token_stream(), params, types);
            quote!(#private::retype::<#ty, #concrete>(#x))
        });
        let concrete_ret = substitute(ret.clone(), params, types);
        let flags = types
            .iter()
            .map(|t| format_ident!("__IS_{}", t.name().to_uppercase()));
        quote! {
            if #(<#idents as ::dpl::Scalar>::#flags)&&* {
                ::core::debug_assert!(#(#private::same::<#idents, #tys>())&&*);
                // SAFETY: the parameters are the types of this instantiation (the flags of
                // the sealed `Scalar` say so), so each type written with them is the same
                // as the one written with the types.
                return unsafe { #private::retype::<#concrete_ret, #ret>(#callee::<()>(#(#passed),*)) };
            }
        }
    });
    let attrs = f.attrs.iter().filter(|a| !front::is_parallel_attr(a));
    // `params` reports an error rather than leave a parameter without types.
    let Some((_, first)) = instances.first() else {
        return TokenStream::new();
    };
    let first = &first.sig.ident;
    let inspect = format_ident!("__dpl_inspect_{}", name);
    let first_inspect = format_ident!("__dpl_inspect_{}", first);
    let unreachable =
        format!("`{name}` has no instantiation for these types (dpl's bounds are sealed)");
    quote! {
        #extra
        #(#attrs)*
        #[allow(clippy::all)]
        #vis #sig {
            #(#arms)*
            ::core::unreachable!(#unreachable)
        }
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #inspect: ::dpl::Inspect = #first_inspect;
    }
}

/// Rejects `types(...)` on what is not a generic function.
pub fn check_no_types(opts: &Options, what: &str) -> Result<(), syn::Error> {
    match opts.types.first() {
        Some((id, _)) => Err(syn::Error::new(
            id.span(),
            format!(
                "`types(...)` names the types of a generic function's parameters; {what} has no type parameters"
            ),
        )),
        None => Ok(()),
    }
}
