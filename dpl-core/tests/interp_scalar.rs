//! The interpreter's scalar semantics against Rust's own operators: wrapping integer
//! arithmetic, shifts, division errors, IEEE floats, `as` casts and math functions.

use dpl_core::interp::{Error, Value, run};
use dpl_core::ir::*;
use dpl_core::text::parse;
use proptest::prelude::*;

/// `fn f(%0 a: A, %1 b: A) -> R { %2: R = <op> %0, %1; %2 }`
fn binary_fn(op: &str, a: &str, r: &str) -> Function {
    parse(&format!(
        "fn f(%0 a: {a}, %1 b: {a}) -> {r} {{ %2: {r} = {op} %0, %1; %2 }}"
    ))
    .unwrap()
}

fn run2(f: &Function, a: impl Into<Value>, b: impl Into<Value>) -> Result<Value, Error> {
    run(f, vec![a.into(), b.into()])
}

macro_rules! int_binary_props {
    ($name:ident, $t:ty) => {
        proptest! {
            #[test]
            fn $name(a in any::<$t>(), b in any::<$t>(), small in 0..4 as $t) {
                let t = stringify!($t);
                for b in [b, small, <$t>::MAX, 0 as $t] {
                    let v = |op| run2(&binary_fn(op, t, t), a, b).unwrap();
                    prop_assert_eq!(v("add"), Value::from(a.wrapping_add(b)));
                    prop_assert_eq!(v("sub"), Value::from(a.wrapping_sub(b)));
                    prop_assert_eq!(v("mul"), Value::from(a.wrapping_mul(b)));
                    prop_assert_eq!(v("and"), Value::from(a & b));
                    prop_assert_eq!(v("or"), Value::from(a | b));
                    prop_assert_eq!(v("xor"), Value::from(a ^ b));
                    let c = |op| run2(&binary_fn(op, t, "bool"), a, b).unwrap();
                    prop_assert_eq!(c("eq"), Value::from(a == b));
                    prop_assert_eq!(c("ne"), Value::from(a != b));
                    prop_assert_eq!(c("lt"), Value::from(a < b));
                    prop_assert_eq!(c("le"), Value::from(a <= b));
                    prop_assert_eq!(c("gt"), Value::from(a > b));
                    prop_assert_eq!(c("ge"), Value::from(a >= b));
                    for op in ["div", "rem"] {
                        let got = run2(&binary_fn(op, t, t), a, b);
                        if b == 0 as $t {
                            prop_assert!(matches!(got, Err(Error::DivideByZero { .. })), "{:?}", got);
                        } else {
                            let want = if op == "div" { a.wrapping_div(b) } else { a.wrapping_rem(b) };
                            prop_assert_eq!(got.unwrap(), Value::from(want));
                        }
                    }
                }
            }
        }
    };
}

int_binary_props!(i32_binary_ops, i32);
int_binary_props!(u32_binary_ops, u32);
int_binary_props!(i64_binary_ops, i64);
int_binary_props!(u64_binary_ops, u64);
int_binary_props!(usize_binary_ops, usize);

#[test]
fn min_divided_by_minus_one_wraps() {
    let f = binary_fn("div", "i32", "i32");
    assert_eq!(run2(&f, i32::MIN, -1).unwrap(), Value::I32(i32::MIN));
    let f = binary_fn("rem", "i64", "i64");
    assert_eq!(run2(&f, i64::MIN, -1i64).unwrap(), Value::I64(0));
}

/// `x << n` and `x >> n` for amounts of another type, modulo the width like `wrapping_shl`.
#[test]
fn shifts_take_the_amount_modulo_the_width() {
    let shl = parse("fn f(%0 a: i32, %1 n: i64) -> i32 { %2: i32 = shl %0, %1; %2 }").unwrap();
    let shr = parse("fn f(%0 a: i32, %1 n: i64) -> i32 { %2: i32 = shr %0, %1; %2 }").unwrap();
    for a in [1i32, -8, i32::MAX, i32::MIN, 12345] {
        for n in [0i64, 1, 5, 31, 32, 33, 64, -1, -31, i64::MAX, i64::MIN] {
            assert_eq!(
                run2(&shl, a, n).unwrap(),
                Value::I32(a.wrapping_shl(n as u32)),
                "{a} << {n}"
            );
            assert_eq!(
                run2(&shr, a, n).unwrap(),
                Value::I32(a.wrapping_shr(n as u32)),
                "{a} >> {n}"
            );
        }
    }
    let f = parse("fn f(%0 a: u64, %1 n: u32) -> u64 { %2: u64 = shr %0, %1; %2 }").unwrap();
    for n in [0u32, 63, 64, 65, u32::MAX] {
        assert_eq!(
            run2(&f, u64::MAX, n).unwrap(),
            Value::U64(u64::MAX.wrapping_shr(n))
        );
    }
}

fn same_float(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::F32(x), Value::F32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (Value::F64(x), Value::F64(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

/// A unary float function.
type F1 = fn(f32) -> f32;
/// A binary float function.
type F2 = fn(f32, f32) -> f32;

fn interesting_f32() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<f32>(),
        -100.0f32..100.0,
        Just(0.0f32),
        Just(-0.0f32),
        Just(f32::INFINITY),
        Just(f32::NAN),
        Just(f32::MAX),
    ]
}

proptest! {
    #[test]
    fn f32_binary_ops(a in interesting_f32(), b in interesting_f32()) {
        for (op, want) in [("add", a + b), ("sub", a - b), ("mul", a * b), ("div", a / b), ("rem", a % b)] {
            let got = run2(&binary_fn(op, "f32", "f32"), a, b).unwrap();
            prop_assert!(same_float(&got, &Value::F32(want)), "{} {} {}: {:?}", a, op, b, got);
        }
        for (op, want) in [("eq", a == b), ("ne", a != b), ("lt", a < b), ("le", a <= b), ("gt", a > b), ("ge", a >= b)] {
            prop_assert_eq!(run2(&binary_fn(op, "f32", "bool"), a, b).unwrap(), Value::Bool(want));
        }
    }

    #[test]
    fn f64_arithmetic(a in any::<f64>(), b in -1e3f64..1e3) {
        for (op, want) in [("add", a + b), ("sub", a - b), ("mul", a * b), ("div", a / b), ("rem", a % b)] {
            let got = run2(&binary_fn(op, "f64", "f64"), a, b).unwrap();
            prop_assert!(same_float(&got, &Value::F64(want)), "{} {} {}: {:?}", a, op, b, got);
        }
    }

    #[test]
    fn casts_follow_rust(i in any::<i64>(), x in interesting_f32(), y in any::<f64>()) {
        let sources: Vec<(&str, Value)> = vec![
            ("i32", Value::I32(i as i32)),
            ("u32", Value::U32(i as u32)),
            ("i64", Value::I64(i)),
            ("u64", Value::U64(i as u64)),
            ("usize", Value::Usize(i as usize)),
            ("f32", Value::F32(x)),
            ("f64", Value::F64(y)),
            ("bool", Value::Bool(i % 2 == 0)),
        ];
        for (from, v) in &sources {
            for to in ["i32", "u32", "i64", "u64", "usize", "f32", "f64"] {
                let f = parse(&format!("fn f(%0 a: {from}) -> {to} {{ %1: {to} = cast %0 as {to}; %1 }}")).unwrap();
                let got = run(&f, vec![v.clone()]).unwrap();
                macro_rules! to_rust {
                    ($x:expr) => {
                        match to {
                            "i32" => Value::I32($x as i32),
                            "u32" => Value::U32($x as u32),
                            "i64" => Value::I64($x as i64),
                            "u64" => Value::U64($x as u64),
                            "usize" => Value::Usize($x as usize),
                            "f32" => Value::F32($x as f32),
                            _ => Value::F64($x as f64),
                        }
                    };
                }
                let want = match v {
                    Value::I32(a) => to_rust!(*a),
                    Value::U32(a) => to_rust!(*a),
                    Value::I64(a) => to_rust!(*a),
                    Value::U64(a) => to_rust!(*a),
                    Value::Usize(a) => to_rust!(*a),
                    Value::F32(a) => to_rust!(*a),
                    Value::F64(a) => to_rust!(*a),
                    Value::Bool(a) => to_rust!(*a as u8),
                    _ => unreachable!(),
                };
                prop_assert!(same_float(&got, &want), "{:?} as {}: {:?} vs {:?}", v, to, got, want);
            }
        }
    }

    #[test]
    fn math_functions_follow_std(x in interesting_f32(), y in interesting_f32(), z in -10.0f32..10.0, i in any::<i32>(), j in any::<i32>()) {
        let unary: [(&str, F1); 12] = [
            ("abs", f32::abs), ("sqrt", f32::sqrt), ("exp", f32::exp), ("ln", f32::ln),
            ("log2", f32::log2), ("sin", f32::sin), ("cos", f32::cos), ("tanh", f32::tanh),
            ("floor", f32::floor), ("ceil", f32::ceil), ("round", f32::round), ("trunc", f32::trunc),
        ];
        for (name, g) in unary {
            let f = parse(&format!("fn f(%0 a: f32) -> f32 {{ %1: f32 = {name} %0; %1 }}")).unwrap();
            let got = run(&f, vec![x.into()]).unwrap();
            prop_assert!(same_float(&got, &Value::F32(g(x))), "{}({}) = {:?}", name, x, got);
        }
        let binary: [(&str, F2); 3] = [("powf", f32::powf), ("min", f32::min), ("max", f32::max)];
        for (name, g) in binary {
            let got = run2(&binary_fn(name, "f32", "f32"), x, y).unwrap();
            prop_assert!(same_float(&got, &Value::F32(g(x, y))), "{}({}, {}) = {:?}", name, x, y, got);
        }
        let f = parse("fn f(%0 a: f32, %1 b: f32, %2 c: f32) -> f32 { %3: f32 = mul_add %0, %1, %2; %3 }").unwrap();
        let got = run(&f, vec![x.into(), y.into(), z.into()]).unwrap();
        prop_assert!(same_float(&got, &Value::F32(x.mul_add(y, z))));
        // Integers: abs wraps, min and max.
        let f = parse("fn f(%0 a: i32) -> i32 { %1: i32 = abs %0; %1 }").unwrap();
        prop_assert_eq!(run(&f, vec![i.into()]).unwrap(), Value::I32(i.wrapping_abs()));
        prop_assert_eq!(run2(&binary_fn("min", "i32", "i32"), i, j).unwrap(), Value::I32(i.min(j)));
        prop_assert_eq!(run2(&binary_fn("max", "u64", "u64"), i as u64, j as u64).unwrap(), Value::U64((i as u64).max(j as u64)));
    }

    #[test]
    fn unary_ops(i in any::<i32>(), u in any::<u64>(), x in interesting_f32(), b in any::<bool>()) {
        let un = |op: &str, t: &str, v: Value| {
            run(&parse(&format!("fn f(%0 a: {t}) -> {t} {{ %1: {t} = {op} %0; %1 }}")).unwrap(), vec![v]).unwrap()
        };
        prop_assert_eq!(un("neg", "i32", i.into()), Value::I32(i.wrapping_neg()));
        prop_assert_eq!(un("not", "i32", i.into()), Value::I32(!i));
        prop_assert_eq!(un("not", "u64", u.into()), Value::U64(!u));
        prop_assert_eq!(un("not", "bool", b.into()), Value::Bool(!b));
        prop_assert!(same_float(&un("neg", "f32", x.into()), &Value::F32(-x)));
    }
}

#[test]
#[allow(clippy::bool_comparison)] // compares with Rust's own `<` on bool
fn bool_operators() {
    for a in [false, true] {
        for b in [false, true] {
            assert_eq!(
                run2(&binary_fn("and", "bool", "bool"), a, b).unwrap(),
                Value::Bool(a & b)
            );
            assert_eq!(
                run2(&binary_fn("or", "bool", "bool"), a, b).unwrap(),
                Value::Bool(a | b)
            );
            assert_eq!(
                run2(&binary_fn("xor", "bool", "bool"), a, b).unwrap(),
                Value::Bool(a ^ b)
            );
            assert_eq!(
                run2(&binary_fn("lt", "bool", "bool"), a, b).unwrap(),
                Value::Bool(a < b)
            );
            assert_eq!(
                run2(&binary_fn("eq", "bool", "bool"), a, b).unwrap(),
                Value::Bool(a == b)
            );
        }
    }
}

#[test]
fn constants_take_their_variable_type() {
    let f = parse(
        "fn f() -> (i32, u64, usize, f32, f64, bool) {
           %0: i32 = const -7
           %1: u64 = const 18446744073709551615
           %2: usize = const 3
           %3: f32 = const 0.1
           %4: f64 = const 0.1
           %5: bool = const false
           %6: (i32, u64, usize, f32, f64, bool) = tuple(%0, %1, %2, %3, %4, %5)
           %6
         }",
    )
    .unwrap();
    assert_eq!(
        run(&f, vec![]).unwrap(),
        Value::Tuple(vec![
            Value::I32(-7),
            Value::U64(u64::MAX),
            Value::Usize(3),
            Value::F32(0.1f32),
            Value::F64(0.1),
            Value::Bool(false)
        ])
    );
}
