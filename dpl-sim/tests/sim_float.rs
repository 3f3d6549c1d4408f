//! Floating-point instructions: `.rn` results bit-exact with Rust's IEEE operations,
//! directed rounding bracketing the exact result, conversions with every rounding mode,
//! unordered comparisons, `testp`, `copysign`, and the `.approx` functions within error.

// The unordered comparisons are defined as negations of ordered ones; that is the point.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

mod common;

use common::{Rng, elementwise, run3};

const N: usize = 400;

fn f32_inputs(seed: u64) -> Vec<f32> {
    let mut r = Rng::new(seed);
    (0..N)
        .map(|i| match i % 16 {
            0 => 0.0,
            1 => -0.0,
            2 => f32::INFINITY,
            3 => f32::MIN_POSITIVE / 8.0, // subnormal
            4 => 1.0,
            5 => f32::MAX,
            6 => -((r.next() % 1000) as f32),
            _ => {
                let bits = (r.next() as u32) & 0x7fff_ffff;
                // Keep exponents moderate so products and quotients are mostly finite.
                let e = 100 + (bits >> 23) % 54;
                let v = f32::from_bits((bits & 0x807f_ffff) | (e << 23));
                if r.next().is_multiple_of(2) { -v } else { v }
            }
        })
        .collect()
}

fn f64_inputs(seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..N)
        .map(|i| match i % 12 {
            0 => 0.0,
            1 => -0.0,
            2 => f64::MIN_POSITIVE / 16.0,
            3 => 1.0,
            _ => {
                let bits = r.next() & 0x800f_ffff_ffff_ffff;
                let e = 900 + (r.next() % 240);
                f64::from_bits(bits | (e << 52))
            }
        })
        .collect()
}

/// Same value, treating all NaNs as equal.
fn same32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn f32_round_to_nearest_is_bit_exact() {
    let a = f32_inputs(1);
    let b = f32_inputs(2);
    let c = f32_inputs(3);
    let run = |body: &str| run3::<f32, f32>(&elementwise("f32", 4, "f32", 4, body), &a, &b, &c);
    type Op = fn(f32, f32, f32) -> f32;
    let cases: [(&str, Op); 7] = [
        ("add.rn.f32 %y1, %x1, %x2;", |x, y, _| x + y),
        ("sub.rn.f32 %y1, %x1, %x2;", |x, y, _| x - y),
        ("mul.rn.f32 %y1, %x1, %x2;", |x, y, _| x * y),
        ("fma.rn.f32 %y1, %x1, %x2, %x3;", |x, y, z| x.mul_add(y, z)),
        ("div.rn.f32 %y1, %x1, %x2;", |x, y, _| x / y),
        ("sqrt.rn.f32 %y1, %x1;", |x, _, _| x.sqrt()),
        ("rcp.rn.f32 %y1, %x1;", |x, _, _| 1.0 / x),
    ];
    for (body, f) in cases {
        let got = run(&format!("\t{body}"));
        for i in 0..N {
            let want = f(a[i], b[i], c[i]);
            assert!(
                same32(got[i], want),
                "{body} {:e} {:e} {:e}: got {:e} want {:e}",
                a[i],
                b[i],
                c[i],
                got[i],
                want
            );
        }
    }
    // Plain `add.f32` (no modifier) is round to nearest too; div.full within 2 ulp.
    let got = run("\tadd.f32 %y1, %x1, %x2;");
    for i in 0..N {
        assert!(same32(got[i], a[i] + b[i]));
    }
    // NaN results are the canonical NaN.
    let nan = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tsub.rn.f32 %y1, %x1, %x1;"),
        &[f32::INFINITY],
        &[0.0],
        &[0.0],
    );
    assert_eq!(nan[0].to_bits(), 0x7fff_ffff);
}

#[test]
fn f64_round_to_nearest_is_bit_exact() {
    let a = f64_inputs(4);
    let b = f64_inputs(5);
    let c = f64_inputs(6);
    let run = |body: &str| run3::<f64, f64>(&elementwise("f64", 8, "f64", 8, body), &a, &b, &c);
    type Op = fn(f64, f64, f64) -> f64;
    let cases: [(&str, Op); 6] = [
        ("add.rn.f64 %y1, %x1, %x2;", |x, y, _| x + y),
        ("sub.rn.f64 %y1, %x1, %x2;", |x, y, _| x - y),
        ("mul.rn.f64 %y1, %x1, %x2;", |x, y, _| x * y),
        ("fma.rn.f64 %y1, %x1, %x2, %x3;", |x, y, z| x.mul_add(y, z)),
        ("div.rn.f64 %y1, %x1, %x2;", |x, y, _| x / y),
        ("sqrt.rn.f64 %y1, %x1;", |x, _, _| x.sqrt()),
    ];
    for (body, f) in cases {
        let got = run(&format!("\t{body}"));
        for i in 0..N {
            let want = f(a[i], b[i], c[i]);
            assert!(
                same64(got[i], want),
                "{body} {:e} {:e}: got {:e} want {:e}",
                a[i],
                b[i],
                got[i],
                want
            );
        }
    }
}

#[test]
fn directed_rounding_brackets_the_exact_result() {
    let a = f32_inputs(7);
    let b = f32_inputs(8);
    let c = f32_inputs(9);
    for (op, exact) in [
        (
            "add",
            (|x: f32, y: f32, _z: f32| x as f64 + y as f64) as fn(f32, f32, f32) -> f64,
        ),
        ("mul", |x, y, _| x as f64 * y as f64),
        ("fma", |x, y, z| (x as f64).mul_add(y as f64, z as f64)),
        ("div", |x, y, _| x as f64 / y as f64),
    ] {
        let operands = if op == "fma" {
            "%x1, %x2, %x3"
        } else {
            "%x1, %x2"
        };
        let run = |m: &str| {
            run3::<f32, f32>(
                &elementwise(
                    "f32",
                    4,
                    "f32",
                    4,
                    &format!("\t{op}.{m}.f32 %y1, {operands};"),
                ),
                &a,
                &b,
                &c,
            )
        };
        let (rn, rz, rm, rp) = (run("rn"), run("rz"), run("rm"), run("rp"));
        for i in 0..N {
            let e = exact(a[i], b[i], c[i]);
            if !e.is_finite()
                || e.abs() > f32::MAX as f64
                || e == 0.0
                || e.abs() < f32::MIN_POSITIVE as f64
            {
                continue;
            }
            // f64 is exact for add/mul; for fma/div it is within 2^-53 relative, far below
            // an f32 ulp, so the bracketing test is still decisive except at exact ties.
            let (lo, hi) = (rm[i] as f64, rp[i] as f64);
            assert!(lo <= e && e <= hi, "{op}: {e:e} not in [{lo:e}, {hi:e}]");
            assert!(
                rn[i] == rm[i] || rn[i] == rp[i],
                "{op}: rn must be one of the neighbours"
            );
            if lo != hi {
                assert_eq!(
                    rp[i],
                    f32::from_bits(if rm[i] >= 0.0 {
                        rm[i].to_bits() + 1
                    } else {
                        rm[i].to_bits() - 1
                    }),
                    "{op}: rm and rp one ulp apart"
                );
            }
            assert_eq!(rz[i], if e > 0.0 { rm[i] } else { rp[i] }, "{op}: rz");
        }
    }
}

#[test]
fn conversions_with_rounding_modes() {
    let vals: Vec<f32> = vec![
        0.5,
        1.5,
        2.5,
        -0.5,
        -1.5,
        -2.5,
        2.7,
        -2.7,
        1e10,
        -1e10,
        f32::NAN,
        f32::INFINITY,
        -0.0,
        123456.78,
        3e9,
        -3e9,
    ];
    let run =
        |body: &str| run3::<f32, i32>(&elementwise("f32", 4, "s32", 4, body), &vals, &vals, &vals);
    let rni = run("\tcvt.rni.s32.f32 %y1, %x1;");
    let rzi = run("\tcvt.rzi.s32.f32 %y1, %x1;");
    let rmi = run("\tcvt.rmi.s32.f32 %y1, %x1;");
    let rpi = run("\tcvt.rpi.s32.f32 %y1, %x1;");
    for (i, &v) in vals.iter().enumerate() {
        // Rust's `as` saturates and maps NaN to 0, like PTX.
        assert_eq!(rni[i], v.round_ties_even() as i32, "rni {v}");
        assert_eq!(rzi[i], v.trunc() as i32, "rzi {v}");
        assert_eq!(rmi[i], v.floor() as i32, "rmi {v}");
        assert_eq!(rpi[i], v.ceil() as i32, "rpi {v}");
    }
    let u = run3::<f32, u32>(
        &elementwise("f32", 4, "u32", 4, "\tcvt.rzi.u32.f32 %y1, %x1;"),
        &vals,
        &vals,
        &vals,
    );
    for (i, &v) in vals.iter().enumerate() {
        assert_eq!(u[i], v as u32, "u32 {v}");
    }
    // Integer to float with directed modes: 2^24 + 1 is not representable.
    let ints: Vec<i32> = vec![
        16_777_217,
        -16_777_217,
        3,
        i32::MAX,
        i32::MIN,
        0,
        33_554_435,
    ];
    let conv = |m: &str| {
        run3::<i32, f32>(
            &elementwise("s32", 4, "f32", 4, &format!("\tcvt.{m}.f32.s32 %y1, %x1;")),
            &ints,
            &ints,
            &ints,
        )
    };
    let (rn, rz, rm, rp) = (conv("rn"), conv("rz"), conv("rm"), conv("rp"));
    for (i, &x) in ints.iter().enumerate() {
        assert_eq!(rn[i], x as f32);
        assert!(rm[i] as f64 <= x as f64 && x as f64 <= rp[i] as f64);
        assert!((rz[i] as f64).abs() <= (x as f64).abs());
    }
    assert_eq!(rm[0], 16_777_216.0);
    assert_eq!(rp[0], 16_777_218.0);
    // f64 -> f32 and back, rounding to integral values in floating point, and .sat.
    let d: Vec<f64> = vec![0.1, -0.1, 1e300, 2.5, -3.5, 1.0 / 3.0, 0.75];
    let f = run3::<f64, f32>(
        &elementwise("f64", 8, "f32", 4, "\tcvt.rn.f32.f64 %y1, %x1;"),
        &d,
        &d,
        &d,
    );
    let fz = run3::<f64, f32>(
        &elementwise("f64", 8, "f32", 4, "\tcvt.rz.f32.f64 %y1, %x1;"),
        &d,
        &d,
        &d,
    );
    let fi = run3::<f64, f64>(
        &elementwise("f64", 8, "f64", 8, "\tcvt.rni.f64.f64 %y1, %x1;"),
        &d,
        &d,
        &d,
    );
    let fs = run3::<f64, f32>(
        &elementwise("f64", 8, "f32", 4, "\tcvt.rn.sat.f32.f64 %y1, %x1;"),
        &d,
        &d,
        &d,
    );
    for (i, &x) in d.iter().enumerate() {
        assert_eq!(f[i], x as f32);
        assert!((fz[i] as f64).abs() <= x.abs());
        assert_eq!(fi[i], x.round_ties_even());
        assert_eq!(fs[i], (x as f32).clamp(0.0, 1.0));
    }
    assert_eq!(
        fz[2],
        f32::MAX,
        "rz overflow gives the largest finite value"
    );
    // Half precision round trip.
    let h = run3::<f32, f32>(
        &elementwise(
            "f32",
            4,
            "f32",
            4,
            "\tcvt.rn.f16.f32 %h1, %x1;\n\tcvt.f32.f16 %y1, %h1;",
        ),
        &[1.0, 0.1, 65504.0, 1e6, -2.5, 1.0 + 1.0 / 2048.0],
        &[0.0; 6],
        &[0.0; 6],
    );
    assert_eq!(h, vec![1.0, 0.099975586, 65504.0, f32::INFINITY, -2.5, 1.0]);
}

#[test]
fn comparisons_tests_and_signs() {
    let a = vec![1.0f32, f32::NAN, 2.0, -0.0, f32::INFINITY, 3.0, f32::NAN];
    let b = vec![1.0f32, 1.0, f32::NAN, 0.0, 5.0, -3.0, f32::NAN];
    let z = vec![0.0f32; 7];
    let run = |body: &str| run3::<f32, u32>(&elementwise("f32", 4, "u32", 4, body), &a, &b, &z);
    let cmp = |c: &str| {
        run(&format!(
            "\tsetp.{c}.f32 %p1, %x1, %x2;\n\tselp.u32 %y1, 1, 0, %p1;"
        ))
    };
    type Pred = fn(f32, f32) -> bool;
    let un = |x: f32, y: f32| x.is_nan() || y.is_nan();
    let cases: [(&str, Pred); 12] = [
        ("eq", |x, y| x == y),
        ("ne", |x, y| !(x.is_nan() || y.is_nan()) && x != y),
        ("lt", |x, y| x < y),
        ("ge", |x, y| x >= y),
        ("equ", |x, y| x.is_nan() || y.is_nan() || x == y),
        ("neu", |x, y| x != y),
        ("ltu", |x, y| !(x >= y)),
        ("leu", |x, y| !(x > y)),
        ("gtu", |x, y| !(x <= y)),
        ("geu", |x, y| !(x < y)),
        ("num", |x, y| !x.is_nan() && !y.is_nan()),
        ("nan", |x, y| x.is_nan() || y.is_nan()),
    ];
    let _ = un;
    for (c, f) in cases {
        let got = cmp(c);
        for i in 0..a.len() {
            assert_eq!(got[i] == 1, f(a[i], b[i]), "setp.{c} {} {}", a[i], b[i]);
        }
    }
    let fin = run("\ttestp.finite.f32 %p1, %x1;\n\tselp.u32 %y1, 1, 0, %p1;");
    let nan = run("\ttestp.notanumber.f32 %p1, %x1;\n\tselp.u32 %y1, 1, 0, %p1;");
    for i in 0..a.len() {
        assert_eq!(fin[i] == 1, a[i].is_finite());
        assert_eq!(nan[i] == 1, a[i].is_nan());
    }
    // copysign d, a, b takes the sign of a and the magnitude of b.
    let cs = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tcopysign.f32 %y1, %x1, %x2;"),
        &[-1.0, 2.0, -0.0],
        &[3.0, -4.0, 5.0],
        &[0.0; 3],
    );
    assert_eq!(cs, vec![-3.0, 4.0, -5.0]);
    // min/max: a NaN operand loses; abs and neg flip only the sign bit.
    let mn = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tmin.f32 %y1, %x1, %x2;"),
        &[f32::NAN, 1.0, -0.0],
        &[2.0, f32::NAN, 0.0],
        &[0.0; 3],
    );
    assert_eq!(mn[0], 2.0);
    assert_eq!(mn[1], 1.0);
    assert_eq!(mn[2].to_bits(), (-0.0f32).to_bits());
    let mx = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tmax.f32 %y1, %x1, %x2;"),
        &[-0.0],
        &[0.0],
        &[0.0],
    );
    assert_eq!(mx[0].to_bits(), 0);
    let ng = run3::<f32, f32>(
        &elementwise(
            "f32",
            4,
            "f32",
            4,
            "\tneg.f32 %y1, %x1;\n\tabs.f32 %f1, %x2;\n\tadd.f32 %y1, %y1, %f1;",
        ),
        &[1.5],
        &[-2.0],
        &[0.0],
    );
    assert_eq!(ng[0], 0.5);
    // set with a float destination.
    let st = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tset.lt.f32.f32 %y1, %x1, %x2;"),
        &[1.0, 3.0],
        &[2.0, 2.0],
        &[0.0; 2],
    );
    assert_eq!(st, vec![1.0, 0.0]);
}

#[test]
fn approximate_functions_within_documented_error() {
    let xs: Vec<f32> = (0..N).map(|i| (i as f32 - 200.0) * 0.037).collect();
    let z = vec![0.0f32; N];
    let run = |body: &str| run3::<f32, f32>(&elementwise("f32", 4, "f32", 4, body), &xs, &xs, &z);
    let sin = run("\tsin.approx.f32 %y1, %x1;");
    let cos = run("\tcos.approx.ftz.f32 %y1, %x1;");
    let ex2 = run("\tex2.approx.f32 %y1, %x1;");
    let tanh = run("\ttanh.approx.f32 %y1, %x1;");
    let lg2 =
        run("\tabs.f32 %f1, %x1;\n\tadd.f32 %f1, %f1, 0f3F800000;\n\tlg2.approx.f32 %y1, %f1;");
    let rsq =
        run("\tabs.f32 %f1, %x1;\n\tadd.f32 %f1, %f1, 0f3F800000;\n\trsqrt.approx.f32 %y1, %f1;");
    let div = run("\tadd.f32 %f1, %x1, 0f41200000;\n\tdiv.approx.f32 %y1, %x1, %f1;");
    let full = run("\tadd.f32 %f1, %x1, 0f41200000;\n\tdiv.full.f32 %y1, %x1, %f1;");
    for i in 0..N {
        let x = xs[i] as f64;
        // PTX ISA: sin/cos max absolute error 2^-20.9 in [-pi, pi]; ex2 2 ulp; lg2 2^-22.
        if x.abs() <= std::f64::consts::PI {
            assert!(
                (sin[i] as f64 - x.sin()).abs() < 2f64.powf(-20.9),
                "sin {x}"
            );
            assert!(
                (cos[i] as f64 - x.cos()).abs() < 2f64.powf(-20.9),
                "cos {x}"
            );
        }
        let e = x.exp2();
        assert!(
            (ex2[i] as f64 - e).abs() <= 2.0 * e * f32::EPSILON as f64,
            "ex2 {x}"
        );
        assert!(
            (tanh[i] as f64 - x.tanh()).abs() < 2f64.powf(-10.0),
            "tanh {x}"
        );
        let l = (x.abs() + 1.0).log2();
        assert!(
            (lg2[i] as f64 - l).abs() < 2f64.powf(-22.0) * 2.0,
            "lg2 {x}"
        );
        let r = 1.0 / (x.abs() + 1.0).sqrt();
        assert!(
            (rsq[i] as f64 - r).abs() <= 2.0 * r * f32::EPSILON as f64,
            "rsqrt {x}"
        );
        let q = x / (x + 10.0);
        assert!(
            (div[i] as f64 - q).abs() <= 2.0 * q.abs() * f32::EPSILON as f64 + 1e-30,
            "div.approx {x}"
        );
        assert!(
            (full[i] as f64 - q).abs() <= 2.0 * q.abs() * f32::EPSILON as f64 + 1e-30,
            "div.full {x}"
        );
    }
}

#[test]
fn ftz_flushes_subnormals() {
    let sub = f32::MIN_POSITIVE / 4.0;
    let got = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tadd.ftz.f32 %y1, %x1, %x2;"),
        &[sub, -sub, 1.0],
        &[0.0, -0.0, sub],
        &[0.0; 3],
    );
    assert_eq!(got[0].to_bits(), 0);
    assert_eq!(got[1].to_bits(), 0x8000_0000);
    assert_eq!(got[2], 1.0);
    let keep = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tadd.f32 %y1, %x1, %x2;"),
        &[sub],
        &[0.0],
        &[0.0],
    );
    assert_eq!(keep[0], sub);
}

#[test]
fn selects_sets_and_small_floats() {
    let a = vec![1.0f32, 2.0, 3.0, 4.0];
    let b = vec![-1.0f32, -2.0, -3.0, -4.0];
    let c = vec![0.5f32, -0.5, 0.0, -0.0];
    let slct = run3::<f32, f32>(
        &elementwise("f32", 4, "f32", 4, "\tslct.f32.f32 %y1, %x1, %x2, %x3;"),
        &a,
        &b,
        &c,
    );
    // c >= 0 picks a; -0.0 >= 0 holds.
    assert_eq!(slct, vec![1.0, -2.0, 3.0, 4.0]);
    let set = run3::<f32, u32>(
        &elementwise("f32", 4, "u32", 4, "\tset.gt.and.u32.f32 %y1, %x1, %x3, 1;"),
        &a,
        &b,
        &c,
    );
    assert_eq!(set, vec![u32::MAX; 4]);
    // bf16: round to nearest even on the top 16 bits of the f32.
    let vals = vec![1.0f32, 1.003_906_2, 1.011_718_8, 3.0e38, -0.1];
    let bf = run3::<f32, f32>(
        &elementwise(
            "f32",
            4,
            "f32",
            4,
            "\tcvt.rn.bf16.f32 %h1, %x1;\n\tcvt.f32.bf16 %y1, %h1;",
        ),
        &vals,
        &vals,
        &vals,
    );
    for (i, &v) in vals.iter().enumerate() {
        let bits = v.to_bits();
        let round = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) & 0xffff_0000;
        assert_eq!(bf[i].to_bits(), round, "bf16 of {v}");
    }
    // f16 arithmetic rounds its result to half precision.
    let h = run3::<f32, f32>(
        &elementwise(
            "f32",
            4,
            "f32",
            4,
            "\tcvt.rn.f16.f32 %h1, %x1;\n\tcvt.rn.f16.f32 %h2, %x2;\n\tadd.f16 %h3, %h1, %h2;\n\tcvt.f32.f16 %y1, %h3;",
        ),
        &[1.0, 1000.0],
        &[0.0004, 0.3],
        &[0.0, 0.0],
    );
    assert_eq!(h, vec![1.0, 1000.5]);
}

/// The f16 value of `bits` (independent of the simulator's conversion code).
fn half_value(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((bits >> 10) & 0x1f) as i32;
    let m = (bits & 0x3ff) as f64;
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 => {
            if m == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

/// Round-to-nearest-even to f16 by searching all finite halves.
fn nearest_half(x: f64, table: &[(f64, u16)]) -> u16 {
    if x.abs() >= 65520.0 {
        return if x > 0.0 { 0x7c00 } else { 0xfc00 };
    }
    let i = table.partition_point(|&(v, _)| v < x);
    let mut best = table[i.min(table.len() - 1)];
    for j in [i.saturating_sub(1), i, (i + 1).min(table.len() - 1)] {
        let c = table[j];
        let (dc, db) = ((c.0 - x).abs(), (best.0 - x).abs());
        if dc < db || (dc == db && c.1 & 1 == 0 && best.1 & 1 == 1) {
            best = c;
        }
    }
    if best.0 == 0.0 && x.is_sign_negative() {
        0x8000
    } else {
        best.1
    }
}

#[test]
fn half_arithmetic_rounds_to_nearest() {
    let mut table: Vec<(f64, u16)> = (0..0x7c00u16)
        .chain(0x8001..0xfc00)
        .map(|b| (half_value(b), b))
        .collect();
    table.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let mut r = Rng::new(77);
    let finite = |r: &mut Rng| loop {
        let b = r.next() as u16;
        if b & 0x7c00 != 0x7c00 {
            return b;
        }
    };
    let a: Vec<u16> = (0..2000).map(|_| finite(&mut r)).collect();
    let b: Vec<u16> = (0..2000).map(|_| finite(&mut r)).collect();
    for (op, f) in [
        ("add", (|x: f64, y: f64| x + y) as fn(f64, f64) -> f64),
        ("mul", |x, y| x * y),
        ("sub", |x, y| x - y),
    ] {
        let got = run3::<u16, u16>(
            &elementwise("b16", 2, "b16", 2, &format!("\t{op}.rn.f16 %y1, %x1, %x2;")),
            &a,
            &b,
            &a,
        );
        for i in 0..a.len() {
            let exact = f(half_value(a[i]), half_value(b[i]));
            let want = nearest_half(exact, &table);
            // Exact zero results: +0 except for (-0) + (-0) style cases; compare values.
            if exact == 0.0 {
                assert_eq!(half_value(got[i]), 0.0);
                continue;
            }
            assert_eq!(
                got[i], want,
                "{op}.f16 {:#06x} {:#06x}: exact {exact}",
                a[i], b[i]
            );
        }
    }
}
