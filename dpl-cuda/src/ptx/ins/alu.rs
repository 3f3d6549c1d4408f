//! Integer and float arithmetic, bitwise operations, comparisons (`setp`) and selects
//! (`selp`).

use super::{Ins, Src, src};
use crate::ptx::{Reg, Ty};

spelled! {
    /// The comparison of a `setp`.
    pub(crate) enum Cmp {
        /// `==`.
        Eq = "eq",
        /// `!=` (integers).
        Ne = "ne",
        /// `<`.
        Lt = "lt",
        /// `<=`.
        Le = "le",
        /// `>`.
        Gt = "gt",
        /// `>=`.
        Ge = "ge",
        /// `!=` or unordered (floats: true when either is NaN).
        Neu = "neu",
        /// Unordered: either is NaN.
        Nan = "nan",
    }
}

/// Declares constructors of two-source instructions, `op.ty d, a, b`.
macro_rules! binary {
    ($($(#[$m:meta])* $name:ident = $op:literal;)*) => {
        impl Ins {
            $(
                $(#[$m])*
                pub(crate) fn $name(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>) -> Ins {
                    Ins::new(format!(concat!($op, ".{}"), ty), &[d, &src(a), &src(b)])
                }
            )*
        }
    };
}

/// Declares constructors of one-source instructions, `op.ty d, a`.
macro_rules! unary {
    ($($(#[$m:meta])* $name:ident = $op:literal;)*) => {
        impl Ins {
            $(
                $(#[$m])*
                pub(crate) fn $name(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
                    Ins::new(format!(concat!($op, ".{}"), ty), &[d, &src(a)])
                }
            )*
        }
    };
}

/// Declares constructors of three-source instructions, `op.ty d, a, b, c`.
macro_rules! ternary {
    ($($(#[$m:meta])* $name:ident = $op:literal;)*) => {
        impl Ins {
            $(
                $(#[$m])*
                pub(crate) fn $name(
                    ty: Ty,
                    d: &Reg,
                    a: impl Into<Src>,
                    b: impl Into<Src>,
                    c: impl Into<Src>,
                ) -> Ins {
                    Ins::new(format!(concat!($op, ".{}"), ty), &[d, &src(a), &src(b), &src(c)])
                }
            )*
        }
    };
}

binary! {
    /// `add.ty d, a, b` (integers wrap).
    add = "add";
    /// `sub.ty d, a, b`.
    sub = "sub";
    /// `mul.lo.ty d, a, b`: the low half of the product.
    mul_lo = "mul.lo";
    /// `mul.hi.ty d, a, b`: the high half of the product.
    mul_hi = "mul.hi";
    /// `mul.wide.ty d, a, b`: the whole product, twice as wide as `ty`.
    mul_wide = "mul.wide";
    /// `div.ty d, a, b` (integers).
    div = "div";
    /// `rem.ty d, a, b` (integers).
    rem = "rem";
    /// `min.ty d, a, b`.
    min = "min";
    /// `max.ty d, a, b`.
    max = "max";
    /// `and.ty d, a, b` (bits or predicates).
    and = "and";
    /// `or.ty d, a, b` (bits or predicates).
    or = "or";
    /// `xor.ty d, a, b` (bits or predicates).
    xor = "xor";
    /// `shl.ty d, a, b`.
    shl = "shl";
    /// `shr.ty d, a, b` (arithmetic for signed types).
    shr = "shr";
    /// `add.rn.ty d, a, b` (floats, rounded to nearest even).
    add_rn = "add.rn";
    /// `sub.rn.ty d, a, b`.
    sub_rn = "sub.rn";
    /// `mul.rn.ty d, a, b`.
    mul_rn = "mul.rn";
    /// `div.rn.ty d, a, b`.
    div_rn = "div.rn";
    /// `copysign.ty d, a, b`: `b` with the sign of `a`.
    copysign = "copysign";
}

unary! {
    /// `not.ty d, a` (bits or predicates).
    not = "not";
    /// `neg.ty d, a`.
    neg = "neg";
    /// `abs.ty d, a`.
    abs = "abs";
    /// `popc.ty d, a`: the number of set bits.
    popc = "popc";
    /// `clz.ty d, a`: the number of leading zero bits.
    clz = "clz";
    /// `bfind.ty d, a`: the position of the most significant set bit.
    bfind = "bfind";
    /// `sqrt.rn.ty d, a`.
    sqrt_rn = "sqrt.rn";
}

ternary! {
    /// `mad.lo.ty d, a, b, c`: `a * b + c`, low half.
    mad_lo = "mad.lo";
    /// `fma.rn.ty d, a, b, c`: `a * b + c` rounded once.
    fma_rn = "fma.rn";
    /// `bfe.ty d, a, pos, len`: `len` bits of `a` from bit `pos`.
    bfe = "bfe";
}

impl Ins {
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

    /// `bfi.ty d, a, b, pos, len`: `b` with its `len` bits from bit `pos` replaced by the
    /// low `len` bits of `a`.
    pub(crate) fn bfi(
        ty: Ty,
        d: &Reg,
        a: impl Into<Src>,
        b: impl Into<Src>,
        pos: impl Into<Src>,
        len: impl Into<Src>,
    ) -> Ins {
        Ins::new(
            format!("bfi.{ty}"),
            &[d, &src(a), &src(b), &src(pos), &src(len)],
        )
    }

    /// `selp.ty d, a, b, p`: `p ? a : b`.
    pub(crate) fn selp(ty: Ty, d: &Reg, a: impl Into<Src>, b: impl Into<Src>, p: &Reg) -> Ins {
        Ins::new(format!("selp.{ty}"), &[d, &src(a), &src(b), p])
    }
}
