//! A builder of `f64` arithmetic on fresh registers, for routines written as formulas
//! (the math functions of the code generator): each operation allocates its result's
//! register, emits the instruction and returns the register.

use dpl_core::ir::Scalar;

use super::{Cmp, Ins, Kernel, Reg, Src, Ty};

const F: Scalar = Scalar::F64;

/// `f64` instructions on fresh registers of a kernel (`k` for the other instructions).
pub(crate) struct F64<'k> {
    /// The kernel.
    pub k: &'k mut Kernel,
}

impl F64<'_> {
    /// A fresh register of type `ty` set by `ins(register)`.
    fn new_reg(&mut self, ty: Scalar, ins: impl FnOnce(&Reg) -> Ins) -> Reg {
        let r = self.k.reg(ty);
        self.k.emit(ins(&r));
        r
    }

    /// The constant `v`.
    pub fn c(&mut self, v: f64) -> Reg {
        self.new_reg(F, |r| Ins::mov(Ty::F64, r, Src::float(F, v)))
    }

    /// `a + b`.
    pub fn add(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::add_rn(Ty::F64, r, a, b))
    }

    /// `a - b`.
    pub fn sub(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::sub_rn(Ty::F64, r, a, b))
    }

    /// `a * b`.
    pub fn mul(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::mul_rn(Ty::F64, r, a, b))
    }

    /// `a / b`.
    pub fn div(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::div_rn(Ty::F64, r, a, b))
    }

    /// `a * b + c` rounded once.
    pub fn fma(&mut self, a: &Reg, b: &Reg, c: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::fma_rn(Ty::F64, r, a, b, c))
    }

    /// `-a`.
    pub fn neg(&mut self, a: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::neg(Ty::F64, r, a))
    }

    /// `|a|`.
    pub fn abs(&mut self, a: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::abs(Ty::F64, r, a))
    }

    /// `a cmp b` as a predicate.
    pub fn cmp(&mut self, cmp: Cmp, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(Scalar::Bool, |p| Ins::setp(cmp, Ty::F64, p, a, b))
    }

    /// `a cmp v` as a predicate.
    pub fn cmpc(&mut self, cmp: Cmp, a: &Reg, v: f64) -> Reg {
        self.new_reg(Scalar::Bool, |p| {
            Ins::setp(cmp, Ty::F64, p, a, Src::float(F, v))
        })
    }

    /// `p ? a : b`.
    pub fn sel(&mut self, p: &Reg, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::selp(Ty::F64, r, a, b, p))
    }

    /// `p ? a : b` with a constant `a`.
    pub fn selc(&mut self, p: &Reg, a: f64, b: &Reg) -> Reg {
        self.new_reg(F, |r| Ins::selp(Ty::F64, r, Src::float(F, a), b, p))
    }

    /// The predicate `a && b`.
    pub fn and(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(Scalar::Bool, |p| Ins::and(Ty::Pred, p, a, b))
    }

    /// The predicate `a || b`.
    pub fn or(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(Scalar::Bool, |p| Ins::or(Ty::Pred, p, a, b))
    }

    /// The predicate `a != b`.
    pub fn xor(&mut self, a: &Reg, b: &Reg) -> Reg {
        self.new_reg(Scalar::Bool, |p| Ins::xor(Ty::Pred, p, a, b))
    }

    /// The predicate `!a`.
    pub fn not(&mut self, a: &Reg) -> Reg {
        self.new_reg(Scalar::Bool, |p| Ins::not(Ty::Pred, p, a))
    }

    /// Horner: `((c[0] z + c[1]) z + ...) z + c[n-1]`.
    pub fn horner(&mut self, z: &Reg, cs: &[f64]) -> Reg {
        let mut acc = self.c(cs[0]);
        for &cv in &cs[1..] {
            let c = self.c(cv);
            acc = self.fma(&acc, z, &c);
        }
        acc
    }

    /// `2^e` for an `s32` register `e` in `-1022..=1023` (its exponent bits).
    pub fn pow2(&mut self, e: &Reg) -> Reg {
        let b = self.k.reg(Scalar::U32);
        self.k.emit(Ins::add(Ty::S32, &b, e, 1023));
        let w = self.k.reg(Scalar::U64);
        self.k.emit(Ins::cvt(Ty::U64, Ty::U32, &w, &b));
        self.k.emit(Ins::shl(Ty::B64, &w, &w, 52));
        self.new_reg(F, |r| Ins::mov(Ty::B64, r, &w))
    }
}
