//! The GPU places at run time: programs embedded by the macro, argument and result
//! conversion, and the drivers behind [`Place::Sim`] and [`Place::Gpu`].
//!
//! With the `sim` or `cuda` feature the `#[parallel]` macro compiles each function for the
//! GPU at build time (`dpl_cuda::compile_with`) and embeds the result — PTX text plus
//! launch plan, encoded by `GpuProgram::encode` — as a [`Program`] static next to the
//! function, with one source [`Location`] per span of the function for error messages. A
//! call on a GPU place converts its arguments to interpreter [`Value`]s ([`Arg`]), runs
//! the program through the place's driver and converts the result back ([`Ret`]).
//!
//! A function the GPU backend cannot compile gets a [`Program`] holding the reason instead,
//! and calling it on a GPU place fails with [`Error::PlaceUnavailable`] naming it.

use std::sync::OnceLock;

use dpl_core::interp::Value;
use dpl_cuda::GpuProgram;

use crate::{Error, Location, Matrix, Nested, Place, Seq};

/// What the macro embeds for one function.
pub struct Program {
    name: &'static str,
    /// `Ok(encoded program)`, or `Err(why the GPU backend could not compile it)`.
    code: Result<&'static [u8], &'static str>,
    locations: &'static [Location],
    decoded: OnceLock<Result<GpuProgram, String>>,
}

impl Program {
    /// A compiled program: `bytes` from `GpuProgram::encode`, `locations[s]` the source
    /// location of span `s`.
    pub const fn new(
        name: &'static str,
        bytes: &'static [u8],
        locations: &'static [Location],
    ) -> Program {
        Program {
            name,
            code: Ok(bytes),
            locations,
            decoded: OnceLock::new(),
        }
    }

    /// A function the GPU backend does not compile, and why.
    pub const fn unsupported(name: &'static str, reason: &'static str) -> Program {
        Program {
            name,
            code: Err(reason),
            locations: &[],
            decoded: OnceLock::new(),
        }
    }

    /// The decoded program (decoded once, at the first call).
    fn program(&self, place: Place) -> Result<&GpuProgram, Error> {
        let bytes = match self.code {
            Ok(bytes) => bytes,
            Err(reason) => {
                return Err(Error::PlaceUnavailable {
                    place,
                    reason: format!("`{}` is not compiled for the GPU: {reason}", self.name),
                });
            }
        };
        self.decoded
            .get_or_init(|| GpuProgram::decode(bytes))
            .as_ref()
            .map_err(|e| Error::Device(format!("`{}`: {e}", self.name)))
    }

    /// The PTX text, if the function was compiled for the GPU.
    pub fn ptx(&self) -> Option<&str> {
        self.program(Place::Sim).ok().map(|p| p.ptx.as_str())
    }

    fn locate(&self, span: u32) -> Location {
        self.locations
            .get(span as usize)
            .copied()
            .unwrap_or(dpl_cuda::UNKNOWN_LOCATION)
    }
}

/// Runs `program` on `place` (a GPU place) with the converted arguments.
pub fn call<R: Ret>(program: &Program, place: Place, args: Vec<Value>) -> Result<R, Error> {
    let p = program.program(place)?;
    let locate = |s: u32| program.locate(s);
    let value = match place {
        Place::Sim => sim::run(p, args, &locate)?,
        Place::Gpu(_) | Place::Cpu | Place::Seq => return Err(crate::place::unavailable(place)),
    };
    R::from_value(value)
}

/// Runs `program` and panics with the error's message if it fails (functions not declared
/// to return `Result`).
#[track_caller]
pub fn call_or_panic<R: Ret>(program: &Program, place: Place, args: Vec<Value>) -> R {
    match call(program, place, args) {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

#[cfg(feature = "sim")]
mod sim {
    use super::*;
    use dpl_cuda::sim::SimDriver;

    /// The simulated device shared by every call of the process (modules are cached in
    /// it, so each function's PTX is parsed once).
    pub fn driver() -> &'static SimDriver {
        static DRIVER: OnceLock<SimDriver> = OnceLock::new();
        DRIVER.get_or_init(SimDriver::default)
    }

    pub fn run(
        p: &GpuProgram,
        args: Vec<Value>,
        locate: &dyn Fn(u32) -> Location,
    ) -> Result<Value, Error> {
        dpl_cuda::run_at(p, driver(), args, locate)
    }
}

#[cfg(not(feature = "sim"))]
mod sim {
    use super::*;

    pub fn run(_: &GpuProgram, _: Vec<Value>, _: &dyn Fn(u32) -> Location) -> Result<Value, Error> {
        Err(crate::place::unavailable(Place::Sim))
    }
}

/// A value that is not what the compiled program says it returns: a bug in dpl.
fn mismatch(what: &str, v: &Value) -> Error {
    Error::Device(format!(
        "internal error: the GPU program returned {v:?} where {what} was expected"
    ))
}

/// Element types of sequences: scalars and tuples of scalars.
pub trait Elem: Sized {
    /// The interpreter value of `self`.
    fn to_value(&self) -> Value;
    /// Back from an interpreter value.
    fn from_value(v: &Value) -> Result<Self, Error>;
}

macro_rules! scalar_elem {
    ($($t:ty => $v:ident),*) => {$(
        impl Elem for $t {
            #[inline]
            fn to_value(&self) -> Value {
                Value::$v(*self)
            }
            fn from_value(v: &Value) -> Result<Self, Error> {
                match v {
                    Value::$v(x) => Ok(*x),
                    other => Err(mismatch(stringify!($t), other)),
                }
            }
        }
        impl Arg for $t {
            fn to_value(&self) -> Value {
                Elem::to_value(self)
            }
        }
        impl Ret for $t {
            fn from_value(v: Value) -> Result<Self, Error> {
                <$t as Elem>::from_value(&v)
            }
        }
    )*};
}

scalar_elem!(bool => Bool, i32 => I32, u32 => U32, i64 => I64, u64 => U64, usize => Usize, f32 => F32, f64 => F64);

macro_rules! tuples {
    ($(($($t:ident $i:tt),+)),*) => {$(
        impl<$($t: Elem),+> Elem for ($($t,)+) {
            fn to_value(&self) -> Value {
                Value::Tuple(vec![$(self.$i.to_value()),+])
            }
            fn from_value(v: &Value) -> Result<Self, Error> {
                match v {
                    Value::Tuple(items) if items.len() == [$($i),+].len() => {
                        Ok(($($t::from_value(&items[$i])?,)+))
                    }
                    other => Err(mismatch("a tuple", other)),
                }
            }
        }
        impl<$($t: Ret),+> Ret for ($($t,)+) {
            fn from_value(v: Value) -> Result<Self, Error> {
                match v {
                    Value::Tuple(items) if items.len() == [$($i),+].len() => {
                        let mut items = items.into_iter();
                        Ok(($($t::from_value(items.next().expect("length checked"))?,)+))
                    }
                    other => Err(mismatch("a tuple", &other)),
                }
            }
        }
    )*};
}

tuples!(
    (A 0),
    (A 0, B 1),
    (A 0, B 1, C 2),
    (A 0, B 1, C 2, D 3),
    (A 0, B 1, C 2, D 3, E 4),
    (A 0, B 1, C 2, D 3, E 4, F 5),
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6),
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
);

fn seq_value<'a, T: Elem + 'a>(items: impl Iterator<Item = &'a T>) -> Value {
    Value::seq(items.map(Elem::to_value).collect())
}

/// Parameters: how a Rust argument becomes the interpreter value the program takes.
pub trait Arg {
    /// The interpreter value of `self`.
    fn to_value(&self) -> Value;
}

impl<A: Arg + ?Sized> Arg for &A {
    fn to_value(&self) -> Value {
        (**self).to_value()
    }
}

impl<T: Elem> Arg for [T] {
    fn to_value(&self) -> Value {
        seq_value(self.iter())
    }
}

impl<T: Elem> Arg for Vec<T> {
    fn to_value(&self) -> Value {
        seq_value(self.iter())
    }
}

impl<T: Elem> Arg for Seq<T> {
    fn to_value(&self) -> Value {
        seq_value(self.iter())
    }
}

impl<T: Elem> Arg for Nested<T> {
    fn to_value(&self) -> Value {
        Value::seq(self.rows().map(|r| seq_value(r.iter())).collect())
    }
}

impl<T: Elem> Arg for Matrix<T> {
    fn to_value(&self) -> Value {
        Value::seq(self.iter().map(|r| seq_value(r.iter())).collect())
    }
}

/// Results: how the program's value becomes the declared Rust result.
pub trait Ret: Sized {
    /// Converts the program's result.
    fn from_value(v: Value) -> Result<Self, Error>;
}

fn seq_items(v: &Value) -> Result<&[Value], Error> {
    match v {
        Value::Seq(items) => Ok(items),
        other => Err(mismatch("a sequence", other)),
    }
}

impl<T: Elem> Ret for Vec<T> {
    fn from_value(v: Value) -> Result<Self, Error> {
        seq_items(&v)?.iter().map(T::from_value).collect()
    }
}

impl<T: Elem> Ret for Seq<T> {
    fn from_value(v: Value) -> Result<Self, Error> {
        Vec::<T>::from_value(v).map(Seq::from)
    }
}

impl<T: Elem> Ret for Nested<T> {
    fn from_value(v: Value) -> Result<Self, Error> {
        let rows = seq_items(&v)?;
        let mut values = Vec::new();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        for r in rows {
            for x in seq_items(r)? {
                values.push(T::from_value(x)?);
            }
            offsets.push(values.len());
        }
        Nested::from_parts(values, offsets)
    }
}
