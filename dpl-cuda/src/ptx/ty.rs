//! The types of instructions (`.u32`, `.b64`, `.pred`, ...) and how each scalar type of
//! dpl is spelled in arithmetic, in untyped moves and in memory.

use dpl_core::ir::Scalar;

spelled! {
    /// The type suffix of an instruction.
    pub(crate) enum Ty {
        /// A predicate.
        Pred = "pred",
        /// An unsigned byte (memory and conversions only: PTX has no 8-bit registers).
        U8 = "u8",
        /// A signed byte (memory and conversions only).
        S8 = "s8",
        /// Unsigned 16 bits (memory and conversions only: dpl keeps them in 32-bit registers).
        U16 = "u16",
        /// Signed 16 bits (memory and conversions only).
        S16 = "s16",
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
        /// IEEE half precision (conversions only: dpl holds `f16` values as their `f32`).
        F16 = "f16",
        /// 32-bit float.
        F32 = "f32",
        /// 64-bit float.
        F64 = "f64",
    }
}

/// The type of arithmetic and comparisons on `s`: `s32`, `u64`, `f32`, ... (`pred` for
/// `bool`). The 8- and 16-bit integers live in 32-bit registers, sign- or zero-extended
/// (see [`narrow`]), so they compute as `s32` and `u32`.
pub(crate) fn arith(s: Scalar) -> Ty {
    match s {
        Scalar::Bool => Ty::Pred,
        Scalar::I8 | Scalar::I16 | Scalar::I32 => Ty::S32,
        Scalar::U8 | Scalar::U16 | Scalar::U32 => Ty::U32,
        Scalar::I64 => Ty::S64,
        Scalar::U64 | Scalar::Usize => Ty::U64,
        // The 16-bit floats are held as their (exact) `f32` value.
        Scalar::F16 | Scalar::BF16 | Scalar::F32 => Ty::F32,
        Scalar::F64 => Ty::F64,
    }
}

/// The untyped type of the same width: `b32` or `b64` (`pred` for `bool`).
pub(crate) fn bits(s: Scalar) -> Ty {
    match s {
        Scalar::Bool => Ty::Pred,
        Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16 => Ty::B32,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => Ty::B32,
        Scalar::F16 | Scalar::BF16 => Ty::B32,
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => Ty::B64,
    }
}

/// Width in bits of the register class (`bool` counts as 1; the 8- and 16-bit integers
/// are held in 32-bit registers).
pub(crate) fn width(s: Scalar) -> u32 {
    match s {
        Scalar::Bool => 1,
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => 64,
        _ => 32,
    }
}

/// The memory type of an 8- or 16-bit integer (`s8`, `u8`, `s16`, `u16`), held in a 32-bit
/// register sign-extended (signed) or zero-extended (unsigned) to 32 bits at all times:
/// loads (`ld.s8` into a 32-bit register extends) and [`arith`] comparisons, shifts right,
/// remainders and bitwise operations keep that form; an operation that may carry past the
/// width (`+ - * /`, `<<`, `!`, negation, `abs`, a cast) is followed by `cvt.s32.s8`-style re-extension,
/// which wraps the result at the type's width. `None` for the other types.
pub(crate) fn narrow(s: Scalar) -> Option<Ty> {
    matches!(s, Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16).then(|| mem(s))
}

/// The type used in memory (loads, stores, buffers): `bool` is one byte, the 8- and 16-bit
/// integers their own width, `f16` and `bf16` their 16 bits.
pub(crate) fn mem(s: Scalar) -> Ty {
    match s {
        Scalar::Bool | Scalar::U8 => Ty::U8,
        Scalar::I8 => Ty::S8,
        Scalar::I16 => Ty::S16,
        Scalar::U16 | Scalar::F16 | Scalar::BF16 => Ty::U16,
        Scalar::I32 | Scalar::U32 => Ty::U32,
        Scalar::I64 | Scalar::U64 | Scalar::Usize => Ty::U64,
        Scalar::F32 => Ty::F32,
        Scalar::F64 => Ty::F64,
    }
}
