//! Scalar operations: constants, unary and binary operators (wrapping integers, checked
//! division), Rust's `as` casts, and math functions (see [`crate::math`]).

use super::*;

impl<'f> Gen<'f> {
    pub(super) fn constant(k: &mut Kernel, s: Scalar, c: Const) -> R<Reg> {
        let r = k.reg(s);
        match (c, s) {
            (Const::Bool(b), Scalar::Bool) => k.ins(format!(
                "setp.{}.u32 {r}, 0, 0",
                if b { "eq" } else { "ne" }
            )),
            (Const::Float(x), Scalar::F32 | Scalar::F64) => {
                k.ins(format!("mov.{} {r}, {}", arith(s), float_imm(s, x)))
            }
            (Const::Int(i), s) if s.is_int() => {
                let bitsv = if width(s) == 32 {
                    (i as u32) as u64
                } else {
                    i as u64
                };
                k.ins(format!("mov.{} {r}, {bitsv:#x}", bits(s)))
            }
            _ => return unsupported(format!("the constant {c:?} of type {s}")),
        }
        Ok(r)
    }

    pub(super) fn unary(k: &mut Kernel, op: UnOp, x: &Reg) -> Reg {
        let r = k.reg(x.ty);
        match (op, x.ty) {
            (UnOp::Not, Scalar::Bool) => k.ins(format!("not.pred {r}, {x}")),
            (UnOp::Not, s) => k.ins(format!("not.{} {r}, {x}", bits(s))),
            (UnOp::Neg, s) if s.is_float() => k.ins(format!("neg.{} {r}, {x}", arith(s))),
            (UnOp::Neg, s) => {
                let t = if width(s) == 32 { "s32" } else { "s64" };
                k.ins(format!("neg.{t} {r}, {x}"))
            }
        }
        r
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn binary(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        ctx: &Ctx,
        op: BinOp,
        a: &Reg,
        b: &Reg,
        span: u32,
    ) -> R<Reg> {
        use BinOp::*;
        let s = a.ty;
        if op.is_comparison() {
            let r = k.reg(Scalar::Bool);
            if s == Scalar::Bool {
                let x = k.reg(Scalar::Bool);
                let (na, nb) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
                k.ins(format!("not.pred {na}, {a}"));
                k.ins(format!("not.pred {nb}, {b}"));
                match op {
                    Eq => {
                        k.ins(format!("xor.pred {x}, {a}, {b}"));
                        k.ins(format!("not.pred {r}, {x}"));
                    }
                    Ne => k.ins(format!("xor.pred {r}, {a}, {b}")),
                    Lt => k.ins(format!("and.pred {r}, {na}, {b}")),
                    Le => k.ins(format!("or.pred {r}, {na}, {b}")),
                    Gt => k.ins(format!("and.pred {r}, {a}, {nb}")),
                    _ => k.ins(format!("or.pred {r}, {a}, {nb}")),
                }
                return Ok(r);
            }
            let cmp = match op {
                Eq => "eq",
                Ne if s.is_float() => "neu",
                Ne => "ne",
                Lt => "lt",
                Le => "le",
                Gt => "gt",
                _ => "ge",
            };
            k.ins(format!("setp.{cmp}.{} {r}, {a}, {b}", arith(s)));
            return Ok(r);
        }
        if s == Scalar::Bool {
            let r = k.reg(Scalar::Bool);
            let name = match op {
                BitAnd => "and",
                BitOr => "or",
                BitXor => "xor",
                _ => return unsupported(format!("`{}` on bool", op.symbol())),
            };
            k.ins(format!("{name}.pred {r}, {a}, {b}"));
            return Ok(r);
        }
        if s.is_float() {
            let r = k.reg(s);
            let t = arith(s);
            match op {
                Add => k.ins(format!("add.rn.{t} {r}, {a}, {b}")),
                Sub => k.ins(format!("sub.rn.{t} {r}, {a}, {b}")),
                Mul => k.ins(format!("mul.rn.{t} {r}, {a}, {b}")),
                Div => k.ins(format!("div.rn.{t} {r}, {a}, {b}")),
                Rem => return Ok(crate::math::emit(k, Fun::Rem, &[a.clone(), b.clone()])),
                _ => return unsupported(format!("`{}` on floats", op.symbol())),
            }
            return Ok(r);
        }
        // Integers: wrapping.
        let r = k.reg(s);
        let t = arith(s);
        let bt = bits(s);
        match op {
            Add => k.ins(format!("add.{t} {r}, {a}, {b}")),
            Sub => k.ins(format!("sub.{t} {r}, {a}, {b}")),
            Mul => k.ins(format!("mul.lo.{t} {r}, {a}, {b}")),
            BitAnd => k.ins(format!("and.{bt} {r}, {a}, {b}")),
            BitOr => k.ins(format!("or.{bt} {r}, {a}, {b}")),
            BitXor => k.ins(format!("xor.{bt} {r}, {a}, {b}")),
            Shl | Shr => {
                let amt = k.reg(Scalar::U32);
                if width(b.ty) == 64 {
                    k.ins(format!("cvt.u32.u64 {amt}, {b}"));
                } else {
                    k.ins(format!("mov.b32 {amt}, {b}"));
                }
                k.ins(format!("and.b32 {amt}, {amt}, {}", width(s) - 1));
                if op == Shl {
                    k.ins(format!("shl.{bt} {r}, {a}, {amt}"));
                } else {
                    k.ins(format!("shr.{t} {r}, {a}, {amt}"));
                }
            }
            Div | Rem => {
                let z = k.reg(Scalar::Bool);
                k.ins(format!("setp.eq.{t} {z}, {b}, 0"));
                let zero = k.reg(Scalar::U64);
                k.ins(format!("mov.u64 {zero}, 0"));
                self.check(
                    k,
                    c,
                    ctx,
                    &z,
                    SiteKind::DivideByZero,
                    Origin::Index,
                    span,
                    false,
                    &zero,
                    &zero,
                );
                // A zero divisor (only reached when going on after a failure) divides by 1.
                let safe = k.reg(s);
                k.ins(format!("selp.{bt} {safe}, 1, {b}, {z}"));
                let name = if op == Div { "div" } else { "rem" };
                if s.is_signed_int() {
                    // MIN / -1 wraps to MIN, MIN % -1 is 0, as Rust's wrapping ops.
                    let m1 = k.reg(Scalar::Bool);
                    k.ins(format!("setp.eq.{t} {m1}, {safe}, -1"));
                    k.ins(format!("selp.{bt} {safe}, 1, {safe}, {m1}"));
                    let q = k.reg(s);
                    k.ins(format!("{name}.{t} {q}, {a}, {safe}"));
                    if op == Div {
                        let na = k.reg(s);
                        k.ins(format!("neg.{t} {na}, {a}"));
                        k.ins(format!("selp.{bt} {r}, {na}, {q}, {m1}"));
                    } else {
                        k.ins(format!("selp.{bt} {r}, 0, {q}, {m1}"));
                    }
                } else {
                    k.ins(format!("{name}.{t} {r}, {a}, {safe}"));
                }
            }
            _ => return unsupported(format!("`{}` on integers", op.symbol())),
        }
        Ok(r)
    }

    /// Rust's `as` between scalar types.
    pub(super) fn cast(k: &mut Kernel, x: &Reg, to: Scalar) -> Reg {
        let from = x.ty;
        let r = k.reg(to);
        if from == to {
            Self::mov(k, &r, x);
            return r;
        }
        match (from, to) {
            (Scalar::Bool, t) if t.is_float() => k.ins(format!(
                "selp.{} {r}, {}, {}, {x}",
                arith(t),
                float_imm(t, 1.0),
                float_imm(t, 0.0)
            )),
            (Scalar::Bool, t) => k.ins(format!("selp.{} {r}, 1, 0, {x}", bits(t))),
            (f, Scalar::Bool) if f.is_float() => k.ins(format!(
                "setp.neu.{} {r}, {x}, {}",
                arith(f),
                float_imm(f, 0.0)
            )),
            (f, Scalar::Bool) => k.ins(format!("setp.ne.{} {r}, {x}, 0", arith(f))),
            (f, t) if f.is_int() && t.is_int() => match (width(f), width(t)) {
                (a, b) if a == b => k.ins(format!("mov.{} {r}, {x}", bits(t))),
                (32, 64) => k.ins(format!(
                    "cvt.{}.{} {r}, {x}",
                    if f.is_signed_int() { "s64" } else { "u64" },
                    arith(f)
                )),
                _ => k.ins(format!("cvt.u32.u64 {r}, {x}")),
            },
            (f, t) if f.is_int() => k.ins(format!("cvt.rn.{}.{} {r}, {x}", arith(t), arith(f))),
            (f, t) if t.is_int() => {
                // Rust's `as` gives 0 for NaN; an H100 gives `i32::MIN` for an `f64` NaN
                // converted to `s32` (seen on the device machine), so NaN is set apart.
                k.ins(format!("cvt.rzi.sat.{}.{} {r}, {x}", arith(t), arith(f)));
                let nan = k.reg(Scalar::Bool);
                k.ins(format!("setp.nan.{} {nan}, {x}, {x}", arith(f)));
                k.ins(format!("@{nan} mov.{} {r}, 0", bits(t)));
            }
            (Scalar::F32, Scalar::F64) => k.ins(format!("cvt.f64.f32 {r}, {x}")),
            _ => k.ins(format!("cvt.rn.f32.f64 {r}, {x}")),
        }
        r
    }

    pub(super) fn math(&mut self, k: &mut Kernel, m: MathFn, xs: &[Reg]) -> R<Reg> {
        use MathFn::*;
        let Some(x) = xs.first() else {
            return unsupported("a math function without arguments");
        };
        if xs.len() != m.arity() {
            return unsupported(format!("`{}` with {} arguments", m.name(), xs.len()));
        }
        let s = x.ty;
        let t = arith(s);
        let r = k.reg(s);
        if !s.is_float() {
            match m {
                Abs if s.is_signed_int() => k.ins(format!("abs.{t} {r}, {x}")),
                Abs => Self::mov(k, &r, x),
                Min => k.ins(format!("min.{t} {r}, {x}, {}", xs[1])),
                Max => k.ins(format!("max.{t} {r}, {x}, {}", xs[1])),
                _ => return unsupported(format!("`{}` of an integer", m.name())),
            }
            return Ok(r);
        }
        match m {
            Abs => k.ins(format!("abs.{t} {r}, {x}")),
            Sqrt => k.ins(format!("sqrt.rn.{t} {r}, {x}")),
            Floor => k.ins(format!("cvt.rmi.{t}.{t} {r}, {x}")),
            Ceil => k.ins(format!("cvt.rpi.{t}.{t} {r}, {x}")),
            Trunc => k.ins(format!("cvt.rzi.{t}.{t} {r}, {x}")),
            Round => {
                // Half away from zero: trunc, then one step away when the dropped part is
                // at least a half (x - trunc(x) is exact).
                let tr = k.reg(s);
                k.ins(format!("cvt.rzi.{t}.{t} {tr}, {x}"));
                let d = k.reg(s);
                k.ins(format!("sub.rn.{t} {d}, {x}, {tr}"));
                k.ins(format!("abs.{t} {d}, {d}"));
                let ge = k.reg(Scalar::Bool);
                k.ins(format!("setp.ge.{t} {ge}, {d}, {}", float_imm(s, 0.5)));
                let one = k.reg(s);
                k.ins(format!("mov.{t} {one}, {}", float_imm(s, 1.0)));
                k.ins(format!("copysign.{t} {one}, {x}, {one}"));
                let up = k.reg(s);
                k.ins(format!("add.rn.{t} {up}, {tr}, {one}"));
                k.ins(format!("selp.{t} {r}, {up}, {tr}, {ge}"));
            }
            Min | Max => {
                // As Rust on x86-64 computes `x.min(y)` / `x.max(y)`: `y` when it is
                // strictly better or `x` is NaN, else `x` (so equal zeros give `x`).
                let y = &xs[1];
                let better = k.reg(Scalar::Bool);
                let cmp = if m == Min { "lt" } else { "gt" };
                k.ins(format!("setp.{cmp}.{t} {better}, {y}, {x}"));
                let nan = k.reg(Scalar::Bool);
                k.ins(format!("setp.nan.{t} {nan}, {x}, {x}"));
                k.ins(format!("or.pred {better}, {better}, {nan}"));
                k.ins(format!("selp.{t} {r}, {y}, {x}, {better}"));
            }
            MulAdd => k.ins(format!("fma.rn.{t} {r}, {x}, {}, {}", xs[1], xs[2])),
            Exp | Ln | Log2 | Sin | Cos | Tanh | Powf => {
                let f = match m {
                    Exp => Fun::Exp,
                    Ln => Fun::Ln,
                    Log2 => Fun::Log2,
                    Sin => Fun::Sin,
                    Cos => Fun::Cos,
                    Tanh => Fun::Tanh,
                    _ => Fun::Pow,
                };
                return Ok(crate::math::emit(k, f, xs));
            }
        }
        Ok(r)
    }
}
