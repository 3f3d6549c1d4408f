//! Expressions: literals, names and constants, operators, casts, `if`, blocks, tuples and indexing.

use dpl_core::ir::{BinOp, Bound, Const, Expr, Origin, Prim, Scalar, Type, UnOp, VarId};
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use super::env::Binding;
use super::scalar::const_path;
use super::{Lowerer, cheap_span, path_span, peel};
use crate::front::{path_text, sig};

const CLOSURE_NOT_VALUE: &str = "a function is not a value here: closures and functions can be passed to primitives, bound with `let f = ...;`, or called";

impl Lowerer<'_> {
    /// Lowers an expression to the variable holding its value.
    pub(super) fn value(&mut self, e: &syn::Expr) -> VarId {
        use syn::Expr as E;
        match e {
            E::Lit(l) => self.literal(&l.lit, false),
            E::Path(p) => self.path_value(p),
            E::Paren(p) => self.value(&p.expr),
            E::Group(g) => self.value(&g.expr),
            E::Tuple(t) => {
                if t.elems.is_empty() {
                    return self.fail(e, "the unit value `()` is not supported: every expression must produce a value");
                }
                let vs: Vec<VarId> = t.elems.iter().map(|x| self.value(x)).collect();
                self.emit("tuple", Type::Infer, Expr::Tuple(vs), cheap_span(e))
            }
            E::Field(f) => match &f.member {
                syn::Member::Unnamed(i) => {
                    let v = self.value(&f.base);
                    self.emit("field", Type::Infer, Expr::Field(v, i.index), cheap_span(e))
                }
                syn::Member::Named(n) => self.fail(n, "named fields are not supported: tuple fields are written `t.0`"),
            },
            E::Block(b) => {
                if let Some(l) = &b.label {
                    return self.fail(l, "labeled blocks are not supported");
                }
                self.block_value(&b.block)
            }
            E::If(i) => self.if_expr(i),
            E::Binary(b) => self.binary(b),
            E::Unary(u) => self.unary(u),
            E::Cast(c) => {
                let v = self.value(&c.expr);
                match sig::scalar_of(&c.ty) {
                    Some(Scalar::Bool) => self.fail(&c.ty, "cannot cast to `bool`: compare instead, such as `x != 0`"),
                    Some(s) => self.emit("cast", Type::Scalar(s), Expr::Cast(v, s), cheap_span(e)),
                    None => {
                        let allowed = Scalar::names_where(|s| s != Scalar::Bool);
                        self.fail(&c.ty, format!("`as` converts between scalar types only: {allowed}"))
                    }
                }
            }
            E::Index(i) => {
                if let E::Range(r) = peel(&i.index) {
                    return self.slice(&i.expr, r, cheap_span(e));
                }
                let seq = self.value(&i.expr);
                if let Some(vals) = self.windows.get(seq) {
                    let vals = vals.to_vec();
                    return self.window_elem(&vals, &i.index);
                }
                let index = self.value(&i.index);
                self.emit("elem", Type::Infer, Expr::Index { seq, index, checked: Some(Origin::Index) }, cheap_span(e))
            }
            E::MethodCall(m) => self.method_call(m),
            E::Call(c) => self.call(c),
            E::Reference(r) => {
                if let Some(m) = &r.mutability {
                    return self.fail(m, "`&mut` references are not supported: declare the variable with `let mut x` and assign to `x` directly");
                }
                self.value(&r.expr)
            }
            E::Closure(_) => self.fail(e, CLOSURE_NOT_VALUE),
            E::Array(_) | E::Repeat(_) => self.fail(e, "array expressions are not supported: use a sequence parameter, `replicate(v, n)` or `range(n)`"),
            E::Assign(_) => self.fail(e, "an assignment gives no value: write it as a statement (`x = ...;`) and end the block with the expression that gives its value"),
            E::Async(_) | E::Await(_) => self.fail(e, "async code is not supported in #[parallel] functions"),
            E::Break(_) => self.exit_in_value(e, "break"),
            E::Continue(_) => self.exit_in_value(e, "continue"),
            E::ForLoop(_) | E::While(_) => {
                let before = self.error_count();
                self.effect(e, false);
                if self.error_count() > before {
                    return self.poison();
                }
                self.fail(e, "a `for` or `while` loop gives no value: end the block with the expression that gives its value (such as a variable the loop changed)")
            }
            E::Loop(l) => {
                let before = self.error_count();
                match self.loop_loop(l) {
                    Some(v) => v,
                    None if self.error_count() > before => self.poison(),
                    None => self.fail(&l.loop_token, "this `loop` gives no value: leave it with `break value`, or use it as a statement"),
                }
            }
            E::Match(m) => self.match_expr(m),
            E::Let(_) => self.fail(e, "`let` expressions (`if let`) are not supported: use `if c { a } else { b }`"),
            E::Macro(m) => self.fail(&m.mac, "macros are not supported in #[parallel] code"),
            E::Range(_) => self.fail(e, "ranges are not supported: use `range(n)` for the sequence 0..n"),
            E::Return(r) if !self.loops.is_empty() => self.fail(&r.return_token, "`return` inside a loop is not supported: leave the loop with `break` (`break value` in a `loop`) and end the function with the value"),
            E::Return(r) => self.fail(&r.return_token, "`return` is not allowed: the value of the body is its final expression"),
            E::Struct(_) => self.fail(e, "struct literals are not supported: use tuples"),
            E::Try(t) => self.fail(
                &t.question_token,
                "`?` is not part of the language: declare the function to return `Result<T, dpl::Error>` and write the body as for `T`",
            ),
            E::TryBlock(_) => self.fail(e, "`try` blocks are not supported"),
            E::Unsafe(u) => self.fail(&u.unsafe_token, "`unsafe` blocks are not allowed in #[parallel] code"),
            E::Yield(_) => self.fail(e, "`yield` is not supported"),
            E::Const(_) => self.fail(e, "`const` blocks are not supported"),
            E::Infer(_) => self.fail(e, "`_` is not a value"),
            _ => self.fail(e, "this expression is not supported in #[parallel] code"),
        }
    }

    fn literal(&mut self, lit: &syn::Lit, negate: bool) -> VarId {
        let span = lit.span();
        match lit {
            syn::Lit::Bool(b) => self.emit("lit", Type::bool(), Expr::Const(Const::Bool(b.value)), span),
            syn::Lit::Int(li) => {
                let suffix = li.suffix();
                if Scalar::from_name(suffix).is_some_and(Scalar::is_float) {
                    return self.float_literal(li.base10_digits(), suffix, negate, lit);
                }
                let scalar = match suffix {
                    "" => None,
                    s => match Scalar::from_name(s) {
                        Some(sc) if sc.is_int() => Some(sc),
                        _ => {
                            let allowed = Scalar::names_where(|s| s != Scalar::Bool);
                            return self.fail(lit, format!("unsupported literal suffix `{s}`; allowed: {allowed}"));
                        }
                    },
                };
                let Ok(v) = li.base10_parse::<i128>() else {
                    return self.fail(lit, "integer literal is too large");
                };
                let v = if negate { -v } else { v };
                // Without a suffix the type is inferred later, where the range is checked again.
                let (lo, hi) = scalar.map_or((i64::MIN.into(), u64::MAX.into()), Scalar::int_range);
                if v < lo || v > hi {
                    let ty = scalar.map_or("any dpl integer type".to_string(), |s| format!("`{s}`"));
                    return self.fail(lit, format!("literal out of range for {ty}"));
                }
                let ty = match scalar {
                    Some(s) => Type::Scalar(s),
                    // In an inlined generic body: any number type (see `generic_call`).
                    None if self.generic.depth > 0 => {
                        Type::Param(self.generic.fresh_param(), Bound::Num)
                    }
                    None => Type::Infer,
                };
                self.emit("lit", ty, Expr::Const(Const::Int(v)), span)
            }
            syn::Lit::Float(lf) => {
                let suffix = lf.suffix();
                if !(suffix.is_empty() || Scalar::from_name(suffix).is_some_and(Scalar::is_float)) {
                    let allowed = Scalar::names_where(Scalar::is_float);
                    return self.fail(lit, format!("unsupported literal suffix `{suffix}`; allowed: {allowed}"));
                }
                self.float_literal(lf.base10_digits(), suffix, negate, lit)
            }
            _ => self.fail(lit, "string, character and byte literals are not supported: dpl values are numbers, booleans, tuples and sequences"),
        }
    }

    fn float_literal(&mut self, digits: &str, suffix: &str, negate: bool, lit: &syn::Lit) -> VarId {
        use dpl_core::float16::{bf16, f16, from_f64};
        let parsed = match suffix {
            "f32" => digits
                .parse::<f32>()
                .ok()
                .filter(|v| v.is_finite())
                .map(f64::from),
            // The value rounds to the 16-bit type where it is used (from this `f64`).
            "f16" => digits
                .parse::<f64>()
                .ok()
                .filter(|&v| from_f64::<f16>(v).is_finite()),
            "bf16" => digits
                .parse::<f64>()
                .ok()
                .filter(|&v| from_f64::<bf16>(v).is_finite()),
            _ => digits.parse::<f64>().ok().filter(|v| v.is_finite()),
        };
        let Some(v) = parsed else {
            return self.fail(lit, "floating-point literal out of range");
        };
        let v = if negate { -v } else { v };
        let ty = Scalar::from_name(suffix).map_or(Type::Infer, Type::Scalar);
        self.emit("lit", ty, Expr::Const(Const::Float(v)), lit.span())
    }

    fn path_value(&mut self, p: &syn::ExprPath) -> VarId {
        if p.qself.is_some() {
            return self.fail(p, "qualified paths (`<T>::x`) are not supported");
        }
        if let Some(ident) = p.path.get_ident() {
            let name = ident.unraw().to_string();
            return match self.env.lookup(&name) {
                Some(Binding::Value(v) | Binding::Captured(v)) => {
                    let v = *v;
                    self.check_break_read(v, None, p)
                }
                Some(Binding::Mut(slot)) => {
                    let slot = *slot;
                    match self.mut_value(slot) {
                        Some(v) => self.check_break_read(v, Some(slot), p),
                        None => self.poison(),
                    }
                }
                Some(Binding::Callable(_)) => self.fail(p, CLOSURE_NOT_VALUE),
                None if Prim::from_name(&name).is_some() => self.fail(
                    p,
                    format!(
                        "`{name}` is a primitive: call it, as in `{name}(...)`, or pass it to `map`"
                    ),
                ),
                None => {
                    let hint = if self.in_const {
                        ": the value of a `const` can only use literals and other constants"
                    } else if self.fn_depth > 0 {
                        " (a nested `fn` cannot use the local variables of the enclosing function: use a closure)"
                    } else {
                        ": a #[parallel] body sees only its parameters and what it binds itself, not the items of the enclosing module; pass it as a parameter or bind it inside the body (`let` or `const`)"
                    };
                    self.fail(p, format!("cannot find `{name}` in this scope{hint}"))
                }
            };
        }
        if let Some((c, s)) = const_path(&p.path) {
            return self.emit("const", Type::Scalar(s), Expr::Const(c), path_span(&p.path));
        }
        if self.as_callable(&syn::Expr::Path(p.clone())).is_some() {
            return self.fail(p, CLOSURE_NOT_VALUE);
        }
        let text = path_text(&p.path);
        self.fail(
            p,
            format!("`{text}` is not supported: a #[parallel] body can use its parameters, its local bindings and constants such as `f32::MAX` or `f64::consts::PI`; pass the value as a parameter or bind it inside the body (`let` or `const`)"),
        )
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> VarId {
        let c = self.value(&i.cond);
        let Some((_, else_branch)) = &i.else_branch else {
            return self.fail(
                &i.if_token,
                "`if` without `else` has no value: add an `else` branch",
            );
        };
        self.merge_if(
            c,
            |s| Some(s.block_value(&i.then_branch)),
            |s| Some(s.value(else_branch)),
            "if",
            i.if_token.span,
        )
        .unwrap_or_else(|| self.poison())
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> VarId {
        use syn::BinOp as B;
        let span = b.op.span();
        let op = match b.op {
            B::And(_) | B::Or(_) => {
                let is_and = matches!(b.op, B::And(_));
                let c = self.value(&b.left);
                let rhs = self.sub_block(|s| s.value(&b.right));
                let constant = self.sub_block(|s| {
                    s.emit("lit", Type::bool(), Expr::Const(Const::Bool(!is_and)), span)
                });
                let (t, e) = if is_and {
                    (rhs, constant)
                } else {
                    (constant, rhs)
                };
                return self.emit(
                    if is_and { "and" } else { "or" },
                    Type::bool(),
                    Expr::If(c, t, e),
                    span,
                );
            }
            B::Add(_) => BinOp::Add,
            B::Sub(_) => BinOp::Sub,
            B::Mul(_) => BinOp::Mul,
            B::Div(_) => BinOp::Div,
            B::Rem(_) => BinOp::Rem,
            B::BitAnd(_) => BinOp::BitAnd,
            B::BitOr(_) => BinOp::BitOr,
            B::BitXor(_) => BinOp::BitXor,
            B::Shl(_) => BinOp::Shl,
            B::Shr(_) => BinOp::Shr,
            B::Eq(_) => BinOp::Eq,
            B::Ne(_) => BinOp::Ne,
            B::Lt(_) => BinOp::Lt,
            B::Le(_) => BinOp::Le,
            B::Gt(_) => BinOp::Gt,
            B::Ge(_) => BinOp::Ge,
            _ => {
                return self.fail(
                    &b.op,
                    "a compound assignment gives no value: write it as a statement (`x += ...;`) and end the block with the expression that gives its value",
                );
            }
        };
        let l = self.value(&b.left);
        let r = self.value(&b.right);
        let ty = if op.is_comparison() {
            Type::bool()
        } else {
            Type::Infer
        };
        self.emit(op_name(op), ty, Expr::Binary(op, l, r), span)
    }

    fn unary(&mut self, u: &syn::ExprUnary) -> VarId {
        match u.op {
            syn::UnOp::Neg(_) => {
                if let syn::Expr::Lit(l) = &*u.expr
                    && matches!(l.lit, syn::Lit::Int(_) | syn::Lit::Float(_))
                {
                    return self.literal(&l.lit, true);
                }
                let v = self.value(&u.expr);
                self.emit("neg", Type::Infer, Expr::Unary(UnOp::Neg, v), u.op.span())
            }
            syn::UnOp::Not(_) => {
                let v = self.value(&u.expr);
                self.emit("not", Type::Infer, Expr::Unary(UnOp::Not, v), u.op.span())
            }
            // Values are never references in the DSL: `*v` is `v`.
            syn::UnOp::Deref(_) => self.value(&u.expr),
            _ => self.fail(&u.op, "this operator is not supported"),
        }
    }
}

/// A readable variable name for the result of a binary operator: its name in the text
/// form, `cmp` for the comparisons.
pub(super) fn op_name(op: BinOp) -> &'static str {
    if op.is_comparison() { "cmp" } else { op.name() }
}
