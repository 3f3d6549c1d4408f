//! The reference interpreter: the meaning of the IR, at both levels.
//!
//! [`run()`] evaluates a [`Function`] on [`Value`]s, sequentially and deterministically. It is
//! the oracle of dpl's own tests: a pass (normalization, fusion) must not change what `run`
//! computes, and every backend must agree with it.
//!
//! # Semantics
//!
//! * Integer arithmetic wraps (`wrapping_add`, ...); `/` and `%` by zero are
//!   [`Error::DivideByZero`], `MIN / -1` wraps; shift amounts (any integer type) are taken
//!   modulo the bit width, as `wrapping_shl`. Floats follow IEEE as Rust does; `as` casts
//!   are Rust's (float to integer saturates, NaN gives 0); math functions are Rust's `std`
//!   ones (`min`/`max` of floats ignore a NaN, as `f32::min`). An `f16`/`bf16` operator or
//!   math function computes in `f32` on the exact `f32` values of its operands and rounds
//!   the result once ([`crate::float16`]); casts to them round once. Every NaN a float operator,
//!   math function, cast or literal produces is the canonical NaN of [`crate::nan`]
//!   (whatever the host produced); values that are only moved keep their bits.
//! * Primitives follow the table of [`Prim`]: `reduce`, `scan` and `scatter_reduce` apply
//!   their operator left to right (in index order); `sum` starts from zero of the element type
//!   (`-0.0` for floats, as Rust's `Iterator::sum`, so an empty sum is `-0.0`), `min`/`max`
//!   from the first element (so the `min` of one element is that element, bits included); `min`/`max` of an empty sequence, mismatched lengths, indices (of any
//!   integer type) that are negative or not below the length, and `permute` indices that are
//!   not a permutation are errors; with repeated `scatter` indices the last write wins.
//!   `any`/`all`/`count` evaluate their predicate on every element (no short circuit), so a
//!   failing element is reported whatever the other elements are. `sort` and `sort_by_key`
//!   are stable and order by [`total_cmp`]: integers and `bool`s as Rust orders them
//!   (`false < true`), floats by IEEE 754 `totalOrder` (`f32::total_cmp`: `-NaN < -inf <
//!   ... < -0.0 < +0.0 < ... < +inf < +NaN`), tuples lexicographically.
//! * Combinators ([`Soac`]) evaluate `elem` for each index of `0..len` in order, then
//!   combine as their [`SoacKind`] says.
//! * An unchecked index ([`Expr::Index`] with `checked: None`) out of range is reported as
//!   [`Error::UncheckedIndex`]: a compiler bug, but never a panic of the interpreter.
//!
//! The function is checked with [`verify`] first; values of the wrong shape at run time
//! (possible only for ill-typed IR) give [`Error::Internal`]. The interpreter never panics.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use crate::float16::{self, bf16, f16};
use crate::ir::*;
use crate::nan::{canon_f32, canon_f64};
use crate::order;
use crate::run;
use crate::verify::{VerifyError, verify};

mod values;
pub use values::ConversionError;

/// A run-time value. Sequences are shared (`Arc`), so cloning a value is cheap.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `bool`
    Bool(bool),
    /// `i8`
    I8(i8),
    /// `u8`
    U8(u8),
    /// `i16`
    I16(i16),
    /// `u16`
    U16(u16),
    /// `i32`
    I32(i32),
    /// `u32`
    U32(u32),
    /// `i64`
    I64(i64),
    /// `u64`
    U64(u64),
    /// `usize`
    Usize(usize),
    /// `f16`
    F16(f16),
    /// `bf16`
    BF16(bf16),
    /// `f32`
    F32(f32),
    /// `f64`
    F64(f64),
    /// A sequence `[T]` (nested sequences are sequences of sequences).
    Seq(Arc<Vec<Value>>),
    /// A tuple; the empty tuple is the unit value.
    Tuple(Vec<Value>),
}

impl Value {
    /// A sequence value.
    pub fn seq(items: Vec<Value>) -> Value {
        Value::Seq(Arc::new(items))
    }

    /// The unit value `()`.
    pub fn unit() -> Value {
        Value::Tuple(Vec::new())
    }

    /// The scalar type of a scalar value.
    pub fn scalar_type(&self) -> Option<Scalar> {
        Some(match self {
            Value::Bool(_) => Scalar::Bool,
            Value::I8(_) => Scalar::I8,
            Value::U8(_) => Scalar::U8,
            Value::I16(_) => Scalar::I16,
            Value::U16(_) => Scalar::U16,
            Value::I32(_) => Scalar::I32,
            Value::U32(_) => Scalar::U32,
            Value::I64(_) => Scalar::I64,
            Value::U64(_) => Scalar::U64,
            Value::Usize(_) => Scalar::Usize,
            Value::F16(_) => Scalar::F16,
            Value::BF16(_) => Scalar::BF16,
            Value::F32(_) => Scalar::F32,
            Value::F64(_) => Scalar::F64,
            Value::Seq(_) | Value::Tuple(_) => return None,
        })
    }

    /// True when the value has type `ty` ([`Type::Infer`] accepts anything).
    pub fn conforms(&self, ty: &Type) -> bool {
        match (self, ty) {
            (_, Type::Infer) => true,
            (Value::Seq(s), Type::Seq(t)) => s.iter().all(|v| v.conforms(t)),
            (Value::Tuple(vs), Type::Tuple(ts)) => {
                vs.len() == ts.len() && vs.iter().zip(ts).all(|(v, t)| v.conforms(t))
            }
            (v, Type::Scalar(s)) => v.scalar_type() == Some(*s),
            _ => false,
        }
    }

    /// The value as an index or count, if it is an integer (of any type).
    pub fn as_int(&self) -> Option<i128> {
        Some(match *self {
            Value::I8(x) => x.into(),
            Value::U8(x) => x.into(),
            Value::I16(x) => x.into(),
            Value::U16(x) => x.into(),
            Value::I32(x) => x.into(),
            Value::U32(x) => x.into(),
            Value::I64(x) => x.into(),
            Value::U64(x) => x.into(),
            Value::Usize(x) => x as i128,
            _ => return None,
        })
    }

    /// The zero of a numeric scalar type that `sum` starts from: `0`, or `-0.0` for floats
    /// (the identity of `+`, which Rust's `Iterator::sum` starts from too).
    pub fn zero(s: Scalar) -> Option<Value> {
        Some(match s {
            Scalar::Bool => return None,
            Scalar::I8 => Value::I8(0),
            Scalar::U8 => Value::U8(0),
            Scalar::I16 => Value::I16(0),
            Scalar::U16 => Value::U16(0),
            Scalar::I32 => Value::I32(0),
            Scalar::U32 => Value::U32(0),
            Scalar::I64 => Value::I64(0),
            Scalar::U64 => Value::U64(0),
            Scalar::Usize => Value::Usize(0),
            Scalar::F16 => Value::F16(f16::NEG_ZERO),
            Scalar::BF16 => Value::BF16(bf16::NEG_ZERO),
            Scalar::F32 => Value::F32(-0.0),
            Scalar::F64 => Value::F64(-0.0),
        })
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, vs: &[Value]| -> fmt::Result {
            for (i, v) in vs.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{v}")?;
            }
            Ok(())
        };
        match self {
            Value::Bool(x) => write!(f, "{x}"),
            Value::I8(x) => write!(f, "{x}"),
            Value::U8(x) => write!(f, "{x}"),
            Value::I16(x) => write!(f, "{x}"),
            Value::U16(x) => write!(f, "{x}"),
            Value::I32(x) => write!(f, "{x}"),
            Value::U32(x) => write!(f, "{x}"),
            Value::I64(x) => write!(f, "{x}"),
            Value::U64(x) => write!(f, "{x}"),
            Value::Usize(x) => write!(f, "{x}"),
            Value::F16(x) => write!(f, "{:?}", x.to_f32()),
            Value::BF16(x) => write!(f, "{:?}", x.to_f32()),
            Value::F32(x) => write!(f, "{x:?}"),
            Value::F64(x) => write!(f, "{x:?}"),
            Value::Seq(s) => {
                f.write_str("[")?;
                list(f, s)?;
                f.write_str("]")
            }
            Value::Tuple(vs) => {
                f.write_str("(")?;
                list(f, vs)?;
                f.write_str(if vs.len() == 1 { ",)" } else { ")" })
            }
        }
    }
}

/// Why [`run()`] failed. The first variants are the contract violations of the language (as
/// [`run::Error`] has them, with the statement's span instead of a location); the others
/// are misuse of the interpreter or compiler bugs.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Error {
    /// Inputs that must have the same length do not.
    #[error("{origin}: length mismatch: {left} vs {right}")]
    LengthMismatch {
        /// The primitive (or combinator) that needs equal lengths.
        origin: &'static str,
        /// One length.
        left: usize,
        /// The other.
        right: usize,
        /// The statement.
        span: Span,
    },
    /// An index outside its sequence.
    #[error("{origin}: index {index} out of range for length {len}")]
    IndexOutOfRange {
        /// `index` for `x[i]`, else the primitive.
        origin: &'static str,
        /// The offending index.
        index: i128,
        /// The length of the sequence.
        len: usize,
        /// The statement.
        span: Span,
    },
    /// `min`/`max`/`reduce` without a start value over an empty sequence.
    #[error("{origin}: empty sequence")]
    Empty {
        /// The primitive.
        origin: &'static str,
        /// The statement.
        span: Span,
    },
    /// `permute` indices that are not a permutation.
    #[error("{origin}: indices are not a permutation ({detail})")]
    NotAPermutation {
        /// The primitive.
        origin: &'static str,
        /// What is wrong.
        detail: String,
        /// The statement.
        span: Span,
    },
    /// Integer division or remainder by zero.
    #[error("attempt to divide by zero (`{op}`)")]
    DivideByZero {
        /// The operator: `"/"` or `"%"`.
        op: &'static str,
        /// The statement.
        span: Span,
    },
    /// An index marked in range by construction was not: a compiler bug.
    #[error("unchecked index {index} out of range for length {len} (a compiler bug)")]
    UncheckedIndex {
        /// The index.
        index: i128,
        /// The length.
        len: usize,
        /// The statement.
        span: Span,
    },
    /// A sequence too large to allocate.
    #[error("a sequence of {len} elements is too large")]
    TooLarge {
        /// The length asked for.
        len: usize,
        /// The statement.
        span: Span,
    },
    /// Arguments that do not match the function's parameters.
    #[error("bad arguments: {0}")]
    Arguments(String),
    /// The function does not pass [`verify`].
    #[error("invalid IR: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<VerifyError>),
    /// A value of the wrong shape at run time (ill-typed IR): a compiler bug.
    #[error("internal error: {message}")]
    Internal {
        /// What went wrong.
        message: String,
        /// The statement.
        span: Span,
    },
}

impl Error {
    /// The span of the statement that failed, if the error comes from one.
    pub fn span(&self) -> Option<Span> {
        match self {
            Error::LengthMismatch { span, .. }
            | Error::IndexOutOfRange { span, .. }
            | Error::Empty { span, .. }
            | Error::NotAPermutation { span, .. }
            | Error::DivideByZero { span, .. }
            | Error::UncheckedIndex { span, .. }
            | Error::TooLarge { span, .. }
            | Error::Internal { span, .. } => Some(*span),
            Error::Arguments(_) | Error::Invalid(_) => None,
        }
    }

    /// The same contract violation as backends report it, at `at`; `None` for errors that
    /// are not contract violations of the language (misuse or compiler bugs).
    pub fn to_run_error(&self, at: run::Location) -> Option<run::Error> {
        Some(match self {
            Error::LengthMismatch {
                origin,
                left,
                right,
                ..
            } => run::Error::LengthMismatch {
                prim: origin,
                left: *left,
                right: *right,
                at,
            },
            Error::IndexOutOfRange {
                origin, index, len, ..
            } => run::Error::IndexOutOfRange {
                prim: origin,
                index: *index,
                len: *len,
                at,
            },
            Error::Empty { origin, .. } => run::Error::Empty { prim: origin, at },
            Error::NotAPermutation { origin, detail, .. } => run::Error::NotAPermutation {
                prim: origin,
                detail: detail.clone(),
                at,
            },
            Error::DivideByZero { op, .. } => run::Error::DivideByZero { op, at },
            _ => return None,
        })
    }
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// Runs `f` on `args` (one value per parameter) and returns its result.
///
/// Fails with [`Error::Invalid`] if `f` does not pass [`verify`], with
/// [`Error::Arguments`] if the arguments do not match the parameters (count, or a value
/// not of the parameter's type), and with the other variants as the program's contract
/// violations dictate (see the [module docs](self)).
pub fn run(f: &Function, args: Vec<Value>) -> Result<Value> {
    verify(f).map_err(Error::Invalid)?;
    if args.len() != f.params.len() {
        return Err(Error::Arguments(format!(
            "`{}` takes {} argument(s), {} given",
            f.name,
            f.params.len(),
            args.len()
        )));
    }
    let mut it = Interp {
        f,
        env: vec![None; f.vars.len()],
    };
    for (i, (&p, a)) in f.params.iter().zip(args).enumerate() {
        let var = &f.vars[p];
        if !a.conforms(&var.ty) {
            return Err(Error::Arguments(format!(
                "argument {i} (`{}`) must be {}, found {}",
                var.name,
                var.ty,
                truncated(&a)
            )));
        }
        it.env[p.index()] = Some(a);
    }
    let result = it.block(&f.body)?;
    if !result.conforms(&f.ret) {
        return Err(Error::Internal {
            message: format!(
                "the result {} is not of the declared type {}",
                truncated(&result),
                f.ret
            ),
            span: Span::NONE,
        });
    }
    Ok(result)
}

/// A value's text, cut short for messages.
fn truncated(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 80 {
        let mut cut = 77;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

struct Interp<'f> {
    f: &'f Function,
    /// The current value of every variable (single assignment: a lambda's variables are
    /// overwritten by each call).
    env: Vec<Option<Value>>,
}

fn internal<T>(message: impl Into<String>, span: Span) -> Result<T> {
    Err(Error::Internal {
        message: message.into(),
        span,
    })
}

/// A vector with room for `len` values, or [`Error::TooLarge`].
fn with_capacity<T>(len: usize, span: Span) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| Error::TooLarge { len, span })?;
    Ok(v)
}

impl Interp<'_> {
    fn get(&self, v: VarId, span: Span) -> Result<&Value> {
        match self.env.get(v.index()) {
            Some(Some(x)) => Ok(x),
            _ => internal(format!("{v:?} has no value"), span),
        }
    }

    fn set(&mut self, v: VarId, x: Value) {
        self.env[v.index()] = Some(x);
    }

    fn seq(&self, v: VarId, span: Span) -> Result<Arc<Vec<Value>>> {
        match self.get(v, span)? {
            Value::Seq(s) => Ok(s.clone()),
            other => internal(
                format!("{v:?} should be a sequence, found {}", truncated(other)),
                span,
            ),
        }
    }

    fn usize(&self, v: VarId, span: Span) -> Result<usize> {
        match self.get(v, span)? {
            Value::Usize(n) => Ok(*n),
            other => internal(format!("{v:?} should be a usize, found {other}"), span),
        }
    }

    fn bool(x: &Value, span: Span) -> Result<bool> {
        match x {
            Value::Bool(b) => Ok(*b),
            other => internal(format!("expected a bool, found {}", truncated(other)), span),
        }
    }

    fn block(&mut self, b: &Block) -> Result<Value> {
        for s in &b.stmts {
            let x = self.expr(s)?;
            self.set(s.var, x);
        }
        // The result handle was checked by `verify`.
        Ok(self.get(b.result, Span::NONE)?.clone())
    }

    fn call(&mut self, l: &Lambda, args: impl IntoIterator<Item = Value>) -> Result<Value> {
        for (&p, a) in l.params.iter().zip(args) {
            self.set(p, a);
        }
        self.block(&l.body)
    }

    fn call1(&mut self, l: &Lambda, a: Value) -> Result<Value> {
        self.call(l, [a])
    }

    fn call2(&mut self, l: &Lambda, a: Value, b: Value) -> Result<Value> {
        self.call(l, [a, b])
    }

    /// An index value checked against `len`.
    fn index(x: &Value, len: usize, span: Span, origin: Option<&'static str>) -> Result<usize> {
        let Some(i) = x.as_int() else {
            return internal(
                format!("an index must be an integer, found {}", truncated(x)),
                span,
            );
        };
        if i >= 0 && (i as u128) < len as u128 {
            return Ok(i as usize);
        }
        Err(match origin {
            Some(origin) => Error::IndexOutOfRange {
                origin,
                index: i,
                len,
                span,
            },
            None => Error::UncheckedIndex {
                index: i,
                len,
                span,
            },
        })
    }

    fn expr(&mut self, s: &Stmt) -> Result<Value> {
        let span = s.span;
        Ok(match &s.expr {
            Expr::Const(c) => self.constant(*c, s.var, span)?,
            Expr::Var(v) => self.get(*v, span)?.clone(),
            Expr::Unary(op, v) => unary(*op, self.get(*v, span)?, span)?,
            Expr::Binary(op, a, b) => binary(*op, self.get(*a, span)?, self.get(*b, span)?, span)?,
            Expr::Cast(v, to) => cast(self.get(*v, span)?, *to, span)?,
            Expr::Tuple(vs) => Value::Tuple(
                vs.iter()
                    .map(|v| self.get(*v, span).cloned())
                    .collect::<Result<_>>()?,
            ),
            Expr::Field(v, n) => match self.get(*v, span)? {
                Value::Tuple(vs) if (*n as usize) < vs.len() => vs[*n as usize].clone(),
                other => return internal(format!("no field {n} in {}", truncated(other)), span),
            },
            Expr::If(c, t, e) => {
                if Self::bool(self.get(*c, span)?, span)? {
                    self.block(t)?
                } else {
                    self.block(e)?
                }
            }
            Expr::Index {
                seq,
                index,
                checked,
            } => {
                let xs = self.seq(*seq, span)?;
                let origin = checked.map(Origin::name);
                xs[Self::index(self.get(*index, span)?, xs.len(), span, origin)?].clone()
            }
            Expr::Len(v) => Value::Usize(self.seq(*v, span)?.len()),
            Expr::Math(m, vs) => {
                let args = vs
                    .iter()
                    .map(|v| self.get(*v, span))
                    .collect::<Result<Vec<_>>>()?;
                math(*m, &args, span)?
            }
            Expr::Prim {
                prim,
                lambdas,
                args,
            } => self.prim(*prim, lambdas, args, s)?,
            Expr::Soac(soac) => self.soac(soac, span)?,
            Expr::Assert(a) => {
                self.assert(a, span)?;
                Value::unit()
            }
            Expr::Loop(l) => self.run_loop(l, span)?,
        })
    }

    /// The params start as the inits; while `cond` holds, `body` gives their next values.
    fn run_loop(&mut self, l: &Loop, span: Span) -> Result<Value> {
        let mut values = l
            .inits
            .iter()
            .map(|v| self.get(*v, span).cloned())
            .collect::<Result<Vec<_>>>()?;
        loop {
            for (&p, x) in l.params.iter().zip(&values) {
                self.set(p, x.clone());
            }
            if !Self::bool(&self.block(&l.cond)?, span)? {
                return Ok(Value::Tuple(values));
            }
            values = match self.block(&l.body)? {
                Value::Tuple(next) if next.len() == l.params.len() => next,
                other => {
                    return internal(
                        format!(
                            "a loop body gave {} for {} params",
                            truncated(&other),
                            l.params.len()
                        ),
                        span,
                    );
                }
            };
        }
    }

    fn constant(&self, c: Const, var: VarId, span: Span) -> Result<Value> {
        let ty = self.f.ty(var);
        let bad = || internal(format!("the literal {c:?} does not fit {ty}"), span);
        Ok(match (c, ty.scalar()) {
            (Const::Bool(b), Some(Scalar::Bool)) => Value::Bool(b),
            (Const::Float(x), Some(Scalar::F32)) => Value::F32(canon_f32(x as f32)),
            (Const::Float(x), Some(Scalar::F64)) => Value::F64(canon_f64(x)),
            (Const::Float(x), Some(s)) if s.is_half() => {
                float16::cast(&Value::F64(x), s).map_or_else(bad, Ok)?
            }
            (Const::Int(i), Some(s)) => {
                let v = match s {
                    Scalar::I8 => i8::try_from(i).ok().map(Value::I8),
                    Scalar::U8 => u8::try_from(i).ok().map(Value::U8),
                    Scalar::I16 => i16::try_from(i).ok().map(Value::I16),
                    Scalar::U16 => u16::try_from(i).ok().map(Value::U16),
                    Scalar::I32 => i32::try_from(i).ok().map(Value::I32),
                    Scalar::U32 => u32::try_from(i).ok().map(Value::U32),
                    Scalar::I64 => i64::try_from(i).ok().map(Value::I64),
                    Scalar::U64 => u64::try_from(i).ok().map(Value::U64),
                    Scalar::Usize => usize::try_from(i).ok().map(Value::Usize),
                    Scalar::Bool | Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64 => None,
                };
                match v {
                    Some(v) => v,
                    None => return bad(),
                }
            }
            _ => return bad(),
        })
    }

    fn assert(&self, a: &Assertion, span: Span) -> Result<()> {
        match a {
            Assertion::EqLen { origin, a, b } => {
                let (left, right) = (self.usize(*a, span)?, self.usize(*b, span)?);
                if left != right {
                    return Err(Error::LengthMismatch {
                        origin: origin.name(),
                        left,
                        right,
                        span,
                    });
                }
            }
            Assertion::IndicesInRange { origin, idx, len } => {
                let len = self.usize(*len, span)?;
                for x in self.seq(*idx, span)?.iter() {
                    match x {
                        Value::Seq(row) => {
                            for y in row.iter() {
                                Self::index(y, len, span, Some(origin.name()))?;
                            }
                        }
                        x => {
                            Self::index(x, len, span, Some(origin.name()))?;
                        }
                    }
                }
            }
            Assertion::InBounds { origin, index, len } => {
                let len = self.usize(*len, span)?;
                Self::index(self.get(*index, span)?, len, span, Some(origin.name()))?;
            }
            Assertion::NonEmpty { origin, len } => {
                if self.usize(*len, span)? == 0 {
                    return Err(Error::Empty {
                        origin: origin.name(),
                        span,
                    });
                }
            }
        }
        Ok(())
    }

    /// The element type of the sequence a statement defines, or of its scalar result.
    fn result_scalar(&self, var: VarId) -> Option<Scalar> {
        self.f.ty(var).scalar()
    }

    fn same_len(origin: &'static str, a: usize, b: usize, span: Span) -> Result<()> {
        if a == b {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                origin,
                left: a,
                right: b,
                span,
            })
        }
    }

    fn prim(&mut self, prim: Prim, lambdas: &[Lambda], args: &[VarId], s: &Stmt) -> Result<Value> {
        let span = s.span;
        let name = prim.name();
        // `verify` checked the argument counts.
        let seq = |it: &Self, i: usize| it.seq(args[i], span);
        Ok(match prim {
            Prim::Map => {
                let f = &lambdas[0];
                let xs = args
                    .iter()
                    .map(|&a| self.seq(a, span))
                    .collect::<Result<Vec<_>>>()?;
                let n = xs[0].len();
                for x in &xs[1..] {
                    Self::same_len(name, n, x.len(), span)?;
                }
                let mut out = with_capacity(n, span)?;
                if let [x] = &xs[..] {
                    for e in x.iter() {
                        out.push(self.call1(f, e.clone())?);
                    }
                } else {
                    for i in 0..n {
                        out.push(self.call(f, xs.iter().map(|x| x[i].clone()))?);
                    }
                }
                Value::seq(out)
            }
            Prim::Zip => {
                let (a, b) = (seq(self, 0)?, seq(self, 1)?);
                Self::same_len(name, a.len(), b.len(), span)?;
                Value::seq(
                    a.iter()
                        .zip(b.iter())
                        .map(|(x, y)| Value::Tuple(vec![x.clone(), y.clone()]))
                        .collect(),
                )
            }
            Prim::Unzip => {
                // The width comes from the result type: the sequence may be empty.
                let width = match self.f.ty(s.var) {
                    Type::Tuple(ts) => ts.len(),
                    _ => 0,
                };
                let s = seq(self, 0)?;
                let mut parts = (0..width)
                    .map(|_| with_capacity(s.len(), span))
                    .collect::<Result<Vec<_>>>()?;
                for p in s.iter() {
                    match p {
                        Value::Tuple(vs) if vs.len() == width => {
                            for (part, v) in parts.iter_mut().zip(vs) {
                                part.push(v.clone());
                            }
                        }
                        other => {
                            return internal(
                                format!("`unzip` of {} into {width} parts", truncated(other)),
                                span,
                            );
                        }
                    }
                }
                Value::Tuple(parts.into_iter().map(Value::seq).collect())
            }
            Prim::Gather => {
                let (x, idx) = (seq(self, 0)?, seq(self, 1)?);
                let mut out = with_capacity(idx.len(), span)?;
                for i in idx.iter() {
                    out.push(x[Self::index(i, x.len(), span, Some(name))?].clone());
                }
                Value::seq(out)
            }
            Prim::Permute => {
                let (x, idx) = (seq(self, 0)?, seq(self, 1)?);
                Self::same_len(name, x.len(), idx.len(), span)?;
                let pairs = idx
                    .iter()
                    .zip(x.iter())
                    .map(|(i, v)| (i.clone(), v.clone()));
                permute(pairs, x.len(), name, span)?
            }
            Prim::Scatter | Prim::ScatterReduce => {
                let (src, idx, dst) = (seq(self, 0)?, seq(self, 1)?, seq(self, 2)?);
                Self::same_len(name, src.len(), idx.len(), span)?;
                let mut out = (*dst).clone();
                for (i, v) in idx.iter().zip(src.iter()) {
                    let k = Self::index(i, out.len(), span, Some(name))?;
                    out[k] = match lambdas.first() {
                        Some(op) => self.call2(op, out[k].clone(), v.clone())?,
                        None => v.clone(),
                    };
                }
                Value::seq(out)
            }
            Prim::Reduce => {
                let x = seq(self, 0)?;
                let init = self.get(args[1], span)?.clone();
                let op = &lambdas[0];
                match Self::fold(&x, &mut |a, b| self.call2(op, a, b))? {
                    Some(t) => self.call2(op, init, t)?,
                    None => init,
                }
            }
            Prim::Sum => {
                // `-0.0 + (x[0] + x[1] + ...)` in dpl's order for floats, starting as Rust's
                // `Iterator::sum` (the sum of nothing or of `-0.0`s is `-0.0`); `0 + ...`
                // for integers.
                let x = seq(self, 0)?;
                let Some(zero) = self.result_scalar(s.var).and_then(Value::zero) else {
                    return internal("`sum` whose type is not numeric", span);
                };
                match Self::fold(&x, &mut |a, b| binary(BinOp::Add, &a, &b, span))? {
                    Some(total) => binary(BinOp::Add, &zero, &total, span)?,
                    None => zero,
                }
            }
            Prim::Min | Prim::Max => {
                let x = seq(self, 0)?;
                let m = if prim == Prim::Min {
                    MathFn::Min
                } else {
                    MathFn::Max
                };
                Self::fold(&x, &mut |a, b| math(m, &[&a, &b], span))?
                    .ok_or(Error::Empty { origin: name, span })?
            }
            Prim::Any | Prim::All | Prim::Count => {
                let x = seq(self, 0)?;
                let mut count = 0usize;
                for e in x.iter() {
                    let b = match lambdas.first() {
                        Some(p) => self.call1(p, e.clone())?,
                        None => e.clone(),
                    };
                    count += usize::from(Self::bool(&b, span)?);
                }
                match prim {
                    Prim::Any => Value::Bool(count > 0),
                    Prim::All => Value::Bool(count == x.len()),
                    _ => Value::Usize(count),
                }
            }
            Prim::Scan | Prim::ExclusiveScan => {
                let x = seq(self, 0)?;
                let mut elems = with_capacity(x.len(), span)?;
                elems.extend(x.iter().cloned());
                let init = match prim {
                    Prim::Scan => None,
                    _ => Some(self.get(args[1], span)?.clone()),
                };
                Value::seq(self.scan(&lambdas[0], init, elems)?)
            }
            Prim::Filter => {
                let x = seq(self, 0)?;
                let mut out = Vec::new();
                for e in x.iter() {
                    let keep = self.call1(&lambdas[0], e.clone())?;
                    if Self::bool(&keep, span)? {
                        out.push(e.clone());
                    }
                }
                Value::seq(out)
            }
            Prim::Replicate => {
                let v = self.get(args[0], span)?.clone();
                let n = self.usize(args[1], span)?;
                let mut out = with_capacity(n, span)?;
                out.resize(n, v);
                Value::seq(out)
            }
            Prim::Indices => {
                let n = seq(self, 0)?.len();
                Value::seq((0..n).map(Value::Usize).collect())
            }
            Prim::Range => {
                let n = self.usize(args[0], span)?;
                let mut out = with_capacity(n, span)?;
                out.extend((0..n).map(Value::Usize));
                Value::seq(out)
            }
            Prim::Len => Value::Usize(seq(self, 0)?.len()),
            Prim::Sort => {
                let mut out = (*seq(self, 0)?).clone();
                stable_sort(&mut out, |v| v, span)?;
                Value::seq(out)
            }
            Prim::SortByKey => {
                let (keys, vals) = (seq(self, 0)?, seq(self, 1)?);
                Self::same_len(name, keys.len(), vals.len(), span)?;
                let pairs = keys.iter().cloned().zip(vals.iter().cloned()).collect();
                sort_pairs(pairs, span)?
            }
        })
    }

    /// `x` reduced by `op` in dpl's order ([`order`]); `None` when empty.
    fn fold(
        x: &[Value],
        op: &mut dyn FnMut(Value, Value) -> Result<Value>,
    ) -> Result<Option<Value>> {
        order::try_reduce(x.len(), &mut |i| Ok(x[i].clone()), op)
    }

    /// The inclusive scan of `elems` by `op` in dpl's order ([`order::scan`]); with a start
    /// value, the exclusive scan: `init`, then the inclusive scan from `init` of all
    /// elements but the last.
    fn scan(
        &mut self,
        op: &Lambda,
        init: Option<Value>,
        mut elems: Vec<Value>,
    ) -> Result<Vec<Value>> {
        let mut op = |a, b| self.call2(op, a, b);
        let Some(v) = init else {
            return order::scan::try_scan(elems, None, &mut op);
        };
        if elems.pop().is_none() {
            return Ok(elems);
        }
        let mut out = order::scan::try_scan(elems, Some(v.clone()), &mut op)?;
        out.insert(0, v);
        Ok(out)
    }

    fn soac(&mut self, s: &Soac, span: Span) -> Result<Value> {
        let len = self.usize(s.len, span)?;
        let name = s.kind.origin_name();
        // The elements, computed in index order.
        let mut elems = with_capacity(len, span)?;
        for i in 0..len {
            elems.push(self.call1(&s.elem, Value::Usize(i))?);
        }
        Ok(match &s.kind {
            SoacKind::Map => Value::seq(elems),
            SoacKind::Reduce { op, init } => {
                let total = Self::fold(&elems, &mut |a, b| self.call2(op, a, b))?;
                match (init, total) {
                    (Some(i), Some(t)) => {
                        let i = self.get(*i, span)?.clone();
                        self.call2(op, i, t)?
                    }
                    (Some(i), None) => self.get(*i, span)?.clone(),
                    (None, Some(t)) => t,
                    (None, None) => return Err(Error::Empty { origin: name, span }),
                }
            }
            SoacKind::Scan { op } => Value::seq(self.scan(op, None, elems)?),
            SoacKind::ExclusiveScan { op, init } => {
                let init = self.get(*init, span)?.clone();
                Value::seq(self.scan(op, Some(init), elems)?)
            }
            SoacKind::Filter { pred } => {
                let mut out = Vec::new();
                for e in elems {
                    let keep = self.call1(pred, e.clone())?;
                    if Self::bool(&keep, span)? {
                        out.push(e);
                    }
                }
                Value::seq(out)
            }
            SoacKind::Scatter { dst } | SoacKind::ScatterReduce { dst, .. } => {
                let op = match &s.kind {
                    SoacKind::ScatterReduce { op, .. } => Some(op),
                    _ => None,
                };
                let mut out = (*self.seq(*dst, span)?).clone();
                for e in elems {
                    let (i, v) = pair(e, name, span)?;
                    let k = Self::index(&i, out.len(), span, Some(name))?;
                    out[k] = match op {
                        Some(op) => self.call2(op, out[k].clone(), v)?,
                        None => v,
                    };
                }
                Value::seq(out)
            }
            SoacKind::Permute => {
                let pairs = elems
                    .into_iter()
                    .map(|e| pair(e, name, span))
                    .collect::<Result<Vec<_>>>()?;
                permute(pairs.into_iter(), len, name, span)?
            }
            SoacKind::Sort => {
                stable_sort(&mut elems, |v| v, span)?;
                Value::seq(elems)
            }
            SoacKind::SortByKey => {
                let pairs = elems
                    .into_iter()
                    .map(|e| pair(e, name, span))
                    .collect::<Result<Vec<_>>>()?;
                sort_pairs(pairs, span)?
            }
        })
    }
}

/// The order `sort` and `sort_by_key` sort by, on every place: a total order on scalars
/// of one type and on tuples of them. Integers compare as numbers, `false < true`, floats
/// by IEEE 754 `totalOrder` ([`f64::total_cmp`]: `-NaN < -inf < ... < -0.0 < +0.0 < ... <
/// +inf < +NaN`, NaNs ordered by their payload), tuples lexicographically. `None` for
/// values of different types, and for sequences (not sort keys).
pub fn total_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    Some(match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::I8(x), Value::I8(y)) => x.cmp(y),
        (Value::U8(x), Value::U8(y)) => x.cmp(y),
        (Value::I16(x), Value::I16(y)) => x.cmp(y),
        (Value::U16(x), Value::U16(y)) => x.cmp(y),
        (Value::I32(x), Value::I32(y)) => x.cmp(y),
        (Value::U32(x), Value::U32(y)) => x.cmp(y),
        (Value::I64(x), Value::I64(y)) => x.cmp(y),
        (Value::U64(x), Value::U64(y)) => x.cmp(y),
        (Value::Usize(x), Value::Usize(y)) => x.cmp(y),
        (Value::F16(x), Value::F16(y)) => x.total_cmp(y),
        (Value::BF16(x), Value::BF16(y)) => x.total_cmp(y),
        (Value::F32(x), Value::F32(y)) => x.total_cmp(y),
        (Value::F64(x), Value::F64(y)) => x.total_cmp(y),
        (Value::Tuple(xs), Value::Tuple(ys)) if xs.len() == ys.len() => {
            for (x, y) in xs.iter().zip(ys) {
                match total_cmp(x, y)? {
                    Ordering::Equal => {}
                    o => return Some(o),
                }
            }
            Ordering::Equal
        }
        _ => return None,
    })
}

/// Sorts `items` stably by [`total_cmp`] of `key(item)`; keys that cannot be compared
/// (ill-typed IR) give [`Error::Internal`].
fn stable_sort<T>(items: &mut [T], key: impl Fn(&T) -> &Value, span: Span) -> Result<()> {
    let mut bad = None;
    items.sort_by(|a, b| {
        let (a, b) = (key(a), key(b));
        total_cmp(a, b).unwrap_or_else(|| {
            bad.get_or_insert_with(|| {
                format!("cannot order {} and {}", truncated(a), truncated(b))
            });
            Ordering::Equal
        })
    });
    match bad {
        Some(m) => internal(format!("`sort`: {m}"), span),
        None => Ok(()),
    }
}

/// The values of `(key, value)` pairs, ordered stably by their keys.
fn sort_pairs(mut pairs: Vec<(Value, Value)>, span: Span) -> Result<Value> {
    stable_sort(&mut pairs, |(k, _)| k, span)?;
    Ok(Value::seq(pairs.into_iter().map(|(_, v)| v).collect()))
}

/// Splits an `(index, value)` element of a scattering combinator.
fn pair(e: Value, origin: &'static str, span: Span) -> Result<(Value, Value)> {
    match e {
        Value::Tuple(vs) if vs.len() == 2 => {
            let mut it = vs.into_iter();
            match (it.next(), it.next()) {
                (Some(i), Some(v)) => Ok((i, v)),
                _ => internal(format!("`{origin}` expects (index, value) elements"), span),
            }
        }
        other => internal(
            format!(
                "`{origin}` expects (index, value) elements, found {}",
                truncated(&other)
            ),
            span,
        ),
    }
}

/// `y[index] = value` for every pair, where the indices must be a permutation of `0..len`.
fn permute(
    pairs: impl Iterator<Item = (Value, Value)>,
    len: usize,
    origin: &'static str,
    span: Span,
) -> Result<Value> {
    let mut out: Vec<Option<Value>> = with_capacity(len, span)?;
    out.resize(len, None);
    for (i, v) in pairs {
        let k = Interp::index(&i, len, span, Some(origin))?;
        if out[k].replace(v).is_some() {
            return Err(Error::NotAPermutation {
                origin,
                detail: format!("index {k} appears twice"),
                span,
            });
        }
    }
    // `len` pairs with distinct indices below `len` fill every slot; be safe anyway.
    let mut vals = with_capacity(len, span)?;
    for (k, v) in out.into_iter().enumerate() {
        match v {
            Some(v) => vals.push(v),
            None => {
                return Err(Error::NotAPermutation {
                    origin,
                    detail: format!("index {k} is missing"),
                    span,
                });
            }
        }
    }
    Ok(Value::seq(vals))
}

fn unary(op: UnOp, x: &Value, span: Span) -> Result<Value> {
    if let Some(r) = float16::in_f32(&[x], |w| unary(op, w[0], span)) {
        return r;
    }
    Ok(match (op, x) {
        (UnOp::Neg, Value::I8(x)) => Value::I8(x.wrapping_neg()),
        (UnOp::Neg, Value::U8(x)) => Value::U8(x.wrapping_neg()),
        (UnOp::Neg, Value::I16(x)) => Value::I16(x.wrapping_neg()),
        (UnOp::Neg, Value::U16(x)) => Value::U16(x.wrapping_neg()),
        (UnOp::Neg, Value::I32(x)) => Value::I32(x.wrapping_neg()),
        (UnOp::Neg, Value::U32(x)) => Value::U32(x.wrapping_neg()),
        (UnOp::Neg, Value::I64(x)) => Value::I64(x.wrapping_neg()),
        (UnOp::Neg, Value::U64(x)) => Value::U64(x.wrapping_neg()),
        (UnOp::Neg, Value::Usize(x)) => Value::Usize(x.wrapping_neg()),
        (UnOp::Neg, Value::F32(x)) => Value::F32(canon_f32(-x)),
        (UnOp::Neg, Value::F64(x)) => Value::F64(canon_f64(-x)),
        (UnOp::Not, Value::Bool(x)) => Value::Bool(!x),
        (UnOp::Not, Value::I8(x)) => Value::I8(!x),
        (UnOp::Not, Value::U8(x)) => Value::U8(!x),
        (UnOp::Not, Value::I16(x)) => Value::I16(!x),
        (UnOp::Not, Value::U16(x)) => Value::U16(!x),
        (UnOp::Not, Value::I32(x)) => Value::I32(!x),
        (UnOp::Not, Value::U32(x)) => Value::U32(!x),
        (UnOp::Not, Value::I64(x)) => Value::I64(!x),
        (UnOp::Not, Value::U64(x)) => Value::U64(!x),
        (UnOp::Not, Value::Usize(x)) => Value::Usize(!x),
        _ => return internal(format!("`{op:?}` of {}", truncated(x)), span),
    })
}

fn binary(op: BinOp, a: &Value, b: &Value, span: Span) -> Result<Value> {
    use BinOp::*;
    use Value as V;
    if let Some(r) = float16::in_f32(&[a, b], |w| binary(op, w[0], w[1], span)) {
        return r;
    }
    if matches!(op, Shl | Shr) {
        // The amount modulo the width: its low 32 bits are enough, as widths divide 2^32.
        let Some(amount) = b.as_int().map(|n| n as u32) else {
            return internal(format!("shift by {}", truncated(b)), span);
        };
        macro_rules! shift {
            ($x:expr, $v:ident) => {
                V::$v(if op == Shl {
                    $x.wrapping_shl(amount)
                } else {
                    $x.wrapping_shr(amount)
                })
            };
        }
        return Ok(match a {
            V::I8(x) => shift!(x, I8),
            V::U8(x) => shift!(x, U8),
            V::I16(x) => shift!(x, I16),
            V::U16(x) => shift!(x, U16),
            V::I32(x) => shift!(x, I32),
            V::U32(x) => shift!(x, U32),
            V::I64(x) => shift!(x, I64),
            V::U64(x) => shift!(x, U64),
            V::Usize(x) => shift!(x, Usize),
            _ => return internal(format!("shift of {}", truncated(a)), span),
        });
    }
    macro_rules! cmp {
        ($x:expr, $y:expr) => {
            match op {
                Eq => V::Bool($x == $y),
                Ne => V::Bool($x != $y),
                Lt => V::Bool($x < $y),
                Le => V::Bool($x <= $y),
                Gt => V::Bool($x > $y),
                Ge => V::Bool($x >= $y),
                _ => return internal(format!("`{}` of {a} and {b}", op.symbol()), span),
            }
        };
    }
    macro_rules! int {
        ($x:expr, $y:expr, $v:ident) => {{
            let (x, y) = ($x, $y);
            match op {
                Add => V::$v(x.wrapping_add(y)),
                Sub => V::$v(x.wrapping_sub(y)),
                Mul => V::$v(x.wrapping_mul(y)),
                Div | Rem if y == 0 => {
                    return Err(Error::DivideByZero {
                        op: op.symbol(),
                        span,
                    });
                }
                Div => V::$v(x.wrapping_div(y)),
                Rem => V::$v(x.wrapping_rem(y)),
                BitAnd => V::$v(x & y),
                BitOr => V::$v(x | y),
                BitXor => V::$v(x ^ y),
                _ => cmp!(x, y),
            }
        }};
    }
    macro_rules! float {
        ($x:expr, $y:expr, $v:ident, $canon:ident) => {{
            let (x, y) = ($x, $y);
            match op {
                Add => V::$v($canon(x + y)),
                Sub => V::$v($canon(x - y)),
                Mul => V::$v($canon(x * y)),
                Div => V::$v($canon(x / y)),
                Rem => V::$v($canon(x % y)),
                _ => cmp!(x, y),
            }
        }};
    }
    Ok(match (a, b) {
        (V::I8(x), V::I8(y)) => int!(*x, *y, I8),
        (V::U8(x), V::U8(y)) => int!(*x, *y, U8),
        (V::I16(x), V::I16(y)) => int!(*x, *y, I16),
        (V::U16(x), V::U16(y)) => int!(*x, *y, U16),
        (V::I32(x), V::I32(y)) => int!(*x, *y, I32),
        (V::U32(x), V::U32(y)) => int!(*x, *y, U32),
        (V::I64(x), V::I64(y)) => int!(*x, *y, I64),
        (V::U64(x), V::U64(y)) => int!(*x, *y, U64),
        (V::Usize(x), V::Usize(y)) => int!(*x, *y, Usize),
        (V::F32(x), V::F32(y)) => float!(*x, *y, F32, canon_f32),
        (V::F64(x), V::F64(y)) => float!(*x, *y, F64, canon_f64),
        (V::Bool(x), V::Bool(y)) => match op {
            BitAnd => V::Bool(x & y),
            BitOr => V::Bool(x | y),
            BitXor => V::Bool(x ^ y),
            _ => cmp!(x, y),
        },
        _ => {
            return internal(
                format!("`{}` of {} and {}", op.symbol(), truncated(a), truncated(b)),
                span,
            );
        }
    })
}

fn cast(x: &Value, to: Scalar, span: Span) -> Result<Value> {
    if let Some(h) = float16::cast(x, to) {
        return Ok(h);
    }
    macro_rules! from {
        ($x:expr) => {
            match to {
                Scalar::I8 => Value::I8($x as i8),
                Scalar::U8 => Value::U8($x as u8),
                Scalar::I16 => Value::I16($x as i16),
                Scalar::U16 => Value::U16($x as u16),
                Scalar::I32 => Value::I32($x as i32),
                Scalar::U32 => Value::U32($x as u32),
                Scalar::I64 => Value::I64($x as i64),
                Scalar::U64 => Value::U64($x as u64),
                Scalar::Usize => Value::Usize($x as usize),
                Scalar::F32 => Value::F32(canon_f32($x as f32)),
                Scalar::F64 => Value::F64(canon_f64($x as f64)),
                Scalar::F16 | Scalar::BF16 => return internal(format!("cast to {to}"), span),
                // Not a Rust cast (the verifier rejects it): defined as `x != 0`.
                Scalar::Bool => Value::Bool($x as f64 != 0.0),
            }
        };
    }
    Ok(match *x {
        Value::Bool(b) if to == Scalar::Bool => Value::Bool(b),
        Value::Bool(b) => from!(u8::from(b)),
        Value::I8(x) => from!(x),
        Value::U8(x) => from!(x),
        Value::I16(x) => from!(x),
        Value::U16(x) => from!(x),
        Value::I32(x) => from!(x),
        Value::U32(x) => from!(x),
        Value::I64(x) => from!(x),
        Value::U64(x) => from!(x),
        Value::Usize(x) => from!(x),
        Value::F32(x) => from!(x),
        Value::F64(x) => from!(x),
        Value::F16(h) => from!(h.to_f32()),
        Value::BF16(h) => from!(h.to_f32()),
        _ => return internal(format!("cast of {} to {to}", truncated(x)), span),
    })
}

fn math(m: MathFn, args: &[&Value], span: Span) -> Result<Value> {
    use MathFn::*;
    macro_rules! float {
        ($v:ident, $t:ty, $canon:ident) => {{
            let mut xs = [0.0 as $t; 3];
            for (slot, a) in xs.iter_mut().zip(args) {
                match a {
                    Value::$v(x) => *slot = *x,
                    other => {
                        return internal(format!("`{}` of {}", m.name(), truncated(other)), span);
                    }
                }
            }
            let [x, y, z] = xs;
            Value::$v($canon(match m {
                Abs => x.abs(),
                Sqrt => x.sqrt(),
                Exp => x.exp(),
                Ln => x.ln(),
                Log2 => x.log2(),
                Sin => x.sin(),
                Cos => x.cos(),
                Tanh => x.tanh(),
                Powf => x.powf(y),
                Floor => x.floor(),
                Ceil => x.ceil(),
                Round => x.round(),
                Trunc => x.trunc(),
                Min => x.min(y),
                Max => x.max(y),
                MulAdd => x.mul_add(y, z),
            }))
        }};
    }
    macro_rules! int {
        ($v:ident, $abs:expr) => {{
            let get = |i: usize| match args.get(i) {
                Some(Value::$v(x)) => Ok(*x),
                other => internal(format!("`{}` of {:?}", m.name(), other), span),
            };
            let x = get(0)?;
            Value::$v(match m {
                Abs => $abs(x),
                Min => x.min(get(1)?),
                Max => x.max(get(1)?),
                _ => return internal(format!("`{}` of an integer", m.name()), span),
            })
        }};
    }
    if let Some(r) = float16::in_f32(args, |w| math(m, w, span)) {
        return r;
    }
    if args.len() != m.arity() {
        return internal(
            format!("`{}` with {} arguments", m.name(), args.len()),
            span,
        );
    }
    Ok(match args[0] {
        Value::F32(_) => float!(F32, f32, canon_f32),
        Value::F64(_) => float!(F64, f64, canon_f64),
        Value::I8(_) => int!(I8, i8::wrapping_abs),
        Value::I16(_) => int!(I16, i16::wrapping_abs),
        Value::I32(_) => int!(I32, i32::wrapping_abs),
        Value::I64(_) => int!(I64, i64::wrapping_abs),
        Value::U8(_) => int!(U8, |x: u8| x),
        Value::U16(_) => int!(U16, |x: u16| x),
        Value::U32(_) => int!(U32, |x: u32| x),
        Value::U64(_) => int!(U64, |x: u64| x),
        Value::Usize(_) => int!(Usize, |x: usize| x),
        other => return internal(format!("`{}` of {}", m.name(), truncated(other)), span),
    })
}
