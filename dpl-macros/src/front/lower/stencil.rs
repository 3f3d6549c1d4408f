//! `stencil(f, x, offsets, default)`, lowered to the primitives it means.
//!
//! SPEC: `y[i] = f([x[i+o] for o in offsets])`, out-of-range reads give `default`, in one
//! dimension (`x: [T]`, integer offsets, result `[T]`) and two (`x: [[T]]`, a `Matrix` or a
//! `Nested`, offsets `(row, column)` pairs, result `[[T]]` with the rows of `x`'s lengths).
//! The offsets are constants written in the call (`[-1, 0, 1]`,
//! `[(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)]`), so the window is known at compile time:
//! `w[k]` (`k` a constant) is the value at offset `k`, and the call becomes
//!
//! ```text
//! map(|i| f((if i >= 1 { x[i - 1] } else { default }, x[i], if i + 1 < len(x) { x[i + 1] } else { default })),
//!     range(len(x)))
//! ```
//!
//! (a `map` over the rows of a `map` over the columns in two dimensions, where a row of
//! `x` shorter than another makes the reads past its end `default`). Nothing below the
//! front end knows about stencils: every backend runs the `map`, the GPU's included, and
//! fusion treats it as any other.

use std::collections::HashMap;

use dpl_core::ir::{BinOp, Block, Const, Expr, Lambda, Prim, Type, VarId};
use proc_macro2::Span;

use super::callable::captures;
use super::{Lowerer, call_span, cheap_span, peel};

/// The form of the call, for error messages.
const FORM: &str = "stencil(f, x, offsets, default)`, such as `stencil(|w| w[0] + w[1] + w[2], x, [-1, 0, 1], 0.0)`";

/// One neighbour: its offset in each dimension (one or two).
type Offset = Vec<i64>;

/// The windows being lowered: the variable bound to a window (and its copies) to the
/// variables of its values, in the order of the offsets.
#[derive(Default)]
pub(super) struct Windows(HashMap<VarId, Vec<VarId>>);

impl Windows {
    /// The values of the window `v` is (or copies), if it is one.
    pub(super) fn get(&self, v: VarId) -> Option<&[VarId]> {
        self.0.get(&v).map(Vec::as_slice)
    }

    /// Records that `copy` is a copy of `v` (a binding, an argument), if `v` is a window.
    pub(super) fn copied(&mut self, v: VarId, copy: VarId) {
        if let Some(vals) = self.0.get(&v).cloned() {
            self.0.insert(copy, vals);
        }
    }
}

/// A constant integer written in the call: a literal, possibly negated.
fn const_int(e: &syn::Expr) -> Option<i64> {
    match peel(e) {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(li),
            ..
        }) => li.base10_parse::<i64>().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => const_int(expr).and_then(i64::checked_neg),
        _ => None,
    }
}

/// The offsets written in the call: an array (or a reference to one) of integers, or of
/// pairs of integers; all of one dimension, at least one.
fn offsets(e: &syn::Expr) -> Result<Vec<Offset>, String> {
    let e = match peel(e) {
        syn::Expr::Reference(r) => &*r.expr,
        e => e,
    };
    let syn::Expr::Array(a) = peel(e) else {
        return Err("the offsets of `stencil` are an array of constants written in the call, such as `[-1, 0, 1]` or `[(-1, 0), (0, 1)]`".into());
    };
    let mut out: Vec<Offset> = Vec::new();
    for el in &a.elems {
        let o = match peel(el) {
            syn::Expr::Tuple(t) => t.elems.iter().map(const_int).collect::<Option<Vec<_>>>(),
            other => const_int(other).map(|v| vec![v]),
        };
        let Some(o) = o.filter(|o| matches!(o.len(), 1 | 2)) else {
            return Err("each offset of `stencil` is an integer constant (one dimension) or a pair of them (two dimensions: row, column)".into());
        };
        if out.first().is_some_and(|f| f.len() != o.len()) {
            return Err(
                "the offsets of `stencil` mix one and two dimensions: write all as integers or all as pairs".into(),
            );
        }
        out.push(o);
    }
    if out.is_empty() {
        return Err("`stencil` needs at least one offset".into());
    }
    Ok(out)
}

impl Lowerer<'_> {
    /// Lowers a call of `stencil` (see the module documentation).
    pub(super) fn stencil(&mut self, c: &syn::ExprCall) -> VarId {
        let args: Vec<&syn::Expr> = c.args.iter().collect();
        let [f, x, offs, default] = args[..] else {
            return self.fail(
                c,
                format!("wrong number of arguments for `stencil`: expected `{FORM}"),
            );
        };
        let callable = match self.as_callable(f) {
            Some(callable) if self.arity(&callable) == 1 => callable,
            Some(callable) => {
                let what = self.describe(&callable);
                let n = self.arity(&callable);
                return self.fail(
                    f,
                    format!("`stencil` calls its function with one argument, the window of neighbours, but {what} takes {n}"),
                );
            }
            None => {
                return self.fail(
                    f,
                    "the first argument of `stencil` must be a function of the window, such as `|w| w[0] + w[1]`",
                );
            }
        };
        let offsets = match offsets(offs) {
            Ok(o) => o,
            Err(msg) => return self.fail(offs, msg),
        };
        let span = call_span(c);
        let x = self.value(x);
        let default = self.value(default);
        let quiet = callable.checked();
        let site = cheap_span(f);
        // Applies `f` to the window read around position `at` (one index per dimension).
        let apply = |l: &mut Self, rows: &[VarId], at: &[VarId]| {
            let vals: Vec<VarId> = offsets
                .iter()
                .map(|o| l.neighbour(x, rows, at, o, default, span))
                .collect();
            let w = l.emit("window", Type::Infer, Expr::Tuple(vals.clone()), span);
            l.windows.0.insert(w, vals);
            l.apply(&callable, &[w], f, site, quiet)
        };
        let n = self.emit("len", Type::usize(), Expr::Len(x), span);
        let outer = if offsets[0].len() == 1 {
            self.map_range(n, span, |l, i| apply(l, &[], &[i]))
        } else {
            self.map_range(n, span, |l, r| {
                let row = l.emit(
                    "row",
                    Type::Infer,
                    Expr::Index {
                        seq: x,
                        index: r,
                        checked: None,
                    },
                    span,
                );
                let m = l.emit("len", Type::usize(), Expr::Len(row), span);
                l.map_range(m, span, |l, col| apply(l, &[row], &[r, col]))
            })
        };
        self.emit("stencil", Type::Infer, Expr::Var(outer), span)
    }

    /// `map(|i| body(i), range(n))`.
    pub(super) fn map_range(
        &mut self,
        n: VarId,
        span: Span,
        body: impl FnOnce(&mut Self, VarId) -> VarId,
    ) -> VarId {
        let range = self.emit(
            "range",
            Type::seq(Type::usize()),
            Expr::Prim {
                prim: Prim::Range,
                lambdas: Vec::new(),
                args: vec![n],
            },
            span,
        );
        let i = self.new_var("i", Type::usize(), span);
        self.elem_depth += 1;
        let body = self.sub_block(|l| body(l, i));
        self.elem_depth -= 1;
        let params = vec![i];
        let captures = captures(&params, &body);
        self.emit(
            "map",
            Type::Infer,
            Expr::Prim {
                prim: Prim::Map,
                lambdas: vec![Lambda {
                    params,
                    captures,
                    body,
                }],
                args: vec![range],
            },
            span,
        )
    }

    /// The value at offset `o` from position `at` in `x` (`rows`: the row of `x` at
    /// `at[0]` in two dimensions), or `default` where that is outside `x` (or past the end
    /// of its row).
    fn neighbour(
        &mut self,
        x: VarId,
        rows: &[VarId],
        at: &[VarId],
        o: &[i64],
        default: VarId,
        span: Span,
    ) -> VarId {
        match (rows, at, o) {
            ([], [i], [d]) => {
                let n = self.emit("len", Type::usize(), Expr::Len(x), span);
                self.shifted(*i, *d, n, true, default, span, |l, j| {
                    l.emit(
                        "elem",
                        Type::Infer,
                        Expr::Index {
                            seq: x,
                            index: j,
                            checked: None,
                        },
                        span,
                    )
                })
            }
            ([row], [r, c], [dr, dc]) => {
                let n = self.emit("len", Type::usize(), Expr::Len(x), span);
                let read_in = |l: &mut Self, row: VarId, own: bool| {
                    let m = l.emit("len", Type::usize(), Expr::Len(row), span);
                    l.shifted(*c, *dc, m, own, default, span, |l, j| {
                        l.emit(
                            "elem",
                            Type::Infer,
                            Expr::Index {
                                seq: row,
                                index: j,
                                checked: None,
                            },
                            span,
                        )
                    })
                };
                if *dr == 0 {
                    return read_in(self, *row, true);
                }
                self.shifted(*r, *dr, n, true, default, span, |l, j| {
                    let other = l.emit(
                        "row",
                        Type::Infer,
                        Expr::Index {
                            seq: x,
                            index: j,
                            checked: None,
                        },
                        span,
                    );
                    read_in(l, other, false)
                })
            }
            _ => self.poison(),
        }
    }

    /// `read(i + d)` where `0 <= i + d < n`, else `default`. `within`: `i < n` is known
    /// (the position itself, or a column of its own row); otherwise it is checked too (a
    /// column of another row, which may be shorter). The reads are unchecked: these
    /// conditions are their bounds checks, written so that nothing wraps.
    #[allow(clippy::too_many_arguments)]
    fn shifted(
        &mut self,
        i: VarId,
        d: i64,
        n: VarId,
        within: bool,
        default: VarId,
        span: Span,
        read: impl FnOnce(&mut Self, VarId) -> VarId,
    ) -> VarId {
        let below = |l: &mut Self, j: VarId, then: &mut dyn FnMut(&mut Self) -> VarId| {
            let cond = l.emit(
                "in_range",
                Type::bool(),
                Expr::Binary(BinOp::Lt, j, n),
                span,
            );
            l.guarded(cond, default, span, then)
        };
        // `read` is called once, on the one path that reads.
        let mut read = Some(read);
        let mut read_at = |l: &mut Self, j: VarId| match read.take() {
            Some(r) => r(l, j),
            None => l.poison(),
        };
        if d == 0 {
            return if within {
                read_at(self, i)
            } else {
                below(self, i, &mut |l| read_at(l, i))
            };
        }
        let k = self.emit(
            "offset",
            Type::usize(),
            Expr::Const(Const::Int(i128::from(d.unsigned_abs()))),
            span,
        );
        if d < 0 {
            let cond = self.emit(
                "in_range",
                Type::bool(),
                Expr::Binary(BinOp::Ge, i, k),
                span,
            );
            self.guarded(cond, default, span, &mut |l| {
                let j = l.emit("at", Type::usize(), Expr::Binary(BinOp::Sub, i, k), span);
                if within {
                    read_at(l, j)
                } else {
                    below(l, j, &mut |l| read_at(l, j))
                }
            })
        } else {
            // `n - i > d` (once `i < n`) rather than `i + d < n`: nothing wraps.
            let mut ahead = |l: &mut Self| {
                let room = l.emit("room", Type::usize(), Expr::Binary(BinOp::Sub, n, i), span);
                let cond = l.emit(
                    "in_range",
                    Type::bool(),
                    Expr::Binary(BinOp::Gt, room, k),
                    span,
                );
                l.guarded(cond, default, span, &mut |l| {
                    let j = l.emit("at", Type::usize(), Expr::Binary(BinOp::Add, i, k), span);
                    read_at(l, j)
                })
            };
            if within {
                ahead(self)
            } else {
                below(self, i, &mut ahead)
            }
        }
    }

    /// `if cond { then } else { default }`.
    fn guarded(
        &mut self,
        cond: VarId,
        default: VarId,
        span: Span,
        then: &mut dyn FnMut(&mut Self) -> VarId,
    ) -> VarId {
        let then_b = self.sub_block(|l| then(l));
        let else_b: Block =
            self.sub_block(|l| l.emit("default", Type::Infer, Expr::Var(default), span));
        self.emit(
            "neighbour",
            Type::Infer,
            Expr::If(cond, then_b, else_b),
            span,
        )
    }

    /// `w[k]` for a window `w` (`vals` its values): `k` must be a constant below their
    /// number.
    pub(super) fn window_elem(&mut self, vals: &[VarId], index: &syn::Expr) -> VarId {
        match const_int(index).and_then(|k| usize::try_from(k).ok()) {
            Some(k) if k < vals.len() => vals[k],
            Some(k) => self.fail(
                index,
                format!(
                    "the window of this `stencil` has {} value{} (one per offset): `w[0]`..`w[{}]`, not `w[{k}]`",
                    vals.len(),
                    if vals.len() == 1 { "" } else { "s" },
                    vals.len() - 1
                ),
            ),
            None => self.fail(
                index,
                "the window of `stencil` is indexed by constants (`w[0]` is the value at the first offset)",
            ),
        }
    }
}
