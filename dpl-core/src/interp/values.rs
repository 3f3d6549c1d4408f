//! [`Value`]s to and from Rust values ([`ConversionError`] when the shape is not the one
//! asked for), and their comparison within a tolerance ([`Value::close_to`]).

use std::sync::Arc;

use super::Value;
use crate::float16::{bf16, f16};

/// A [`Value`] that does not have the shape a conversion to a Rust type expects.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("expected {expected}, found {found}")]
pub struct ConversionError {
    /// The Rust type asked for.
    pub expected: &'static str,
    /// The value found (its text form).
    pub found: String,
}

macro_rules! scalar_conversions {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Value {
            fn from(x: $t) -> Value {
                Value::$v(x)
            }
        }
        impl TryFrom<Value> for $t {
            type Error = ConversionError;
            fn try_from(v: Value) -> Result<$t, ConversionError> {
                match v {
                    Value::$v(x) => Ok(x),
                    other => Err(ConversionError { expected: stringify!($t), found: other.to_string() }),
                }
            }
        }
    )*};
}
scalar_conversions!(bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64, usize => Usize, f16 => F16, bf16 => BF16, f32 => F32, f64 => F64);

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(xs: Vec<T>) -> Value {
        Value::seq(xs.into_iter().map(Into::into).collect())
    }
}

impl<T: Clone + Into<Value>> From<&[T]> for Value {
    fn from(xs: &[T]) -> Value {
        Value::seq(xs.iter().cloned().map(Into::into).collect())
    }
}

impl From<()> for Value {
    fn from(_: ()) -> Value {
        Value::unit()
    }
}

impl<A: Into<Value>, B: Into<Value>> From<(A, B)> for Value {
    fn from((a, b): (A, B)) -> Value {
        Value::Tuple(vec![a.into(), b.into()])
    }
}

impl<A: Into<Value>, B: Into<Value>, C: Into<Value>> From<(A, B, C)> for Value {
    fn from((a, b, c): (A, B, C)) -> Value {
        Value::Tuple(vec![a.into(), b.into(), c.into()])
    }
}

impl Value {
    /// `true` when the two values are equal, floats within the relative tolerance `rel`
    /// (`|x - y| <= rel * (1 + max(|x|, |y|))`; `rel == 0` means bit-exact), a NaN equal
    /// only to a NaN with the same bits (every place produces the same NaN,
    /// [`crate::nan`]): how results of places that may reassociate float operations are
    /// compared.
    pub fn close_to(&self, other: &Value, rel: f64) -> bool {
        let near = |x: f64, y: f64| {
            if rel == 0.0 || x.is_nan() || y.is_nan() {
                x.to_bits() == y.to_bits()
            } else {
                (x - y).abs() <= rel * (1.0 + x.abs().max(y.abs()))
            }
        };
        match (self, other) {
            (Value::F32(x), Value::F32(y)) if rel == 0.0 || x.is_nan() || y.is_nan() => {
                x.to_bits() == y.to_bits()
            }
            (Value::F32(x), Value::F32(y)) => near(f64::from(*x), f64::from(*y)),
            (Value::F16(x), Value::F16(y)) => near(x.to_f64(), y.to_f64()),
            (Value::BF16(x), Value::BF16(y)) => near(x.to_f64(), y.to_f64()),
            (Value::F64(x), Value::F64(y)) => near(*x, *y),
            (Value::Seq(xs), Value::Seq(ys)) => {
                xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| x.close_to(y, rel))
            }
            (Value::Tuple(xs), Value::Tuple(ys)) => {
                xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| x.close_to(y, rel))
            }
            _ => self == other,
        }
    }
}

impl<T: TryFrom<Value, Error = ConversionError>> TryFrom<Value> for Vec<T> {
    type Error = ConversionError;
    fn try_from(v: Value) -> Result<Vec<T>, ConversionError> {
        match v {
            Value::Seq(s) => {
                let items = Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone());
                items.into_iter().map(T::try_from).collect()
            }
            other => Err(ConversionError {
                expected: "a sequence",
                found: other.to_string(),
            }),
        }
    }
}

impl<A, B> TryFrom<Value> for (A, B)
where
    A: TryFrom<Value, Error = ConversionError>,
    B: TryFrom<Value, Error = ConversionError>,
{
    type Error = ConversionError;
    fn try_from(v: Value) -> Result<(A, B), ConversionError> {
        match v {
            Value::Tuple(vs) if vs.len() == 2 => {
                let mut it = vs.into_iter();
                let (a, b) = (
                    it.next().unwrap_or(Value::unit()),
                    it.next().unwrap_or(Value::unit()),
                );
                Ok((A::try_from(a)?, B::try_from(b)?))
            }
            other => Err(ConversionError {
                expected: "a pair",
                found: other.to_string(),
            }),
        }
    }
}

impl TryFrom<Value> for () {
    type Error = ConversionError;
    fn try_from(v: Value) -> Result<(), ConversionError> {
        match v {
            Value::Tuple(vs) if vs.is_empty() => Ok(()),
            other => Err(ConversionError {
                expected: "()",
                found: other.to_string(),
            }),
        }
    }
}
