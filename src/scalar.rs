//! The bounds of generic `#[parallel]` functions: [`Scalar`], [`Num`], [`Int`], [`Float`].
//!
//! ```
//! use dpl::prelude::*;
//!
//! #[parallel]
//! fn dot<T: Float>(x: &[T], y: &[T]) -> T {
//!     sum(map(|a, b| a * b, x, y))
//! }
//!
//! assert_eq!(dot(&[1.0f32, 2.0], &[3.0, 4.0]), 11.0);
//! assert_eq!(dot(&[1.0f64, 2.0], &[3.0, 4.0]), 11.0);
//! ```
//!
//! The traits are sealed: their implementations are exactly dpl's scalar types, so the set
//! of types a bound admits is closed and `#[parallel]` generates the code (CPU, and PTX with
//! the `gpu` features) for each of them when the function is compiled. A call picks the
//! instantiation of its type; the choice is made by the Rust compiler (on a constant of
//! each type), so a generic function costs nothing over the same function written for one
//! type, and only the instantiations a program calls are compiled to machine code. `#[parallel(types(T = "f32, f64"))]` narrows the set (on a generic function
//! of a `#[parallel] mod`, as an attribute of the function itself); a call with another
//! type is then a compile error.
//!
//! Inside the body, `T::ZERO`, `T::ONE`, `T::MIN` and `T::MAX` are available, `v as T`
//! converts from any scalar, and an unsuffixed literal takes the type the context asks for
//! (`v * 2` with `v: T` and `T: Float` multiplies by `2.0`).

use core::any::TypeId;
use core::fmt::Debug;

use crate::{bf16, f16};

mod sealed {
    /// Implemented by dpl's scalar types only.
    pub trait Sealed {}
}

/// Every scalar type of the language: `bool`, the integers `i8 u8 i16 u16 i32 u32 i64 u64
/// usize` and the floats.
pub trait Scalar:
    sealed::Sealed + Copy + Send + Sync + 'static + Debug + Default + PartialEq + PartialOrd
{
    // Which type this is, one flag per type, for the dispatch of generated code: an `if`
    // on an associated constant is decided when the caller is monomorphized, and the
    // instantiations on the untaken branches are never compiled (a `TypeId` comparison
    // leaves them to LLVM, which compiles them first).
    #[doc(hidden)]
    const __IS_BOOL: bool = false;
    #[doc(hidden)]
    const __IS_I8: bool = false;
    #[doc(hidden)]
    const __IS_U8: bool = false;
    #[doc(hidden)]
    const __IS_I16: bool = false;
    #[doc(hidden)]
    const __IS_U16: bool = false;
    #[doc(hidden)]
    const __IS_I32: bool = false;
    #[doc(hidden)]
    const __IS_U32: bool = false;
    #[doc(hidden)]
    const __IS_I64: bool = false;
    #[doc(hidden)]
    const __IS_U64: bool = false;
    #[doc(hidden)]
    const __IS_USIZE: bool = false;
    #[doc(hidden)]
    const __IS_F16: bool = false;
    #[doc(hidden)]
    const __IS_BF16: bool = false;
    #[doc(hidden)]
    const __IS_F32: bool = false;
    #[doc(hidden)]
    const __IS_F64: bool = false;
}

/// The number types: the integers and the floats (every [`Scalar`] but `bool`).
pub trait Num: Scalar {
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// The smallest value (for a float, the most negative finite value).
    const MIN: Self;
    /// The largest value (for a float, the largest finite value).
    const MAX: Self;
}

/// The integer types; their arithmetic wraps on every place.
pub trait Int: Num + Eq + Ord {}

/// The floating-point types: `f16`, `bf16` (the `half` crate's), `f32` and `f64`.
pub trait Float: Num {}

impl sealed::Sealed for bool {}
impl Scalar for bool {
    const __IS_BOOL: bool = true;
}

macro_rules! num {
    ($kind:ident: $($t:ty, $is:ident => $zero:expr, $one:expr);* $(;)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const $is: bool = true;
        }
        impl Num for $t {
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            const MIN: Self = <$t>::MIN;
            const MAX: Self = <$t>::MAX;
        }
        impl $kind for $t {}
    )*};
}

num!(Int: i8, __IS_I8 => 0, 1; u8, __IS_U8 => 0, 1; i16, __IS_I16 => 0, 1;
    u16, __IS_U16 => 0, 1; i32, __IS_I32 => 0, 1; u32, __IS_U32 => 0, 1;
    i64, __IS_I64 => 0, 1; u64, __IS_U64 => 0, 1; usize, __IS_USIZE => 0, 1);
num!(Float: f16, __IS_F16 => f16::ZERO, f16::ONE; bf16, __IS_BF16 => bf16::ZERO, bf16::ONE;
    f32, __IS_F32 => 0.0, 1.0; f64, __IS_F64 => 0.0, 1.0);

/// True when `A` and `B` are the same type: the debug-build check of the dispatch code of
/// generic `#[parallel]` functions (which branches on the flags of [`Scalar`]).
#[doc(hidden)]
#[inline(always)]
pub fn same<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

/// Moves a value of type `A` into a variable of type `B`.
///
/// # Safety
///
/// `A` and `B` must be the same type. Generated dispatch code calls it only where the
/// per-type flags of [`Scalar`] (checked against [`same`] in debug builds) have shown that
/// the type parameters are the concrete types of the instantiation, and `A` and `B` are
/// the same type expression with those parameters replaced.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn retype<A, B>(a: A) -> B {
    assert!(core::mem::size_of::<A>() == core::mem::size_of::<B>());
    let a = core::mem::ManuallyDrop::new(a);
    // SAFETY: `A` and `B` are the same type (the caller's contract), so the bits of `a`
    // are a valid `B`; `a` is not dropped, so ownership moves to the result.
    unsafe { core::mem::transmute_copy::<A, B>(&a) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retype_moves_ownership_between_equal_types() {
        let v = vec![String::from("a"), String::from("b")];
        assert!(same::<Vec<String>, Vec<String>>());
        assert!(!same::<f32, f64>());
        // SAFETY: the same type.
        let w: Vec<String> = unsafe { retype::<Vec<String>, Vec<String>>(v) };
        assert_eq!(w, ["a", "b"]);
    }

    /// The dispatch's flags: exactly one per type, the type's own (the dispatch moves
    /// values between types on them, so a wrong flag would be undefined behaviour).
    #[test]
    fn each_type_has_its_own_flag() {
        fn flags<T: Scalar>() -> [bool; 14] {
            [
                T::__IS_BOOL,
                T::__IS_I8,
                T::__IS_U8,
                T::__IS_I16,
                T::__IS_U16,
                T::__IS_I32,
                T::__IS_U32,
                T::__IS_I64,
                T::__IS_U64,
                T::__IS_USIZE,
                T::__IS_F16,
                T::__IS_BF16,
                T::__IS_F32,
                T::__IS_F64,
            ]
        }
        let all = [
            flags::<bool>(),
            flags::<i8>(),
            flags::<u8>(),
            flags::<i16>(),
            flags::<u16>(),
            flags::<i32>(),
            flags::<u32>(),
            flags::<i64>(),
            flags::<u64>(),
            flags::<usize>(),
            flags::<f16>(),
            flags::<bf16>(),
            flags::<f32>(),
            flags::<f64>(),
        ];
        for (k, f) in all.iter().enumerate() {
            let set: Vec<usize> = (0..f.len()).filter(|&j| f[j]).collect();
            assert_eq!(set, [k], "type {k} in Scalar::ALL order");
        }
    }

    #[test]
    fn constants_match_the_types() {
        fn check<T: Num>(zero: T, one: T, min: T, max: T) {
            assert_eq!((T::ZERO, T::ONE, T::MIN, T::MAX), (zero, one, min, max));
        }
        check(0u8, 1, u8::MIN, u8::MAX);
        check(0i64, 1, i64::MIN, i64::MAX);
        check(0.0f32, 1.0, f32::MIN, f32::MAX);
        check(f16::from_f32(0.0), f16::from_f32(1.0), f16::MIN, f16::MAX);
    }
}
