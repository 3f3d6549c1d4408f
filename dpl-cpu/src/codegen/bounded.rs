//! Loop variants allowed by range facts ([`dpl_core::ranges`]): reads proven in range
//! generated unchecked under a run-time condition, reads through the values of a `Nested` or
//! `Matrix` parameter checked once by its cached bound, and the clamp-free interior of a
//! stencil (`map_split`).

use std::collections::{HashMap, HashSet};

use dpl_core::ir::{Soac, VarId};
use proc_macro2::TokenStream;
use quote::quote;

use super::Gen;
use super::value::Rep;

/// The loop variants that range facts allow (see [`Gen::bounded_variant`]).
pub(super) struct Variants {
    /// The condition for the unchecked variants (`None`: always).
    pub(super) cond: Option<TokenStream>,
    /// The element function with the bounded reads unchecked.
    pub(super) fast: TokenStream,
    /// `(lo, hi, interior)`: the element function for `lo..hi` with the clamps removed.
    pub(super) interior: Option<(TokenStream, TokenStream, TokenStream)>,
}

impl Gen<'_> {
    /// For the top-level loop `v` (over `s`): when some of its checked reads have indices
    /// provably below its length ([`dpl_core::ranges::bounded_reads`], e.g. a stencil's
    /// clamped neighbours), the element function with those reads unchecked, and the
    /// condition under which that is safe (`len(x) >= n` for every such `x` whose length
    /// is not already proven equal to `n`; `None` if there is none). The caller runs the
    /// checked element function when the condition fails, so errors are unchanged.
    ///
    /// On `Place::Cpu`, when the element's index is also clamped (`max(i, c) - c`,
    /// `min(i + c, n - 1)`: [`dpl_core::ranges::clamps`]), a third variant for the interior
    /// `lo..hi` where every clamp is the identity computes the neighbours as `i - c` and
    /// `i + c`: contiguous reads, so the loop vectorizes (`map_split`).
    ///
    /// Reads `x[c]` whose index is a value of a `Nested` or `Matrix` parameter `P`
    /// ([`Gen::row_index_variant`]: SpMV's `x[cols[i][k]]`) join the unchecked reads under
    /// the condition `P.__indices_below(x.len())`, answered from a bound that `P` computes
    /// on first use and keeps until its values change.
    pub(super) fn bounded_variant(&mut self, v: VarId, s: &Soac) -> Option<Variants> {
        let reads: Vec<_> = dpl_core::ranges::bounded_reads(self.f, v)
            .into_iter()
            .filter(|r| self.rep(r.seq) == Rep::Slice)
            .collect();
        let rows = self.row_index_variant(v);
        if reads.is_empty() && rows.is_none() {
            return None;
        }
        let n = self.ident(s.len);
        let mut conds = Vec::new();
        let mut seen = HashSet::new();
        for r in &reads {
            if !r.same_len && seen.insert(r.seq) {
                let x = self.ident(r.seq);
                conds.push(quote!(#x.len() >= #n));
            }
        }
        self.unchecked = reads.iter().map(|r| r.stmt).collect();
        if let Some((stmts, cond)) = rows {
            conds.push(cond);
            self.unchecked.extend(stmts);
        }
        let cond = (!conds.is_empty()).then(|| quote!(#(#conds)&&*));
        let fast = self.lambda(&s.elem, false, &[Rep::Value]);
        let interior = self.interior_variant(v, s);
        self.unchecked.clear();
        Some(Variants {
            cond,
            fast,
            interior,
        })
    }

    /// Whether parameter `p` answers `__indices_below` (a `Nested` or a `Matrix`).
    fn has_index_bound(&self, p: VarId) -> bool {
        matches!(self.rep(p), Rep::Nested | Rep::Matrix(_))
    }

    /// The reads of the top-level loop `v` whose indices are values of a `Nested` or
    /// `Matrix` parameter ([`dpl_core::ranges::row_index_reads`]) and the condition under
    /// which all of them are in range (`P.__indices_below(x.len())` for each pair); `None`
    /// if there is none.
    pub(super) fn row_index_variant(&self, v: VarId) -> Option<(HashSet<VarId>, TokenStream)> {
        let reads: Vec<_> = dpl_core::ranges::row_index_reads(self.f, v)
            .into_iter()
            .filter(|r| self.rep(r.seq) == Rep::Slice && self.has_index_bound(r.rows))
            .collect();
        if reads.is_empty() {
            return None;
        }
        let mut seen = HashSet::new();
        let conds = reads
            .iter()
            .filter(|r| seen.insert((r.rows, r.seq)))
            .map(|r| {
                let (p, x) = (self.ident(r.rows), self.ident(r.seq));
                quote!(#p.__indices_below(#x.len()))
            });
        let cond = quote!(#(#conds)&&*);
        Some((reads.iter().map(|r| r.stmt).collect(), cond))
    }

    /// The interior variant of [`Gen::bounded_variant`]: `(lo, hi, element function)`, or
    /// `None` without clamps (or off `Place::Cpu`, whose run time has `map_split`).
    fn interior_variant(
        &mut self,
        v: VarId,
        s: &Soac,
    ) -> Option<(TokenStream, TokenStream, TokenStream)> {
        use dpl_core::ranges::{Clamp, Outer};
        self.heavy?;
        let clamps = dpl_core::ranges::clamps(self.f, v);
        if clamps.is_empty() {
            return None;
        }
        let outer = |o: Outer| -> Option<TokenStream> {
            match o {
                Outer::Var(x) => {
                    let x = self.ident(x);
                    Some(quote!(#x))
                }
                Outer::Const(k) => {
                    let k = usize::try_from(k).ok()?;
                    let lit = proc_macro2::Literal::usize_suffixed(k);
                    Some(quote!(#lit))
                }
            }
        };
        let i = self.ident(s.elem.params[0]);
        let n = self.ident(s.len);
        let (mut lows, mut highs) = (Vec::new(), Vec::new());
        let mut forms = HashMap::new();
        for c in &clamps {
            match *c {
                Clamp::Low { stmt, c } => {
                    let c = outer(c)?;
                    forms.insert(stmt, quote!(#i.wrapping_sub(#c)));
                    lows.push(c);
                }
                Clamp::High { stmt, x, c } => {
                    let x = self.ident(x);
                    forms.insert(stmt, quote!(#x));
                    highs.push(match c {
                        Some(c) => outer(c)?,
                        None => quote!(0usize),
                    });
                }
            }
        }
        // SAFETY of the forms: inside `lo..hi`, `i >= c` for every low clamp and
        // `i + c < n` for every high clamp, so each clamp equals its simpler form.
        let lo = quote!(0usize #(.max(#lows))*);
        let hi = quote!(#n.saturating_sub(0usize #(.max(#highs))*));
        self.subst = forms;
        let int = self.lambda(&s.elem, false, &[Rep::Value]);
        self.subst.clear();
        Some((lo, hi, int))
    }
}
