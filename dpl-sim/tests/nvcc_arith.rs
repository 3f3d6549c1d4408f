//! dpl-sim against nvcc-compiled arithmetic and control flow: f64 (`f64.cu`), integer bit
//! tricks (`bits.cu`), f32 library functions (`math.cu`), out-of-line and recursive device
//! functions with local memory (`calls.cu`), and divergent loops (`divergent.cu`).
//!
//! Integer results and correctly rounded float operations are compared bit for bit. Only
//! the approximate CUDA math functions get a tolerance: the maximum ulp error the CUDA
//! Programming Guide documents for each, plus one ulp because the reference itself is a
//! double-precision result rounded to f32.

#[path = "../fixtures/support.rs"]
mod support;

use support::{
    Fixture, Rng, assert_bits_f32, assert_bits_f64, assert_same, blocks_for, dim1, ulp_distance,
};

const F64: &str = include_str!("../fixtures/f64.ptx");
const BITS: &str = include_str!("../fixtures/bits.ptx");
const MATH: &str = include_str!("../fixtures/math.ptx");
const CALLS: &str = include_str!("../fixtures/calls.ptx");
const DIVERGENT: &str = include_str!("../fixtures/divergent.ptx");

const SIZES: [usize; 6] = [1, 31, 32, 33, 257, 1000];

// ---------------------------------------------------------------- f64.cu

#[test]
fn daxpy_grid_stride() {
    let fx = Fixture::new("f64.ptx", F64);
    let mut rng = Rng::new(40);
    for &n in &[1usize, 100, 1000, 3333] {
        let x: Vec<f64> = (0..n).map(|_| rng.f64_in(-1e3, 1e3)).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.f64_in(-1e3, 1e3)).collect();
        let a = 1.7f64;
        for &(grid, block) in &[(2u32, 128u32), (blocks_for(n, 64), 64)] {
            let (dx, dy) = (fx.upload(&x), fx.upload(&y));
            fx.launch(
                "daxpy",
                dim1(grid),
                dim1(block),
                0,
                &[(n as i32).into(), a.into(), (&dx).into(), (&dy).into()],
            );
            let want: Vec<f64> = x
                .iter()
                .zip(&y)
                .map(|(&xi, &yi)| a.mul_add(xi, yi))
                .collect();
            assert_bits_f64(
                &format!("daxpy n={n} grid={grid}"),
                &fx.download(&dy),
                &want,
            );
        }
    }
}

#[test]
fn dot_product_tree_and_f64_atomic() {
    let fx = Fixture::new("f64.ptx", F64);
    let mut rng = Rng::new(41);
    for &n in &[1usize, 256, 257, 1000, 5000] {
        let x: Vec<f64> = (0..n).map(|_| rng.f64_in(-1.0, 1.0)).collect();
        let y: Vec<f64> = (0..n).map(|_| rng.f64_in(-1.0, 1.0)).collect();
        let groups = n.div_ceil(256);
        let (dx, dy, partial, total) = (
            fx.upload(&x),
            fx.upload(&y),
            fx.zeros::<f64>(groups),
            fx.zeros::<f64>(1),
        );
        fx.launch(
            "ddot",
            dim1(groups as u32),
            dim1(256),
            0,
            &[
                (&dx).into(),
                (&dy).into(),
                (&partial).into(),
                (&total).into(),
                (n as i32).into(),
            ],
        );
        let want: Vec<f64> = (0..groups)
            .map(|g| {
                let mut s: Vec<f64> = (0..256)
                    .map(|t| g * 256 + t)
                    .map(|i| if i < n { x[i] * y[i] } else { 0.0 })
                    .collect();
                let mut stride = 128;
                while stride > 0 {
                    for t in 0..stride {
                        s[t] += s[t + stride];
                    }
                    stride /= 2;
                }
                s[0]
            })
            .collect();
        assert_bits_f64(
            &format!("ddot partials n={n}"),
            &fx.download(&partial),
            &want,
        );
        let exact: f64 = want.iter().sum();
        let magnitude: f64 = want.iter().map(|v| v.abs()).sum();
        let t = fx.download(&total)[0];
        assert!(
            (t - exact).abs() <= magnitude * groups as f64 * f64::EPSILON,
            "ddot total n={n}: {t} vs {exact}"
        );
    }
}

#[test]
fn f64_correctly_rounded_operations_and_conversions() {
    let fx = Fixture::new("f64.ptx", F64);
    let mut rng = Rng::new(42);
    for &n in &SIZES {
        let x: Vec<f64> = (0..n)
            .map(|i| match i % 5 {
                0 => rng.range_i64(-40, 40) as f64 * 0.5, // exact halves: ties for rint
                1 => rng.f64_in(-1e-3, 1e-3),
                _ => rng.f64_in(-1e6, 1e6),
            })
            .collect();
        let y: Vec<f64> = (0..n)
            .map(|i| {
                let v = if i % 4 == 0 {
                    rng.range_i64(-9, 9) as f64 + 0.5
                } else {
                    rng.f64_in(-3e9, 3e9)
                };
                if v == 0.0 { 1.25 } else { v }
            })
            .collect();
        let (dx, dy, out, iout) = (
            fx.upload(&x),
            fx.upload(&y),
            fx.zeros::<f64>(10 * n),
            fx.zeros::<i64>(3 * n),
        );
        fx.launch(
            "dmath",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[
                (&dx).into(),
                (&dy).into(),
                (&out).into(),
                (&iout).into(),
                (n as i32).into(),
            ],
        );
        let mut want = Vec::with_capacity(10 * n);
        let mut want_i = Vec::with_capacity(3 * n);
        for (&a, &b) in x.iter().zip(&y) {
            want.extend_from_slice(&[
                a.abs().sqrt(),
                a / b,
                1.0 / b,
                a.mul_add(b, -a),
                a.min(b),
                a.max(b),
                a.floor() + b.ceil(),
                a.trunc() - b.round_ties_even(),
                (a as f32) as f64,
                (b as i64) as f64,
            ]);
            want_i.extend_from_slice(&[
                a as i64,
                (a * 1000.0).round_ties_even() as i64,
                (b.abs() as u32) as i64,
            ]);
        }
        assert_bits_f64(&format!("dmath n={n}"), &fx.download(&out), &want);
        assert_same(
            &format!("dmath integer conversions n={n}"),
            &fx.download(&iout),
            &want_i,
        );
    }
}

// ---------------------------------------------------------------- bits.cu

/// `bfe.u32` / `bfe.s32` as the PTX ISA defines them (msb = 31).
fn bfe(a: u32, pos: u32, len: u32, signed: bool) -> u32 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let sbit = if signed && len != 0 {
        (a >> (pos + len - 1).min(31)) & 1
    } else {
        0
    };
    let mut d = 0u32;
    for i in 0..32 {
        let bit = if i < len && pos + i <= 31 {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

/// `bfi.b32 d, insert, base, pos, len` as the PTX ISA defines it.
fn bfi(insert: u32, base: u32, pos: u32, len: u32) -> u32 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut d = base;
    for i in 0..len {
        if pos + i > 31 {
            break;
        }
        d = (d & !(1 << (pos + i))) | (((insert >> i) & 1) << (pos + i));
    }
    d
}

/// CUDA's `__byte_perm(x, y, s)`: byte n of the result is byte `(s >> 4n) & 7` of y:x.
fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let bytes = ((y as u64) << 32) | x as u64;
    (0..4).fold(0u32, |r, n| {
        let sel = (s >> (4 * n)) & 7;
        r | ((((bytes >> (8 * sel)) & 0xff) as u32) << (8 * n))
    })
}

#[test]
fn bit_tricks_32() {
    let fx = Fixture::new("bits.ptx", BITS);
    let mut rng = Rng::new(43);
    for &n in &SIZES {
        let x: Vec<u32> = (0..n)
            .map(|i| match i % 6 {
                0 => 0,
                1 => u32::MAX,
                2 => 1 << (rng.next_u32() % 32),
                _ => rng.next_u32(),
            })
            .collect();
        let y: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let (dx, dy, out) = (fx.upload(&x), fx.upload(&y), fx.zeros::<u32>(18 * n));
        fx.launch(
            "bit_tricks32",
            dim1(blocks_for(n, 128)),
            dim1(128),
            0,
            &[(&dx).into(), (&dy).into(), (&out).into(), (n as i32).into()],
        );
        let mut want = Vec::with_capacity(18 * n);
        for (&a, &b) in x.iter().zip(&y) {
            let s = b & 31;
            let p = (b >> 8) & 63;
            let l = (b >> 16) & 63;
            let wide = ((b as u64) << 32) | a as u64;
            let clamped = (b >> 8).min(32);
            want.extend_from_slice(&[
                a.reverse_bits(),
                a.leading_zeros(),
                a.count_ones(),
                if a == 0 { 0 } else { a.trailing_zeros() + 1 },
                byte_perm(a, b, b >> 16),
                ((wide << s) >> 32) as u32,
                (wide >> s) as u32,
                ((wide << clamped) >> 32) as u32,
                (wide >> clamped) as u32,
                ((a as u64 * b as u64) >> 32) as u32,
                ((a as i32 as i64 * b as i32 as i64) >> 32) as u32,
                bfe(a, p, l, false),
                bfe(a, p, l, true),
                bfi(b, a, p, l),
                a.abs_diff(b).wrapping_add(s),
                ((a as u64 + b as u64) >> 1) as u32,
                ((a as u64 + b as u64 + 1) >> 1) as u32,
                (a as i32).abs_diff(b as i32).wrapping_add(s),
            ]);
        }
        let got = fx.download(&out);
        let names = [
            "brev",
            "clz",
            "popc",
            "ffs",
            "byte_perm",
            "funnelshift_l",
            "funnelshift_r",
            "funnelshift_lc",
            "funnelshift_rc",
            "umulhi",
            "mulhi",
            "bfe.u32",
            "bfe.s32",
            "bfi.b32",
            "usad",
            "uhadd",
            "urhadd",
            "sad",
        ];
        for (k, name) in names.iter().enumerate() {
            let g: Vec<u32> = got.iter().skip(k).step_by(18).copied().collect();
            let w: Vec<u32> = want.iter().skip(k).step_by(18).copied().collect();
            assert_same(&format!("{name} n={n}"), &g, &w);
        }
    }
}

#[test]
fn bit_field_references_follow_the_ptx_isa() {
    // Examples worked out by hand from the PTX ISA text, guarding the references above.
    assert_eq!(bfe(0xf0f0_1234, 4, 8, false), 0x23);
    assert_eq!(bfe(0x0000_0f00, 8, 4, true), 0xffff_ffff); // field 0b1111 sign-extends
    assert_eq!(bfe(0x8000_0000, 28, 10, true), 0xffff_fff8); // past msb: a[31] replicates
    assert_eq!(bfe(0x8000_0000, 28, 10, false), 0x8);
    assert_eq!(bfe(0x1234_5678, 40, 4, false), 0);
    assert_eq!(bfe(0x1234_5678, 3, 0, true), 0);
    assert_eq!(bfi(0xff, 0, 28, 8), 0xf000_0000);
    assert_eq!(bfi(0b101, 0xffff_ffff, 1, 3), 0xffff_fffb);
    assert_eq!(byte_perm(0x4433_2211, 0x8877_6655, 0x7654), 0x8877_6655);
    assert_eq!(byte_perm(0x4433_2211, 0x8877_6655, 0x0123), 0x1122_3344);
}

#[test]
fn bit_tricks_64() {
    let fx = Fixture::new("bits.ptx", BITS);
    let mut rng = Rng::new(44);
    for &n in &SIZES {
        let x: Vec<u64> = (0..n)
            .map(|i| match i % 5 {
                0 => 0,
                1 => i64::MIN as u64,
                2 => rng.next_u64() >> (rng.next_u32() % 64),
                _ => rng.next_u64(),
            })
            .collect();
        let y: Vec<u64> = (0..n)
            .map(|i| {
                let v = match i % 3 {
                    0 => rng.range_i64(1, 1000) as u64,
                    1 => rng.range_i64(-1000, -2) as u64,
                    _ => rng.next_u64(),
                };
                if v == 0 { 7 } else { v }
            })
            .collect();
        let (dx, dy, out) = (fx.upload(&x), fx.upload(&y), fx.zeros::<u64>(14 * n));
        fx.launch(
            "bit_tricks64",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[(&dx).into(), (&dy).into(), (&out).into(), (n as i32).into()],
        );
        let mut want = Vec::with_capacity(14 * n);
        for (&a, &b) in x.iter().zip(&y) {
            let s = (b & 63) as u32;
            let (sa, sb) = (a as i64, b as i64);
            want.extend_from_slice(&[
                a.reverse_bits(),
                a.leading_zeros() as u64,
                a.count_ones() as u64,
                if a == 0 {
                    0
                } else {
                    a.trailing_zeros() as u64 + 1
                },
                ((a as u128 * b as u128) >> 64) as u64,
                ((sa as i128 * sb as i128) >> 64) as u64,
                a.wrapping_mul(b),
                a / b,
                a % b,
                sa.wrapping_div(sb) as u64,
                sa.wrapping_rem(sb) as u64,
                a >> s,
                (sa >> s) as u64,
                a.rotate_left(s),
            ]);
        }
        let got = fx.download(&out);
        let names = [
            "brevll", "clzll", "popcll", "ffsll", "umul64hi", "mul64hi", "mul", "udiv", "urem",
            "sdiv", "srem", "shr.u64", "shr.s64", "rotl",
        ];
        for (k, name) in names.iter().enumerate() {
            let g: Vec<u64> = got.iter().skip(k).step_by(14).copied().collect();
            let w: Vec<u64> = want.iter().skip(k).step_by(14).copied().collect();
            assert_same(&format!("{name} n={n}"), &g, &w);
        }
    }
}

// ---------------------------------------------------------------- math.cu

#[test]
fn f32_library_functions_within_documented_ulps() {
    let fx = Fixture::new("math.ptx", MATH);
    let mut rng = Rng::new(45);
    for &n in &SIZES {
        let x: Vec<f32> = (0..n)
            .map(|i| match i % 8 {
                0 => rng.f32_in(-std::f32::consts::PI, std::f32::consts::PI),
                1 => rng.f32_in(1e3, 1e6) * if i % 16 == 1 { -1.0 } else { 1.0 }, // sinf's slow path
                _ => rng.f32_in(-50.0, 50.0),
            })
            .collect();
        let y: Vec<f32> = (0..n).map(|_| rng.f32_in(1e-3, 1e3)).collect();
        let (dx, dy, out) = (fx.upload(&x), fx.upload(&y), fx.zeros::<f32>(12 * n));
        fx.launch(
            "f32_math",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[(&dx).into(), (&dy).into(), (&out).into(), (n as i32).into()],
        );
        let got = fx.download(&out);
        for (i, (&a, &b)) in x.iter().zip(&y).enumerate() {
            let (ad, bd) = (a as f64, b as f64);
            let g = &got[12 * i..12 * i + 12];
            // (result index, name, reference, allowed ulps)
            let exp_arg = (a / 16.0) as f64;
            let checks: [(usize, &str, f64, u32); 9] = [
                (2, "expf", exp_arg.exp(), 2 + 1),
                (3, "logf", bd.ln(), 1 + 1),
                (4, "sinf", ad.sin(), 2 + 1),
                (5, "cosf", ad.cos(), 2 + 1),
                (6, "tanhf", ((a / 8.0) as f64).tanh(), 2 + 1),
                (7, "powf", bd.powf(1.5), 4 + 1),
                (
                    8,
                    "__expf",
                    exp_arg.exp(),
                    2 + (1.173 * exp_arg.abs()).floor() as u32 + 1,
                ),
                (10, "__fdividef", ad / bd, 2 + 1),
                (11, "rsqrtf", 1.0 / bd.sqrt(), 2 + 1),
            ];
            assert_eq!(g[0].to_bits(), a.abs().sqrt().to_bits(), "sqrtf({a})");
            assert_eq!(g[1].to_bits(), (a / b).to_bits(), "{a} / {b}");
            for (k, name, reference, ulps) in checks {
                let d = ulp_distance(g[k], reference as f32);
                assert!(
                    d <= ulps,
                    "{name}: x={a} y={b}: got {} want {} ({d} ulps > {ulps})",
                    g[k],
                    reference as f32
                );
            }
            if a.abs() <= std::f32::consts::PI {
                // __sinf: absolute error at most 2^-21.41 on [-pi, pi].
                let err = (g[9] as f64 - ad.sin()).abs();
                assert!(
                    err <= 2f64.powf(-21.41),
                    "__sinf({a}) = {} (error {err})",
                    g[9]
                );
            }
        }
    }
}

// ---------------------------------------------------------------- calls.cu

#[test]
fn out_of_line_horner() {
    let fx = Fixture::new("calls.ptx", CALLS);
    let mut rng = Rng::new(46);
    for degree in [0usize, 1, 4, 7] {
        let coeffs: Vec<f32> = (0..=degree).map(|_| rng.f32_in(-1.0, 1.0)).collect();
        for &n in &[1usize, 33, 300] {
            let xs: Vec<f32> = (0..n).map(|_| rng.f32_in(-2.0, 2.0)).collect();
            let (dc, dx, out) = (fx.upload(&coeffs), fx.upload(&xs), fx.zeros::<f32>(n));
            fx.launch(
                "poly_eval",
                dim1(blocks_for(n, 32)),
                dim1(32),
                0,
                &[
                    (&dc).into(),
                    (degree as i32).into(),
                    (&dx).into(),
                    (&out).into(),
                    (n as i32).into(),
                ],
            );
            let want: Vec<f32> = xs
                .iter()
                .map(|&x| {
                    (0..degree)
                        .rev()
                        .fold(coeffs[degree], |r, k| r.mul_add(x, coeffs[k]))
                })
                .collect();
            assert_bits_f32(
                &format!("horner degree={degree} n={n}"),
                &fx.download(&out),
                &want,
            );
        }
    }
}

fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

fn fib(n: u32) -> u32 {
    let (mut a, mut b) = (0u32, 1u32);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

#[test]
fn noinline_gcd_and_recursive_fibonacci() {
    let fx = Fixture::new("calls.ptx", CALLS);
    let mut rng = Rng::new(47);
    for &n in &SIZES {
        let a: Vec<u32> = (0..n)
            .map(|i| {
                if i % 9 == 0 {
                    0
                } else {
                    rng.next_u32() % 100_000
                }
            })
            .collect();
        let b: Vec<u32> = (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    0
                } else {
                    (rng.next_u32() % 1000) * 6
                }
            })
            .collect();
        let (da, db, out) = (fx.upload(&a), fx.upload(&b), fx.zeros::<u32>(n));
        fx.launch(
            "gcd_fib",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[(&da).into(), (&db).into(), (&out).into(), (n as i32).into()],
        );
        let want: Vec<u32> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| gcd(x, y) + fib(x % 13))
            .collect();
        assert_same(&format!("gcd + fib n={n}"), &fx.download(&out), &want);
    }
}

#[test]
fn local_array_sorted_by_a_called_function() {
    let fx = Fixture::new("calls.ptx", CALLS);
    let mut rng = Rng::new(48);
    for &n in &SIZES {
        let input: Vec<i32> = (0..9 * n).map(|_| rng.range_i64(-50, 50) as i32).collect();
        let (din, medians, sorted) = (
            fx.upload(&input),
            fx.zeros::<i32>(n),
            fx.zeros::<i32>(9 * n),
        );
        fx.launch(
            "local_median",
            dim1(blocks_for(n, 32)),
            dim1(32),
            0,
            &[
                (&din).into(),
                (&medians).into(),
                (&sorted).into(),
                (n as i32).into(),
            ],
        );
        let mut want_sorted = input.clone();
        for w in want_sorted.chunks_mut(9) {
            w.sort_unstable();
        }
        let want_medians: Vec<i32> = want_sorted.chunks(9).map(|w| w[4]).collect();
        assert_same(
            &format!("sorted windows n={n}"),
            &fx.download(&sorted),
            &want_sorted,
        );
        assert_same(
            &format!("medians n={n}"),
            &fx.download(&medians),
            &want_medians,
        );
    }
}

// ---------------------------------------------------------------- divergent.cu

#[test]
fn collatz_step_counts() {
    let fx = Fixture::new("divergent.ptx", DIVERGENT);
    let mut rng = Rng::new(49);
    for &n in &SIZES {
        let start: Vec<u64> = (0..n)
            .map(|i| match i % 4 {
                0 => i as u64 + 1,
                1 => [27u64, 97, 871, 837_799][i / 4 % 4],
                _ => rng.range_i64(1, 1 << 40) as u64,
            })
            .collect();
        let (ds, steps) = (fx.upload(&start), fx.zeros::<u32>(n));
        fx.launch(
            "collatz_steps",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[(&ds).into(), (&steps).into(), (n as i32).into()],
        );
        let want: Vec<u32> = start
            .iter()
            .map(|&s| {
                let (mut x, mut k) = (s, 0u32);
                while x != 1 {
                    x = if x % 2 == 1 {
                        x.wrapping_mul(3).wrapping_add(1)
                    } else {
                        x / 2
                    };
                    k += 1;
                }
                k
            })
            .collect();
        assert_same(&format!("collatz n={n}"), &fx.download(&steps), &want);
    }
}

#[test]
fn early_exit_and_data_dependent_search() {
    let fx = Fixture::new("divergent.ptx", DIVERGENT);
    let mut rng = Rng::new(50);
    let target = 5;
    for &n in &SIZES {
        let data: Vec<i32> = (0..n).map(|_| rng.range_i64(-3, 40) as i32).collect();
        let sentinel = vec![0x7777i32; n];
        let (dd, out) = (fx.upload(&data), fx.upload(&sentinel));
        fx.launch(
            "early_exit_search",
            dim1(blocks_for(n, 32)),
            dim1(32),
            0,
            &[
                (&dd).into(),
                (&out).into(),
                (n as i32).into(),
                target.into(),
            ],
        );
        let want: Vec<i32> = (0..n)
            .map(|i| {
                if data[i] < 0 {
                    return 0x7777;
                }
                let mut passed = 0;
                for &v in &data[i..] {
                    if v == target {
                        return passed;
                    }
                    if v < 0 {
                        return -passed - 1;
                    }
                    if v % 7 != 0 {
                        passed += 1;
                    }
                }
                passed
            })
            .collect();
        assert_same(&format!("early exit n={n}"), &fx.download(&out), &want);
    }
}

// ---------------------------------------------------------------- special.cu

const SPECIAL: &str = include_str!("../fixtures/special.ptx");

/// Same float, where every NaN equals every NaN and (for min/max of two zeros, whose sign
/// IEEE leaves open) +0 equals -0 when `zeros_equal`.
fn same_float(got: f32, want: f32, zeros_equal: bool) -> bool {
    (got.is_nan() && want.is_nan())
        || got.to_bits() == want.to_bits()
        || (zeros_equal && got == 0.0 && want == 0.0)
}

#[test]
fn ieee_special_values_and_saturating_conversions() {
    let fx = Fixture::new("special.ptx", SPECIAL);
    let specials = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        2.5,
        -2.5,
        0.5,
        -0.49999997,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::from_bits(1), // smallest subnormal
        -f32::from_bits(0x007f_ffff),
        f32::MIN_POSITIVE,
        f32::MAX,
        3e9,
        -1e10,
        1e-30,
    ];
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for &x in &specials {
        for &y in &specials {
            xs.push(x);
            ys.push(y);
        }
    }
    let n = xs.len();
    let (dx, dy, fo, io) = (
        fx.upload(&xs),
        fx.upload(&ys),
        fx.zeros::<f32>(10 * n),
        fx.zeros::<i32>(7 * n),
    );
    fx.launch(
        "f32_specials",
        dim1(blocks_for(n, 64)),
        dim1(64),
        0,
        &[
            (&dx).into(),
            (&dy).into(),
            (&fo).into(),
            (&io).into(),
            (n as i32).into(),
        ],
    );
    let (gf, gi) = (fx.download(&fo), fx.download(&io));
    let names = [
        "fminf",
        "fmaxf",
        "x * y",
        "x / y",
        "sqrtf",
        "roundf",
        "fmodf",
        "copysignf",
        "fdimf",
        "x + y",
    ];
    for i in 0..n {
        let (x, y) = (xs[i], ys[i]);
        let fdim = if x.is_nan() || y.is_nan() {
            f32::NAN
        } else if x > y {
            x - y
        } else {
            0.0
        };
        let want = [
            x.min(y),
            x.max(y),
            x * y,
            x / y,
            x.sqrt(),
            x.round(),
            x % y,
            x.copysign(y),
            fdim,
            x + y,
        ];
        for k in 0..10 {
            let got = gf[10 * i + k];
            assert!(
                same_float(got, want[k], k < 2),
                "{}({x:e}, {y:e}): got {got:e} ({:#010x}), want {:e} ({:#010x})",
                names[k],
                got.to_bits(),
                want[k],
                want[k].to_bits()
            );
        }
        // A NaN converted to a 64-bit integer gives `i64::MIN` on an H100, where Rust's
        // `as` gives 0 (measured: dpl-cuda/tests/hardware/cvt_h100.txt); to 32 bits, 0.
        let to_i64 = if x.is_nan() { i64::MIN } else { x as i64 };
        let want_i = [
            x as i32,
            x as u32 as i32,
            (to_i64 >> 32) as i32,
            x.is_nan() as i32,
            x.is_infinite() as i32,
            x.is_finite() as i32,
            x.is_sign_negative() as i32,
        ];
        let got_i = &gi[7 * i..7 * i + 7];
        // signbit only promises non-zero for negative values.
        let normalised: Vec<i32> = got_i
            .iter()
            .enumerate()
            .map(|(k, &v)| if k == 6 { (v != 0) as i32 } else { v })
            .collect();
        assert_same(
            &format!("conversions and classes of {x:e}"),
            &normalised,
            &want_i,
        );
    }
}

#[test]
fn integer_division_edges_and_wide_shifts() {
    let fx = Fixture::new("special.ptx", SPECIAL);
    let mut rng = Rng::new(51);
    let edges = [0i32, 1, -1, 2, 31, 32, 33, 64, 255, i32::MIN, i32::MAX, -32];
    let mut a = Vec::new();
    let mut b = Vec::new();
    for &x in &edges {
        for &y in &edges {
            a.push(x);
            b.push(y);
        }
    }
    for _ in 0..200 {
        a.push(rng.next_u32() as i32);
        b.push(rng.next_u32() as i32 >> (rng.next_u32() % 32));
    }
    let n = a.len();
    let (da, db, out) = (fx.upload(&a), fx.upload(&b), fx.zeros::<i32>(7 * n));
    // Division by zero and i32::MIN / -1 must not bring the simulator down: PTX leaves
    // their results machine-specific, so only the launch itself is checked for them.
    fx.launch(
        "int_edges",
        dim1(blocks_for(n, 64)),
        dim1(64),
        0,
        &[(&da).into(), (&db).into(), (&out).into(), (n as i32).into()],
    );
    let got = fx.download(&out);
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        let (ux, uy) = (x as u32, y as u32);
        let g = &got[7 * i..7 * i + 7];
        let shifts = [
            if uy >= 32 { 0 } else { ux << uy } as i32,
            if uy >= 32 { 0 } else { ux >> uy } as i32,
            x >> uy.min(31),
        ];
        assert_same(
            &format!("shl/shr.u32/shr.s32 of {x} by {uy}"),
            &g[4..7],
            &shifts,
        );
        if y != 0 {
            assert_eq!(
                [g[2], g[3]],
                [(ux / uy) as i32, (ux % uy) as i32],
                "{ux} /% {uy} (unsigned)"
            );
            if !(x == i32::MIN && y == -1) {
                assert_eq!([g[0], g[1]], [x / y, x % y], "{x} /% {y} (signed)");
            }
        }
    }
}

#[test]
fn generic_pointers_to_shared_and_global_memory() {
    let fx = Fixture::new("special.ptx", SPECIAL);
    let mut rng = Rng::new(52);
    for &block in &[32u32, 100, 256] {
        for &n in &SIZES {
            let values: Vec<i32> = (0..n)
                .map(|_| rng.range_i64(-1_000_000, 1_000_000) as i32)
                .collect();
            let groups = blocks_for(n, block) as usize;
            let (din, sums) = (fx.upload(&values), fx.zeros::<i32>(2 * groups));
            fx.launch(
                "generic_pointer_sum",
                dim1(groups as u32),
                dim1(block),
                0,
                &[(&din).into(), (&sums).into(), (n as i32).into()],
            );
            let want: Vec<i32> = values
                .chunks(block as usize)
                .flat_map(|c| {
                    let s: i32 = c.iter().sum();
                    [s, s]
                })
                .collect();
            assert_same(
                &format!("generic sums block={block} n={n}"),
                &fx.download(&sums),
                &want,
            );
        }
    }
}

// ---------------------------------------------------------------- math64.cu

const MATH64: &str = include_str!("../fixtures/math64.ptx");

/// Distance in ulps between two finite f64 values (0 when equal, u64::MAX when only one
/// is NaN or infinite).
fn ulp_distance_f64(a: f64, b: f64) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    if !a.is_finite() || !b.is_finite() {
        return u64::MAX;
    }
    let key = |x: f64| {
        let bits = x.to_bits() as i128;
        if bits >> 63 != 0 {
            -(bits & 0x7fff_ffff_ffff_ffff)
        } else {
            bits
        }
    };
    (key(a) - key(b)).unsigned_abs().min(u64::MAX as u128) as u64
}

#[test]
fn f64_library_functions_within_documented_ulps() {
    let fx = Fixture::new("math64.ptx", MATH64);
    let mut rng = Rng::new(53);
    for &n in &SIZES {
        let x: Vec<f64> = (0..n)
            .map(|i| match i % 6 {
                0 => rng.f64_in(1e5, 1e15) * if i % 12 == 0 { -1.0 } else { 1.0 }, // slow range reduction
                1 => rng.f64_in(-1e-3, 1e-3),
                _ => rng.f64_in(-50.0, 50.0),
            })
            .collect();
        let y: Vec<f64> = (0..n).map(|_| rng.f64_in(1e-5, 1e5)).collect();
        let (dx, dy, out) = (fx.upload(&x), fx.upload(&y), fx.zeros::<f64>(8 * n));
        fx.launch(
            "f64_math",
            dim1(blocks_for(n, 64)),
            dim1(64),
            0,
            &[(&dx).into(), (&dy).into(), (&out).into(), (n as i32).into()],
        );
        let got = fx.download(&out);
        for (i, (&a, &b)) in x.iter().zip(&y).enumerate() {
            // Allowed error: CUDA's documented maximum plus the bound glibc documents for
            // the reference (x86_64 libm-test-ulps), since neither is correctly rounded.
            let checks: [(&str, f64, u64); 8] = [
                ("exp", (a / 8.0).exp(), 1 + 1),
                ("log", b.ln(), 1 + 1),
                ("sin", a.sin(), 2 + 1),
                ("cos", a.cos(), 2 + 1),
                ("pow", b.powf(0.75), 2 + 1),
                ("atan2", a.atan2(b), 2 + 1),
                ("cbrt", a.cbrt(), 1 + 4),
                ("tanh", (a / 4.0).tanh(), 1 + 2),
            ];
            for (k, (name, want, ulps)) in checks.into_iter().enumerate() {
                let g = got[8 * i + k];
                let d = ulp_distance_f64(g, want);
                assert!(
                    d <= ulps,
                    "{name}: x={a:e} y={b:e}: got {g:e} want {want:e} ({d} ulps > {ulps})"
                );
            }
        }
    }
}
