//! The `#[parallel]` attribute of dpl.
//!
//! The attribute goes on a function or on an inline module. The `front` end validates the
//! body and lowers it to dpl's IR; code generation (`emit`) then produces the Rust that
//! replaces the item. When the body is outside the language, the output is the compile
//! errors followed by the item with its body replaced by `unreachable!()`, so that callers
//! still type-check and only the real errors show.
#![deny(missing_docs)]

use front::errors::both;
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{ToTokens, quote};

#[cfg(test)]
mod bounded;
mod emit;
pub(crate) mod front;
mod generic;
#[cfg(test)]
mod synthetic;

/// The `dpl::Inspect` record of a `#[parallel]` function: `dpl::inspect!(saxpy)` or
/// `dpl::inspect!(module::saxpy)`; for a generic function, `dpl::inspect!(dot::<f64>)` (the
/// instantiation at `f64`; without the types, the first instantiation).
#[proc_macro]
pub fn inspect(input: TokenStream) -> TokenStream {
    let mut path = match syn::parse::<syn::Path>(input) {
        Ok(p) => p,
        Err(e) => return e.to_compile_error().into(),
    };
    match path.segments.last_mut() {
        Some(last) => {
            // `dot::<f64>`: the record of that instantiation of a generic function.
            let mut ident = last.ident.clone();
            if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                // Each argument names a scalar type (`f32`, or a path ending in one).
                let mut types = Vec::new();
                for a in &args.args {
                    match a {
                        syn::GenericArgument::Type(syn::Type::Path(p))
                            if p.qself.is_none()
                                && p.path
                                    .segments
                                    .last()
                                    .is_some_and(|s| s.arguments.is_none()) =>
                        {
                            types.extend(p.path.segments.last().map(|s| s.ident.to_string()));
                        }
                        other => {
                            return syn::Error::new_spanned(
                                other,
                                "expected a scalar type, as in `dpl::inspect!(dot::<f32>)`",
                            )
                            .to_compile_error()
                            .into();
                        }
                    }
                }
                ident = generic::instance_ident(&ident, &types);
            }
            last.arguments = syn::PathArguments::None;
            last.ident = quote::format_ident!("__dpl_inspect_{}", ident, span = last.ident.span());
            quote!(#path).into()
        }
        None => syn::Error::new(
            proc_macro2::Span::call_site(),
            "expected the path of a #[parallel] function",
        )
        .to_compile_error()
        .into(),
    }
}

/// Compiles a data-parallel function (or every function of an inline module).
///
/// `#[parallel]` or `#[parallel(inner = "seq" | "block" | "warp" | "auto")]`, optionally
/// with the GPU options `block = N` (threads per block of the kernels: a multiple of 32
/// from 32 to 1024) and `scan = "lookback" | "reduce_then_scan"` (the device-wide scan),
/// `replicated(p, ...)` (parameters whole on every MPI rank) and, for a generic function,
/// `types(T = "f32, f64")` (the types it is generated for); see the `dpl` crate for the
/// language.
#[proc_macro_attribute]
pub fn parallel(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(attr.into(), item.into()).into()
}

/// The whole expansion, on `proc_macro2` tokens. Never panics on user input.
fn expand(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let parsed: syn::Item = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(e) => return error_with(e, item),
    };
    let opts = front::Options::parse(attr);
    // The body is checked even when the attribute is wrong, so that every error shows.
    let body_opts = opts.clone().unwrap_or_default();
    match parsed {
        syn::Item::Fn(f) if generic::is_generic(&f) => {
            let result = both(opts, Ok(())).and_then(|(o, ())| generic::expand(&o, &f));
            result.unwrap_or_else(|e| error_with(e, fallback_fn(f).into_token_stream()))
        }
        syn::Item::Fn(f) => {
            let opts = opts.and_then(|o| generic::check_no_types(&o, "this function").map(|()| o));
            let result = both(opts, front::expand_fn(&body_opts, f.clone()))
                .and_then(|(o, l)| emit::emit(&o, vec![l], None, TokenStream2::new()));
            result.unwrap_or_else(|e| error_with(e, fallback_fn(f).into_token_stream()))
        }
        syn::Item::Mod(m) => {
            let opts = opts.and_then(|o| generic::check_no_types(&o, "a module").map(|()| o));
            let result = both(opts, front::expand_mod(&body_opts, &m)).and_then(|(o, l)| {
                let generic = generic::expand_module_fns(&o, &m)?;
                emit::emit(&o, l, Some(&m), generic)
            });
            result.unwrap_or_else(|e| error_with(e, fallback_mod(m).into_token_stream()))
        }
        other => error_with(
            syn::Error::new_spanned(
                item_head(&other),
                "#[parallel] applies to a `fn` or to an inline `mod`",
            ),
            other.into_token_stream(),
        ),
    }
}

/// The errors, then `item` (what stays of the user's code so that callers type-check).
fn error_with(e: syn::Error, item: TokenStream2) -> TokenStream2 {
    let mut out = e.to_compile_error();
    out.extend(item);
    out
}

/// The function with its body replaced by `unreachable!()`.
fn fallback_fn(mut f: syn::ItemFn) -> syn::ItemFn {
    f.attrs.retain(|a| !front::is_parallel_attr(a));
    f.attrs.push(
        syn::parse_quote!(#[allow(unused_variables, unused_mut, clippy::diverging_sub_expression)]),
    );
    f.block = Box::new(syn::parse_quote!({ ::core::unreachable!() }));
    f
}

/// The module with every function body replaced by `unreachable!()`.
fn fallback_mod(mut m: syn::ItemMod) -> syn::ItemMod {
    m.attrs.retain(|a| !front::is_parallel_attr(a));
    m.attrs.push(syn::parse_quote!(#[allow(unused_imports)]));
    if let Some((_, items)) = &mut m.content {
        for item in items.iter_mut() {
            if let syn::Item::Fn(f) = item {
                *f = fallback_fn(f.clone());
            }
        }
    }
    m
}

/// A short part of an item to put an error on (its first tokens, not its whole body).
fn item_head(item: &syn::Item) -> TokenStream2 {
    match item {
        syn::Item::Struct(s) => {
            let (t, i) = (&s.struct_token, &s.ident);
            quote!(#t #i)
        }
        syn::Item::Enum(e) => {
            let (t, i) = (&e.enum_token, &e.ident);
            quote!(#t #i)
        }
        syn::Item::Impl(i) => i.impl_token.into_token_stream(),
        syn::Item::Trait(t) => {
            let (k, i) = (&t.trait_token, &t.ident);
            quote!(#k #i)
        }
        other => other.into_token_stream(),
    }
}
