//! The types of instructions (`.u32`, `.b64`, `.pred`, ...) and how each scalar type of
//! dpl is spelled in arithmetic, in untyped moves and in memory.

use dpl_core::ir::Scalar;

spelled! {
    /// The type suffix of an instruction.
    pub(crate) enum Ty {
        /// A predicate.
        Pred = "pred",
        /// An unsigned byte (memory only).
        U8 = "u8",
        /// Untyped 32 bits.
        B32 = "b32",
        /// Untyped 64 bits.
        B64 = "b64",
        /// Unsigned 32-bit integer.
        U32 = "u32",
        /// Unsigned 64-bit integer.
        U64 = "u64",
        /// Signed 32-bit integer.
        S32 = "s32",
        /// Signed 64-bit integer.
        S64 = "s64",
        /// 32-bit float.
        F32 = "f32",
        /// 64-bit float.
        F64 = "f64",
    }
}

/// The type of arithmetic and comparisons on `s`: `s32`, `u64`, `f32`, ... (`pred` for
/// `bool`).
pub(crate) fn arith(s: Scalar) -> Ty {
    match s {
        Scalar::Bool => Ty::Pred,
        Scalar::I32 => Ty::S32,
        Scalar::U32 => Ty::U32,
        Scalar::I64 => Ty::S64,
        Scalar::U64 | Scalar::Usize => Ty::U64,
        Scalar::F32 => Ty::F32,
        Scalar::F64 => Ty::F64,
    }
}

/// The untyped type of the same width: `b32` or `b64` (`pred` for `bool`).
pub(crate) fn bits(s: Scalar) -> Ty {
    match s {
        Scalar::Bool => Ty::Pred,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => Ty::B32,
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => Ty::B64,
    }
}

/// Width in bits of the register class (`bool` counts as 1).
pub(crate) fn width(s: Scalar) -> u32 {
    match s {
        Scalar::Bool => 1,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
        _ => 64,
    }
}

/// The type used in memory (loads, stores, buffers): `bool` is one byte.
pub(crate) fn mem(s: Scalar) -> Ty {
    match s {
        Scalar::Bool => Ty::U8,
        Scalar::I32 | Scalar::U32 => Ty::U32,
        Scalar::I64 | Scalar::U64 | Scalar::Usize => Ty::U64,
        Scalar::F32 => Ty::F32,
        Scalar::F64 => Ty::F64,
    }
}
