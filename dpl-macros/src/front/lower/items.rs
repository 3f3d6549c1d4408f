//! Function items: the signature of the function being lowered, and the nested `fn`s of
//! a block.

use std::rc::Rc;

use dpl_core::ir::{Type, VarId};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::env::{Binding, Callable, FnItem};
use super::loops::Pending;
use super::{Lowerer, harmless_attr};
use crate::front::sig::{self, ParamSig, Signature};

impl Lowerer<'_> {
    /// Reads the signature, creates the parameter variables and binds their names.
    pub(super) fn signature(&mut self, item: &syn::ItemFn) -> (Vec<VarId>, Option<Signature>) {
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
        // Generic functions (lone or in a module) are instantiated before they get here
        // (`generic`): what remains to report is a `where` clause without type parameters.
        self.generics(
            &s.generics,
            "a #[parallel] function",
            "bound its type parameters by dpl's traits (`T: Float`)",
        );
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
                                    "`mut` parameters are not allowed: bind a mutable copy in the body, as in `let mut n = n;`",
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
                    let mut write = None;
                    let repr = if mentions(&pt.ty, &generic_names) {
                        None
                    } else if let Some(m) = sig::mut_param(&pt.ty, &mut self.errors) {
                        m.map(|(w, repr)| {
                            write = Some(w);
                            repr
                        })
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
                            Some(repr) => {
                                if write.is_some() {
                                    self.writes.push(Pending {
                                        name: name.clone(),
                                        value: None,
                                        misplaced: false,
                                    });
                                }
                                psigs.push(ParamSig {
                                    ident: ident.clone(),
                                    repr,
                                    write,
                                })
                            }
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
            output => {
                sig::ret_sig_with(output, &s.ident, &mut self.errors, !self.writes.is_empty())
            }
        };
        let sig = match (ok, ret) {
            (true, Some(ret)) => Some(Signature {
                unit: ret.repr == sig::Repr::Tuple(Vec::new()),
                params: psigs,
                ret,
                writes: Vec::new(),
            }),
            _ => None,
        };
        (params, sig)
    }

    /// Rejects type and const generics (lifetimes are fine) and `where` clauses.
    fn generics(&mut self, g: &syn::Generics, what: &str, instead: &str) {
        for p in &g.params {
            match p {
                syn::GenericParam::Lifetime(_) => {}
                syn::GenericParam::Type(_) | syn::GenericParam::Const(_) => {
                    self.error(p, format!("{what} cannot be generic: {instead}"));
                }
            }
        }
        if let Some(w) = &g.where_clause {
            self.error(w, format!("{what} cannot have a `where` clause"));
        }
    }

    /// Registers the `fn` items of a block (visible in the whole block, as in Rust) and
    /// checks their bodies once.
    pub(super) fn register_items(&mut self, stmts: &[syn::Stmt]) {
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
            self.generics(
                &s.generics,
                "a nested fn",
                "write the concrete types, or use the type parameters of the enclosing function (`fn f<T: Float>`)",
            );
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
