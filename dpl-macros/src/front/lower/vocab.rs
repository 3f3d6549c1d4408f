//! The everyday vocabulary that is not a primitive of the IR: `reverse`, `concat`,
//! `range(a, b)`, `zip` of more than two sequences, `argmin`/`argmax`, `flatten`, slices
//! `x[a..b]`, `x.to_vec()`, `v.powi(n)`, `const` items and `match`.
//!
//! Each form is lowered here to the primitives and scalar operations the IR has (index
//! arithmetic over `range`, a reduction over `(value, index)` pairs, nested `if`s), so that
//! every place runs it with the code it already has and fusion treats it as any other map:
//! `sum(reverse(x))` is one loop with no temporary. The reads these lowerings make are in
//! range by construction and are emitted unchecked; what the user can get wrong (an empty
//! `argmin`, a slice past the end) is checked explicitly and reported under the form's own
//! name.

use dpl_core::ir::{
    Assertion, BinOp, Block, Const, Expr, Form, Lambda, MathFn, Origin, Prim, Scalar, Type, UnOp,
    VarId,
};
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::callable::captures;
use super::env::Binding;
use super::{Lowerer, call_span, cheap_span};
use crate::front::sig;

/// The names of the forms lowered here that are called like primitives.
pub(super) const FORMS: [&str; 5] = ["reverse", "concat", "argmin", "argmax", "flatten"];

impl Lowerer<'_> {
    /// A call of a vocabulary form named `name`, if it is one (`range` and `zip` only in
    /// their forms that are not primitives: two bounds, more than two sequences).
    pub(super) fn vocab_call(&mut self, name: &str, c: &syn::ExprCall) -> Option<VarId> {
        let n = c.args.len();
        let (arity, form) = match name {
            "reverse" => (1, "reverse(x)"),
            "concat" => (2, "concat(a, b)"),
            "argmin" => (1, "argmin(x)"),
            "argmax" => (1, "argmax(x)"),
            "flatten" => (1, "flatten(rows)"),
            "range" if n == 2 => (2, "range(a, b)"),
            "zip" if n != 2 => (0, "zip(a, b, ...)` with 2 to 8 sequences"),
            _ => return None,
        };
        let bad_count = if arity == 0 {
            !(2..=8).contains(&n)
        } else {
            n != arity
        };
        if bad_count {
            let form = if arity == 0 {
                form.to_string()
            } else {
                format!("{form}`")
            };
            return Some(self.fail(
                c,
                format!("wrong number of arguments for `{name}`: expected `{form}"),
            ));
        }
        let mut args = Vec::with_capacity(n);
        for a in &c.args {
            if self.is_callable(a) {
                self.error(
                    a,
                    format!("`{name}` takes no function argument: this argument must be a value"),
                );
                args.push(self.poison());
            } else if name == "range" {
                args.push(self.usize_value(a, "range bound"));
            } else {
                args.push(self.value(a));
            }
        }
        let span = call_span(c);
        Some(match (name, args.as_slice()) {
            ("reverse", &[x]) => self.reverse(x, span),
            ("concat", &[a, b]) => self.concat(a, b, span),
            ("argmin", &[x]) => self.arg_extreme(x, Form::Argmin, span),
            ("argmax", &[x]) => self.arg_extreme(x, Form::Argmax, span),
            ("flatten", &[rows]) => self.flatten(rows, span),
            ("range", &[a, b]) => self.range_between(a, b, span),
            _ => self.zip_n(&args, span),
        })
    }

    // ----- building blocks -----

    fn usize_const(&mut self, v: i128, span: Span) -> VarId {
        self.emit("lit", Type::usize(), Expr::Const(Const::Int(v)), span)
    }

    fn bool_const(&mut self, v: bool, span: Span) -> VarId {
        self.emit("lit", Type::bool(), Expr::Const(Const::Bool(v)), span)
    }

    fn bin(&mut self, op: BinOp, a: VarId, b: VarId, span: Span) -> VarId {
        let ty = if op.is_comparison() {
            Type::bool()
        } else {
            Type::Infer
        };
        self.emit(super::expr::op_name(op), ty, Expr::Binary(op, a, b), span)
    }

    fn usize_bin(&mut self, op: BinOp, a: VarId, b: VarId, span: Span) -> VarId {
        self.emit(op.name(), Type::usize(), Expr::Binary(op, a, b), span)
    }

    /// `a.min(b)` / `a.max(b)` on `usize`s.
    fn usize_math(&mut self, m: MathFn, a: VarId, b: VarId, span: Span) -> VarId {
        self.emit(m.name(), Type::usize(), Expr::Math(m, vec![a, b]), span)
    }

    /// `map(|i| body(i), range(n))`, named `name`: a sequence computed from its positions.
    fn positions(
        &mut self,
        name: &str,
        n: VarId,
        span: Span,
        body: impl FnOnce(&mut Self, VarId) -> VarId,
    ) -> VarId {
        let r = self.map_range(n, span, body);
        self.rename(r, name);
        r
    }

    /// `seq[i]`, in range by construction.
    pub(super) fn read(&mut self, seq: VarId, i: VarId, span: Span) -> VarId {
        self.emit(
            "elem",
            Type::Infer,
            Expr::Index {
                seq,
                index: i,
                checked: None,
            },
            span,
        )
    }

    /// The value of `e` as a `usize` (a mismatch is reported by type inference, naming the
    /// variable `e` is, or else `what`).
    fn usize_value(&mut self, e: &syn::Expr, what: &str) -> VarId {
        let v = self.value(e);
        let u = self.annotate(v, Type::usize(), cheap_span(e));
        if u != v {
            let name = match super::peel(e) {
                syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                    crate::front::path_text(&p.path)
                }
                _ => what.to_string(),
            };
            self.rename(u, &name);
        }
        u
    }

    fn len(&mut self, seq: VarId, span: Span) -> VarId {
        self.emit("len", Type::usize(), Expr::Len(seq), span)
    }

    /// `if c { then() } else { other() }`.
    fn select(
        &mut self,
        c: VarId,
        then: impl FnOnce(&mut Self) -> VarId,
        other: impl FnOnce(&mut Self) -> VarId,
        span: Span,
    ) -> VarId {
        let t = self.sub_block(then);
        let e = self.sub_block(other);
        self.emit("if", Type::Infer, Expr::If(c, t, e), span)
    }

    /// A lambda of `n` fresh parameters whose body `body` lowers.
    fn make_lambda(
        &mut self,
        n: usize,
        span: Span,
        body: impl FnOnce(&mut Self, &[VarId]) -> VarId,
    ) -> Lambda {
        let params: Vec<VarId> = (0..n)
            .map(|_| self.new_var("arg", Type::Infer, span))
            .collect();
        self.elem_depth += 1;
        let body: Block = self.sub_block(|l| body(l, &params));
        self.elem_depth -= 1;
        let captures = captures(&params, &body);
        Lambda {
            params,
            captures,
            body,
        }
    }

    // ----- the forms -----

    /// `reverse(x)`: `map(|i| x[n - i - 1], range(n))`.
    fn reverse(&mut self, x: VarId, span: Span) -> VarId {
        let n = self.len(x, span);
        self.positions("reverse", n, span, |l, i| {
            let rest = l.usize_bin(BinOp::Sub, n, i, span);
            let one = l.usize_const(1, span);
            let j = l.usize_bin(BinOp::Sub, rest, one, span);
            l.read(x, j, span)
        })
    }

    /// `concat(a, b)`: `map(|i| if i < len(a) { a[i] } else { b[i - len(a)] }, range(..))`.
    fn concat(&mut self, a: VarId, b: VarId, span: Span) -> VarId {
        let na = self.len(a, span);
        let nb = self.len(b, span);
        let n = self.usize_bin(BinOp::Add, na, nb, span);
        self.positions("concat", n, span, |l, i| {
            let first = l.bin(BinOp::Lt, i, na, span);
            l.select(
                first,
                |l| l.read(a, i, span),
                |l| {
                    let j = l.usize_bin(BinOp::Sub, i, na, span);
                    l.read(b, j, span)
                },
                span,
            )
        })
    }

    /// `range(a, b)`: `a, a + 1, ..., b - 1` (empty when `b <= a`, as Rust's `a..b`).
    fn range_between(&mut self, a: VarId, b: VarId, span: Span) -> VarId {
        let hi = self.usize_math(MathFn::Max, a, b, span);
        let n = self.usize_bin(BinOp::Sub, hi, a, span);
        self.positions("range", n, span, |l, i| l.usize_bin(BinOp::Add, a, i, span))
    }

    /// `zip(a, b, c, ...)`: `map(|a, b, c, ...| (a, b, c, ...), a, b, c, ...)`.
    fn zip_n(&mut self, seqs: &[VarId], span: Span) -> VarId {
        let f = self.make_lambda(seqs.len(), span, |l, ps| {
            l.emit("tuple", Type::Infer, Expr::Tuple(ps.to_vec()), span)
        });
        self.emit(
            "zip",
            Type::Infer,
            Expr::Prim {
                prim: Prim::Map,
                lambdas: vec![f],
                args: seqs.to_vec(),
            },
            span,
        )
    }

    /// `argmin(x)` / `argmax(x)`: the index of the first smallest / largest element, as a
    /// reduction over `(x[i], i)` pairs that keeps the better value and, between equal
    /// values, the smaller index (so the order of combination does not matter). NaNs lose
    /// to every number, as in `f32::min`/`f32::max`; an empty `x` is an error.
    fn arg_extreme(&mut self, x: VarId, form: Form, span: Span) -> VarId {
        let n = self.len(x, span);
        self.emit(
            "check",
            Type::unit(),
            Expr::Assert(Assertion::NonEmpty {
                origin: Origin::Form(form),
                len: n,
            }),
            span,
        );
        let zero = self.usize_const(0, span);
        let first = self.read(x, zero, span);
        let init = self.emit("init", Type::Infer, Expr::Tuple(vec![first, zero]), span);
        let pairs = self.map_range(n, span, |l, i| {
            let v = l.read(x, i, span);
            l.emit("pair", Type::Infer, Expr::Tuple(vec![v, i]), span)
        });
        let better = if form == Form::Argmin {
            BinOp::Lt
        } else {
            BinOp::Gt
        };
        let op = self.make_lambda(2, span, |l, ps| {
            let (p, q) = (ps[0], ps[1]);
            let pv = l.emit("v", Type::Infer, Expr::Field(p, 0), span);
            let pi = l.emit("i", Type::usize(), Expr::Field(p, 1), span);
            let qv = l.emit("v", Type::Infer, Expr::Field(q, 0), span);
            let qi = l.emit("i", Type::usize(), Expr::Field(q, 1), span);
            // `v != v` only for a NaN.
            let p_nan = l.bin(BinOp::Ne, pv, pv, span);
            let q_nan = l.bin(BinOp::Ne, qv, qv, span);
            let one_nan = l.bin(BinOp::Ne, p_nan, q_nan, span);
            let take_q = l.select(
                one_nan,
                |_| p_nan,
                |l| {
                    let q_better = l.bin(better, qv, pv, span);
                    l.select(
                        q_better,
                        |l| l.bool_const(true, span),
                        |l| {
                            let p_better = l.bin(better, pv, qv, span);
                            l.select(
                                p_better,
                                |l| l.bool_const(false, span),
                                |l| l.bin(BinOp::Lt, qi, pi, span),
                                span,
                            )
                        },
                        span,
                    )
                },
                span,
            );
            let v = l.select(take_q, |_| qv, |_| pv, span);
            let i = l.select(take_q, |_| qi, |_| pi, span);
            l.emit("best", Type::Infer, Expr::Tuple(vec![v, i]), span)
        });
        let best = self.emit(
            "reduce",
            Type::Infer,
            Expr::Prim {
                prim: Prim::Reduce,
                lambdas: vec![op],
                args: vec![pairs, init],
            },
            span,
        );
        self.emit(form.name(), Type::usize(), Expr::Field(best, 1), span)
    }

    /// `x[a..b]`, `x[a..=b]`, `x[a..]`, `x[..b]`, `x[..]`: a view of `x` (a `map` of reads
    /// that fuses with its reader, so nothing is copied). `a <= b <= len(x)` is checked,
    /// as one bounds check that reports the offending bound (`b` against `len(x)`, or `a`
    /// against `b`); the view's own bounds are clamped so that its reads stay inside `x`
    /// wherever the check is reported.
    pub(super) fn slice(&mut self, seq: &syn::Expr, r: &syn::ExprRange, span: Span) -> VarId {
        let x = self.value(seq);
        let n = self.len(x, span);
        let start = match &r.start {
            Some(a) => self.usize_value(a, "slice start"),
            None => self.usize_const(0, span),
        };
        let end = match (&r.end, &r.limits) {
            (Some(b), limits) => {
                let v = self.usize_value(b, "slice end");
                if let syn::RangeLimits::Closed(_) = limits {
                    let one = self.usize_const(1, span);
                    self.usize_bin(BinOp::Add, v, one, span)
                } else {
                    v
                }
            }
            (None, _) => n,
        };
        let end_bad = self.bin(BinOp::Gt, end, n, span);
        let start_bad = self.bin(BinOp::Gt, start, end, span);
        // Index and bound of the one check: (end, len) or (start, end) when that is
        // violated, else (0, 1), which passes.
        let index = self.select(
            end_bad,
            |_| end,
            |l| l.select(start_bad, |_| start, |l| l.usize_const(0, span), span),
            span,
        );
        let bound = self.select(
            end_bad,
            |_| n,
            |l| l.select(start_bad, |_| end, |l| l.usize_const(1, span), span),
            span,
        );
        self.emit(
            "check",
            Type::unit(),
            Expr::Assert(Assertion::InBounds {
                origin: Origin::Form(Form::Slice),
                index,
                len: bound,
            }),
            span,
        );
        let hi = self.usize_math(MathFn::Min, end, n, span);
        let lo = self.usize_math(MathFn::Min, start, hi, span);
        let m = self.usize_bin(BinOp::Sub, hi, lo, span);
        self.positions("slice", m, span, |l, i| {
            let j = l.usize_bin(BinOp::Add, lo, i, span);
            l.read(x, j, span)
        })
    }

    /// `flatten(rows)`: the values of the rows in order. Element `k` belongs to the row
    /// `seg[k]` that starts at or before it: the row starts (`exclusive_scan` of the row
    /// lengths) are marked with their row numbers (`scatter_reduce` with `max`, so that of
    /// empty rows sharing a start the last, non-empty one wins) and `scan` with `max` carries
    /// each mark to the end of its row; then `y[k] = rows[seg[k]][k - start[seg[k]]]`.
    fn flatten(&mut self, rows: VarId, span: Span) -> VarId {
        let n = self.len(rows, span);
        let lens = self.map_range(n, span, |l, i| {
            let row = l.read(rows, i, span);
            l.len(row, span)
        });
        let zero = self.usize_const(0, span);
        let max_op = |l: &mut Self| {
            l.make_lambda(2, span, |l, ps| {
                l.usize_math(MathFn::Max, ps[0], ps[1], span)
            })
        };
        let add = self.make_lambda(2, span, |l, ps| l.usize_bin(BinOp::Add, ps[0], ps[1], span));
        let starts = self.emit(
            "starts",
            Type::seq(Type::usize()),
            Expr::Prim {
                prim: Prim::ExclusiveScan,
                lambdas: vec![add],
                args: vec![lens, zero],
            },
            span,
        );
        let total = self.prim_on(Prim::Sum, Vec::new(), vec![lens], span);
        let total = self.annotate(total, Type::usize(), span);
        // One slot past the end, for the starts of empty rows at the end.
        let one = self.usize_const(1, span);
        let slots = self.usize_bin(BinOp::Add, total, one, span);
        let blank = self.prim_on(Prim::Replicate, Vec::new(), vec![zero, slots], span);
        let ids = self.map_range(n, span, |_, i| i);
        let op = max_op(self);
        let marks = self.emit(
            "marks",
            Type::seq(Type::usize()),
            Expr::Prim {
                prim: Prim::ScatterReduce,
                lambdas: vec![op],
                args: vec![ids, starts, blank],
            },
            span,
        );
        let op = max_op(self);
        let seg = self.emit(
            "row_of",
            Type::seq(Type::usize()),
            Expr::Prim {
                prim: Prim::Scan,
                lambdas: vec![op],
                args: vec![marks],
            },
            span,
        );
        self.positions("flatten", total, span, |l, k| {
            let r = l.read(seg, k, span);
            let start = l.read(starts, r, span);
            let j = l.usize_bin(BinOp::Sub, k, start, span);
            let row = l.read(rows, r, span);
            l.read(row, j, span)
        })
    }

    /// `x.to_vec()`: the same sequence.
    pub(super) fn same_sequence(&mut self, m: &syn::ExprMethodCall) -> VarId {
        if !m.args.is_empty() {
            return self.fail(&m.args, "`to_vec` takes no arguments: `x.to_vec()`");
        }
        let v = self.value(&m.receiver);
        self.emit(
            "to_vec",
            Type::seq(Type::Infer),
            Expr::Var(v),
            m.method.span(),
        )
    }

    /// `v.powi(n)`: `v` multiplied by itself `|n|` times (inverted for a negative `n`) by
    /// binary powering, in the order of Rust's own `powi` (compiler-rt's `__powisf2`), so
    /// every place gives its bits. A literal exponent is unrolled to its bits; any other
    /// runs through all 32 bits of `|n|`.
    pub(super) fn powi(&mut self, m: &syn::ExprMethodCall) -> VarId {
        let span = m.method.span();
        if m.args.len() != 1 {
            return self.fail(m, "`powi` takes 1 argument: `x.powi(n)` with `n: i32`");
        }
        let v = self.value(&m.receiver);
        let e = &m.args[0];
        if let Some(k) = int_literal(e) {
            let Ok(k) = i32::try_from(k) else {
                return self.fail(
                    e,
                    "the exponent of `powi` is an `i32`: this literal is out of range",
                );
            };
            let r = self.power(v, u64::from(k.unsigned_abs()), None, span);
            if k >= 0 {
                return r;
            }
            let one = self.emit("lit", Type::Infer, Expr::Const(Const::Float(1.0)), span);
            return self.bin(BinOp::Div, one, r, span);
        }
        let n = self.value(e);
        let n = self.annotate(n, Type::Scalar(Scalar::I32), cheap_span(e));
        let zero = self.emit(
            "lit",
            Type::Scalar(Scalar::I32),
            Expr::Const(Const::Int(0)),
            span,
        );
        let negative = self.bin(BinOp::Lt, n, zero, span);
        // |n| as u32: the wrapping negation of i32::MIN is itself, 2^31 as a u32.
        let abs = self.select(
            negative,
            |l| {
                l.emit(
                    "neg",
                    Type::Scalar(Scalar::I32),
                    Expr::Unary(UnOp::Neg, n),
                    span,
                )
            },
            |_| n,
            span,
        );
        let bits = self.emit(
            "abs",
            Type::Scalar(Scalar::U32),
            Expr::Cast(abs, Scalar::U32),
            span,
        );
        let r = self.power(v, u64::from(u32::MAX), Some(bits), span);
        self.select(
            negative,
            |l| {
                let one = l.emit("lit", Type::Infer, Expr::Const(Const::Float(1.0)), span);
                l.bin(BinOp::Div, one, r, span)
            },
            |_| r,
            span,
        )
    }

    /// `v` to the power `bits` by binary powering: with `dynamic`, the bits of that `u32`
    /// (`bits` then being the mask of the bits to look at), otherwise the constant `bits`.
    fn power(&mut self, v: VarId, bits: u64, dynamic: Option<VarId>, span: Span) -> VarId {
        let top = 64 - bits.leading_zeros();
        let mut r: Option<VarId> = None;
        let mut a = v;
        for k in 0..top {
            match dynamic {
                None if bits >> k & 1 == 1 => {
                    r = Some(match r {
                        None => a,
                        Some(r) => self.bin(BinOp::Mul, r, a, span),
                    });
                }
                None => {}
                Some(n) => {
                    let u32_ty = Type::Scalar(Scalar::U32);
                    let shift = self.emit(
                        "lit",
                        u32_ty.clone(),
                        Expr::Const(Const::Int(k.into())),
                        span,
                    );
                    let one = self.emit("lit", u32_ty.clone(), Expr::Const(Const::Int(1)), span);
                    let shifted = self.emit(
                        "shr",
                        u32_ty.clone(),
                        Expr::Binary(BinOp::Shr, n, shift),
                        span,
                    );
                    let bit = self.emit(
                        "and",
                        u32_ty,
                        Expr::Binary(BinOp::BitAnd, shifted, one),
                        span,
                    );
                    let set = self.bin(BinOp::Eq, bit, one, span);
                    let r_now = match r {
                        Some(r) => r,
                        None => self.one_like(v, span),
                    };
                    r = Some(self.select(
                        set,
                        |l| l.bin(BinOp::Mul, r_now, a, span),
                        |_| r_now,
                        span,
                    ));
                }
            }
            if k + 1 < top {
                a = self.bin(BinOp::Mul, a, a, span);
            }
        }
        match r {
            Some(r) => r,
            None => self.one_like(v, span),
        }
    }

    /// `1` of the type of the float `v` (`if true { 1.0 } else { v }`, which inference
    /// types as `v`).
    fn one_like(&mut self, v: VarId, span: Span) -> VarId {
        let t = self.bool_const(true, span);
        self.select(
            t,
            |l| l.emit("lit", Type::Infer, Expr::Const(Const::Float(1.0)), span),
            |_| v,
            span,
        )
    }

    /// `const N: T = e;` items of a block: visible in the whole block (its nested `fn`s
    /// included), evaluated first, in order; `e` sees only the constants before it (and
    /// the constants of enclosing blocks), as in Rust it sees no local variable.
    pub(super) fn register_consts(&mut self, stmts: &[syn::Stmt]) {
        for s in stmts {
            let syn::Stmt::Item(syn::Item::Const(c)) = s else {
                continue;
            };
            for attr in &c.attrs {
                if !super::harmless_attr(attr) {
                    self.error(
                        attr,
                        "attributes are not supported on `const` items in #[parallel] code",
                    );
                }
            }
            if !matches!(c.vis, syn::Visibility::Inherited) {
                self.error(
                    &c.vis,
                    "a `const` inside a body is private to it: remove the visibility",
                );
            }
            if !c.generics.params.is_empty() {
                self.error(&c.generics, "a `const` cannot be generic");
            }
            let ty = sig::annotation(&c.ty, &mut self.errors);
            let env = std::mem::replace(&mut self.env, self.items.clone());
            let was = std::mem::replace(&mut self.in_const, true);
            let v = self.value(&c.expr);
            self.in_const = was;
            self.env = env;
            let v = self.annotate(v, ty, c.ty.span());
            let v = self.emit("const", Type::Infer, Expr::Var(v), c.ident.span());
            let name = c.ident.unraw().to_string();
            self.rename(v, &name);
            self.env = self.env.with(name.clone(), Binding::Value(v));
            self.items = self.items.with(name, Binding::Value(v));
        }
    }

    /// `match v { pats => e, ... }` on an integer or a `bool`: a chain of `if`s. Patterns:
    /// literals, `a..=b` / `a..b` / `a..` / `..=b` ranges, `p | q` and `_`. Without a `_`
    /// arm the arms must be `true` and `false`.
    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch) -> VarId {
        let span = m.match_token.span;
        let v = self.value(&m.expr);
        let mut catch_all = None;
        for (k, arm) in m.arms.iter().enumerate() {
            if let Some((if_token, _)) = &arm.guard {
                self.error(
                    if_token,
                    "match guards are not supported: use `if` inside the arm",
                );
            }
            if catch_all.is_none() && always(&arm.pat) {
                catch_all = Some(k);
            }
        }
        // Arms after a `_` are never taken.
        let arms = &m.arms[..catch_all.map_or(m.arms.len(), |k| k + 1)];
        if arms.is_empty() {
            return self.fail(m, "a `match` needs at least one arm");
        }
        let exhaustive_bool = catch_all.is_none() && covers_bools(arms);
        if catch_all.is_none() && !exhaustive_bool {
            return self.fail(
                &m.match_token,
                "non-exhaustive `match`: add a last arm `_ => ...` (a match on an integer needs one; on a `bool`, arms for `true` and `false` suffice)",
            );
        }
        self.match_arms(v, arms, span)
    }

    /// The `if` chain for `arms`, whose last arm is taken without a test.
    fn match_arms(&mut self, v: VarId, arms: &[syn::Arm], span: Span) -> VarId {
        let Some((arm, rest)) = arms.split_first() else {
            return self.poison();
        };
        if rest.is_empty() {
            // `_`, or the last arm of an exhaustive match on a bool (or a binding, an
            // error: reported, then bound to `v` for the body, whose errors are reported
            // too).
            let env = self.env.clone();
            let _ = self.pat_test(v, &arm.pat);
            let r = self.value(&arm.body);
            self.env = env;
            return r;
        }
        let Some(c) = self.pat_test(v, &arm.pat) else {
            // An error (reported): report those of the other arms too.
            let _ = self.match_arms(v, rest, span);
            return self.poison();
        };
        self.select(
            c,
            |l| l.value(&arm.body),
            |l| l.match_arms(v, rest, span),
            span,
        )
    }

    /// Whether `v` matches `pat`, as a `bool` variable; `None` after an error (reported) or
    /// for `_` (always).
    fn pat_test(&mut self, v: VarId, pat: &syn::Pat) -> Option<VarId> {
        let span = pat.span();
        match pat {
            syn::Pat::Wild(_) => None,
            syn::Pat::Paren(p) => self.pat_test(v, &p.pat),
            syn::Pat::Lit(l) => {
                let lit = self.pattern_literal(l)?;
                Some(self.bin(BinOp::Eq, v, lit, span))
            }
            syn::Pat::Range(r) => {
                let lo = match &r.start {
                    Some(e) => Some(self.bound(e)?),
                    None => None,
                };
                let hi = match &r.end {
                    Some(e) => Some(self.bound(e)?),
                    None => None,
                };
                let hi_op = match r.limits {
                    syn::RangeLimits::Closed(_) => BinOp::Le,
                    syn::RangeLimits::HalfOpen(_) => BinOp::Lt,
                };
                let above = lo.map(|lo| self.bin(BinOp::Ge, v, lo, span));
                match (above, hi) {
                    (Some(a), Some(hi)) => Some(self.select(
                        a,
                        |l| l.bin(hi_op, v, hi, span),
                        |l| l.bool_const(false, span),
                        span,
                    )),
                    (Some(a), None) => Some(a),
                    (None, Some(hi)) => Some(self.bin(hi_op, v, hi, span)),
                    (None, None) => None,
                }
            }
            syn::Pat::Or(o) => {
                let mut cases = o.cases.iter();
                let first = cases.next()?;
                let mut acc = self.pat_test(v, first);
                for case in cases {
                    let Some(a) = acc else {
                        // `_ | p` matches everything.
                        return None;
                    };
                    let case = case.clone();
                    let mut always = false;
                    let r = self.select(
                        a,
                        |l| l.bool_const(true, span),
                        |l| match l.pat_test(v, &case) {
                            Some(c) => c,
                            None => {
                                always = true;
                                l.bool_const(true, span)
                            }
                        },
                        span,
                    );
                    acc = if always { None } else { Some(r) };
                }
                acc
            }
            syn::Pat::Ident(i) => {
                self.error(
                    i,
                    format!(
                        "`{}` in a pattern is not supported: match on literals, ranges such as `1..=9`, `p | q` and `_` (bind the value with `let` before the `match`)",
                        i.ident
                    ),
                );
                self.env = self
                    .env
                    .with(i.ident.unraw().to_string(), Binding::Value(v));
                None
            }
            other => {
                self.error(
                    other,
                    "this pattern is not supported: a `match` on an integer or a `bool` takes literals, ranges such as `1..=9`, `p | q` and `_`",
                );
                None
            }
        }
    }

    /// A literal of a pattern: an integer (maybe negative) or a `bool`.
    fn pattern_literal(&mut self, l: &syn::ExprLit) -> Option<VarId> {
        match &l.lit {
            syn::Lit::Int(_) | syn::Lit::Bool(_) => Some(self.value(&syn::Expr::Lit(l.clone()))),
            other => {
                self.error(other, "only integer and `bool` literals can be matched");
                None
            }
        }
    }

    /// A bound of a range pattern: an integer literal or a constant bound in the body.
    fn bound(&mut self, e: &syn::Expr) -> Option<VarId> {
        match e {
            syn::Expr::Lit(l) if matches!(l.lit, syn::Lit::Int(_)) => Some(self.value(e)),
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let before = self.error_count();
                let v = self.value(e);
                (self.error_count() == before).then_some(v)
            }
            _ => {
                self.error(
                    e,
                    "a range pattern's bounds are integer literals or constants",
                );
                None
            }
        }
    }
}

/// Whether a pattern matches every value: `_`, or an or-pattern with a `_`. (A binding
/// such as `n` would too, in Rust; it is reported where the arm is lowered.)
fn always(p: &syn::Pat) -> bool {
    match peel_pat(p) {
        syn::Pat::Wild(_) | syn::Pat::Ident(_) => true,
        syn::Pat::Or(o) => o.cases.iter().any(always),
        _ => false,
    }
}

/// Strips parentheses from a pattern.
fn peel_pat(p: &syn::Pat) -> &syn::Pat {
    match p {
        syn::Pat::Paren(q) => peel_pat(&q.pat),
        _ => p,
    }
}

/// Whether the arms match both `true` and `false` (so a match on a `bool` is exhaustive).
fn covers_bools(arms: &[syn::Arm]) -> bool {
    fn note(p: &syn::Pat, seen: &mut [bool; 2]) {
        match peel_pat(p) {
            syn::Pat::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => seen[usize::from(b.value)] = true,
            syn::Pat::Or(o) => o.cases.iter().for_each(|c| note(c, seen)),
            _ => {}
        }
    }
    let mut seen = [false; 2];
    for arm in arms {
        note(&arm.pat, &mut seen);
    }
    seen == [true, true]
}

/// The value of an integer literal, maybe negated (`3`, `-2`, `(4)`).
fn int_literal(e: &syn::Expr) -> Option<i128> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) if matches!(i.suffix(), "" | "i32") => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => int_literal(expr).map(|v| -v),
        syn::Expr::Paren(p) => int_literal(&p.expr),
        syn::Expr::Group(g) => int_literal(&g.expr),
        _ => None,
    }
}
