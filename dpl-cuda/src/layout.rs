//! The one layout of data on the device: sequences as structure of arrays of scalar
//! leaves, and the bytes of each leaf. The code generator (loads, stores, buffers, shared
//! memory), the run time (transfers, read-backs) and the `dpl` facade (Rust values to and
//! from columns) all use these definitions.
//!
//! * **Leaves.** A sequence's element type is a scalar or a tuple of scalars (tuples
//!   nest); its *leaves* ([`leaves`]) are its scalars in order, depth first: `(u32, (bool,
//!   f64))` has the leaves `u32`, `bool`, `f64`. A flat sequence of `n` elements is one
//!   buffer per leaf, a *column*, each holding that leaf of every element (structure of
//!   arrays). A nested sequence `[[T]]` is the rows' elements concatenated (the columns
//!   of `T`) plus `rows + 1` `usize` row offsets. Sequences as elements have no leaves:
//!   nesting is only through offsets.
//! * **Bytes.** Each leaf is stored little-endian at its device width ([`size_of`]):
//!   `bool` one byte (0 or 1; any nonzero byte reads as `true`), `i8` and `u8` one, `i16`,
//!   `u16`, `f16` and `bf16` two (their IEEE bits), `i32`, `u32` and `f32` four, `i64`, `u64`, `f64` and `usize` eight (`usize` is 64-bit on the device, whatever
//!   the host's width). Element `i` of a column is at byte `i * size_of(leaf)` from its
//!   start, and buffers start at least 256-byte aligned (`cuMemAlloc`), so every access is
//!   naturally aligned. In shared memory a leaf takes a slot of at least a 32-bit word
//!   ([`slot_bytes`]).
//! * **Host columns.** On the host the same columns are byte vectors (the run time's
//!   `HostColumns`), so each one crosses to the device in one copy. They are written from
//!   and read into interpreter [`Value`]s ([`put_value`], [`get_value`]) or straight from
//!   and into Rust values with no `Value` per element ([`Elem`], for the scalars dpl knows
//!   and tuples of them).

use dpl_core::float16::{bf16, f16};
use dpl_core::interp::Value;
use dpl_core::ir::{Scalar, Type};

use crate::Unsupported;

/// Size in bytes of one scalar in device memory.
pub const fn size_of(s: Scalar) -> u64 {
    match s {
        Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
        Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => 8,
    }
}

/// Size in bytes of a leaf's slot in the shared-memory arrays of a kernel's tile: its
/// width, at least a 32-bit word (a `bool`, `u8` or `i16` takes a 32-bit slot, so a thread's consecutive
/// items are a whole number of words apart).
pub const fn slot_bytes(s: Scalar) -> u32 {
    let b = size_of(s) as u32;
    if b < 4 { 4 } else { b }
}

/// The leaves of a scalar or (nested) tuple of scalars, in order.
pub fn leaves(ty: &Type) -> Result<Vec<Scalar>, Unsupported> {
    scalar_leaves(ty, false)
}

/// The scalar leaves of a type, in order; its sequences are skipped with `skip_seqs`
/// (a tuple holding sequences: its scalars), an error otherwise (sequences have no
/// leaves: they are elements only through row offsets).
pub fn scalar_leaves(ty: &Type, skip_seqs: bool) -> Result<Vec<Scalar>, Unsupported> {
    fn go(t: &Type, skip: bool, out: &mut Vec<Scalar>) -> Result<(), Unsupported> {
        let message = match t {
            Type::Scalar(s) => {
                out.push(*s);
                return Ok(());
            }
            Type::Tuple(ts) => return ts.iter().try_for_each(|t| go(t, skip, out)),
            Type::Seq(_) if skip => return Ok(()),
            Type::Seq(_) => format!("sequences as elements ({t})"),
            Type::Infer | Type::Param(..) => "an untyped variable".to_string(),
        };
        Err(Unsupported {
            message,
            too_large: None,
        })
    }
    let mut out = Vec::new();
    go(ty, skip_seqs, &mut out)?;
    Ok(out)
}

/// The scalar leaves of a host value, in order, appended to `out`.
pub fn value_leaves(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Tuple(vs) => vs.iter().for_each(|v| value_leaves(v, out)),
        other => out.push(other.clone()),
    }
}

/// Rebuilds a value of type `ty` from its leaves (`None` when they run out).
pub fn assemble(ty: &Type, leaves: &mut impl Iterator<Item = Value>) -> Option<Value> {
    Some(match ty {
        Type::Tuple(ts) => Value::Tuple(
            ts.iter()
                .map(|t| assemble(t, leaves))
                .collect::<Option<_>>()?,
        ),
        _ => leaves.next()?,
    })
}

/// Appends the device bytes of a scalar host value to `col`; `false` (nothing appended)
/// for a value that is not a scalar.
pub fn put_value(v: &Value, col: &mut Vec<u8>) -> bool {
    match *v {
        Value::Bool(x) => x.put_leaf(col),
        Value::I8(x) => x.put_leaf(col),
        Value::U8(x) => x.put_leaf(col),
        Value::I16(x) => x.put_leaf(col),
        Value::U16(x) => x.put_leaf(col),
        Value::F16(x) => x.put_leaf(col),
        Value::BF16(x) => x.put_leaf(col),
        Value::I32(x) => x.put_leaf(col),
        Value::U32(x) => x.put_leaf(col),
        Value::I64(x) => x.put_leaf(col),
        Value::U64(x) => x.put_leaf(col),
        Value::Usize(x) => x.put_leaf(col),
        Value::F32(x) => x.put_leaf(col),
        Value::F64(x) => x.put_leaf(col),
        Value::Seq(_) | Value::Tuple(_) => return false,
    }
    true
}

/// The host value of a leaf of type `s` from its device bytes (`bytes` holds at least
/// [`size_of`]`(s)` of them).
pub fn get_value(s: Scalar, bytes: &[u8]) -> Value {
    match s {
        Scalar::Bool => Value::Bool(bool::get_leaf(bytes)),
        Scalar::I8 => Value::I8(i8::get_leaf(bytes)),
        Scalar::U8 => Value::U8(u8::get_leaf(bytes)),
        Scalar::I16 => Value::I16(i16::get_leaf(bytes)),
        Scalar::U16 => Value::U16(u16::get_leaf(bytes)),
        Scalar::F16 => Value::F16(f16::get_leaf(bytes)),
        Scalar::BF16 => Value::BF16(bf16::get_leaf(bytes)),
        Scalar::I32 => Value::I32(i32::get_leaf(bytes)),
        Scalar::U32 => Value::U32(u32::get_leaf(bytes)),
        Scalar::I64 => Value::I64(i64::get_leaf(bytes)),
        Scalar::U64 => Value::U64(u64::get_leaf(bytes)),
        Scalar::Usize => Value::Usize(usize::get_leaf(bytes)),
        Scalar::F32 => Value::F32(f32::get_leaf(bytes)),
        Scalar::F64 => Value::F64(f64::get_leaf(bytes)),
    }
}

/// Element types of sequences as Rust types: the scalars dpl knows and tuples of them (up
/// to 8 fields, nesting), with their leaves' bytes.
pub trait Elem: Sized {
    /// The element type in the IR.
    fn ty() -> Type;
    /// The number of leaves (1 for a scalar).
    const LEAVES: usize;
    /// Appends the bytes of each leaf of `self` to its column, `cols[0..LEAVES]`.
    fn put(&self, cols: &mut [Vec<u8>]);
    /// Element `i` of the columns `cols[0..LEAVES]` (written by [`Elem::put`] or read from
    /// the device).
    fn get(cols: &[Vec<u8>], i: usize) -> Self;
    /// [`Elem::put`] of every item in order (scalars write their column in one pass).
    fn put_all(items: &[Self], cols: &mut [Vec<u8>]) {
        for x in items {
            x.put(cols);
        }
    }
    /// Elements `0..len` of the columns ([`Elem::get`] of each; scalars read their column
    /// in one pass).
    fn get_all(cols: &[Vec<u8>], len: usize) -> Vec<Self> {
        (0..len).map(|i| Self::get(cols, i)).collect()
    }
    /// The interpreter value of `self`.
    fn to_value(&self) -> Value;
    /// Back from an interpreter value (`None` when it is not one of `Self::ty()`).
    fn from_value(v: &Value) -> Option<Self>;
}

/// The scalar Rust types: the bytes of one leaf.
pub trait Leaf: Elem + Copy {
    /// Appends the device bytes of `self`.
    fn put_leaf(self, col: &mut Vec<u8>);
    /// The value in the first [`size_of`] bytes of `bytes`.
    fn get_leaf(bytes: &[u8]) -> Self;
}

/// For each scalar: its Rust type, [`Scalar`] and [`Value`] variant, its device width, and
/// its bytes both ways (the only place they are written).
macro_rules! scalars {
    ($($t:ty => $v:ident, $w:literal, $to:expr, $from:expr;)*) => {$(
        const _: () = assert!(size_of(Scalar::$v) == $w);

        impl Leaf for $t {
            #[inline]
            fn put_leaf(self, col: &mut Vec<u8>) {
                col.extend_from_slice(&($to)(self));
            }
            #[inline]
            fn get_leaf(bytes: &[u8]) -> Self {
                let b: [u8; $w] = bytes[..$w].try_into().expect("a leaf's bytes");
                ($from)(b)
            }
        }

        impl Elem for $t {
            fn ty() -> Type {
                Type::Scalar(Scalar::$v)
            }
            const LEAVES: usize = 1;
            #[inline]
            fn put(&self, cols: &mut [Vec<u8>]) {
                self.put_leaf(&mut cols[0]);
            }
            #[inline]
            fn get(cols: &[Vec<u8>], i: usize) -> Self {
                Self::get_leaf(&cols[0][i * $w..])
            }
            fn put_all(items: &[Self], cols: &mut [Vec<u8>]) {
                let col = &mut cols[0];
                let start = col.len();
                col.resize(start + $w * items.len(), 0);
                for (c, &x) in col[start..].chunks_exact_mut($w).zip(items) {
                    c.copy_from_slice(&($to)(x));
                }
            }
            fn get_all(cols: &[Vec<u8>], len: usize) -> Vec<Self> {
                cols[0][..len * $w]
                    .chunks_exact($w)
                    .map(Self::get_leaf)
                    .collect()
            }
            #[inline]
            fn to_value(&self) -> Value {
                Value::$v(*self)
            }
            fn from_value(v: &Value) -> Option<Self> {
                match v {
                    Value::$v(x) => Some(*x),
                    _ => None,
                }
            }
        }
    )*};
}

scalars! {
    bool => Bool, 1, |x: bool| [u8::from(x)], |b: [u8; 1]| b[0] != 0;
    i8 => I8, 1, i8::to_le_bytes, i8::from_le_bytes;
    u8 => U8, 1, u8::to_le_bytes, u8::from_le_bytes;
    i16 => I16, 2, i16::to_le_bytes, i16::from_le_bytes;
    u16 => U16, 2, u16::to_le_bytes, u16::from_le_bytes;
    f16 => F16, 2, f16::to_le_bytes, f16::from_le_bytes;
    bf16 => BF16, 2, bf16::to_le_bytes, bf16::from_le_bytes;
    i32 => I32, 4, i32::to_le_bytes, i32::from_le_bytes;
    u32 => U32, 4, u32::to_le_bytes, u32::from_le_bytes;
    i64 => I64, 8, i64::to_le_bytes, i64::from_le_bytes;
    u64 => U64, 8, u64::to_le_bytes, u64::from_le_bytes;
    usize => Usize, 8, |x: usize| (x as u64).to_le_bytes(), |b| u64::from_le_bytes(b) as usize;
    f32 => F32, 4, f32::to_le_bytes, f32::from_le_bytes;
    f64 => F64, 8, f64::to_le_bytes, f64::from_le_bytes;
}

macro_rules! tuples {
    ($(($($t:ident $i:tt),+)),*) => {$(
        impl<$($t: Elem),+> Elem for ($($t,)+) {
            fn ty() -> Type {
                Type::Tuple(vec![$($t::ty()),+])
            }
            const LEAVES: usize = 0 $(+ $t::LEAVES)+;
            fn put(&self, cols: &mut [Vec<u8>]) {
                let mut k = 0;
                $(
                    self.$i.put(&mut cols[k..]);
                    k += $t::LEAVES;
                )+
                let _ = k;
            }
            fn get(cols: &[Vec<u8>], i: usize) -> Self {
                let mut k = 0;
                let v = ($({
                    let x = $t::get(&cols[k..], i);
                    k += $t::LEAVES;
                    x
                },)+);
                let _ = k;
                v
            }
            fn to_value(&self) -> Value {
                Value::Tuple(vec![$(self.$i.to_value()),+])
            }
            fn from_value(v: &Value) -> Option<Self> {
                match v {
                    Value::Tuple(items) if items.len() == [$($i),+].len() => {
                        Some(($($t::from_value(&items[$i])?,)+))
                    }
                    _ => None,
                }
            }
        }
    )*};
}

/// Calls the macro `$m` with every tuple arity of the language (1 to 8), each as
/// `(TypeParameter index, ...)`: the one list behind the tuple impls of the run time and
/// of the facade.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_tuple {
    ($m:ident) => {
        $m!(
            (A 0),
            (A 0, B 1),
            (A 0, B 1, C 2),
            (A 0, B 1, C 2, D 3),
            (A 0, B 1, C 2, D 3, E 4),
            (A 0, B 1, C 2, D 3, E 4, F 5),
            (A 0, B 1, C 2, D 3, E 4, F 5, G 6),
            (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
        );
    };
}

crate::for_each_tuple!(tuples);

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns written by `put` read back by `get`, for every scalar and nested tuples:
    /// one column per leaf of the type, each `size_of(leaf)` bytes per element, the same
    /// bytes as the host values' encoding.
    #[test]
    fn columns_round_trip() {
        fn check<T: Elem + PartialEq + std::fmt::Debug + Clone>(items: &[T]) {
            let ls = leaves(&T::ty()).expect("an element type");
            assert_eq!(ls.len(), T::LEAVES);
            let mut cols = vec![Vec::new(); T::LEAVES];
            items.iter().for_each(|x| x.put(&mut cols));
            for (c, &l) in cols.iter().zip(&ls) {
                assert_eq!(c.len(), size_of(l) as usize * items.len());
            }
            let back: Vec<T> = (0..items.len()).map(|i| T::get(&cols, i)).collect();
            assert_eq!(back, items);
            // The one-pass forms agree with the element-wise ones (and append).
            let mut all = vec![Vec::new(); T::LEAVES];
            let (a, b) = items.split_at(items.len() / 2);
            T::put_all(a, &mut all);
            T::put_all(b, &mut all);
            assert_eq!(all, cols);
            assert_eq!(T::get_all(&cols, items.len()), items);
            // Interpreter values: the same leaves and bytes.
            let mut from_values = vec![Vec::new(); T::LEAVES];
            for x in items {
                let v = x.to_value();
                assert!(v.conforms(&T::ty()));
                assert_eq!(T::from_value(&v).as_ref(), Some(x));
                let mut vs = Vec::new();
                value_leaves(&v, &mut vs);
                for (c, leaf) in from_values.iter_mut().zip(&vs) {
                    assert!(put_value(leaf, c));
                }
                let mut it = vs.into_iter();
                assert_eq!(assemble(&T::ty(), &mut it), Some(v));
            }
            assert_eq!(from_values, cols);
            for i in 0..items.len() {
                let vs = ls
                    .iter()
                    .zip(&cols)
                    .map(|(&l, c)| get_value(l, &c[i * size_of(l) as usize..]));
                let v = assemble(&T::ty(), &mut vs.collect::<Vec<_>>().into_iter());
                assert_eq!(v.as_ref().and_then(T::from_value).as_ref(), Some(&items[i]));
            }
        }
        check(&[true, false, true]);
        check(&[i8::MIN, -1, 0, i8::MAX]);
        check(&[u8::MAX, 0, 7]);
        check(&[i16::MIN, -300, i16::MAX]);
        check(&[u16::MAX, 1]);
        check(&[
            (f16::MAX, bf16::MIN_POSITIVE),
            (f16::from_f32(-0.5), bf16::ONE),
        ]);
        check(&[(7u8, (-2i16, 3u16), -5i8), (255, (i16::MIN, 0), i8::MAX)]);
        check(&[i32::MIN, -1, 0, i32::MAX]);
        check(&[u32::MAX, 3]);
        check(&[i64::MIN, 5]);
        check(&[u64::MAX, 0]);
        check(&[usize::MAX, 17]);
        check(&[f32::MIN_POSITIVE, -0.0, f32::INFINITY]);
        check(&[f64::MAX, -2.5]);
        check(&[(1u32, (true, -3.5f64), 9i64), (0, (false, 1e300), -1)]);
    }

    /// The bytes are little-endian at the device widths: `bool` one byte (any nonzero byte
    /// reads as `true`), `usize` eight whatever the host's width.
    #[test]
    fn leaf_bytes() {
        let mut col = Vec::new();
        7usize.put_leaf(&mut col);
        true.put_leaf(&mut col);
        (-2i32).put_leaf(&mut col);
        1.5f64.put_leaf(&mut col);
        (-2i16).put_leaf(&mut col);
        0xabu8.put_leaf(&mut col);
        assert_eq!(
            col,
            [
                [7, 0, 0, 0, 0, 0, 0, 0].as_slice(),
                &[1],
                &[0xfe, 0xff, 0xff, 0xff],
                &1.5f64.to_le_bytes(),
                &[0xfe, 0xff],
                &[0xab],
            ]
            .concat()
        );
        assert!(bool::get_leaf(&[2]));
        assert_eq!(get_value(Scalar::Bool, &[0]), Value::Bool(false));
        assert_eq!(
            get_value(Scalar::Usize, &col[..8]),
            Value::Usize(7),
            "usize is 8 bytes on the device"
        );
        assert!(!put_value(&Value::unit(), &mut col));
        assert_eq!(slot_bytes(Scalar::Bool), 4);
        assert_eq!(slot_bytes(Scalar::U8), 4);
        assert_eq!(slot_bytes(Scalar::I16), 4);
        assert_eq!(slot_bytes(Scalar::F64), 8);
    }

    /// Types without leaves: sequences as elements (unless skipped) and untyped ones.
    #[test]
    fn leaves_of_types() {
        let t = |s| Type::Scalar(s);
        let pair = Type::Tuple(vec![t(Scalar::U32), Type::seq(t(Scalar::F32))]);
        assert_eq!(
            scalar_leaves(&pair, true),
            Ok(vec![Scalar::U32]),
            "the sequence is skipped"
        );
        assert_eq!(
            leaves(&pair).map_err(|e| e.message),
            Err("sequences as elements ([f32])".to_string())
        );
        assert_eq!(
            leaves(&Type::Infer).map_err(|e| e.message),
            Err("an untyped variable".to_string())
        );
    }
}
