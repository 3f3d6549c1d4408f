//! The canonical NaN: the one bit pattern of every NaN that a dpl float operation
//! produces, on every place.
//!
//! It is the NaN that NVIDIA GPUs give for every single-precision operation (sign clear,
//! every significand bit set: `0x7fff_ffff`), and its `f64` counterpart
//! `0x7fff_ffff_ffff_ffff`. x86 CPUs produce the negative "default NaN" instead
//! (`0xffc0_0000` for `0.0 / 0.0`) and pass the payload of a NaN operand through, and GPUs
//! keep payloads in `f64` arithmetic; so the CPU code, the interpreter and the generated
//! `f64` GPU code replace every NaN an operation produces by this one (see the README's
//! contract on floats for which operations those are). Sorting by IEEE `totalOrder` then
//! puts every produced NaN last, on every place. The 16-bit floats have theirs too
//! (`0x7fff` for `f16` and `bf16`: the canonical `f32` NaN rounded).

use std::collections::HashSet;

use crate::float16::{Half, bf16, f16};
use crate::ir::{Block, Expr, Function, VarId};

/// The bits of the canonical `f32` NaN.
pub const F32_BITS: u32 = 0x7fff_ffff;

/// The bits of the canonical `f64` NaN.
pub const F64_BITS: u64 = 0x7fff_ffff_ffff_ffff;

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_f32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(F32_BITS)
    } else {
        x
    }
}

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_f64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(F64_BITS)
    } else {
        x
    }
}

/// The bits of the canonical `f16` NaN.
pub const F16_BITS: u16 = <f16 as Half>::NAN_BITS;

/// The bits of the canonical `bf16` NaN.
pub const BF16_BITS: u16 = <bf16 as Half>::NAN_BITS;

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_f16(x: f16) -> f16 {
    if x.is_nan() {
        f16::from_bits(F16_BITS)
    } else {
        x
    }
}

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_bf16(x: bf16) -> bf16 {
    if x.is_nan() {
        bf16::from_bits(BF16_BITS)
    } else {
        x
    }
}

/// The variables of `f` whose NaN bits can be seen: all those read other than as an operand
/// of an operator, a math function or a cast, or that are the value of a block.
///
/// Those operations give a NaN, or the same number, whatever the bits of a NaN operand
/// (`min`/`max` of a NaN and a number give the number; comparisons of NaNs are false; a
/// NaN cast to an integer is 0). So a backend that makes their NaN results canonical need
/// only do it for the variables listed here: a NaN read only by such operations reaches
/// no result with its own bits.
pub fn observed(f: &Function) -> HashSet<VarId> {
    fn walk(b: &Block, out: &mut HashSet<VarId>) {
        out.insert(b.result);
        for s in &b.stmts {
            let consumes = matches!(
                s.expr,
                Expr::Unary(..) | Expr::Binary(..) | Expr::Math(..) | Expr::Cast(..)
            );
            if !consumes {
                out.extend(s.expr.operands());
            }
            s.expr.for_each_block(&mut |blk| walk(blk, out));
        }
    }
    let mut out = HashSet::new();
    walk(&f.body, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinOp, Lambda, MathFn, Scalar, Soac, SoacKind, Span, Stmt, Type};

    #[test]
    fn operands_of_operations_are_not_observed_results_and_other_reads_are() {
        let st = |var, expr| Stmt {
            var,
            expr,
            span: Span::NONE,
        };
        let f32t = Type::Scalar(Scalar::F32);
        let mut f = Function::new("f", f32t.clone());
        let v = |f: &mut Function, name: &str, ty: &Type| f.new_var(name, ty.clone(), Span::NONE);
        let (x, y) = (v(&mut f, "x", &f32t), v(&mut f, "y", &f32t));
        f.params = vec![x, y];
        let (p, q) = (v(&mut f, "p", &f32t), v(&mut f, "q", &f32t));
        let t = v(&mut f, "t", &Type::Tuple(vec![f32t.clone(), f32t.clone()]));
        let r = v(&mut f, "r", &f32t);
        f.body.stmts = vec![
            st(p, Expr::Binary(BinOp::Mul, x, y)),
            st(q, Expr::Math(MathFn::Min, vec![p, y])),
            st(t, Expr::Tuple(vec![q, x])),
            st(r, Expr::Field(t, 0)),
        ];
        f.body.result = r;
        let seen = observed(&f);
        assert!(!seen.contains(&p), "read only by `min`");
        assert!(!seen.contains(&y), "read only by `*` and `min`");
        assert!(seen.contains(&q) && seen.contains(&x), "in a tuple");
        assert!(
            seen.contains(&t) && seen.contains(&r),
            "a field, the result"
        );
        // In a lambda: its result is observed, its operands are not.
        let mut g = Function::new("g", Type::seq(f32t.clone()));
        let n = v(&mut g, "n", &Type::usize());
        let i = v(&mut g, "i", &Type::usize());
        let c = v(&mut g, "c", &f32t);
        let m = v(&mut g, "m", &Type::seq(f32t.clone()));
        g.params = vec![n];
        let elem = Lambda {
            params: vec![i],
            captures: vec![],
            body: Block {
                stmts: vec![st(c, Expr::Cast(i, Scalar::F32))],
                result: c,
            },
        };
        let soac = Soac {
            kind: SoacKind::Map,
            len: n,
            elem,
        };
        g.body.stmts = vec![st(m, Expr::Soac(Box::new(soac)))];
        g.body.result = m;
        let seen = observed(&g);
        assert!(seen.contains(&c) && seen.contains(&n) && !seen.contains(&i));
    }

    #[test]
    fn canonical_nans_are_quiet_positive_nans_and_other_values_pass() {
        let n32 = canon_f32(f32::from_bits(0xffc0_0001));
        assert!(n32.is_nan() && n32.is_sign_positive());
        assert_eq!(n32.to_bits(), 0x7fff_ffff);
        let n64 = canon_f64(f64::from_bits(0xfff8_0000_0000_0001));
        assert!(n64.is_nan() && n64.is_sign_positive());
        assert_eq!(n64.to_bits(), 0x7fff_ffff_ffff_ffff);
        // Quiet: the top significand bit is set.
        assert_ne!(F32_BITS & (1 << 22), 0);
        assert_ne!(F64_BITS & (1 << 51), 0);
        for x in [
            0.0f32,
            -0.0,
            1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
        ] {
            assert_eq!(canon_f32(x).to_bits(), x.to_bits());
            assert_eq!(canon_f64(f64::from(x)).to_bits(), f64::from(x).to_bits());
        }
    }
}
