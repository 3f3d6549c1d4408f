//! `unzip(map(f))` as one loop: finding the maps read only by their projections, and
//! generating them as one `map_unzip` call writing one vector per component.

use dpl_core::ir::{Block, Expr, Soac, SoacKind, Span, Stmt, Type, VarId};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::value::Rep;
use super::{Gen, contains_soac, mentions};

impl Gen<'_> {
    /// Finds `unzip(map(f))` in `b` (and in the blocks of its `if`s and loops): a `map`
    /// producing tuples of 2 or 3 scalars, with no loop inside its element function, read
    /// only by projection maps `map(|i| m[i].k)` over the same length (what `unzip`
    /// becomes). Such a map and its projections are
    /// generated as one loop writing one vector per component (`map_unzip2`/`3`).
    pub(super) fn plan_unzips(&mut self, b: &Block) {
        for (mi, st) in b.stmts.iter().enumerate() {
            let Expr::Soac(s) = &st.expr else { continue };
            let k = match &self.f.vars[st.var].ty {
                Type::Seq(e) => match &**e {
                    Type::Tuple(ts) if (2..=3).contains(&ts.len()) && !Self::contains_seq(e) => {
                        ts.len()
                    }
                    _ => continue,
                },
                _ => continue,
            };
            let nested = s.elem.body.stmts.iter().any(|x| contains_soac(&x.expr));
            if s.kind != SoacKind::Map || nested {
                continue;
            }
            let m = st.var;
            let mut parts: Vec<Option<VarId>> = vec![None; k];
            let mut found = 0;
            for p in &b.stmts[mi + 1..] {
                if let Some(c) = projection(p, m, s.len) {
                    if parts[c].is_some() {
                        found = usize::MAX;
                        break;
                    }
                    parts[c] = Some(p.var);
                    found += 1;
                }
            }
            if found == 0 || found == usize::MAX || mentions(&self.f.body, m) != found {
                continue;
            }
            self.projections.extend(parts.iter().flatten());
            self.unzips.insert(m, parts);
        }
        // The blocks of top-level `if`s and loops are generated like the body.
        for st in &b.stmts {
            if matches!(st.expr, Expr::If(..) | Expr::Loop(_)) {
                st.expr.for_each_block(&mut |inner| self.plan_unzips(inner));
            }
        }
    }

    /// One loop for a planned `unzip(map(f))`: binds the projections' variables.
    pub(super) fn map_unzip(
        &mut self,
        m: VarId,
        s: &Soac,
        parts: &[Option<VarId>],
        span: Span,
    ) -> TokenStream {
        let rt = if self.depth == 0 {
            self.rt
        } else {
            self.inner_rt
        };
        // The components that are new values of `&mut` parameters written in place.
        let targets: Vec<Option<(proc_macro2::Ident, VarId, bool)>> = parts
            .iter()
            .map(|p| p.and_then(|p| self.in_place.get(&p).cloned()))
            .collect();
        if self.depth == 0 && targets.iter().all(Option::is_some) {
            let targets: Vec<_> = targets.into_iter().flatten().collect();
            return self.update_unzip(s, parts, &targets, span);
        }
        let n = self.ident(s.len);
        let (what, loc) = (s.kind.origin_name(), self.loc(span));
        // The float components' NaNs made canonical by the run time after the loop instead
        // of by the element function (undone once its lambdas are made).
        let deferred = self.defer_output_nans(s, parts.len());
        let (helper, split, nans) = match nan_treatments(rt, &deferred) {
            Some(nans) => (
                format_ident!("map_unzip{}_canon", parts.len()),
                format_ident!("map_unzip{}_split_canon", parts.len()),
                nans,
            ),
            None => (
                format_ident!("map_unzip{}", parts.len()),
                format_ident!("map_unzip{}_split", parts.len()),
                TokenStream::new(),
            ),
        };
        let vs = if self.depth == 0 {
            self.bounded_variant(m, s)
        } else {
            None
        };
        let call = match vs {
            Some(vs) => {
                let edge = vs.fast;
                let fast = match vs.interior {
                    Some((lo, hi, int)) => {
                        quote!(#rt::#split(#n, #lo, #hi, #edge, #int, #nans #what, #loc))
                    }
                    None => quote!(#rt::#helper(#n, #edge, #nans #what, #loc)),
                };
                match vs.cond {
                    None => fast,
                    Some(cond) => {
                        let slow = self.lambda(&s.elem, false, &[Rep::Value]);
                        quote!(if #cond { #fast } else { #rt::#helper(#n, #slow, #nans #what, #loc) })
                    }
                }
            }
            None => {
                let elem = self.lambda(&s.elem, false, &[Rep::Value]);
                quote!(#rt::#helper(#n, #elem, #nans #what, #loc))
            }
        };
        self.undefer(&deferred);
        let mut names = Vec::new();
        let mut borrows = TokenStream::new();
        for p in parts {
            match p {
                Some(p) => {
                    let (name, own) = (self.ident(*p), self.own_ident(*p));
                    names.push(quote!(#own));
                    borrows.extend(quote!(let #name = &#own[..];));
                    self.owned.insert(*p);
                    self.reps.insert(*p, Rep::Slice);
                }
                None => names.push(quote!(_)),
            }
        }
        // Some components written in place, not all: copied into their parameters.
        for (p, t) in parts.iter().zip(&targets) {
            if let (Some(p), Some((y, _, check))) = (p, t) {
                let name = self.ident(*p);
                let check = self.write_check(y, s.len, *check, span);
                borrows.extend(quote!(#check #y.copy_from_slice(#name);));
            }
        }
        quote! {
            let (#(#names,)*) = #call;
            #borrows
        }
    }

    /// Ends the deferral of [`Gen::defer_output_nans`], once the element function is made.
    pub(super) fn undefer(&mut self, deferred: &[Option<VarId>]) {
        for v in deferred.iter().flatten() {
            self.nan_deferred.remove(v);
            self.nan_loop_outputs_deferred.remove(v);
        }
    }
}

/// The argument of a `_canon` loop of tuples (`map_unzip2_canon`, `update_unzip2_canon`, ...)
/// that says how each component's NaNs are treated, given which components
/// [`Gen::defer_output_nans`] deferred: `(rt::Canon, rt::Keep, ...),` (with its comma);
/// `None` when none is, for the loop without `_canon`.
pub(super) fn nan_treatments(rt: &TokenStream, deferred: &[Option<VarId>]) -> Option<TokenStream> {
    let nans = deferred.iter().map(|d| match d {
        Some(_) => quote!(#rt::Canon),
        None => quote!(#rt::Keep),
    });
    deferred
        .iter()
        .any(Option::is_some)
        .then(|| quote!((#(#nans,)*),))
}

/// If `p` is `map(n, |i| m[i].k)` (a projection of `unzip`), the component `k`.
fn projection(p: &Stmt, m: VarId, n: VarId) -> Option<usize> {
    let Expr::Soac(s) = &p.expr else { return None };
    match s.projection() {
        Some((seq, k)) if seq == m && s.len == n => Some(k as usize),
        _ => None,
    }
}
