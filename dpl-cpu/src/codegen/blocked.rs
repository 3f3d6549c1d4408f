//! Top-level maps over the strided rows of a `Matrix` whose element is a reduction over
//! the row (ELL SpMV), written as `heavy::map_reduce_blocked`: rows in blocks, the inner loop
//! down one column of the block.

use std::collections::HashSet;

use dpl_core::ir::{Block, Expr, Soac, SoacKind, Span, VarId};
use proc_macro2::TokenStream;
use quote::quote;

use super::value::Rep;
use super::{Gen, contains_soac};

impl Gen<'_> {
    /// A top-level `map` over the rows of a `Matrix` with strided rows (the general body
    /// variant: e.g. column-major) whose element is a reduction over the row, with an
    /// initial value, between plain scalar statements: ELL SpMV,
    /// `map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols)`. Written as
    /// `heavy::map_reduce_blocked`: rows in blocks, the inner loop down one column of the
    /// block (contiguous for column-major rows). `None` for any other shape.
    pub(super) fn blocked_map(&mut self, v: VarId, s: &Soac, span: Span) -> Option<TokenStream> {
        let heavy = self.heavy?.clone();
        let body = &s.elem.body;
        if s.elem.params.len() != 1 || Self::contains_seq(&self.f.vars[body.result].ty) {
            return None;
        }
        let i = s.elem.params[0];
        let at = body
            .stmts
            .iter()
            .position(|st| matches!(st.expr, Expr::Soac(_)))?;
        let (prefix, rest) = body.stmts.split_at(at);
        let (red_stmt, suffix) = rest.split_first()?;
        let Expr::Soac(red) = &red_stmt.expr else {
            return None;
        };
        let SoacKind::Reduce {
            op,
            init: Some(init),
        } = &red.kind
        else {
            return None;
        };
        if suffix.iter().any(|st| contains_soac(&st.expr))
            || prefix.iter().any(|st| contains_soac(&st.expr))
        {
            return None;
        }
        // The reduction runs over a row of a strided matrix, read at this element's index.
        let row_of = |x: VarId| {
            prefix.iter().find_map(|st| match &st.expr {
                Expr::Index {
                    seq,
                    index,
                    checked: None,
                } if st.var == x && *index == i && self.rep(*seq) == Rep::Matrix(false) => {
                    Some(*seq)
                }
                _ => None,
            })
        };
        let matrix = prefix.iter().find_map(|st| match &st.expr {
            Expr::Len(a) if st.var == red.len => row_of(*a),
            _ => None,
        })?;
        // What one step needs: the statements the element function and the operator read.
        let mut used = HashSet::new();
        uses(&red.elem.body, &mut used);
        uses(&op.body, &mut used);
        let keep = self.slice_of(prefix, used, i)?;
        let acc_ty = self.rep_ty(&self.f.vars[red_stmt.var].ty);
        let out_ty = self.owned_ty(&self.f.vars[body.result].ty);
        let work = self.work(s);
        let n = self.ident(s.len);
        let m = self.ident(matrix);
        let (what, loc) = (s.kind.origin_name(), self.loc(span));
        // The loop, generated once with the reads in `self.unchecked` unchecked.
        let generate = |g: &mut Self| {
            g.reps.insert(i, Rep::Value);
            let ip = g.ident(i);
            let red_name = g.ident(red_stmt.var);
            let init = g.ident(*init);
            let result = g.ident(body.result);
            let row = g.lambda(&s.elem, false, &[Rep::Value]);
            g.depth += 1;
            let pre = g.stmts(&Block {
                stmts: prefix.to_vec(),
                result: body.result,
            });
            let step_pre = g.stmts(&Block {
                stmts: keep.iter().map(|&k| prefix[k].clone()).collect(),
                result: body.result,
            });
            // NaNs made canonical once, on each row's result, as for a reduction row by row.
            let red_ty = g.f.vars[red_stmt.var].ty.clone();
            let applied = g.deferred_reduce(red, op, true, &red_ty);
            let elem = g.lambda(&red.elem, false, &[Rep::Value]);
            let op_fn = g.lambda(op, false, &[]);
            g.nan_deferred.remove(&op.body.result);
            g.nan_deferred.remove(&red.elem.body.result);
            let total = match applied {
                Some(applied) => {
                    let canon = g.canonical(quote!(__dpl_acc), &red_ty);
                    quote!(if #applied { #canon } else { __dpl_acc })
                }
                None => quote!(__dpl_acc),
            };
            let op = op_fn;
            let post = g.stmts(&Block {
                stmts: suffix.to_vec(),
                result: body.result,
            });
            g.depth -= 1;
            quote! {
                #heavy::map_reduce_blocked(#n, #work, #m.cols(),
                    move |#ip: usize| -> #acc_ty { #pre #init },
                    (
                        move |#ip: usize, __dpl_k: usize| -> #acc_ty {
                            #step_pre
                            (#elem)(__dpl_k)
                        },
                        move |#ip: usize, __dpl_k: usize, __dpl_acc: #acc_ty| -> #acc_ty {
                            #step_pre
                            (#op)(__dpl_acc, (#elem)(__dpl_k))
                        },
                        move |#ip: usize, __dpl_a: #acc_ty, __dpl_b: #acc_ty| -> #acc_ty {
                            #step_pre
                            (#op)(__dpl_a, __dpl_b)
                        },
                    ),
                    move |#ip: usize, __dpl_acc: #acc_ty| -> #out_ty {
                        #pre
                        let #red_name: #acc_ty = #total;
                        #post
                        #result
                    },
                    #row, #what, #loc)
            }
        };
        // Reads indexed by a parameter's values (ELL's `x[cols[i][k]]`): unchecked in a
        // variant run when the parameter's cached bound allows (see `bounded_variant`).
        let value = match self.row_index_variant(v) {
            Some((stmts, cond)) => {
                let outer = std::mem::replace(&mut self.unchecked, stmts);
                let fast = generate(self);
                self.unchecked = outer;
                let slow = generate(self);
                quote!(if #cond { #fast } else { #slow })
            }
            None => generate(self),
        };
        Some(self.bind_owned(v, value))
    }
}

/// Adds every variable that `b` reads (operands and results, nested blocks included).
fn uses(b: &Block, out: &mut HashSet<VarId>) {
    out.insert(b.result);
    for s in &b.stmts {
        out.extend(s.expr.operands());
        s.expr.for_each_block(&mut |blk| uses(blk, out));
    }
}
