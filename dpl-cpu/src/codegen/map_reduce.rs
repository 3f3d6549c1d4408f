//! A kept `map` and a later reduction that reads it element by element, as one loop
//! (`rt::map_reduce`): a Jacobi sweep and its largest change, `exp(x)` and its sum.
//!
//! Fusion (`dpl_core::fuse`) moves a map into its one consumer; a map whose result is also
//! kept (returned, carried by a loop, read again later) stays a loop of its own, and a
//! reduction that reads it then runs a second pass over memory. Here such a pair is
//! generated as one call that writes each tile of the map's result and reduces it while it
//! is in the L1 cache, in dpl's order (the same bits as the two loops).
//!
//! The pair: a top-level `map` `y` over `n` of scalars, and the first later statement that
//! reads `y`, a `reduce` over the same `n` whose element function reads `y` only at its
//! own index and which, like its operator, cannot fail (so every error is still the map's,
//! and comes first). The statements between the two may only be constants and lengths,
//! which are generated before the pair, and length assertions: the pair is then generated
//! only when they hold (otherwise the map alone, and each assertion raises where it
//! stands, before the reduction). Maps with loop variants from range facts (`bounded`),
//! costly elements (`heavy`) or in-place writes keep their own loops. Only on
//! `Place::Cpu` without a backend's hook (MPI's reductions communicate).

use std::collections::HashSet;

use dpl_core::ir::{Assertion, Block, Expr, Soac, SoacKind, Span, Stmt, VarId};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::in_place::{reads_of, reads_only_at};
use super::value::Rep;
use super::{Gen, contains_soac, cost};

/// A planned pair (see the [module docs](self)), kept under the map's variable.
pub(super) struct Pair<'a> {
    /// The reduction's statement.
    reduce: &'a Stmt,
    /// The constants and lengths between the two, generated before the pair.
    hoisted: Vec<&'a Stmt>,
    /// The length assertions between the two: `(a, b)` for `a == b`.
    conds: Vec<(VarId, VarId)>,
}

impl<'a> Gen<'a> {
    /// Finds the pairs of `b` (and of the blocks of its top-level `if`s and loops).
    pub(super) fn plan_map_reduces(&mut self, b: &'a Block) {
        if self.heavy.is_none() || self.hook.is_some() {
            return;
        }
        for (ai, a) in b.stmts.iter().enumerate() {
            if let Some(pair) = self.pair(b, ai, a) {
                self.map_reduces.insert(a.var, pair);
            }
        }
        for st in &b.stmts {
            if matches!(st.expr, Expr::If(..) | Expr::Loop(_)) {
                st.expr
                    .for_each_block(&mut |inner| self.plan_map_reduces(inner));
            }
        }
    }

    /// The pair of the map `a`, the `ai`-th statement of `b`, if it has one.
    fn pair(&self, b: &'a Block, ai: usize, a: &'a Stmt) -> Option<Pair<'a>> {
        let Expr::Soac(m) = &a.expr else { return None };
        let y = a.var;
        let scalar_elems = self.f.vars[y]
            .ty
            .elem()
            .is_some_and(|e| e.scalar().is_some());
        if m.kind != SoacKind::Map
            || !scalar_elems
            || m.elem.body.stmts.iter().any(|st| contains_soac(&st.expr))
            || self.unzips.contains_key(&y)
            || self.in_place.contains_key(&y)
        {
            return None;
        }
        let bi = ai
            + 1
            + b.stmts[ai + 1..]
                .iter()
                .position(|st| reads_of(&st.expr).contains(&y))?;
        let r = &b.stmts[bi];
        let Expr::Soac(s) = &r.expr else { return None };
        let SoacKind::Reduce { op, init } = &s.kind else {
            return None;
        };
        let fails = |blk: &Block| {
            blk.stmts
                .iter()
                .any(|st| dpl_core::fuse::may_fail(self.f, &st.expr))
        };
        if s.len != m.len
            || self.f.vars[r.var].ty.scalar().is_none()
            || s.elem.params.len() != 1
            || s.elem.body.stmts.iter().any(|st| contains_soac(&st.expr))
            || !reads_only_at(&s.elem.body, y, &mut HashSet::from([s.elem.params[0]]))
            || op.captures.contains(&y)
            || fails(&s.elem.body)
            || fails(&op.body)
            || (init.is_some() && self.count_predicate(s, op).is_some())
        {
            return None;
        }
        // Between the two: constants and lengths (generated before the pair) and length
        // assertions (its condition); nothing else.
        let mut hoisted = Vec::new();
        let mut conds = Vec::new();
        for st in &b.stmts[ai + 1..bi] {
            match &st.expr {
                Expr::Const(_) | Expr::Len(_) => hoisted.push(st),
                Expr::Assert(Assertion::EqLen { a, b, .. }) => conds.push((*a, *b)),
                _ => return None,
            }
        }
        Some(Pair {
            reduce: r,
            hoisted,
            conds,
        })
    }

    /// The map `v` (over `m`) of a planned pair and its reduction as one call: binds `v`
    /// and the reduction's result (`__dpl_mr_<r>`, read where the reduction stands, see
    /// [`Gen::fused_reduce`]). `None` (nothing generated, the pair dropped) when the map
    /// has costly elements or loop variants under a condition after all.
    pub(super) fn map_reduce(&mut self, v: VarId, m: &Soac, span: Span) -> Option<TokenStream> {
        if self.depth != 0 || cost::block(self.f, &m.elem.body) >= cost::COSTLY {
            self.map_reduces.remove(&v);
            return None;
        }
        let rt = self.rt;
        let n = self.ident(m.len);
        let (map_what, map_loc) = (m.kind.origin_name(), self.loc(span));
        // The map's element function, its NaNs made canonical after each tile's loop where
        // `rt::map_canon` would; with reads that range facts prove in range unchecked, when
        // that needs no run-time condition (`Gen::bounded_variant`; a map with conditional
        // or interior variants keeps its own loops).
        let canon = self.defer_output_nan(m);
        let elem = match self.bounded_variant(v, m) {
            None => Some(self.lambda(&m.elem, false, &[Rep::Value])),
            Some(vs) if vs.cond.is_none() && vs.interior.is_none() => Some(vs.fast),
            Some(_) => None,
        };
        if canon {
            self.nan_deferred.remove(&m.elem.body.result);
        }
        let Some(elem) = elem else {
            self.map_reduces.remove(&v);
            return None;
        };
        let pair = self.map_reduces.remove(&v)?;
        let r = pair.reduce;
        let Expr::Soac(s) = &r.expr else { return None };
        let SoacKind::Reduce { op, init } = &s.kind else {
            return None;
        };
        let (what, loc) = (s.kind.origin_name(), self.loc(r.span));
        let mut hoisted = TokenStream::new();
        for st in &pair.hoisted {
            hoisted.extend(self.stmt(st));
            self.hoisted.insert(st.var);
        }
        let nans = if canon {
            quote!(#rt::Canon)
        } else {
            quote!(#rt::Keep)
        };
        // The reduction's element function, its reads of `v[i]` given the value just
        // written (`__dpl_y`).
        let rty = &self.f.vars[r.var].ty;
        let applied = self.deferred_reduce(s, op, init.is_some(), rty);
        let i = s.elem.params[0];
        self.reps.insert(i, Rep::Value);
        let ip = self.ident(i);
        let mut reads = Vec::new();
        s.elem.body.walk(&mut |st| {
            if matches!(&st.expr, Expr::Index { seq, .. } if *seq == v) {
                reads.push(st.var);
            }
        });
        for x in &reads {
            self.subst.insert(*x, quote!(__dpl_y));
        }
        let ety = self.rep_ty(self.f.vars[v].ty.elem()?);
        let gty = self.owned_ty(&self.f.vars[s.elem.body.result].ty);
        self.depth += 1;
        let gbody = self.block_owned(&s.elem.body);
        self.depth -= 1;
        for x in &reads {
            self.subst.remove(x);
        }
        let g = quote!(move |#ip: usize, __dpl_y: #ety| -> #gty #gbody);
        let op_fn = self.lambda(op, false, &[]);
        self.nan_deferred.remove(&op.body.result);
        self.nan_deferred.remove(&s.elem.body.result);
        let init = match init {
            Some(x) => {
                let x = self.ident(*x);
                quote!(::core::option::Option::Some(#x))
            }
            None => quote!(::core::option::Option::None),
        };
        let result = match applied {
            Some(applied) => {
                let c = self.canonical(quote!(__dpl_r), rty);
                quote!(if #applied { #c } else { __dpl_r })
            }
            None => quote!(__dpl_r),
        };
        let fused = quote! {{
            let (__dpl_v, __dpl_r) = #rt::map_reduce(
                #n, #elem, #nans, #init, #g, #op_fn, (#map_what, #map_loc), #what, #loc,
            );
            (__dpl_v, #result)
        }};
        let value = if pair.conds.is_empty() {
            fused
        } else {
            let conds = pair.conds.iter().map(|&(a, b)| {
                let (a, b) = (self.ident(a), self.ident(b));
                quote!(#a == #b)
            });
            let map = if canon {
                quote!(map_canon)
            } else {
                quote!(map)
            };
            quote! {
                if #(#conds)&&* {
                    let (__dpl_v, __dpl_r) = #fused;
                    (__dpl_v, ::core::option::Option::Some(__dpl_r))
                } else {
                    (#rt::#map(#n, #elem, #map_what, #map_loc), ::core::option::Option::None)
                }
            }
        };
        let ty = &self.f.vars[v].ty;
        let (name, own) = (self.ident(v), self.own_ident(v));
        let borrow = Self::borrow_expr(quote!(#own), ty);
        let mr = format_ident!("__dpl_mr_{}", r.var.index());
        self.owned.insert(v);
        self.reps.insert(v, Self::default_rep(ty));
        self.fused_reduces.insert(r.var, !pair.conds.is_empty());
        Some(quote! {
            #hoisted
            let (#own, #mr) = #value;
            let #name = #borrow;
        })
    }

    /// The reduction `v` (over `s`) of a pair generated by [`Gen::map_reduce`]: its result,
    /// or (`optional`: the pair ran only when the assertions between held) the reduction
    /// generated alone where it did not, which those assertions prevent from being reached.
    pub(super) fn fused_reduce(
        &mut self,
        v: VarId,
        s: &Soac,
        optional: bool,
        span: Span,
    ) -> TokenStream {
        let ty = &self.f.vars[v].ty;
        let (name, rty) = (self.ident(v), self.rep_ty(ty));
        let mr = format_ident!("__dpl_mr_{}", v.index());
        if !optional {
            self.reps.insert(v, Self::default_rep(ty));
            return quote!(let #name: #rty = #mr;);
        }
        let alone = self.soac(v, s, span);
        quote! {
            let #name: #rty = match #mr {
                ::core::option::Option::Some(__dpl_r) => __dpl_r,
                ::core::option::Option::None => { #alone #name }
            };
        }
    }
}
