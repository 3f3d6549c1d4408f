//! Randomised differential tests: proptest draws inputs (lengths up to 3000, sometimes
//! tiled past the CPU backend's parallel grain; negative values, extreme integers, valid
//! random index arrays), every program runs on every place this build has, and each result
//! must equal an independent plain-Rust oracle (exactly, or up to reassociation for
//! floating-point reductions), hence all places agree with each other. Sorts are compared
//! bit for bit (any `f64`, NaNs and signed zeros included).

mod common;

use common::{Rng, assert_reduced, assert_same, available_places, f64_sum, odd_pool};
use dpl::{Error, Place, with_place};
use proptest::collection::vec;
use proptest::prelude::*;

/// The programs under test.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|xi, yi| a * xi + yi, x, y)
    }

    #[parallel]
    pub fn poly(x: &[f64]) -> Vec<f64> {
        map(|v| ((v * 3.0 - 1.0) * v + 0.5).abs().sqrt(), x)
    }

    #[parallel]
    pub fn shifty(a: &[i32], b: &[i32]) -> Vec<i32> {
        map(|p, q| (p << (q & 7)) ^ (q >> 2) - p * q, a, b)
    }

    #[parallel]
    pub fn gather_doubled(x: &[i64], idx: &[u32]) -> Vec<i64> {
        map(|v| v * 2, gather(x, idx))
    }

    #[parallel]
    pub fn bin_sums(vals: &[u64], keys: &[i64], bins: usize) -> Vec<u64> {
        scatter_reduce(|a, b| a + b, vals, keys, replicate(0u64, bins))
    }

    #[parallel]
    pub fn scatter_into(src: &[i32], idx: &[usize], dst: &[i32]) -> Vec<i32> {
        scatter(src, idx, dst)
    }

    #[parallel]
    pub fn permute_f64(x: &[f64], idx: &[u64]) -> Vec<f64> {
        permute(x, idx)
    }

    #[parallel]
    pub fn sum_squares(x: &[f32]) -> f32 {
        sum(map(|v| v * v, x))
    }

    #[parallel]
    pub fn dot(x: &[f64], y: &[f64]) -> f64 {
        sum(map(|a, b| a * b, x, y))
    }

    #[parallel]
    pub fn stats(x: &[i64]) -> Result<(i64, i64, i64), dpl::Error> {
        (sum(x), min(x), max(x))
    }

    #[parallel]
    pub fn scans(x: &[i64], y: &[f32]) -> (Vec<i64>, Vec<f32>) {
        (
            scan(|a, b| a + b, map(|v| v / 3, x)),
            scan(|a, b| a.max(b), y),
        )
    }

    #[parallel]
    pub fn exclusive_u32(x: &[u32], init: u32) -> Vec<u32> {
        exclusive_scan(|a, b| a + b, x, init)
    }

    #[parallel]
    pub fn filter_halves(x: &[i32]) -> Vec<i32> {
        filter(|v| v % 3 == 1, map(|v| v / 2, x))
    }

    #[parallel]
    pub fn predicates(x: &[f64], t: f64) -> (usize, bool, bool) {
        (
            count(|v| v > t, x),
            any(|v| v < -t, x),
            all(|v| v > -1e9, x),
        )
    }

    #[parallel]
    pub fn compact_positive(x: &[f32]) -> Vec<f32> {
        gather(x, filter(|i| x[i] > 0.0, indices(x)))
    }

    #[parallel]
    pub fn argmin(x: &[i32]) -> (i32, usize) {
        reduce(
            |p, q| {
                if q.0 < p.0 || q.0 == p.0 && q.1 < p.1 {
                    q
                } else {
                    p
                }
            },
            zip(x, indices(x)),
            (i32::MAX, usize::MAX),
        )
    }
}

mod sorts {
    use dpl::prelude::*;

    #[parallel]
    pub fn sorted_f64(x: &[f64]) -> Vec<f64> {
        sort(x)
    }

    #[parallel]
    pub fn ranked(k: &[i32], v: &[f32]) -> Result<Vec<(f32, usize)>, dpl::Error> {
        sort_by_key(k, zip(v, indices(v)))
    }
}

/// Longest drawn input; tiling sometimes repeats it past the parallel grain.
const MAX_LEN: usize = 3000;

/// At least this many elements after tiling: above the CPU backend's grain (2^15).
const TILED_LEN: usize = 40_000;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 48,
        ..ProptestConfig::default()
    }
}

/// `v` repeated until it has at least [`TILED_LEN`] elements when `tile` is set.
fn tiled<T: Clone>(v: Vec<T>, tile: bool) -> Vec<T> {
    if !tile || v.is_empty() {
        return v;
    }
    let reps = TILED_LEN.div_ceil(v.len());
    v.iter().cycle().take(v.len() * reps).cloned().collect()
}

/// Whether to tile this case: one in five.
fn tile() -> impl Strategy<Value = bool> {
    prop::bool::weighted(0.2)
}

/// Finite floats of both signs over many magnitudes.
fn f32s() -> impl Strategy<Value = f32> {
    prop_oneof![-1e3f32..1e3, -1e30f32..1e30, Just(0.0), Just(-0.0)]
}

fn f64s() -> impl Strategy<Value = f64> {
    prop_oneof![-1e3f64..1e3, -1e200f64..1e200, Just(0.0), Just(-0.0)]
}

/// Runs `call` on every place, and on the CPU place once more inside [`odd_pool`], and
/// hands each result to `check` with its place.
fn on_all_places<R: Send>(call: impl Fn() -> R + Sync, check: impl Fn(Place, R)) {
    for place in available_places() {
        eprintln!("place {place:?}");
        check(place, with_place(place, &call));
    }
    eprintln!("place Cpu in a pool of 7 threads");
    check(
        Place::Cpu,
        odd_pool().install(|| with_place(Place::Cpu, &call)),
    );
}

/// Two equally long float sequences (the tiling applies to both).
fn f32_pair() -> impl Strategy<Value = (Vec<f32>, Vec<f32>)> {
    (0..MAX_LEN, tile()).prop_flat_map(|(n, t)| {
        (vec(f32s(), n), vec(f32s(), n)).prop_map(move |(a, b)| (tiled(a, t), tiled(b, t)))
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn saxpy(a in -10f32..10.0, (x, y) in f32_pair()) {
        let want: Vec<f32> = x.iter().zip(&y).map(|(p, q)| a * p + q).collect();
        on_all_places(|| prog::saxpy(a, &x, &y), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn sorted_f64(x in vec(any::<f64>(), 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let mut want = x.clone();
        want.sort_by(f64::total_cmp);
        let want: Vec<u64> = want.into_iter().map(f64::to_bits).collect();
        on_all_places(|| sorts::sorted_f64(&x), |p, got| {
            let got: Vec<u64> = got.into_iter().map(f64::to_bits).collect();
            assert!(got == want, "{p:?}: sort differs");
        });
    }

    #[test]
    fn sort_by_key_stable(
        k in vec(-3i32..3, 0..MAX_LEN),
        v in vec(f32s(), 0..MAX_LEN),
        same in prop::bool::weighted(0.8),
        t in tile(),
    ) {
        let k = tiled(k, t);
        let v: Vec<f32> = if same { v.iter().cycle().take(if v.is_empty() { 0 } else { k.len() }).copied().collect() } else { v };
        let got = |p: Place, r: Result<Vec<(f32, usize)>, Error>| {
            if k.len() == v.len() {
                let mut want: Vec<(i32, (f32, usize))> = k.iter().copied().zip(v.iter().copied().zip(0..)).collect();
                want.sort_by_key(|e| e.0);
                let want: Vec<(f32, usize)> = want.into_iter().map(|e| e.1).collect();
                assert_eq!(r.as_deref(), Ok(&want[..]), "{p:?}");
            } else {
                assert!(matches!(r, Err(Error::LengthMismatch { prim: "sort_by_key", .. })), "{p:?}: {r:?}");
            }
        };
        on_all_places(|| sorts::ranked(&k, &v), got);
    }

    #[test]
    fn poly(x in vec(f64s(), 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let want: Vec<f64> = x.iter().map(|v| ((v * 3.0 - 1.0) * v + 0.5).abs().sqrt()).collect();
        on_all_places(|| prog::poly(&x), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn shifty((a, b) in (0..MAX_LEN).prop_flat_map(|n| (vec(any::<i32>(), n), vec(any::<i32>(), n)))) {
        let want: Vec<i32> = a
            .iter()
            .zip(&b)
            .map(|(&p, &q)| p.wrapping_shl((q & 7) as u32) ^ (q >> 2).wrapping_sub(p.wrapping_mul(q)))
            .collect();
        on_all_places(|| prog::shifty(&a, &b), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn gather_doubled(
        (x, idx) in (1..MAX_LEN).prop_flat_map(|n| (vec(any::<i64>(), n), vec(0..n as u32, 0..MAX_LEN))),
        t in tile(),
    ) {
        let idx = tiled(idx, t);
        let want: Vec<i64> = idx.iter().map(|&i| x[i as usize].wrapping_mul(2)).collect();
        on_all_places(|| prog::gather_doubled(&x, &idx), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn bin_sums(
        (bins, keys) in (1..200usize).prop_flat_map(|b| (Just(b), vec(0..b as i64, 0..MAX_LEN))),
        seed in any::<u64>(),
        t in tile(),
    ) {
        let keys = tiled(keys, t);
        let vals = Rng::new(seed).u64s(keys.len());
        let mut want = vec![0u64; bins];
        for (&k, &v) in keys.iter().zip(&vals) {
            want[k as usize] = want[k as usize].wrapping_add(v);
        }
        on_all_places(|| prog::bin_sums(&vals, &keys, bins), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn scatter_into(
        (dst, perm) in (0..MAX_LEN).prop_flat_map(|n| (vec(any::<i32>(), n), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())),
        take in 0.0f64..=1.0,
        seed in any::<u64>(),
    ) {
        // Distinct targets, so the result does not depend on which write wins.
        let idx: Vec<usize> = perm.iter().copied().take((perm.len() as f64 * take) as usize).collect();
        let src = Rng::new(seed).i32s(idx.len());
        let mut want = dst.clone();
        for (&k, &v) in idx.iter().zip(&src) {
            want[k] = v;
        }
        on_all_places(|| prog::scatter_into(&src, &idx, &dst), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn permute_f64(
        (x, perm) in (0..MAX_LEN).prop_flat_map(|n| (vec(f64s(), n), Just((0..n as u64).collect::<Vec<u64>>()).prop_shuffle())),
    ) {
        let mut want = vec![0.0; x.len()];
        for (&k, &v) in perm.iter().zip(&x) {
            want[k as usize] = v;
        }
        on_all_places(|| prog::permute_f64(&x, &perm), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn sum_squares(x in vec(-1e3f32..1e3, 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let (want, magnitude) = f64_sum(x.iter().map(|v| v * v));
        on_all_places(|| prog::sum_squares(&x), |p, got| assert_reduced(got, want, magnitude, x.len(), &format!("{p:?}")));
    }

    #[test]
    fn dot((x, y) in (0..MAX_LEN).prop_flat_map(|n| (vec(f64s(), n), vec(-1e3f64..1e3, n)))) {
        let (want, magnitude) = f64_sum(x.iter().zip(&y).map(|(a, b)| a * b));
        on_all_places(|| prog::dot(&x, &y), |p, got| assert_reduced(got, want, magnitude, x.len(), &format!("{p:?}")));
    }

    #[test]
    fn stats(x in vec(any::<i64>(), 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let want = (
            x.iter().fold(0i64, |s, &v| s.wrapping_add(v)),
            x.iter().copied().min(),
            x.iter().copied().max(),
        );
        on_all_places(|| prog::stats(&x), |p, got| match (got, want) {
            (Ok(got), (s, Some(lo), Some(hi))) => assert_eq!(got, (s, lo, hi), "{p:?}"),
            (Err(Error::Empty { .. }), (_, None, None)) => {}
            (got, _) => panic!("{p:?}: {got:?} for {} elements", x.len()),
        });
    }

    #[test]
    fn scans(x in vec(any::<i64>(), 0..MAX_LEN), seed in any::<u64>(), t in tile()) {
        let x = tiled(x, t);
        let y = Rng::new(seed).f32s(x.len(), -1e6, 1e6);
        let mut s = 0i64;
        let want_x: Vec<i64> = x.iter().map(|&v| { s = s.wrapping_add(v / 3); s }).collect();
        let mut m = f32::NEG_INFINITY;
        let want_y: Vec<f32> = y.iter().map(|&v| { m = m.max(v); m }).collect();
        on_all_places(|| prog::scans(&x, &y), |p, (gx, gy)| {
            assert_same(&gx, &want_x, &format!("{p:?} i64 +"));
            assert_same(&gy, &want_y, &format!("{p:?} f32 max"));
        });
    }

    #[test]
    fn exclusive_u32(x in vec(any::<u32>(), 0..MAX_LEN), init in any::<u32>(), t in tile()) {
        let x = tiled(x, t);
        let mut s = init;
        let want: Vec<u32> = x.iter().map(|&v| { let before = s; s = s.wrapping_add(v); before }).collect();
        on_all_places(|| prog::exclusive_u32(&x, init), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn filter_halves(x in vec(any::<i32>(), 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let want: Vec<i32> = x.iter().map(|v| v / 2).filter(|v| v % 3 == 1).collect();
        on_all_places(|| prog::filter_halves(&x), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn predicates(x in vec(-1e3f64..1e3, 0..MAX_LEN), th in -1e3f64..1e3, t in tile()) {
        let x = tiled(x, t);
        let want = (
            x.iter().filter(|&&v| v > th).count(),
            x.iter().any(|&v| v < -th),
            x.iter().all(|&v| v > -1e9),
        );
        on_all_places(|| prog::predicates(&x, th), |p, got| assert_eq!(got, want, "{p:?}"));
    }

    #[test]
    fn compact_positive(x in vec(f32s(), 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let want: Vec<f32> = x.iter().copied().filter(|&v| v > 0.0).collect();
        on_all_places(|| prog::compact_positive(&x), |p, got| assert_same(&got, &want, &format!("{p:?}")));
    }

    #[test]
    fn argmin(x in vec(-50i32..50, 0..MAX_LEN), t in tile()) {
        let x = tiled(x, t);
        let want = x
            .iter()
            .enumerate()
            .fold((i32::MAX, usize::MAX), |best, (i, &v)| if v < best.0 { (v, i) } else { best });
        on_all_places(|| prog::argmin(&x), |p, got| assert_eq!(got, want, "{p:?}"));
    }
}
