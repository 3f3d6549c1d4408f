//! Scalar functions and constants.

use dpl_core::ir::{BinOp, Const, Expr, MathFn, Scalar, Type, VarId};
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;

use super::Lowerer;
use super::expr::op_name;

/// The scalar functions: math (`sqrt`, `max`, ...) and wrapping arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ScalarFn {
    Math(MathFn),
    Wrapping(BinOp),
}

impl ScalarFn {
    pub(super) fn from_name(name: &str) -> Option<ScalarFn> {
        match name {
            "wrapping_add" => Some(ScalarFn::Wrapping(BinOp::Add)),
            "wrapping_sub" => Some(ScalarFn::Wrapping(BinOp::Sub)),
            "wrapping_mul" => Some(ScalarFn::Wrapping(BinOp::Mul)),
            _ => MathFn::from_name(name).map(ScalarFn::Math),
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            ScalarFn::Math(m) => m.name(),
            ScalarFn::Wrapping(BinOp::Add) => "wrapping_add",
            ScalarFn::Wrapping(BinOp::Sub) => "wrapping_sub",
            ScalarFn::Wrapping(_) => "wrapping_mul",
        }
    }

    pub(super) fn arity(self) -> usize {
        match self {
            ScalarFn::Math(m) => m.arity(),
            ScalarFn::Wrapping(_) => 2,
        }
    }

    /// Why `f` is not defined for `ty`, if it is not.
    fn unsupported_for(self, ty: Scalar) -> Option<String> {
        match self {
            ScalarFn::Math(m) if m.float_only() && !ty.is_float() => {
                let allowed = Scalar::names_where(Scalar::is_float);
                Some(format!("`{}` is only defined for {allowed}", m.name()))
            }
            ScalarFn::Math(MathFn::Abs) if !(ty.is_float() || ty.is_signed_int()) => {
                let allowed = Scalar::names_where(|s| s.is_float() || s.is_signed_int());
                Some(format!("`abs` is only defined for {allowed}"))
            }
            ScalarFn::Math(MathFn::Min | MathFn::Max) if ty == Scalar::Bool => {
                Some("`min` and `max` are not defined for bool".to_string())
            }
            ScalarFn::Wrapping(_) if !ty.is_int() => Some(format!(
                "`{}` is only defined for integer types",
                self.name()
            )),
            _ => None,
        }
    }
}

const METHODS: &str = "len, to_vec, powi, abs, sqrt, exp, ln, log2, sin, cos, tanh, powf, floor, ceil, round, trunc, min, max, mul_add, wrapping_add, wrapping_sub, wrapping_mul";

/// A named constant of a scalar type: `f32::MAX`, `f64::consts::PI`, `std::f32::consts::E`, ...
pub(super) fn const_path(path: &syn::Path) -> Option<(Const, Scalar)> {
    if path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let segs: &[&str] = match segs.as_slice() {
        ["std" | "core", rest @ ..] if rest.len() >= 2 => rest,
        s => s,
    };
    match segs {
        [ty, name] => {
            let s = Scalar::from_name(ty)?;
            scalar_const(s, name).map(|c| (c, s))
        }
        [ty, "consts", name] => {
            let s = Scalar::from_name(ty)?;
            float_const(s, name).map(|v| (Const::Float(v), s))
        }
        _ => None,
    }
}

fn scalar_const(s: Scalar, name: &str) -> Option<Const> {
    // `T::ZERO` and `T::ONE` of dpl's `Num` bound (after `T` is replaced by a type).
    match (name, s.is_float(), s.is_int()) {
        ("ZERO", true, _) => return Some(Const::Float(0.0)),
        ("ONE", true, _) => return Some(Const::Float(1.0)),
        ("ZERO", _, true) => return Some(Const::Int(0)),
        ("ONE", _, true) => return Some(Const::Int(1)),
        _ => {}
    }
    macro_rules! float {
        ($t:ident) => {
            match name {
                "MAX" => Some($t::MAX as f64),
                "MIN" => Some($t::MIN as f64),
                "EPSILON" => Some($t::EPSILON as f64),
                "INFINITY" => Some($t::INFINITY as f64),
                "NEG_INFINITY" => Some($t::NEG_INFINITY as f64),
                "NAN" => Some($t::NAN as f64),
                "MIN_POSITIVE" => Some($t::MIN_POSITIVE as f64),
                _ => None,
            }
            .map(Const::Float)
        };
    }
    macro_rules! int {
        ($t:ident) => {
            match name {
                "MAX" => Some($t::MAX as i128),
                "MIN" => Some($t::MIN as i128),
                _ => None,
            }
            .map(Const::Int)
        };
    }
    macro_rules! half {
        ($t:ident) => {{
            use dpl_core::float16::$t;
            match name {
                "MAX" => Some($t::MAX.to_f64()),
                "MIN" => Some($t::MIN.to_f64()),
                "EPSILON" => Some($t::EPSILON.to_f64()),
                "INFINITY" => Some(f64::INFINITY),
                "NEG_INFINITY" => Some(f64::NEG_INFINITY),
                "NAN" => Some(f64::NAN),
                "MIN_POSITIVE" => Some($t::MIN_POSITIVE.to_f64()),
                // The `half` crate's constants (`f16::PI`), rounded where they are used.
                _ => float_const(Scalar::F64, name),
            }
            .map(Const::Float)
        }};
    }
    match s {
        Scalar::F16 => half!(f16),
        Scalar::BF16 => half!(bf16),
        Scalar::F32 => float!(f32),
        Scalar::F64 => float!(f64),
        Scalar::I8 => int!(i8),
        Scalar::U8 => int!(u8),
        Scalar::I16 => int!(i16),
        Scalar::U16 => int!(u16),
        Scalar::I32 => int!(i32),
        Scalar::U32 => int!(u32),
        Scalar::I64 => int!(i64),
        Scalar::U64 => int!(u64),
        // `usize` is 64 bits on every target dpl generates code for.
        Scalar::Usize => int!(u64),
        Scalar::Bool => None,
    }
}

fn float_const(s: Scalar, name: &str) -> Option<f64> {
    macro_rules! table {
        ($t:ident) => {{
            use std::$t::consts as c;
            let v = match name {
                "PI" => c::PI,
                "TAU" => c::TAU,
                "E" => c::E,
                "SQRT_2" => c::SQRT_2,
                "FRAC_1_SQRT_2" => c::FRAC_1_SQRT_2,
                "LN_2" => c::LN_2,
                "LN_10" => c::LN_10,
                "LOG2_E" => c::LOG2_E,
                "LOG10_E" => c::LOG10_E,
                "LOG2_10" => c::LOG2_10,
                "LOG10_2" => c::LOG10_2,
                "FRAC_PI_2" => c::FRAC_PI_2,
                "FRAC_PI_3" => c::FRAC_PI_3,
                "FRAC_PI_4" => c::FRAC_PI_4,
                "FRAC_PI_6" => c::FRAC_PI_6,
                "FRAC_PI_8" => c::FRAC_PI_8,
                "FRAC_1_PI" => c::FRAC_1_PI,
                "FRAC_2_PI" => c::FRAC_2_PI,
                "FRAC_2_SQRT_PI" => c::FRAC_2_SQRT_PI,
                _ => return None,
            };
            Some(v as f64)
        }};
    }
    match s {
        Scalar::F32 => table!(f32),
        Scalar::F64 => table!(f64),
        _ => None,
    }
}

impl Lowerer<'_> {
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> VarId {
        if let Some(t) = &m.turbofish {
            return self.fail(t, "turbofish `::<...>` is not supported here");
        }
        let name = m.method.unraw().to_string();
        if name == "len" {
            if !m.args.is_empty() {
                return self.fail(&m.args, "`len` takes no arguments: `x.len()`");
            }
            let v = self.value(&m.receiver);
            return self.emit("len", Type::usize(), Expr::Len(v), m.method.span());
        }
        match name.as_str() {
            "powi" => return self.powi(m),
            "to_vec" => return self.same_sequence(m),
            _ => {}
        }
        if let Some(f) = ScalarFn::from_name(&name) {
            let want = f.arity() - 1;
            if m.args.len() != want {
                let form = match want {
                    0 => format!("`x.{name}()`"),
                    1 => format!("`x.{name}(y)`"),
                    _ => format!("`x.{name}(y, z)`"),
                };
                return self.fail(
                    m,
                    format!(
                        "`{name}` takes {want} argument{}: {form}",
                        if want == 1 { "" } else { "s" }
                    ),
                );
            }
            let mut args = vec![self.value(&m.receiver)];
            for a in &m.args {
                args.push(self.value(a));
            }
            return self.scalar_fn(f, None, args, &m.method, m.method.span());
        }
        let msg = match name.as_str() {
            "iter" | "into_iter" | "iter_mut" | "map" | "sum" | "fold" | "collect" | "filter"
            | "zip" | "enumerate" | "product" | "rev" => {
                "iterator methods are not supported: use the primitives, such as `map(f, xs)`, `reduce(op, xs, init)`, `sum(xs)` or `filter(pred, xs)`".to_string()
            }
            "clone" | "to_owned" | "copied" | "cloned" => {
                format!(
                    "`.{name}()` is not needed: values are immutable and can be used any number of times"
                )
            }
            "pow" => "use `powi` or `powf` on floats: `x.powi(n)`, `x.powf(y)`".to_string(),
            _ => format!("unknown method `{name}`; allowed methods: {METHODS}"),
        };
        self.fail(&m.method, msg)
    }

    /// A scalar function applied to lowered arguments (`ty` from an `f32::max` path).
    pub(super) fn scalar_fn(
        &mut self,
        f: ScalarFn,
        ty: Option<Scalar>,
        mut args: Vec<VarId>,
        site: &(impl ToTokens + ?Sized),
        span: Span,
    ) -> VarId {
        if let Some(t) = ty {
            if let Some(why) = f.unsupported_for(t) {
                return self.fail(site, why);
            }
            for a in &mut args {
                *a = self.annotate(*a, Type::Scalar(t), span);
            }
        }
        let ty = ty.map_or(Type::Infer, Type::Scalar);
        match f {
            ScalarFn::Math(m) => self.emit(m.name(), ty, Expr::Math(m, args), span),
            ScalarFn::Wrapping(op) => match args.as_slice() {
                [a, b] => self.emit(op_name(op), ty, Expr::Binary(op, *a, *b), span),
                _ => self.fail(site, format!("`{}` takes two operands", f.name())),
            },
        }
    }
}
