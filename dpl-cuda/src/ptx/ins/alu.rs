//! Integer and float arithmetic, bitwise operations, comparisons (`setp`) and selects
//! (`selp`).

use std::fmt;

use super::{Ins, Src, src};
use crate::ptx::{Reg, Ty};

/// The comparison of a `setp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    /// `==`.
    Eq,
    /// `!=` (integers).
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `!=` or unordered (floats: true when either is NaN).
    Neu,
    /// Unordered: either is NaN.
    Nan,
}

impl fmt::Display for Cmp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Cmp::Eq => "eq",
            Cmp::Ne => "ne",
            Cmp::Lt => "lt",
            Cmp::Le => "le",
            Cmp::Gt => "gt",
            Cmp::Ge => "ge",
            Cmp::Neu => "neu",
            Cmp::Nan => "nan",
        })
    }
}

impl Ins {
    /// A two-source operation `op.ty d, a, b`.
    fn binary(op: &str, ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::new(format!("{op}.{ty}"), &[d, &src(a), &src(b)])
    }

    /// A one-source operation `op.ty d, a`.
    fn unary(op: &str, ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::new(format!("{op}.{ty}"), &[d, &src(a)])
    }

    /// `add.ty d, a, b` (integers wrap).
    pub(crate) fn add(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("add", ty, d, a, b)
    }

    /// `sub.ty d, a, b`.
    pub(crate) fn sub(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("sub", ty, d, a, b)
    }

    /// `mul.lo.ty d, a, b`: the low half of the product.
    pub(crate) fn mul_lo(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("mul.lo", ty, d, a, b)
    }

    /// `mul.hi.ty d, a, b`: the high half of the product.
    pub(crate) fn mul_hi(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("mul.hi", ty, d, a, b)
    }

    /// `mul.wide.ty d, a, b`: the whole product, twice as wide as `ty`.
    pub(crate) fn mul_wide(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("mul.wide", ty, d, a, b)
    }

    /// `mad.lo.ty d, a, b, c`: `a * b + c`, low half.
    pub(crate) fn mad_lo(
        ty: Ty,
        d: &Reg,
        a: impl Into<Src>,
        b: impl Into<Src>,
        c: impl Into<Src>,
    ) -> Ins {
        Ins::new(format!("mad.lo.{ty}"), &[d, &src(a), &src(b), &src(c)])
    }

    /// `div.ty d, a, b` (integers).
    pub(crate) fn div(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("div", ty, d, a, b)
    }

    /// `rem.ty d, a, b` (integers).
    pub(crate) fn rem(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("rem", ty, d, a, b)
    }

    /// `min.ty d, a, b`.
    pub(crate) fn min(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("min", ty, d, a, b)
    }

    /// `max.ty d, a, b`.
    pub(crate) fn max(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("max", ty, d, a, b)
    }

    /// `and.ty d, a, b` (bits or predicates).
    pub(crate) fn and(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("and", ty, d, a, b)
    }

    /// `or.ty d, a, b` (bits or predicates).
    pub(crate) fn or(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("or", ty, d, a, b)
    }

    /// `xor.ty d, a, b` (bits or predicates).
    pub(crate) fn xor(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("xor", ty, d, a, b)
    }

    /// `not.ty d, a` (bits or predicates).
    pub(crate) fn not(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("not", ty, d, a)
    }

    /// `shl.ty d, a, b`.
    pub(crate) fn shl(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("shl", ty, d, a, b)
    }

    /// `shr.ty d, a, b` (arithmetic for signed types).
    pub(crate) fn shr(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("shr", ty, d, a, b)
    }

    /// `neg.ty d, a`.
    pub(crate) fn neg(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("neg", ty, d, a)
    }

    /// `abs.ty d, a`.
    pub(crate) fn abs(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("abs", ty, d, a)
    }

    /// `popc.ty d, a`: the number of set bits.
    pub(crate) fn popc(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("popc", ty, d, a)
    }

    /// `clz.ty d, a`: the number of leading zero bits.
    pub(crate) fn clz(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("clz", ty, d, a)
    }

    /// `bfind.ty d, a`: the position of the most significant set bit.
    pub(crate) fn bfind(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("bfind", ty, d, a)
    }

    /// `bfe.ty d, a, pos, len`: `len` bits of `a` from bit `pos`.
    pub(crate) fn bfe(
        ty: Ty,
        d: &Reg,
        a: impl Into<Src>,
        pos: impl Into<Src>,
        len: impl Into<Src>,
    ) -> Ins {
        Ins::new(format!("bfe.{ty}"), &[d, &src(a), &src(pos), &src(len)])
    }

    /// `add.rn.ty d, a, b` (floats, rounded to nearest even).
    pub(crate) fn add_rn(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("add.rn", ty, d, a, b)
    }

    /// `sub.rn.ty d, a, b`.
    pub(crate) fn sub_rn(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("sub.rn", ty, d, a, b)
    }

    /// `mul.rn.ty d, a, b`.
    pub(crate) fn mul_rn(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("mul.rn", ty, d, a, b)
    }

    /// `div.rn.ty d, a, b`.
    pub(crate) fn div_rn(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("div.rn", ty, d, a, b)
    }

    /// `fma.rn.ty d, a, b, c`: `a * b + c` rounded once.
    pub(crate) fn fma_rn(
        ty: Ty,
        d: &Reg,
        a: impl Into<Src>,
        b: impl Into<Src>,
        c: impl Into<Src>,
    ) -> Ins {
        Ins::new(format!("fma.rn.{ty}"), &[d, &src(a), &src(b), &src(c)])
    }

    /// `sqrt.rn.ty d, a`.
    pub(crate) fn sqrt_rn(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::unary("sqrt.rn", ty, d, a)
    }

    /// `copysign.ty d, a, b`: `b` with the sign of `a`.
    pub(crate) fn copysign(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::binary("copysign", ty, d, a, b)
    }

    /// `setp.cmp.ty p, a, b`: the predicate `a cmp b`.
    pub(crate) fn setp(cmp: Cmp, ty: Ty, p: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
        Ins::new(format!("setp.{cmp}.{ty}"), &[p, &src(a), &src(b)])
    }

    /// `setp.cmp.and.ty p, a, b, q`: `a cmp b` and `q`.
    pub(crate) fn setp_and(
        cmp: Cmp,
        ty: Ty,
        p: &Reg,
        a: impl Into<Src>,
        b: impl Into<Src>,
        q: &Reg,
    ) -> Ins {
        Ins::new(format!("setp.{cmp}.and.{ty}"), &[p, &src(a), &src(b), q])
    }

    /// `selp.ty d, a, b, p`: `p ? a : b`.
    pub(crate) fn selp(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>, p: &Reg) -> Ins {
        Ins::new(format!("selp.{ty}"), &[d, &src(a), &src(b), p])
    }
}
