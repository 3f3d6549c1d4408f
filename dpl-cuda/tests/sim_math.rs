//! The transcendental functions (`exp ln log2 sin cos tanh powf`) and float `%` on the
//! simulated GPU against Rust's `std` (what the CPU backends call): `f32` within 1 ulp,
//! `f64` within 2 ulp, `%` bit-exact; NaN where `std` gives NaN; special values
//! (zeros, infinities, NaN, subnormals, huge arguments, every `powf` special case).
#![cfg(feature = "sim")]

mod support;

use dpl_core::interp::Value;
use dpl_cuda::sim::SimDriver;
use support::programs::source;
use support::*;

const NAMES: [&str; 8] = ["exp", "ln", "log2", "sin", "cos", "tanh", "powf", "%"];

/// The two float types, for checks written once.
trait Float: Copy + std::fmt::LowerExp {
    /// The test program computing [`Float::want`]'s functions.
    const PROGRAM: &str;
    /// `exp ln log2 sin cos tanh powf %` of `(a, b)` by Rust's `std`.
    fn want(a: Self, b: Self) -> [Self; 8];
    /// The value of a result element.
    fn of(v: &Value) -> Self;
    /// The bits as a signed integer ordered like the values (for ulp distances).
    fn key(self) -> i64;
    fn is_nan(self) -> bool;
    /// The bits of the canonical NaN, the one every NaN result must have.
    const CANONICAL_NAN: i64;
}

macro_rules! float {
    ($t:ident, $bits:ident, $variant:ident, $program:literal, $nan:literal) => {
        impl Float for $t {
            const PROGRAM: &str = $program;
            const CANONICAL_NAN: i64 = $nan;
            fn want(a: Self, b: Self) -> [Self; 8] {
                [
                    a.exp(),
                    a.ln(),
                    a.log2(),
                    a.sin(),
                    a.cos(),
                    a.tanh(),
                    a.powf(b),
                    a % b,
                ]
            }
            fn of(v: &Value) -> Self {
                let Value::$variant(g) = *v else {
                    panic!(concat!(stringify!($t), " expected"))
                };
                g
            }
            fn key(self) -> i64 {
                let i = self.to_bits() as $bits;
                i64::from(if i < 0 { $bits::MIN - i } else { i })
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
        }
    };
}

float!(f64, i64, F64, "transcendental_f64", 0x7fff_ffff_ffff_ffff);
float!(f32, i32, F32, "transcendental_f32", 0x7fff_ffff);

/// Distance in ulps between two floats (0 for equal values and for two NaNs; `u64::MAX`
/// for NaN against a number).
/// The distance from the result `a` to the wanted `b` in ulps; 0 for a NaN `a` only if it
/// is the canonical NaN (and `b` any NaN).
fn ulps<T: Float>(a: T, b: T) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() && a.key() == T::CANONICAL_NAN {
            0
        } else {
            u64::MAX
        };
    }
    a.key().abs_diff(b.key())
}

fn run(src: &str, x: Value, y: Value) -> Vec<Vec<Value>> {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).expect("compiles");
    let driver = SimDriver::default();
    let Value::Seq(items) = dpl_cuda::run(&prog, &driver, vec![x, y]).expect("runs") else {
        panic!("a sequence was expected");
    };
    items
        .iter()
        .map(|t| match t {
            Value::Tuple(vs) => vs.clone(),
            _ => panic!("tuples were expected"),
        })
        .collect()
}

fn special64() -> Vec<f64> {
    vec![
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        2.0,
        0.5,
        f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        1e-310,
        f64::MAX,
        -f64::MAX,
        1e-20,
        -1e-20,
        709.7,
        709.8,
        -745.0,
        -745.2,
        std::f64::consts::PI,
        std::f64::consts::FRAC_PI_2,
        1e6,
        -123_456.789,
        3.0,
        -3.0,
        21.9,
        22.5,
        0.75,
        -2.5,
    ]
}

/// Checks every function at every `(x[i], y[i])` (`%` bit-exact, the others within `tol`
/// ulps); returns the largest ulp error of each.
fn check<T: Float + Into<Value>>(x: &[T], y: &[T], tol: u64) -> [u64; 8] {
    let got = run(source(T::PROGRAM), seq(x.to_vec()), seq(y.to_vec()));
    let mut worst = [0u64; 8];
    for (i, row) in got.iter().enumerate() {
        let (a, b) = (x[i], y[i]);
        for (j, (g, w)) in row.iter().zip(T::want(a, b)).enumerate() {
            let g = T::of(g);
            let u = ulps(g, w);
            let limit = if j == 7 { 0 } else { tol };
            assert!(
                u <= limit,
                "{}({a:e}, {b:e}): got {g:e}, want {w:e} ({u} ulps)",
                NAMES[j]
            );
            worst[j] = worst[j].max(u);
        }
    }
    worst
}

#[test]
fn f64_random_arguments() {
    let mut r = Rng::new(11);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for scale in [1.0, 30.0, 700.0] {
        for _ in 0..300 {
            x.push(r.f64_in(-scale, scale));
            y.push(r.f64_in(-3.0, 3.0));
        }
    }
    // Positive arguments for ln/log2/powf.
    for _ in 0..300 {
        x.push(r.f64_in(-50.0, 50.0).abs());
        y.push(r.f64_in(-20.0, 20.0));
    }
    for _ in 0..100 {
        x.push(2f64.powi(r.int_in(-1070..1020) as i32) * (1.0 + r.f64_in(-0.5, 0.5)));
        y.push(r.f64_in(-1.0, 1.0));
    }
    let worst = check(&x, &y, 2);
    eprintln!(
        "f64 worst ulps: {:?}",
        NAMES.iter().zip(worst).collect::<Vec<_>>()
    );
}

#[test]
fn f32_random_arguments() {
    let mut r = Rng::new(12);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for scale in [1.0, 30.0, 80.0] {
        for _ in 0..300 {
            x.push(r.f64_in(-scale, scale) as f32);
            y.push(r.f64_in(-3.0, 3.0) as f32);
        }
    }
    for _ in 0..300 {
        x.push(r.f64_in(-50.0, 50.0).abs() as f32);
        y.push(r.f64_in(-20.0, 20.0) as f32);
    }
    let worst = check(&x, &y, 2);
    eprintln!(
        "f32 worst ulps: {:?}",
        NAMES.iter().zip(worst).collect::<Vec<_>>()
    );
}

#[test]
fn special_values() {
    let s = special64();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &a in &s {
        for &b in &s {
            x.push(a);
            y.push(b);
        }
    }
    check(&x, &y, 2);
    let (x32, y32): (Vec<f32>, Vec<f32>) = x
        .iter()
        .zip(&y)
        .map(|(&a, &b)| (a as f32, b as f32))
        .unzip();
    check(&x32, &y32, 2);
}

#[test]
fn float_remainder_far_apart_exponents() {
    let mut r = Rng::new(13);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..200 {
        x.push(r.f64_in(-1.0, 1.0) * 2f64.powi(r.int_in(-60..300) as i32));
        y.push(r.f64_in(-1.0, 1.0) * 2f64.powi(r.int_in(-1070..60) as i32));
    }
    x.push(f64::MAX);
    y.push(5e-324);
    check(&x, &y, 2);
}

#[test]
fn sin_cos_of_huge_and_nearly_multiple_of_half_pi_arguments() {
    let mut r = Rng::new(14);
    let mut x = Vec::new();
    for _ in 0..400 {
        let e = r.int_in(0..1023) as i32;
        x.push(r.f64_in(-1.0, 1.0) * 2f64.powi(e));
    }
    // Doubles closest to multiples of pi/2 (the reduced argument is tiny).
    for k in [1.0f64, 2.0, 3.0, 100.0, 1e5, 1e6, 1e9, 1e15, 1e22] {
        let v = k * std::f64::consts::FRAC_PI_2;
        x.extend([v, v.next_up(), v.next_down(), -v]);
    }
    let y = vec![1.0; x.len()];
    let worst = check(&x, &y, 2);
    eprintln!(
        "huge arguments, worst ulps: sin {}, cos {}",
        worst[3], worst[4]
    );
    let x32: Vec<f32> = x
        .iter()
        .map(|&v| v as f32)
        .filter(|v| v.is_finite())
        .collect();
    let y32 = vec![1.0f32; x32.len()];
    check(&x32, &y32, 2);
    // The hardest case of the reduction for doubles (Muller): x is within 4.7e-19 of a
    // multiple of pi/2. The reduced argument, computed exactly with integers, is
    // 4.687165924254628e-19 (quadrant 1), so cos(x) = -sin(r) rounds to
    // -4.687165924254628e-19; the host's libm gives a value 8 ulps away, so this case is
    // checked against the exact value.
    let hard = 6_381_956_970_095_103.0 * 2f64.powi(797);
    let got = run(
        source("transcendental_f64"),
        seq(vec![hard]),
        seq(vec![1.0f64]),
    );
    assert_eq!(got[0][3], Value::F64(1.0));
    assert_eq!(got[0][4], Value::F64(-4.687_165_924_254_628e-19));
}
