//! A kept `map` and a later reduction that reads it element by element, generated as one
//! loop on `Place::Cpu` (`rt::map_reduce`): which programs get it (the structure of the
//! generated Rust), and that their results are those of the two loops on every place:
//! against plain Rust, the reduction's bits those of dpl's order (the same sum over the
//! same vector by a separate `sum`), NaNs canonical, errors the map's, at sizes around a
//! tile (2048 elements) and the parallel grain (2^17), in pools of 1, 2, 3 and 5 threads.

mod common;
mod common_structure;

use common::*;
use common_structure::rt_calls;
use dpl::Place;

/// dpl's canonical NaN (every significand bit set, positive), which every NaN that a float
/// operation produces is on every place.
const CANONICAL_NAN: u64 = 0x7fff_ffff_ffff_ffff;

/// The wrapping sum of `v` (dpl's integer arithmetic wraps).
fn wrapping_sum(v: &[i64]) -> i64 {
    v.iter().fold(0, |a, b| a.wrapping_add(*b))
}

mod prog {
    use dpl::prelude::*;

    /// `x / 4 + 1` and its sum: the map's result is also returned.
    #[parallel]
    pub fn scaled_and_sum(x: &[f32]) -> (Vec<f32>, f32) {
        let e = map(|v| v * 0.25 + 1.0, x);
        let s = sum(e);
        (e, s)
    }

    /// The softmax of `x / 4` (without the shift by the maximum): the exponentials are read
    /// again after their sum. `exp` is costly, so its map keeps the load-balanced loop of
    /// costly elements (`heavy::map`) instead.
    #[parallel]
    pub fn softmax(x: &[f32]) -> Vec<f32> {
        let e = map(|v| (v * 0.25).exp(), x);
        let s = sum(e);
        map(|v| v / s, e)
    }

    /// A relaxation step and its largest change (a Jacobi sweep's shape): the reduction
    /// reads the new vector and the old one, whose lengths are asserted equal between the
    /// two loops.
    #[parallel]
    pub fn step_and_change(x: &[f64], y: &[f64]) -> (Vec<f64>, f64) {
        let next = map(|a, b| 0.5 * a + b, x, y);
        let change = reduce(|p, q| p.max(q), map(|p, q| (p - q).abs(), next, x), 0.0);
        (next, change)
    }

    /// `3x + 1` and its minimum (a reduction without a start value: empty is an error).
    #[parallel]
    pub fn tripled_and_min(x: &[i64]) -> (Vec<i64>, i64) {
        let t = map(|v| v * 3 + 1, x);
        let m = min(t);
        (t, m)
    }

    /// A checked gather and its sum: the map can fail.
    #[parallel]
    pub fn picked_and_sum(x: &[i64], idx: &[usize]) -> Result<(Vec<i64>, i64), Error> {
        let p = map(|i| x[i], idx);
        let s = sum(p);
        (p, s)
    }

    /// Square roots and their sum: NaNs where `x` is negative.
    #[parallel]
    pub fn roots_and_sum(x: &[f64]) -> (Vec<f64>, f64) {
        let r = map(|v| v.sqrt(), x);
        let s = sum(r);
        (r, s)
    }

    /// A reduction that can fail (an integer division): not generated with its map.
    #[parallel]
    pub fn doubled_and_quotients(x: &[i64], d: i64) -> (Vec<i64>, i64) {
        let t = map(|v| v.wrapping_mul(2), x);
        let q = sum(map(|v| v / d, t));
        (t, q)
    }

    /// `x` scaled to sum 1: the map's cheap elements are computed again by both of its
    /// consumers (fusion keeps no vector), so there is no pair.
    #[parallel]
    pub fn normalized(x: &[f32]) -> Vec<f32> {
        let e = map(|v| v * v + 1.0, x);
        let s = sum(e);
        map(|v| v / s, e)
    }

    /// A pair inside a branch of a top-level `if`.
    #[parallel]
    pub fn branch_pair(x: &[i64], square: bool) -> (Vec<i64>, i64) {
        if square {
            let y = map(|v| v * v, x);
            let s = sum(y);
            (y, s)
        } else {
            let y = map(|v| v + 1, x);
            let m = reduce(|a, b| a.max(b), y, 0);
            (y, m)
        }
    }

    /// A pair inside a top-level loop whose next vector is the map: `x <- x / 2 + 1` and
    /// its sum, `steps` times.
    #[parallel]
    pub fn halvings(x: &[f64], steps: u32) -> (Vec<f64>, f64) {
        let mut y = map(|v| v, x);
        let mut total = 0.0;
        for _k in 0..steps {
            let next = map(|v| v * 0.5 + 1.0, y);
            total = sum(next);
            y = next;
        }
        (y, total)
    }

    /// A reduction that reads the map at another index: not generated with its map.
    #[parallel]
    pub fn neighbour_sum(x: &[i64]) -> (Vec<i64>, i64) {
        let y = map(|v| v * 2, x);
        let s = sum(map(
            |i| if i + 1 < len(y) { y[i + 1] } else { 0 },
            indices(y),
        ));
        (y, s)
    }

    /// A three-point average with clamped neighbours (a stencil: its loop has a clamp-free
    /// interior) and its largest change: the pair in variants (`map_reduce_split` where
    /// `z` is long enough for its reads to go unchecked, the checked map otherwise).
    #[parallel]
    pub fn smoothed_and_change(x: &[f64], z: &[f64]) -> (Vec<f64>, f64) {
        let n = len(x);
        let s = map(
            |i| {
                let last = n - 1;
                (x[i.max(1) - 1] + z[i] + x[(i + 1).min(last)]) / 3.0
            },
            indices(x),
        );
        let c = reduce(|p, q| p.max(q), map(|a, b| (a - b).abs(), s, x), 0.0);
        (s, c)
    }

    /// The difference and the sum of `x` and `y`, one vector each (`unzip(map(f))`), and
    /// the sum of their squares: the pair writes both components (`map_unzip2_reduce`).
    #[parallel]
    pub fn rotated_and_norm(x: &[f32], y: &[f32]) -> (Vec<f32>, Vec<f32>, f32) {
        let (u, v) = unzip(map(|a, b| (a - b, a + b), x, y));
        let s = sum(map(|p, q| p * p + q * q, u, v));
        (u, v, s)
    }

    /// Three components, the reduction reading two of them, the third a float computed
    /// to a NaN where `x` is negative (made canonical).
    #[parallel]
    pub fn three_and_max(x: &[f64]) -> (Vec<f64>, Vec<i64>, Vec<f64>, i64) {
        let (a, b, c) = unzip(map(|v| (v * 2.0, (v * 4.0) as i64, v.sqrt()), x));
        let m = reduce(|p, q| p.max(q), map(|p, q| q + (p > 0.0) as i64, a, b), 0);
        (a, b, c, m)
    }

    /// Statements between the map and its reduction that cannot fail stay where they are:
    /// the pair when the reduction does not read them (`k2`), not when it does (`c`).
    #[parallel]
    pub fn with_scalars_between(x: &[f64], k: u32) -> (Vec<f64>, u32, f64, f64) {
        let y = map(|v| v + 1.0, x);
        let k2 = k * 2 + 1;
        let s = sum(y);
        let z = map(|v| v * 3.0, x);
        let c = k as f64 * 0.5;
        let t = sum(map(|v| v * c, z));
        (y, k2, s + t, z[0])
    }

    /// The sum of `x`, alone: the bits of dpl's order for a given vector.
    #[parallel]
    pub fn total_f32(x: &[f32]) -> f32 {
        sum(x)
    }

    /// The sum of `x`, alone (`f64`).
    #[parallel]
    pub fn total_f64(x: &[f64]) -> f64 {
        sum(x)
    }
}

#[test]
fn a_kept_map_and_its_reduction_are_one_call() {
    for (name, i, fused) in [
        ("scaled_and_sum", dpl::inspect!(prog::scaled_and_sum), 1),
        ("softmax", dpl::inspect!(prog::softmax), 0),
        ("step_and_change", dpl::inspect!(prog::step_and_change), 1),
        ("tripled_and_min", dpl::inspect!(prog::tripled_and_min), 1),
        ("picked_and_sum", dpl::inspect!(prog::picked_and_sum), 1),
        ("roots_and_sum", dpl::inspect!(prog::roots_and_sum), 1),
        (
            "doubled_and_quotients",
            dpl::inspect!(prog::doubled_and_quotients),
            0,
        ),
        ("normalized", dpl::inspect!(prog::normalized), 0),
        ("branch_pair", dpl::inspect!(prog::branch_pair), 2),
        ("halvings", dpl::inspect!(prog::halvings), 1),
        ("neighbour_sum", dpl::inspect!(prog::neighbour_sum), 0),
        (
            "smoothed_and_change",
            dpl::inspect!(prog::smoothed_and_change),
            1,
        ),
        ("rotated_and_norm", dpl::inspect!(prog::rotated_and_norm), 1),
        (
            "with_scalars_between",
            dpl::inspect!(prog::with_scalars_between),
            1,
        ),
        ("three_and_max", dpl::inspect!(prog::three_and_max), 1),
    ] {
        // One call per pair (a pair in loop variants: one per variant, see below).
        let pairs: usize = ["map_reduce", "map_unzip2_reduce", "map_unzip3_reduce"]
            .iter()
            .map(|h| rt_calls(i.cpu_rust, h))
            .sum();
        assert_eq!(pairs, fused, "{name}: {}", i.cpu_rust);
    }
    // An unzipped map's pair writes one vector per component.
    for (name, i, k) in [
        ("rotated_and_norm", dpl::inspect!(prog::rotated_and_norm), 2),
        ("three_and_max", dpl::inspect!(prog::three_and_max), 3),
    ] {
        let helper = format!("map_unzip{k}_reduce");
        assert_eq!(rt_calls(i.cpu_rust, &helper), 1, "{name}: {}", i.cpu_rust);
    }
    // A stencil's pair keeps the clamp-free interior of its map.
    let i = dpl::inspect!(prog::smoothed_and_change);
    assert_eq!(
        rt_calls(i.cpu_rust, "map_reduce_split"),
        1,
        "{}",
        i.cpu_rust
    );
    // Without assertions between the two loops, nothing else is generated for them.
    let i = dpl::inspect!(prog::scaled_and_sum);
    assert_eq!(rt_calls(i.cpu_rust, "map"), 0, "{}", i.cpu_rust);
    assert_eq!(rt_calls(i.cpu_rust, "reduce"), 0, "{}", i.cpu_rust);
}

/// Sizes around a tile of the reduction's order and the CPU's parallel grain.
const SIZES: [usize; 9] = [0, 1, 2, 2047, 2048, 2049, (1 << 17) - 1, (1 << 17) + 1, BIG];

/// Runs `check` on `place` for every size, and on `Place::Cpu` in pools of 1, 2, 3 and 5
/// threads.
fn on(place: Place, check: impl Fn(usize, &mut Rng) + Sync) {
    if place == Place::Cpu {
        dpl_testkit::in_pools(|| each_size(place, &SIZES, &check));
    } else {
        each_size(place, &SIZES, &check);
    }
}

fn scaled_and_sum(place: Place) {
    on(place, |n, rng| {
        let x = rng.f32s(n, -8.0, 8.0);
        let (e, s) = prog::scaled_and_sum(&x);
        let want: Vec<f32> = x.iter().map(|v| v * 0.25 + 1.0).collect();
        assert_same(&e, &want, "x / 4 + 1");
        let (sum, magnitude) = f64_sum(e.iter().copied());
        assert_reduced(s, sum, magnitude, n, "sum");
        assert_exact(s, prog::total_f32(&e), "the sum's bits");
    });
}

fn softmax(place: Place) {
    on(place, |n, rng| {
        let x = rng.f32s(n, -8.0, 8.0);
        let e: Vec<f32> = x.iter().map(|v| (v * 0.25).exp()).collect();
        let s = prog::total_f32(&e);
        let want: Vec<f32> = e.iter().map(|v| v / s).collect();
        let ulps = math_ulps(place) + u64::from(place != Place::Seq && place != Place::Cpu);
        assert_ulps(&prog::softmax(&x), &want, ulps, "softmax");
    });
}

fn step_and_change(place: Place) {
    on(place, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        let y = rng.f64s(n, -1.0, 1.0);
        let (next, change) = prog::step_and_change(&x, &y);
        let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| 0.5 * a + b).collect();
        assert_same(&next, &want, "next");
        let largest = want
            .iter()
            .zip(&x)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        assert_exact(change, largest, "change");
        if n > 0 {
            let msg = panic_message(|| prog::step_and_change(&x, &y[1..]));
            assert!(msg.contains("length"), "{msg}");
        }
    });
}

fn tripled_and_min(place: Place) {
    on(place, |n, rng| {
        let x: Vec<i64> = (0..n).map(|_| rng.u64() as i64 >> 3).collect();
        let want: Vec<i64> = x
            .iter()
            .map(|v| v.wrapping_mul(3).wrapping_add(1))
            .collect();
        if n == 0 {
            let msg = panic_message(|| prog::tripled_and_min(&x));
            assert!(msg.contains("empty"), "{msg}");
            return;
        }
        let (t, m) = prog::tripled_and_min(&x);
        assert_eq!(t, want);
        assert_eq!(Some(m), want.iter().copied().min());
    });
}

fn picked_and_sum(place: Place) {
    on(place, |n, rng| {
        let x: Vec<i64> = (0..n.max(1)).map(|_| rng.u64() as i64 >> 20).collect();
        let mut idx: Vec<usize> = (0..n).map(|_| rng.below(x.len())).collect();
        let got = prog::picked_and_sum(&x, &idx).expect("indices in range");
        let want: Vec<i64> = idx.iter().map(|&i| x[i]).collect();
        assert_eq!(got.1, wrapping_sum(&want));
        assert_eq!(got.0, want);
        if n > 0 {
            let bad = n / 2;
            idx[bad] = x.len() + 3;
            let err = prog::picked_and_sum(&x, &idx).expect_err("an index out of range");
            match err {
                dpl::Error::IndexOutOfRange { index, len, .. } => {
                    assert_eq!((index, len), ((x.len() + 3) as i128, x.len()));
                }
                e => panic!("{e}"),
            }
        }
    });
}

fn roots_and_sum(place: Place) {
    on(place, |n, rng| {
        let x = rng.f64s(n, -0.5, 4.0);
        let (r, s) = prog::roots_and_sum(&x);
        // Negative values give the canonical NaN on every place, and so does their sum.
        let nan = f64::from_bits(CANONICAL_NAN);
        let want: Vec<f64> = x
            .iter()
            .map(|v| if *v < 0.0 { nan } else { v.sqrt() })
            .collect();
        assert_same(&r, &want, "roots");
        assert!(
            r.iter()
                .filter(|v| v.is_nan())
                .all(|v| v.to_bits() == CANONICAL_NAN)
        );
        assert_exact(s, prog::total_f64(&r), "the sum's bits");
        if x.iter().any(|v| *v < 0.0) {
            assert_eq!(s.to_bits(), CANONICAL_NAN);
        }
    });
}

fn doubled_and_quotients(place: Place) {
    on(place, |n, rng| {
        let x: Vec<i64> = (0..n).map(|_| rng.u64() as i64 >> 4).collect();
        let (t, q) = prog::doubled_and_quotients(&x, 7);
        let want: Vec<i64> = x.iter().map(|v| v.wrapping_mul(2)).collect();
        let quotients: Vec<i64> = want.iter().map(|v| v / 7).collect();
        assert_eq!(q, wrapping_sum(&quotients));
        assert_eq!(t, want);
        if n > 0 {
            let msg = panic_message(|| prog::doubled_and_quotients(&x, 0));
            assert!(msg.contains("divi"), "{msg}");
        }
    });
}

fn normalized(place: Place) {
    on(place, |n, rng| {
        let x = rng.f32s(n, -2.0, 2.0);
        let e: Vec<f32> = x.iter().map(|v| v * v + 1.0).collect();
        let s = prog::total_f32(&e);
        let want: Vec<f32> = e.iter().map(|v| v / s).collect();
        assert_same(&prog::normalized(&x), &want, "normalized");
    });
}

fn branch_pair(place: Place) {
    on(place, |n, rng| {
        let x: Vec<i64> = (0..n)
            .map(|_| (rng.u64() >> 40) as i64 - (1 << 23))
            .collect();
        let squares: Vec<i64> = x.iter().map(|v| v * v).collect();
        assert_eq!(
            prog::branch_pair(&x, true),
            (squares.clone(), wrapping_sum(&squares))
        );
        let plus: Vec<i64> = x.iter().map(|v| v + 1).collect();
        let largest = plus.iter().copied().fold(0, i64::max);
        assert_eq!(prog::branch_pair(&x, false), (plus, largest));
    });
}

fn halvings(place: Place) {
    on(place, |n, rng| {
        let x = rng.f64s(n, 0.0, 100.0);
        let (mut y, mut total) = (x.clone(), 0.0);
        for _ in 0..3 {
            y = y.iter().map(|v| v * 0.5 + 1.0).collect();
            total = prog::total_f64(&y);
        }
        let (got, got_total) = prog::halvings(&x, 3);
        assert_same(&got, &y, "x after three steps");
        assert_exact(got_total, total, "the last sum's bits");
        let (sum, magnitude) = f64_sum(y.iter().copied());
        assert_reduced(got_total, sum, magnitude, n, "the last sum");
    });
}

fn neighbour_sum(place: Place) {
    on(place, |n, rng| {
        let x: Vec<i64> = (0..n).map(|_| (rng.u64() >> 8) as i64).collect();
        let y: Vec<i64> = x.iter().map(|v| v.wrapping_mul(2)).collect();
        let s = wrapping_sum(&y[y.len().min(1)..]);
        assert_eq!(prog::neighbour_sum(&x), (y, s));
    });
}

fn smoothed_and_change(place: Place) {
    on(place, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        let z = rng.f64s(n + 1, -1.0, 1.0);
        let want: Vec<f64> = (0..n)
            .map(|i| (x[i.max(1) - 1] + z[i] + x[(i + 1).min(n - 1)]) / 3.0)
            .collect();
        let change = want
            .iter()
            .zip(&x)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let (s, c) = prog::smoothed_and_change(&x, &z);
        assert_same(&s, &want, "smoothed");
        assert_exact(c, change, "change");
        // A `z` too short for the unchecked variant: the checked one, and its error.
        if n > 1 {
            let msg = panic_message(|| prog::smoothed_and_change(&x[..n - 1], &z[..n - 2]));
            assert!(msg.contains(&format!("index {}", n - 2)), "{msg}");
        }
    });
}

fn rotated_and_norm(place: Place) {
    on(place, |n, rng| {
        let x = rng.f32s(n, -4.0, 4.0);
        let y = rng.f32s(n, -4.0, 4.0);
        let u: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        let v: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a + b).collect();
        let squares: Vec<f32> = u.iter().zip(&v).map(|(p, q)| p * p + q * q).collect();
        let (gu, gv, s) = prog::rotated_and_norm(&x, &y);
        assert_same(&gu, &u, "u");
        assert_same(&gv, &v, "v");
        assert_exact(s, prog::total_f32(&squares), "the sum's bits");
        let (sum, magnitude) = f64_sum(squares.iter().copied());
        assert_reduced(s, sum, magnitude, n, "sum");
    });
}

fn three_and_max(place: Place) {
    on(place, |n, rng| {
        let x = rng.f64s(n, -1.0, 1.0);
        let a: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
        let b: Vec<i64> = x.iter().map(|v| (v * 4.0) as i64).collect();
        let nan = f64::from_bits(CANONICAL_NAN);
        let c: Vec<f64> = x
            .iter()
            .map(|v| if *v < 0.0 { nan } else { v.sqrt() })
            .collect();
        let m = a
            .iter()
            .zip(&b)
            .map(|(p, q)| q + (*p > 0.0) as i64)
            .fold(0, i64::max);
        let got = prog::three_and_max(&x);
        assert_same(&got.0, &a, "a");
        assert_eq!(got.1, b);
        assert_same(&got.2, &c, "c");
        assert!(
            got.2
                .iter()
                .filter(|v| v.is_nan())
                .all(|v| v.to_bits() == CANONICAL_NAN)
        );
        assert_eq!(got.3, m);
    });
}

fn with_scalars_between(place: Place) {
    on(place, |n, rng| {
        let x = rng.f64s(n.max(1), -1.0, 1.0);
        let y: Vec<f64> = x.iter().map(|v| v + 1.0).collect();
        let z: Vec<f64> = x.iter().map(|v| v * 3.0).collect();
        let scaled: Vec<f64> = z.iter().map(|v| v * (7.0 * 0.5)).collect();
        let want = prog::total_f64(&y) + prog::total_f64(&scaled);
        let got = prog::with_scalars_between(&x, 7);
        assert_same(&got.0, &y, "y");
        assert_eq!(got.1, 15);
        assert_exact(got.2, want, "the sums' bits");
        assert_exact(got.3, z[0], "z[0]");
    });
}

on_every_place!(
    with_scalars_between,
    rotated_and_norm,
    three_and_max,
    smoothed_and_change,
    normalized,
    branch_pair,
    halvings,
    neighbour_sum,
);

on_every_place!(
    scaled_and_sum,
    softmax,
    step_and_change,
    tripled_and_min,
    picked_and_sum,
    roots_and_sum,
    doubled_and_quotients
);
