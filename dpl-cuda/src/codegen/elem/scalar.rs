//! Scalar operations: constants, unary and binary operators (wrapping integers, checked
//! division), Rust's `as` casts, and math functions (see [`super::math`]). `f16` and `bf16`
//! are held as their exact `f32` value: an operation on them is the `f32` one on the same
//! register, rounded once ([`Kernel::round_half`], whose NaN is canonical; only loads and
//! stores keep a moved NaN's payload, see "16-bit floats" in `codegen/README.md`).

use super::*;

/// The register of a 16-bit float (held as its `f32` value) seen as an `f32`.
fn f32_of(r: &Reg) -> Reg {
    Reg {
        ty: Scalar::F32,
        ..r.clone()
    }
}

/// Whether the math function `m` of 16-bit floats gives a 16-bit float of the same type
/// when computed in `f32`, its NaN canonical: then it needs no rounding. `abs` and the
/// selections `min` and `max` give an operand's value; `floor ceil trunc round` an
/// integer no larger in magnitude than the next one up, and every integer up to the point
/// where the type's values are all integers (2^11 for `f16`, 2^8 for `bf16`) is one of
/// its values.
fn exact_on_halves(m: MathFn) -> bool {
    use MathFn::*;
    matches!(m, Abs | Min | Max | Floor | Ceil | Trunc | Round)
}

impl<'f> Gen<'f> {
    pub(super) fn constant(k: &mut Kernel, s: Scalar, c: Const) -> R<Reg> {
        let r = k.reg(s);
        match (c, s) {
            (Const::Bool(b), Scalar::Bool) => {
                let cmp = if b { Cmp::Eq } else { Cmp::Ne };
                k.emit(Ins::setp(cmp, Ty::U32, &r, 0, 0))
            }
            (Const::Float(x), Scalar::F32 | Scalar::F64) => {
                k.emit(Ins::mov(arith(s), &r, Src::float(s, x)))
            }
            (Const::Float(x), s) if s.is_half() => {
                // Rounded here as every place rounds it.
                let v = if s == Scalar::F16 {
                    dpl_core::float16::from_f64::<dpl_core::float16::f16>(x).to_f64()
                } else {
                    dpl_core::float16::from_f64::<dpl_core::float16::bf16>(x).to_f64()
                };
                k.emit(Ins::mov(Ty::F32, &r, Src::float(s, v)))
            }
            (Const::Int(i), s) if s.is_int() => {
                let bitsv = if width(s) == 32 {
                    (i as u32) as u64
                } else {
                    i as u64
                };
                k.emit(Ins::mov(bits(s), &r, Src::hex(bitsv)))
            }
            _ => return unsupported(format!("the constant {c:?} of type {s}")),
        }
        Ok(r)
    }

    pub(super) fn unary(k: &mut Kernel, op: UnOp, x: &Reg) -> Reg {
        if x.ty.is_half() {
            // `-x` is exact and its NaN already canonical: no rounding.
            let w = Self::unary(k, op, &f32_of(x));
            return Reg { ty: x.ty, ..w };
        }
        let r = k.reg(x.ty);
        match (op, x.ty) {
            (UnOp::Not, Scalar::Bool) => k.emit(Ins::not(Ty::Pred, &r, x)),
            (UnOp::Not, s) => k.emit(Ins::not(bits(s), &r, x)),
            (UnOp::Neg, s) if s.is_float() => {
                k.emit(Ins::neg(arith(s), &r, x));
                k.canon(&r);
            }
            (UnOp::Neg, s) => {
                let t = if width(s) == 32 { Ty::S32 } else { Ty::S64 };
                k.emit(Ins::neg(t, &r, x))
            }
        }
        k.wrap(&r);
        r
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn binary(
        &mut self,
        k: &mut Kernel,
        ctx: &Ctx,
        op: BinOp,
        a: &Reg,
        b: &Reg,
        span: u32,
    ) -> R<Reg> {
        use BinOp::*;
        let s = a.ty;
        if s.is_half() {
            let r = self.binary(k, ctx, op, &f32_of(a), &f32_of(b), span)?;
            return Ok(if op.is_comparison() {
                r
            } else {
                k.round_half(&r, s)
            });
        }
        if op.is_comparison() {
            let r = k.reg(Scalar::Bool);
            if s == Scalar::Bool {
                let x = k.reg(Scalar::Bool);
                let (na, nb) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
                k.emit(Ins::not(Ty::Pred, &na, a));
                k.emit(Ins::not(Ty::Pred, &nb, b));
                match op {
                    Eq => {
                        k.emit(Ins::xor(Ty::Pred, &x, a, b));
                        k.emit(Ins::not(Ty::Pred, &r, &x));
                    }
                    Ne => k.emit(Ins::xor(Ty::Pred, &r, a, b)),
                    Lt => k.emit(Ins::and(Ty::Pred, &r, &na, b)),
                    Le => k.emit(Ins::or(Ty::Pred, &r, &na, b)),
                    Gt => k.emit(Ins::and(Ty::Pred, &r, a, &nb)),
                    _ => k.emit(Ins::or(Ty::Pred, &r, a, &nb)),
                }
                return Ok(r);
            }
            let cmp = match op {
                Eq => Cmp::Eq,
                Ne if s.is_float() => Cmp::Neu,
                Ne => Cmp::Ne,
                Lt => Cmp::Lt,
                Le => Cmp::Le,
                Gt => Cmp::Gt,
                _ => Cmp::Ge,
            };
            k.emit(Ins::setp(cmp, arith(s), &r, a, b));
            return Ok(r);
        }
        if s == Scalar::Bool {
            let r = k.reg(Scalar::Bool);
            k.emit(match op {
                BitAnd => Ins::and(Ty::Pred, &r, a, b),
                BitOr => Ins::or(Ty::Pred, &r, a, b),
                BitXor => Ins::xor(Ty::Pred, &r, a, b),
                _ => return unsupported(format!("`{}` on bool", op.symbol())),
            });
            return Ok(r);
        }
        if s.is_float() {
            let r = k.reg(s);
            let t = arith(s);
            match op {
                Add => k.emit(Ins::add_rn(t, &r, a, b)),
                Sub => k.emit(Ins::sub_rn(t, &r, a, b)),
                Mul => k.emit(Ins::mul_rn(t, &r, a, b)),
                Div => k.emit(Ins::div_rn(t, &r, a, b)),
                Rem => {
                    let r = super::math::rem(k, a, b);
                    k.canon(&r);
                    return Ok(r);
                }
                _ => return unsupported(format!("`{}` on floats", op.symbol())),
            }
            // `f32` arithmetic gives the canonical NaN itself; `f64` keeps payloads.
            if s == Scalar::F64 {
                k.canon(&r);
            }
            return Ok(r);
        }
        // Integers: wrapping.
        let r = k.reg(s);
        let t = arith(s);
        let bt = bits(s);
        match op {
            Add => k.emit(Ins::add(t, &r, a, b)),
            Sub => k.emit(Ins::sub(t, &r, a, b)),
            Mul => k.emit(Ins::mul_lo(t, &r, a, b)),
            BitAnd => k.emit(Ins::and(bt, &r, a, b)),
            BitOr => k.emit(Ins::or(bt, &r, a, b)),
            BitXor => k.emit(Ins::xor(bt, &r, a, b)),
            Shl | Shr => {
                let amt = k.reg(Scalar::U32);
                if width(b.ty) == 64 {
                    k.emit(Ins::cvt(Ty::U32, Ty::U64, &amt, b));
                } else {
                    k.emit(Ins::mov(Ty::B32, &amt, b));
                }
                k.emit(Ins::and(Ty::B32, &amt, &amt, 8 * size_of(s) as u32 - 1));
                if op == Shl {
                    k.emit(Ins::shl(bt, &r, a, &amt));
                } else {
                    k.emit(Ins::shr(t, &r, a, &amt));
                }
            }
            Div | Rem => {
                let z = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Eq, t, &z, b, 0));
                let at = At {
                    origin: Origin::Index,
                    span,
                };
                let kind = if op == Div {
                    SiteKind::DivideByZero
                } else {
                    SiteKind::RemainderByZero
                };
                self.check(k, ctx, &z, kind, at, false, None);
                // A zero divisor (only reached when going on after a failure) divides by 1.
                let safe = k.reg(s);
                k.emit(Ins::selp(bt, &safe, 1, b, &z));
                if s.is_signed_int() {
                    // MIN / -1 wraps to MIN, MIN % -1 is 0, as Rust's wrapping ops.
                    let m1 = k.reg(Scalar::Bool);
                    k.emit(Ins::setp(Cmp::Eq, t, &m1, &safe, -1));
                    k.emit(Ins::selp(bt, &safe, 1, &safe, &m1));
                    let q = k.reg(s);
                    k.emit(if op == Div {
                        Ins::div(t, &q, a, &safe)
                    } else {
                        Ins::rem(t, &q, a, &safe)
                    });
                    if op == Div {
                        let na = k.reg(s);
                        k.emit(Ins::neg(t, &na, a));
                        k.emit(Ins::selp(bt, &r, &na, &q, &m1));
                    } else {
                        k.emit(Ins::selp(bt, &r, 0, &q, &m1));
                    }
                } else {
                    k.emit(if op == Div {
                        Ins::div(t, &r, a, &safe)
                    } else {
                        Ins::rem(t, &r, a, &safe)
                    });
                }
            }
            _ => return unsupported(format!("`{}` on integers", op.symbol())),
        }
        if matches!(op, Add | Sub | Mul | Shl | Div) {
            k.wrap(&r);
        }
        Ok(r)
    }

    /// Rust's `as` between scalar types.
    pub(super) fn cast(k: &mut Kernel, x: &Reg, to: Scalar) -> Reg {
        let from = x.ty;
        if from != to && to.is_half() {
            let w = Self::to_f32_odd(k, x, to);
            return k.round_half(&w, to);
        }
        if from != to && from.is_half() {
            let r = Self::cast(k, &f32_of(x), to);
            k.canon(&r);
            return r;
        }
        let r = k.reg(to);
        if from == to {
            Self::mov(k, &r, x);
            return r;
        }
        match (from, to) {
            (Scalar::Bool, t) if t.is_float() => k.emit(Ins::selp(
                arith(t),
                &r,
                Src::float(t, 1.0),
                Src::float(t, 0.0),
                x,
            )),
            (Scalar::Bool, t) => k.emit(Ins::selp(bits(t), &r, 1, 0, x)),
            (f, Scalar::Bool) if f.is_float() => {
                k.emit(Ins::setp(Cmp::Neu, arith(f), &r, x, Src::float(f, 0.0)))
            }
            (f, Scalar::Bool) => k.emit(Ins::setp(Cmp::Ne, arith(f), &r, x, 0)),
            (f, t) if f.is_int() && t.is_int() => {
                match (width(f), width(t)) {
                    (a, b) if a == b => k.emit(Ins::mov(bits(t), &r, x)),
                    (32, 64) => k.emit(Ins::cvt(
                        if f.is_signed_int() { Ty::S64 } else { Ty::U64 },
                        arith(f),
                        &r,
                        x,
                    )),
                    _ => k.emit(Ins::cvt(Ty::U32, Ty::U64, &r, x)),
                }
                k.wrap(&r);
            }
            (f, t) if f.is_int() => k.emit(Ins::cvt_rnd(Rnd::Rn, arith(t), arith(f), &r, x)),
            (f, t) if t.is_int() => {
                // Rust's `as` gives 0 for NaN; an H100 gives `i32::MIN` for an `f64` NaN
                // converted to `s32` (seen on the device machine), so NaN is set apart.
                k.emit(Ins::cvt_rnd(Rnd::RziSat, arith(t), arith(f), &r, x));
                if narrow(t).is_some() {
                    // Saturated to 32 bits, then to the type's own range.
                    let (lo, hi) = t.int_range();
                    k.emit(Ins::max(arith(t), &r, &r, lo as i64));
                    k.emit(Ins::min(arith(t), &r, &r, hi as i64));
                }
                let nan = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Nan, arith(f), &nan, x, x));
                k.emit(Ins::mov(bits(t), &r, 0).when(&nan));
            }
            (Scalar::F32, Scalar::F64) => {
                k.emit(Ins::cvt(Ty::F64, Ty::F32, &r, x));
                k.canon(&r);
            }
            _ => {
                k.emit(Ins::cvt_rnd(Rnd::Rn, Ty::F32, Ty::F64, &r, x));
                k.canon(&r);
            }
        }
        r
    }

    /// `x` as an `f32` from which rounding to the 16-bit float `to` gives `x as to`
    /// rounded once: the `f32` value itself when exact; else, from an `f64` or a 32/64-bit
    /// integer (for `bf16`; an integer that `f32` cannot hold exactly is beyond `f16`'s
    /// range anyway), rounded towards zero with its last bit set when inexact ("to odd",
    /// as [`dpl_core::float16`] does on the CPU).
    fn to_f32_odd(k: &mut Kernel, x: &Reg, to: Scalar) -> Reg {
        let from = x.ty;
        let exact = from.is_half()
            || from == Scalar::F32
            || from == Scalar::Bool
            || (from.is_int() && (to == Scalar::F16 || narrow(from).is_some()));
        if exact {
            return if from.is_half() {
                f32_of(x)
            } else {
                Self::cast(k, x, Scalar::F32)
            };
        }
        let t = k.reg(Scalar::F32);
        k.emit(Ins::cvt_rnd(Rnd::Rz, Ty::F32, arith(from), &t, x));
        let back = k.reg(from);
        if from == Scalar::F64 {
            k.emit(Ins::cvt(Ty::F64, Ty::F32, &back, &t));
        } else {
            k.emit(Ins::cvt_rnd(Rnd::Rzi, arith(from), Ty::F32, &back, &t));
        }
        let inexact = k.reg(Scalar::Bool);
        let cmp = if from == Scalar::F64 {
            Cmp::Neu
        } else {
            Cmp::Ne
        };
        k.emit(Ins::setp(cmp, arith(from), &inexact, &back, x));
        let b = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::B32, &b, &t));
        k.emit(Ins::or(Ty::B32, &b, &b, 1).when(&inexact));
        k.emit(Ins::mov(Ty::B32, &t, &b));
        t
    }

    pub(super) fn math(&mut self, k: &mut Kernel, m: MathFn, xs: &[Reg]) -> R<Reg> {
        use MathFn::*;
        let Some(x) = xs.first() else {
            return unsupported("a math function without arguments");
        };
        if x.ty.is_half() {
            let wide: Vec<Reg> = xs.iter().map(f32_of).collect();
            let r = self.math(k, m, &wide)?;
            return Ok(if exact_on_halves(m) {
                Reg { ty: x.ty, ..r }
            } else {
                k.round_half(&r, x.ty)
            });
        }
        if xs.len() != m.arity() {
            return unsupported(format!("`{}` with {} arguments", m.name(), xs.len()));
        }
        let s = x.ty;
        let t = arith(s);
        let r = k.reg(s);
        if !s.is_float() {
            match m {
                Abs if s.is_signed_int() => {
                    k.emit(Ins::abs(t, &r, x));
                    k.wrap(&r);
                }
                Abs => Self::mov(k, &r, x),
                Min => k.emit(Ins::min(t, &r, x, &xs[1])),
                Max => k.emit(Ins::max(t, &r, x, &xs[1])),
                _ => return unsupported(format!("`{}` of an integer", m.name())),
            }
            return Ok(r);
        }
        match m {
            Abs => k.emit(Ins::abs(t, &r, x)),
            Sqrt => k.emit(Ins::sqrt_rn(t, &r, x)),
            Floor => k.emit(Ins::cvt_rnd(Rnd::Rmi, t, t, &r, x)),
            Ceil => k.emit(Ins::cvt_rnd(Rnd::Rpi, t, t, &r, x)),
            Trunc => k.emit(Ins::cvt_rnd(Rnd::Rzi, t, t, &r, x)),
            Round => {
                // Half away from zero: trunc, then one step away when the dropped part is
                // at least a half (x - trunc(x) is exact).
                let tr = k.reg(s);
                k.emit(Ins::cvt_rnd(Rnd::Rzi, t, t, &tr, x));
                let d = k.reg(s);
                k.emit(Ins::sub_rn(t, &d, x, &tr));
                k.emit(Ins::abs(t, &d, &d));
                let ge = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Ge, t, &ge, &d, Src::float(s, 0.5)));
                let one = k.reg(s);
                k.emit(Ins::mov(t, &one, Src::float(s, 1.0)));
                k.emit(Ins::copysign(t, &one, x, &one));
                let up = k.reg(s);
                k.emit(Ins::add_rn(t, &up, &tr, &one));
                k.emit(Ins::selp(t, &r, &up, &tr, &ge));
            }
            Min | Max => {
                // As Rust on x86-64 computes `x.min(y)` / `x.max(y)`: `y` when it is
                // strictly better or `x` is NaN, else `x` (so equal zeros give `x`).
                let y = &xs[1];
                let better = k.reg(Scalar::Bool);
                let cmp = if m == Min { Cmp::Lt } else { Cmp::Gt };
                k.emit(Ins::setp(cmp, t, &better, y, x));
                let nan = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Nan, t, &nan, x, x));
                k.emit(Ins::or(Ty::Pred, &better, &better, &nan));
                k.emit(Ins::selp(t, &r, y, x, &better));
            }
            MulAdd => k.emit(Ins::fma_rn(t, &r, x, &xs[1], &xs[2])),
            Exp | Ln | Log2 | Sin | Cos | Tanh | Powf => {
                let r = super::math::emit(k, m, xs)?;
                k.canon(&r);
                return Ok(r);
            }
        }
        // Selections (`min`, `max`) and sign operations move a NaN operand; `f64`
        // arithmetic keeps its payload.
        k.canon(&r);
        Ok(r)
    }
}
