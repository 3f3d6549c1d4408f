//! A kept `map` and a later reduction that reads it element by element, as one loop
//! (`rt::map_reduce`): a Jacobi sweep and its largest change, a residual and its norm.
//!
//! Fusion (`dpl_core::fuse`) moves a map into its one consumer; a map whose result is also
//! kept (returned, carried by a loop, read again later) stays a loop of its own, and a
//! reduction that reads it then runs a second pass over memory. Here such a pair is
//! generated as one call that writes each tile of the map's result and reduces it while it
//! is in the L1 cache, in dpl's order (the same bits as the two loops).
//!
//! The pair: a top-level `map` `y` over `n` of scalars or tuples of them (an
//! `unzip(map(f))` written as one vector per component included: `rt::map_unzip2_reduce`),
//! and the first later statement that reads `y` (its components) other than for its
//! length: a `reduce` over `n`, or over a length that the assertions between make equal to
//! it, whose element function reads `y` (its components) only at its own index and which,
//! like its operator, cannot fail (so every error is still the map's, and comes first).
//! Between the two may stand constants and lengths, which are generated before the pair,
//! length assertions: the pair is then generated only when they hold (otherwise the map
//! alone, and each assertion raises where it stands, before the reduction), and other
//! statements that cannot fail and that the pair does not read, left where they stand. A map's loop variants from range facts (`bounded`: unchecked reads under a
//! condition, a stencil's clamp-free interior) become variants of the pair
//! (`rt::map_reduce_split`). Maps of costly elements (`heavy`) or written in place keep
//! their own loops. Only on `Place::Cpu` without a backend's hook (MPI's reductions
//! communicate).

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
    /// For an `unzip(map(f))`, the variable of each component (`None`: unused); empty for
    /// a map written as one vector.
    parts: Vec<Option<VarId>>,
    /// The constants and lengths between the two, generated before the pair.
    hoisted: Vec<&'a Stmt>,
    /// The length assertions between the two: `(a, b)` for `a == b`.
    conds: Vec<(VarId, VarId)>,
}

/// A loop's element function `interior` on `lo..hi` (`(lo, hi, interior)`).
type Interior = (TokenStream, TokenStream, TokenStream);

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
        // Elements of scalars or tuples of them.
        let flat_elems = self.f.vars[y]
            .ty
            .elem()
            .is_some_and(|e| !Self::contains_seq(e));
        // Costly elements keep the load-balanced loop of `heavy` (as `Gen::soac` decides).
        if m.kind != SoacKind::Map
            || !flat_elems
            || m.elem.body.stmts.iter().any(|st| contains_soac(&st.expr))
            || cost::block(self.f, &m.elem.body) >= cost::COSTLY
            || self.in_place.contains_key(&y)
            || self.projections.contains(&y)
        {
            return None;
        }
        // What the reduction reads: the map, or the components of an unzipped one (which
        // nothing else reads; none of them written in place).
        let parts = self.unzips.get(&y).cloned().unwrap_or_default();
        let read: Vec<VarId> = if parts.is_empty() {
            vec![y]
        } else {
            parts.iter().flatten().copied().collect()
        };
        if read.iter().any(|x| self.in_place.contains_key(x)) {
            return None;
        }
        // The first statement after the map that reads it, other than its projections and
        // its length.
        let bi = ai
            + 1
            + b.stmts[ai + 1..].iter().position(|st| {
                !self.projections.contains(&st.var)
                    && !matches!(st.expr, Expr::Len(x) if read.contains(&x))
                    && reads_of(&st.expr).iter().any(|x| read.contains(x))
            })?;
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
        let at_index =
            |x: &VarId| reads_only_at(&s.elem.body, *x, &mut HashSet::from([s.elem.params[0]]));
        if self.f.vars[r.var].ty.scalar().is_none()
            || s.elem.params.len() != 1
            || s.elem.body.stmts.iter().any(|st| contains_soac(&st.expr))
            || !read.iter().all(at_index)
            || read.iter().any(|x| op.captures.contains(x))
            || fails(&s.elem.body)
            || fails(&op.body)
            || (init.is_some() && self.count_predicate(s, op).is_some())
        {
            return None;
        }
        // Between the two: constants and lengths (generated before the pair; the map's own
        // length is its loop's), length assertions (its condition) and the map's
        // projections; nothing else.
        let mut hoisted = Vec::new();
        let mut conds = Vec::new();
        let mut own_len = HashSet::from([m.len]);
        // Statements that cannot fail, left where they stand: the pair must not need them.
        let mut left = HashSet::new();
        for st in &b.stmts[ai + 1..bi] {
            match &st.expr {
                _ if self.projections.contains(&st.var) => {}
                Expr::Len(x) if read.contains(x) => {
                    own_len.insert(st.var);
                    hoisted.push(st);
                }
                Expr::Const(_) | Expr::Len(_) => hoisted.push(st),
                Expr::Assert(Assertion::EqLen { a, b, .. }) => conds.push((*a, *b)),
                e if !dpl_core::fuse::may_fail(self.f, e) => {
                    left.insert(st.var);
                }
                _ => return None,
            }
        }
        let needed = s
            .elem
            .captures
            .iter()
            .chain(&op.captures)
            .chain(init)
            .chain([&s.len])
            .chain(conds.iter().flat_map(|(a, b)| [a, b]));
        let hoisted_reads = hoisted.iter().flat_map(|st| st.expr.operands());
        if needed.into_iter().any(|x| left.contains(x))
            || hoisted_reads.into_iter().any(|x| left.contains(&x))
        {
            return None;
        }
        // The reduction runs over the map's length, or one that the assertions between
        // make equal to it where the pair runs.
        let mut equal = own_len;
        while conds
            .iter()
            .any(|(a, b)| equal.contains(a) != equal.contains(b))
        {
            for (a, b) in &conds {
                if equal.contains(a) || equal.contains(b) {
                    equal.extend([*a, *b]);
                }
            }
        }
        if !equal.contains(&s.len) {
            return None;
        }
        Some(Pair {
            reduce: r,
            parts,
            hoisted,
            conds,
        })
    }

    /// The map `v` (over `m`) of a planned pair and its reduction as one call: binds `v`
    /// (or its components) and the reduction's result (`__dpl_mr_<r>`, read where the
    /// reduction stands, see [`Gen::fused_reduce`]); `None` (nothing generated) when `v`
    /// has no pair. Loop variants from range facts (`Gen::bounded_variant`) are kept: a
    /// pair per variant.
    pub(super) fn map_reduce(&mut self, v: VarId, m: &Soac, span: Span) -> Option<TokenStream> {
        let pair = self.map_reduces.remove(&v)?;
        let r = pair.reduce;
        let (Expr::Soac(s), Some(elem_ty)) = (&r.expr, self.f.vars[v].ty.elem()) else {
            return None;
        };
        let SoacKind::Reduce { op, init } = &s.kind else {
            return None;
        };
        let unzip = pair.parts.len();
        // The types of the values the reduction gets: the map's element, or its components.
        let tys: Vec<TokenStream> = match (unzip, elem_ty) {
            (0, t) => vec![self.rep_ty(t)],
            (_, dpl_core::ir::Type::Tuple(ts)) => ts.iter().map(|t| self.rep_ty(t)).collect(),
            _ => return None,
        };
        let rt = self.rt;
        let n = self.ident(m.len);
        let (map_what, map_loc) = (m.kind.origin_name(), self.loc(span));
        let (what, loc) = (s.kind.origin_name(), self.loc(r.span));
        let mut hoisted = TokenStream::new();
        for st in &pair.hoisted {
            // The length of the map (of a component) is its loop's.
            let own_len = matches!(&st.expr, Expr::Len(x)
                if *x == v || pair.parts.contains(&Some(*x)));
            if own_len {
                self.subst.insert(st.var, quote!(#n));
            }
            hoisted.extend(self.stmt(st));
            self.subst.remove(&st.var);
            self.hoisted.insert(st.var);
        }
        // The map's NaNs made canonical after each tile's loop where `rt::map_canon` (or the
        // `unzip` loop, per component) would.
        let (canon, deferred) = if unzip == 0 {
            (self.defer_output_nan(m), Vec::new())
        } else {
            (false, self.defer_output_nans(m, unzip))
        };
        // The map's element functions, with its variants from range facts.
        let (cond, fast, interior, slow) = match self.bounded_variant(v, m) {
            None => (None, self.lambda(&m.elem, false, &[Rep::Value]), None, None),
            Some(vs) => {
                let slow = vs
                    .cond
                    .as_ref()
                    .map(|_| self.lambda(&m.elem, false, &[Rep::Value]));
                (vs.cond, vs.fast, vs.interior, slow)
            }
        };
        if canon {
            self.nan_deferred.remove(&m.elem.body.result);
        }
        self.undefer(&deferred);
        let nans = if unzip == 0 {
            if canon {
                quote!(#rt::Canon)
            } else {
                quote!(#rt::Keep)
            }
        } else {
            let each = deferred.iter().map(|d| match d {
                Some(_) => quote!(#rt::Canon),
                None => quote!(#rt::Keep),
            });
            quote!((#(#each,)*))
        };
        // The reduction's element function, its reads of the map (of component `k`) at its
        // index given the value just written (`__dpl_y`, `__dpl_y<k>`).
        let rty = &self.f.vars[r.var].ty;
        let applied = self.deferred_reduce(s, op, init.is_some(), rty);
        let i = s.elem.params[0];
        self.reps.insert(i, Rep::Value);
        let ip = self.ident(i);
        // Each value the reduction gets: the map's vector (a component's, `None` if unused)
        // and the closure parameter that holds its element.
        let sources: Vec<(Option<VarId>, proc_macro2::Ident)> = if unzip == 0 {
            vec![(Some(v), format_ident!("__dpl_y"))]
        } else {
            pair.parts
                .iter()
                .enumerate()
                .map(|(k, p)| (*p, format_ident!("__dpl_y{}", k)))
                .collect()
        };
        let mut reads = Vec::new();
        s.elem.body.walk(&mut |st| {
            if let Expr::Index { seq, .. } = &st.expr
                && let Some((_, y)) = sources.iter().find(|(x, _)| *x == Some(*seq))
            {
                reads.push((st.var, y.clone()));
            }
        });
        for (x, y) in &reads {
            self.subst.insert(*x, quote!(#y));
        }
        let ys = sources.iter().map(|(_, y)| y);
        let gty = self.owned_ty(&self.f.vars[s.elem.body.result].ty);
        self.depth += 1;
        let gbody = self.block_owned(&s.elem.body);
        self.depth -= 1;
        for (x, _) in &reads {
            self.subst.remove(x);
        }
        let g = quote!(move |#ip: usize, #(#ys: #tys),*| -> #gty #gbody);
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
        // The pair with the map's element functions `edge` (and `interior` on `lo..hi`).
        let pair_call = |edge: &TokenStream, int: Option<&Interior>| {
            if let (0, None) = (unzip, int) {
                return quote!(#rt::map_reduce(
                    #n, #edge, #nans, #init, #g, #op_fn, (#map_what, #map_loc), #what, #loc,
                ));
            }
            let (range, int) = match int {
                Some((lo, hi, int)) => (quote!((#lo, #hi)), int),
                None => (quote!((0usize, 0usize)), edge),
            };
            let helper = match unzip {
                0 => format_ident!("map_reduce_split"),
                k => format_ident!("map_unzip{}_reduce", k),
            };
            quote!(#rt::#helper(
                #n, #range, #edge, #int, #nans, #init, #g, #op_fn,
                (#map_what, #map_loc), #what, #loc,
            ))
        };
        // The map alone (where an assertion between fails: it raises after the map).
        let map_alone = |edge: &TokenStream, int: Option<&Interior>| {
            let (lo, hi, int) = match int {
                Some((lo, hi, int)) => (lo.clone(), hi.clone(), int),
                None => (quote!(0usize), quote!(0usize), edge),
            };
            match unzip {
                0 if canon => quote!(#rt::map_split_canon(
                    #n, #lo, #hi, #edge, #int, #map_what, #map_loc
                )),
                0 => quote!(#rt::map_split(#n, #lo, #hi, #edge, #int, #map_what, #map_loc)),
                k => {
                    let helper = format_ident!("map_unzip{}_split_canon", k);
                    quote!(#rt::#helper(#n, #lo, #hi, #edge, #int, #nans, #map_what, #map_loc))
                }
            }
        };
        // With reads proven in range under a condition, the checked element function where
        // it does not hold (as `Gen::soac` does).
        let (call, alone) = match (&cond, &slow) {
            (Some(c), Some(slow)) => {
                let (fast_pair, slow_pair) =
                    (pair_call(&fast, interior.as_ref()), pair_call(slow, None));
                let (fast_map, slow_map) =
                    (map_alone(&fast, interior.as_ref()), map_alone(slow, None));
                (
                    quote!(if #c { #fast_pair } else { #slow_pair }),
                    quote!(if #c { #fast_map } else { #slow_map }),
                )
            }
            _ => (
                pair_call(&fast, interior.as_ref()),
                map_alone(&fast, interior.as_ref()),
            ),
        };
        let fused = quote! {{
            let (__dpl_v, __dpl_r) = #call;
            (__dpl_v, #result)
        }};
        let value = if pair.conds.is_empty() {
            fused
        } else {
            let conds = pair.conds.iter().map(|&(a, b)| {
                let (a, b) = (self.ident(a), self.ident(b));
                quote!(#a == #b)
            });
            quote! {
                if #(#conds)&&* {
                    let (__dpl_v, __dpl_r) = #fused;
                    (__dpl_v, ::core::option::Option::Some(__dpl_r))
                } else {
                    (#alone, ::core::option::Option::None)
                }
            }
        };
        let mr = format_ident!("__dpl_mr_{}", r.var.index());
        self.fused_reduces.insert(r.var, !pair.conds.is_empty());
        // Bind the map's vector, or its components' vectors.
        let bound: Vec<Option<VarId>> = if unzip == 0 {
            vec![Some(v)]
        } else {
            pair.parts.clone()
        };
        let mut names = Vec::new();
        let mut borrows = TokenStream::new();
        for p in &bound {
            match p {
                Some(p) => {
                    let ty = &self.f.vars[*p].ty;
                    let (name, own) = (self.ident(*p), self.own_ident(*p));
                    let borrow = Self::borrow_expr(quote!(#own), ty);
                    names.push(quote!(#own));
                    borrows.extend(quote!(let #name = #borrow;));
                    self.owned.insert(*p);
                    self.reps.insert(*p, Self::default_rep(ty));
                }
                None => names.push(quote!(_)),
            }
        }
        let pattern = if unzip == 0 {
            quote!(#(#names)*)
        } else {
            quote!((#(#names,)*))
        };
        Some(quote! {
            #hoisted
            let (#pattern, #mr) = #value;
            #borrows
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
