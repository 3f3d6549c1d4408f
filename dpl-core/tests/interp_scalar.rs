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

int_binary_props!(i8_binary_ops, i8);
int_binary_props!(u8_binary_ops, u8);
int_binary_props!(i16_binary_ops, i16);
int_binary_props!(u16_binary_ops, u16);
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
    let f = binary_fn("div", "i8", "i8");
    assert_eq!(run2(&f, i8::MIN, -1i8).unwrap(), Value::I8(i8::MIN));
    let f = binary_fn("div", "i16", "i16");
    assert_eq!(run2(&f, i16::MIN, -1i16).unwrap(), Value::I16(i16::MIN));
}

/// Narrow integers wrap at their own width, not at 32 bits.
#[test]
fn narrow_integers_wrap_at_their_width() {
    let add = binary_fn("add", "u8", "u8");
    assert_eq!(run2(&add, 200u8, 100u8).unwrap(), Value::U8(44));
    let mul = binary_fn("mul", "i8", "i8");
    assert_eq!(run2(&mul, 100i8, 3i8).unwrap(), Value::I8(44));
    let sub = binary_fn("sub", "u16", "u16");
    assert_eq!(run2(&sub, 1u16, 2u16).unwrap(), Value::U16(u16::MAX));
    let add = binary_fn("add", "i16", "i16");
    assert_eq!(run2(&add, i16::MAX, 1i16).unwrap(), Value::I16(i16::MIN));
    let neg = parse("fn f(%0 a: i8) -> i8 { %1: i8 = neg %0; %1 }").unwrap();
    assert_eq!(
        run(&neg, vec![Value::I8(i8::MIN)]).unwrap(),
        Value::I8(i8::MIN)
    );
    let abs = parse("fn f(%0 a: i16) -> i16 { %1: i16 = abs %0; %1 }").unwrap();
    assert_eq!(
        run(&abs, vec![Value::I16(i16::MIN)]).unwrap(),
        Value::I16(i16::MIN)
    );
    let shl = parse("fn f(%0 a: u8, %1 n: u32) -> u8 { %2: u8 = shl %0, %1; %2 }").unwrap();
    for n in [0u32, 1, 7, 8, 9, 33] {
        assert_eq!(
            run2(&shl, 0x81u8, n).unwrap(),
            Value::U8(0x81u8.wrapping_shl(n)),
            "<< {n}"
        );
    }
    let shr = parse("fn f(%0 a: i16, %1 n: i8) -> i16 { %2: i16 = shr %0, %1; %2 }").unwrap();
    for n in [0i8, 1, 15, 16, 17, -1] {
        assert_eq!(
            run2(&shr, -300i16, n).unwrap(),
            Value::I16((-300i16).wrapping_shr(n as u32)),
            ">> {n}"
        );
    }
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
            ("i8", Value::I8(i as i8)),
            ("u8", Value::U8(i as u8)),
            ("i16", Value::I16(i as i16)),
            ("u16", Value::U16(i as u16)),
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
            for to in ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "usize", "f32", "f64"] {
                let f = parse(&format!("fn f(%0 a: {from}) -> {to} {{ %1: {to} = cast %0 as {to}; %1 }}")).unwrap();
                let got = run(&f, vec![v.clone()]).unwrap();
                macro_rules! to_rust {
                    ($x:expr) => {
                        match to {
                            "i8" => Value::I8($x as i8),
                            "u8" => Value::U8($x as u8),
                            "i16" => Value::I16($x as i16),
                            "u16" => Value::U16($x as u16),
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
                    Value::I8(a) => to_rust!(*a),
                    Value::U8(a) => to_rust!(*a),
                    Value::I16(a) => to_rust!(*a),
                    Value::U16(a) => to_rust!(*a),
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

#[test]
fn narrow_constants_take_their_variable_type_and_range() {
    let f = parse(
        "fn f() -> (i8, u8, i16, u16) {
           %0: i8 = const -128
           %1: u8 = const 255
           %2: i16 = const -32768
           %3: u16 = const 65535
           %4: (i8, u8, i16, u16) = tuple(%0, %1, %2, %3)
           %4
         }",
    )
    .unwrap();
    assert_eq!(
        run(&f, vec![]).unwrap(),
        Value::Tuple(vec![
            Value::I8(i8::MIN),
            Value::U8(u8::MAX),
            Value::I16(i16::MIN),
            Value::U16(u16::MAX)
        ])
    );
    for (t, c) in [
        ("u8", "256"),
        ("i8", "128"),
        ("i8", "-129"),
        ("u16", "65536"),
        ("i16", "-32769"),
    ] {
        let f = parse(&format!("fn f() -> {t} {{ %0: {t} = const {c}; %0 }}")).unwrap();
        assert!(run(&f, vec![]).is_err(), "{c} as {t} accepted");
    }
}

/// Equal values, or two NaNs (the interpreter's NaNs are canonical, `half`'s are not).
fn same_half(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::F16(a), Value::F16(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
        (Value::BF16(a), Value::BF16(b)) => {
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
        }
        _ => got == want,
    }
}

macro_rules! half_props {
    ($name:ident, $t:ident) => {
        proptest! {
            /// Operators, math functions and casts on 16-bit floats: computed in `f32` on
            /// the exact values and rounded once (the `half` crate's operators do so).
            #[test]
            fn $name(a in any::<u16>(), b in any::<u16>(), i in -(1i64 << 24)..(1 << 24)) {
                use dpl_core::float16::$t;
                let (x, y) = ($t::from_bits(a), $t::from_bits(b));
                let t = stringify!($t);
                let v = |op| run2(&binary_fn(op, t, t), x, y).unwrap();
                for (op, want) in [("add", x + y), ("sub", x - y), ("mul", x * y), ("div", x / y), ("rem", x % y)] {
                    prop_assert!(same_half(&v(op), &Value::from(want)), "{} {:?} {:?}: {:?}", op, x, y, v(op));
                }
                let c = |op| run2(&binary_fn(op, t, "bool"), x, y).unwrap();
                prop_assert_eq!(c("lt"), Value::from(x < y));
                prop_assert_eq!(c("eq"), Value::from(x == y));
                prop_assert_eq!(c("ge"), Value::from(x >= y));
                let f32of = |h: $t| h.to_f32();
                let round = |r: f32| Value::from($t::from_f32(r));
                let un = |op: &str| run(&parse(&format!("fn f(%0 a: {t}) -> {t} {{ %1: {t} = {op} %0; %1 }}")).unwrap(), vec![x.into()]).unwrap();
                prop_assert!(same_half(&un("sqrt"), &round(f32of(x).sqrt())));
                prop_assert!(same_half(&un("exp"), &round(f32of(x).exp())));
                prop_assert!(same_half(&un("neg"), &Value::from(-x)));
                prop_assert!(same_half(&v("min"), &round(f32of(x).min(f32of(y)))));
                let cast = |from: &str, to: &str, v: Value| run(&parse(&format!("fn f(%0 a: {from}) -> {to} {{ %1: {to} = cast %0 as {to}; %1 }}")).unwrap(), vec![v]).unwrap();
                prop_assert_eq!(cast(t, "i32", x.into()), Value::I32(f32of(x) as i32));
                prop_assert!(same_half(&cast(t, "f64", x.into()), &Value::F64(f64::from(f32of(x)))) || x.is_nan());
                // Integers below 2^24 are exact in `f32`: one rounding from there.
                prop_assert!(same_half(&cast("i64", t, i.into()), &round(i as f32)));
                prop_assert!(same_half(&cast("f32", t, f32of(y).into()), &Value::from(y)));
            }
        }
    };
}

half_props!(f16_ops_round_once, f16);
half_props!(bf16_ops_round_once, bf16);
