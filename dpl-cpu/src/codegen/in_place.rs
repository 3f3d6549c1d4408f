//! In-place writes of `&mut` parameters: which new values (`*y = e;`) can be computed
//! straight into the parameter's buffer instead of a temporary that is copied into it
//! afterwards, and the loop that does it.
//!
//! A new value is written in place when it is a top-level `map` whose element `i` reads
//! the parameter `y` only at `i` (so element `i` can overwrite `y[i]` once it is computed),
//! over `y`'s length (checked before the map, so a length mismatch leaves `y` unchanged),
//! and when nothing can tell that the old value was overwritten: `y` is not read after the
//! map, nothing read after it is a view of `y`, and nothing after the map (the map
//! included) can raise an error, so a call that fails leaves every parameter unchanged.
//! Everything else goes through the temporary.

use dpl_core::ir::*;
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashSet;

use super::Gen;
use super::value::Rep;

/// A `&mut` parameter assigned with `*y = e;`, as the code generator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    /// The parameter's position among the function's parameters.
    pub param: usize,
    /// Where its new value is in the function's result: `None` when it is the whole
    /// result, `Some(k)` when it is the `k`-th element of the result tuple.
    pub part: Option<usize>,
    /// A `&mut [T]`, whose length cannot change: a new value of another length is a
    /// length mismatch (`*y = e`), checked before anything is written. (A `Vec` or a
    /// `Seq` is written in place only when the new value has its length by construction.)
    pub slice: bool,
}

/// For each of `writes`, whether `func` (Soac level, typed) lets its new value be written
/// in place (see the module documentation). The generated body writes exactly those given
/// in [`FnInput::in_place`](super::FnInput::in_place) in place, and returns an empty `Vec`
/// in their place in the result: the caller must not store it.
pub fn in_place(func: &Function, writes: &[Write]) -> Vec<bool> {
    writes
        .iter()
        .map(|w| in_place_value(func, w).is_some())
        .collect()
}

/// The variable of `w`'s new value, when it can be written in place, and whether its length
/// must be checked against the parameter's first (not known to be equal).
pub(super) fn in_place_value(func: &Function, w: &Write) -> Option<(VarId, bool)> {
    let body = &func.body;
    let p = *func.params.get(w.param)?;
    let r = match w.part {
        None => body.result,
        Some(k) => body.stmts.iter().find_map(|s| match &s.expr {
            Expr::Tuple(parts) if s.var == body.result => parts.get(k).copied(),
            _ => None,
        })?,
    };
    let at_r = body.stmts.iter().position(|s| s.var == r)?;
    let Expr::Soac(s) = &body.stmts[at_r].expr else {
        return None;
    };
    // The loop that computes the new value: the map itself, or for a component of a map of
    // tuples (`unzip`, one loop writing every component), that map.
    let (at, m) = match s.projection() {
        Some((t, _)) => {
            let at = body.stmts.iter().position(|st| st.var == t)?;
            match &body.stmts[at].expr {
                Expr::Soac(m) if m.len == s.len && at < at_r => (at, &**m),
                _ => return None,
            }
        }
        None => (at_r, &**s),
    };
    let elem_ty = func.vars[p].ty.elem()?;
    if s.kind != SoacKind::Map
        || m.kind != SoacKind::Map
        || func.vars[r].ty != func.vars[p].ty
        || elem_ty.scalar().is_none()
        || m.elem.params.len() != 1
        || !reads_only_at(&m.elem.body, p, &mut HashSet::from([m.elem.params[0]]))
        || body.result == p
    {
        return None;
    }
    for (k, st) in body.stmts.iter().enumerate() {
        let reads = reads_of(&st.expr);
        if k < at {
            // Before the loop: `y` is read only by what cannot be a view of it.
            if reads.contains(&p) && !fresh(func, st) {
                return None;
            }
            continue;
        }
        // From the loop on: the old value is gone, the new one is read only by what
        // cannot be a view of it (besides the result), and nothing fails.
        let is_result = st.var == body.result && matches!(st.expr, Expr::Tuple(_));
        if (k > at && reads.contains(&p))
            || (k > at_r && reads.contains(&r) && !is_result && !fresh(func, st))
            || (is_result
                && matches!(&st.expr, Expr::Tuple(ps) if ps.iter().filter(|&&x| x == r).count() != 1))
            || dpl_core::fuse::may_fail(func, &st.expr)
        {
            return None;
        }
    }
    let check = !same_length(body, at, m.len, p);
    (w.slice || !check).then_some((r, check))
}

/// Whether the length `len` is `p`'s length: `len p`, or equal to it by an `eq_len`
/// assertion among the top-level statements before the `at`-th.
fn same_length(body: &Block, at: usize, len: VarId, p: VarId) -> bool {
    let mut equal: HashSet<VarId> = body.stmts[..at]
        .iter()
        .filter(|s| s.expr == Expr::Len(p))
        .map(|s| s.var)
        .collect();
    loop {
        let before = equal.len();
        for s in &body.stmts[..at] {
            if let Expr::Assert(Assertion::EqLen { a, b, .. }) = &s.expr
                && (equal.contains(a) || equal.contains(b))
            {
                equal.insert(*a);
                equal.insert(*b);
            }
        }
        if equal.len() == before {
            return equal.contains(&len);
        }
    }
}

/// Whether `b` (and every block inside it) reads `p` only as `p[i]` (unchecked) with `i`
/// one of `index` (the element function's index and its copies, added to as found).
pub(super) fn reads_only_at(b: &Block, p: VarId, index: &mut HashSet<VarId>) -> bool {
    for s in &b.stmts {
        match &s.expr {
            Expr::Var(w) if index.contains(w) => {
                index.insert(s.var);
            }
            Expr::Index {
                seq,
                index: i,
                checked: None,
            } if *seq == p && index.contains(i) => {}
            e => {
                if e.operands().contains(&p) {
                    return false;
                }
                let mut ok = true;
                e.for_each_block(&mut |blk| ok &= reads_only_at(blk, p, index));
                if !ok {
                    return false;
                }
            }
        }
    }
    b.result != p
}

/// Every variable `e` reads, in its blocks and the captures of its lambdas included.
pub(super) fn reads_of(e: &Expr) -> HashSet<VarId> {
    let mut out: HashSet<VarId> = e.operands().into_iter().collect();
    e.for_each_lambda(&mut |l| out.extend(l.captures.iter().copied()));
    e.for_each_block(&mut |b| {
        out.insert(b.result);
        for s in &b.stmts {
            out.extend(reads_of(&s.expr));
        }
    });
    out
}

/// Whether the value of `s` cannot be a view of what it reads: no sequence in it, or a
/// combinator's new sequence.
fn fresh(func: &Function, s: &Stmt) -> bool {
    !func.vars[s.var].ty.holds_seq() || matches!(s.expr, Expr::Soac(_) | Expr::Assert(_))
}

impl Gen<'_> {
    /// The map `v = map(s)`, the new value of the parameter `y` (the function's parameter
    /// `p`, written in place): `y[i] = f(i, y[i])`, the reads of `y[i]` in the element
    /// function replaced by the old value; `v` is then `y` itself, and its owned local an
    /// empty `Vec`, what the result holds in its place (not stored by the caller).
    pub(super) fn update(
        &mut self,
        v: VarId,
        s: &Soac,
        (y, p, check): (proc_macro2::Ident, VarId, bool),
        span: Span,
    ) -> TokenStream {
        let check = self.write_check(&y, s.len, check, span);
        let i = s.elem.params[0];
        self.reps.insert(i, Rep::Value);
        let ip = self.ident(i);
        let mut index = HashSet::from([i]);
        let mut reads = Vec::new();
        s.elem.body.walk(&mut |st| match &st.expr {
            Expr::Var(w) if index.contains(w) => {
                index.insert(st.var);
            }
            Expr::Index { seq, .. } if *seq == p => reads.push(st.var),
            _ => {}
        });
        for r in reads {
            self.subst.insert(r, quote!(__dpl_old));
        }
        let e = self.rep_ty(&self.f.vars[s.elem.body.result].ty);
        let canon = self.defer_output_nan(s);
        self.depth += 1;
        let g = self.block_owned(&s.elem.body);
        self.depth -= 1;
        if canon {
            self.nan_deferred.remove(&s.elem.body.result);
        }
        self.subst.clear();
        let rt = self.rt;
        let (name, own) = (self.ident(v), self.own_ident(v));
        self.owned.insert(v);
        self.reps.insert(v, Rep::Slice);
        let update = if canon {
            quote!(update_canon)
        } else {
            quote!(update)
        };
        quote! {
            #check
            #rt::#update(&mut #y[..], move |#ip: usize, __dpl_old: #e| -> #e #g);
            let #own: ::std::vec::Vec<#e> = ::std::vec::Vec::new();
            let #name = &#y[..];
        }
    }
    /// With `check`, the length mismatch of `*y = e` unless `y` has the length `n`.
    pub(super) fn write_check(
        &self,
        y: &proc_macro2::Ident,
        n: VarId,
        check: bool,
        span: Span,
    ) -> TokenStream {
        if !check {
            return TokenStream::new();
        }
        let (rt, n, loc) = (self.rt, self.ident(n), self.loc(span));
        quote!(#rt::check_eq_len("*y = e", #y.len(), #n, #loc);)
    }

    /// `unzip(map(f))` whose every component is the new value of a `&mut` parameter
    /// written in place (`targets`: each one's Rust identifier and variable): one loop
    /// `(y0[i], y1[i], ...) = f(i, y0[i], y1[i], ...)`, the reads of `yk[i]` in `f`
    /// replaced by the old values; each projection is then its parameter.
    pub(super) fn update_unzip(
        &mut self,
        s: &Soac,
        parts: &[Option<VarId>],
        targets: &[(proc_macro2::Ident, VarId, bool)],
        span: Span,
    ) -> TokenStream {
        let checks: Vec<TokenStream> = targets
            .iter()
            .map(|(y, _, check)| self.write_check(y, s.len, *check, span))
            .collect();
        let i = s.elem.params[0];
        self.reps.insert(i, Rep::Value);
        let ip = self.ident(i);
        let olds: Vec<proc_macro2::Ident> = (0..targets.len())
            .map(|k| quote::format_ident!("__dpl_old{}", k))
            .collect();
        let mut reads = Vec::new();
        s.elem.body.walk(&mut |st| {
            if let Expr::Index { seq, .. } = &st.expr
                && let Some(k) = targets.iter().position(|(_, p, _)| p == seq)
            {
                reads.push((st.var, k));
            }
        });
        for (r, k) in reads {
            let old = &olds[k];
            self.subst.insert(r, quote!(#old));
        }
        let tys: Vec<TokenStream> = parts
            .iter()
            .map(|p| {
                let t = p.and_then(|p| self.f.vars[p].ty.elem().cloned());
                t.map(|t| self.rep_ty(&t)).unwrap_or_default()
            })
            .collect();
        // The float components' NaNs made canonical after the loop (as in `map_unzip`).
        let deferred = self.defer_output_nans(s, targets.len());
        self.depth += 1;
        let g = self.block_owned(&s.elem.body);
        self.depth -= 1;
        self.undefer(&deferred);
        self.subst.clear();
        let rt = self.rt;
        let (helper, nans) = match super::unzip::nan_treatments(rt, &deferred) {
            Some(nans) => (
                quote::format_ident!("update_unzip{}_canon", targets.len()),
                nans,
            ),
            None => (
                quote::format_ident!("update_unzip{}", targets.len()),
                TokenStream::new(),
            ),
        };
        let ys = targets.iter().map(|(y, _, _)| y);
        let mut bind = TokenStream::new();
        for (p, ((y, _, _), t)) in parts.iter().zip(targets.iter().zip(&tys)) {
            let Some(p) = p else { continue };
            let (name, own) = (self.ident(*p), self.own_ident(*p));
            self.owned.insert(*p);
            self.reps.insert(*p, Rep::Slice);
            bind.extend(quote! {
                let #own: ::std::vec::Vec<#t> = ::std::vec::Vec::new();
                let #name = &#y[..];
            });
        }
        quote! {
            #(#checks)*
            #rt::#helper(#(&mut #ys[..],)* move |#ip: usize, #(#olds: #tys),*| -> (#(#tys,)*) #g, #nans);
            #bind
        }
    }
}
