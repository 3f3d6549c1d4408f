//! Top-level maps over heavy elements whose element is a row of scalars, written as one flat
//! `Nested` result without a `Vec` per row (`heavy::ragged`, `heavy::ragged_push`), and the
//! slicing of the statements a row's length depends on (also used by [`super::blocked`]).

use std::collections::HashSet;

use dpl_core::ir::{BinOp, Block, Const, Expr, Soac, SoacKind, Span, Stmt, Type, VarId};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::value::Rep;
use super::{Gen, mentions};

impl Gen<'_> {
    /// A top-level `map` whose element function returns a row of scalars computed by a
    /// `map`, `scan` or `exclusive_scan` (length known before the row is computed) or a
    /// `filter` (known after), written as one flat ragged result without a `Vec` per row:
    /// `heavy::ragged` (sizes first: the statements the row's length depends on run in a
    /// first pass, then each row is written in place by the `*_into` helpers) or
    /// `heavy::ragged_push` (rows appended to per-chunk buffers by `filter_push`). The
    /// variable becomes a `dpl::Nested`. `None` when the map has another shape, or when
    /// the row's length depends on a statement that is not a plain, non-failing scalar
    /// computation (a loop, a checked read, an integer division).
    pub(super) fn ragged_map(&mut self, v: VarId, s: &Soac, span: Span) -> Option<TokenStream> {
        let Type::Seq(row_ty) = &self.f.vars[v].ty else {
            return None;
        };
        let Type::Seq(elem_ty) = &**row_ty else {
            return None;
        };
        let heavy = self.heavy?.clone();
        let body = &s.elem.body;
        let (last, prefix) = body.stmts.split_last()?;
        let Expr::Soac(inner) = &last.expr else {
            return None;
        };
        if Self::contains_seq(elem_ty) || last.var != body.result || s.elem.params.len() != 1 {
            return None;
        }
        let sized = match inner.kind {
            SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. } => {
                Some(self.size_slice(prefix, inner.len, s.elem.params[0])?)
            }
            SoacKind::Filter { .. } => None,
            _ => return None,
        };
        let work = self.work(s);
        let n = self.ident(s.len);
        let e = self.elem_ty(elem_ty);
        let i = s.elem.params[0];
        self.reps.insert(i, Rep::Value);
        let ip = self.ident(i);
        let name = self.ident(v);
        let own = self.own_ident(v);
        let streamed = self.streamed_producer(prefix, inner, row_ty);
        self.depth += 1;
        let rt = self.inner_rt.clone();
        let len = self.ident(inner.len);
        let (what, loc) = (s.kind.origin_name(), self.loc(span));
        let pre = self.stmts(&Block {
            stmts: prefix
                .iter()
                .filter(|st| Some(st.var) != streamed.map(|(t, _)| t.var))
                .cloned()
                .collect(),
            result: body.result,
        });
        if let Some((t, producer)) = streamed {
            // The row is `map(g, p)` over a producer `p` of the same length read only at
            // the map's index: `p` is written into the row's slot, then `g` applied in place.
            let into = self.write_row_call(&rt, producer, &len);
            let j = inner.elem.params[0];
            self.reps.insert(j, Rep::Value);
            let jp = self.ident(j);
            for st in &inner.elem.body.stmts {
                if matches!(&st.expr, Expr::Index { seq, .. } if *seq == t.var) {
                    self.subst.insert(st.var, quote!(__dpl_old));
                }
            }
            self.depth += 1;
            let g = self.block_owned(&inner.elem.body);
            self.depth -= 1;
            self.subst.clear();
            self.depth -= 1;
            let keep = self.size_slice(prefix, inner.len, i)?;
            let sizes = self.stmts(&Block {
                stmts: keep.iter().map(|&k| prefix[k].clone()).collect(),
                result: inner.len,
            });
            self.owned.insert(v);
            self.reps.insert(v, Rep::Nested);
            // SAFETY (of the generated block): `*_into` writes every slot of the row (its
            // length checked), so `map_in_place` reads initialised values.
            return Some(quote! {
                let #own: ::dpl::Nested<#e> = ::dpl::Nested::from(unsafe {
                    #heavy::ragged(#n, #work,
                        move |#ip: usize| -> usize { #sizes #len },
                        move |#ip: usize, __dpl_out: &mut [::core::mem::MaybeUninit<#e>]| {
                            #pre
                            #into;
                            #rt::map_in_place(__dpl_out, move |#jp: usize, __dpl_old: #e| -> #e #g)
                        }, #what, #loc)
                });
                let #name = &#own;
            });
        }
        let value = match (&inner.kind, sized) {
            (SoacKind::Filter { pred }, None) => {
                let elem = self.lambda(&inner.elem, false, &[Rep::Value]);
                let pred = self.lambda(pred, true, &[]);
                quote! {
                    ::dpl::Nested::from(#heavy::ragged_push(#n, #work,
                        move |#ip: usize, __dpl_out: &mut ::std::vec::Vec<#e>| {
                            #pre
                            #rt::filter_push(__dpl_out, #len, #elem, #pred, #what, #loc)
                        }, #what, #loc))
                }
            }
            (_, Some(keep)) => {
                let into = self.write_row_call(&rt, inner, &len);
                let sizes = self.stmts(&Block {
                    stmts: keep.iter().map(|&k| prefix[k].clone()).collect(),
                    result: inner.len,
                });
                // SAFETY (of the generated block): the `*_into` helpers check that the row's
                // slot has the length they write and write every slot of it.
                quote! {
                    ::dpl::Nested::from(unsafe {
                        #heavy::ragged(#n, #work,
                            move |#ip: usize| -> usize { #sizes #len },
                            move |#ip: usize, __dpl_out: &mut [::core::mem::MaybeUninit<#e>]| {
                                #pre
                                #into
                            }, #what, #loc)
                    })
                }
            }
            _ => unreachable!("filters are pushed, the other kinds sized"),
        };
        self.depth -= 1;
        self.owned.insert(v);
        self.reps.insert(v, Rep::Nested);
        Some(quote! {
            let #own: ::dpl::Nested<#e> = #value;
            let #name = &#own;
        })
    }

    /// For a row computed as `map(g, p)` (`inner`): the statement of `p` and its combinator
    /// when `p` is a `map`, `scan` or `exclusive_scan` of the row's element type and length,
    /// computed in `prefix` and read nowhere but by `g`, at `g`'s own index. The row can
    /// then be written as `p` and mapped in place, without a temporary.
    fn streamed_producer<'s>(
        &self,
        prefix: &'s [Stmt],
        inner: &Soac,
        row_ty: &Type,
    ) -> Option<(&'s Stmt, &'s Soac)> {
        if inner.kind != SoacKind::Map || inner.elem.params.len() != 1 {
            return None;
        }
        let j = inner.elem.params[0];
        prefix.iter().find_map(|t| {
            let Expr::Soac(p) = &t.expr else {
                return None;
            };
            let kind_ok = matches!(
                p.kind,
                SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
            );
            if !kind_ok || p.len != inner.len || self.f.vars[t.var].ty != *row_ty {
                return None;
            }
            let reads = inner
                .elem
                .body
                .stmts
                .iter()
                .filter(|st| {
                    matches!(&st.expr, Expr::Index { seq, index, checked: None }
                        if *seq == t.var && *index == j)
                })
                .count();
            (reads > 0 && mentions(&self.f.body, t.var) == reads).then_some((t, &**p))
        })
    }

    /// `p` (a `map`, `scan` or `exclusive_scan` of length `len`) written into `__dpl_out`
    /// with `rt`'s `*_into` helpers.
    fn write_row_call(&mut self, rt: &TokenStream, p: &Soac, len: &Ident) -> TokenStream {
        let elem = self.lambda(&p.elem, false, &[Rep::Value]);
        match &p.kind {
            SoacKind::Scan { op } => {
                let ordered = self.f.vars[op.body.result].ty.holds_float();
                let op = self.lambda(op, false, &[]);
                quote!(#rt::scan_into(__dpl_out, #len, #elem, #op, #ordered))
            }
            SoacKind::ExclusiveScan { op, init } => {
                let ordered = self.f.vars[op.body.result].ty.holds_float();
                let op = self.lambda(op, false, &[]);
                let init = self.ident(*init);
                quote!(#rt::exclusive_scan_into(__dpl_out, #len, #init, #elem, #op, #ordered))
            }
            _ => quote!(#rt::map_into(__dpl_out, #len, #elem)),
        }
    }

    /// The statements of `prefix` (by position) that the variables `need` depend on, if
    /// all of them are plain scalar computations (see [`Gen::size_slice`]).
    pub(super) fn slice_of(
        &self,
        prefix: &[Stmt],
        need: HashSet<VarId>,
        i: VarId,
    ) -> Option<Vec<usize>> {
        let asserts = prefix.iter().any(|st| matches!(st.expr, Expr::Assert(_)));
        let mut need = need;
        let mut keep = Vec::new();
        for (k, st) in prefix.iter().enumerate().rev() {
            if !need.contains(&st.var) {
                continue;
            }
            if !self.plain(prefix, &st.expr, i, asserts) {
                return None;
            }
            need.extend(st.expr.operands());
            keep.push(k);
        }
        keep.reverse();
        Some(keep)
    }

    /// The statements of `prefix` (by position) that the length `len` depends on, if all
    /// of them are plain scalar computations that cannot fail and contain no loop, so a
    /// first pass can run them to size each row. Unchecked reads are allowed at the
    /// element's own index `i` (in range by construction of the outer loop) or anywhere
    /// when the element function asserts nothing itself (their safety was then established
    /// before the loop).
    fn size_slice(&self, prefix: &[Stmt], len: VarId, i: VarId) -> Option<Vec<usize>> {
        self.slice_of(prefix, HashSet::from([len]), i)
    }

    /// Whether `e` (a statement of `prefix`) is a plain scalar computation that cannot fail
    /// and contains no loop (see [`Gen::size_slice`]); `asserts`: `prefix` asserts
    /// something.
    fn plain(&self, prefix: &[Stmt], e: &Expr, i: VarId, asserts: bool) -> bool {
        match e {
            Expr::Const(_)
            | Expr::Var(_)
            | Expr::Unary(..)
            | Expr::Cast(..)
            | Expr::Tuple(_)
            | Expr::Field(..)
            | Expr::Len(_)
            | Expr::Math(..) => true,
            Expr::Binary(op, a, b) => {
                // An integer division fails only by a zero divisor: allowed when the
                // divisor is a small positive constant (non-zero in every type).
                let int = self.f.vars[*a].ty.scalar().is_none_or(|t| t.is_int());
                let nonzero = prefix.iter().any(|d| {
                    d.var == *b
                        && matches!(d.expr, Expr::Const(Const::Int(k)) if (1..=127).contains(&k))
                });
                !(int && matches!(op, BinOp::Div | BinOp::Rem)) || nonzero
            }
            Expr::Index {
                index,
                checked: None,
                ..
            } => *index == i || !asserts,
            _ => false,
        }
    }
}
