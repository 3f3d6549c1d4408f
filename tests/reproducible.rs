//! Reductions and scans reproducible to the bit: float `sum`, `reduce` with a start value,
//! a fused dot product, two reductions merged into one loop, and per-row sums of `Nested`
//! rows and of row- and column-major `Matrix` rows give exactly the bits of dpl's one
//! order (tiles of 2048 elements, 32 lanes and a tree in each, the tiles' results reduced
//! the same way; README, "Reductions"), on every place and, on `Place::Cpu`, in rayon
//! pools of 1 to 5 threads; so do float `scan` and `exclusive_scan`, flat, fused and per
//! row (README, "Scans are reproducible too": runs of 64 per lane, the lanes' totals
//! scanned across the warp, the tiles' totals scanned the same way). The oracle
//! (`dpl_testkit::order`) is written from those descriptions in plain Rust.
//!
//! The inputs mix magnitudes from 1e-3 to 1e4 with both signs, so that a different order
//! of additions gives different bits (checked: the left-to-right sum differs).

mod common;

use common::{Rng, available_places};
use dpl::prelude::*;

use dpl_testkit::order::{
    ordered as oracle, ordered_from as oracle_init, scanned, scanned_exclusive,
};

#[parallel]
fn sum32(x: &[f32]) -> f32 {
    sum(x)
}

#[parallel]
fn sum64(x: &[f64]) -> f64 {
    sum(x)
}

#[parallel]
fn dot(x: &[f32], y: &[f32]) -> f32 {
    sum(map(|a, b| a * b, x, y))
}

#[parallel]
fn with_start(x: &[f64]) -> f64 {
    reduce(|a, b| a + b, x, 0.25)
}

#[parallel]
fn two(x: &[f32]) -> (f32, f32) {
    (sum(x), sum(map(|v| v * v, x)))
}

#[parallel]
fn row_sums(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(r), x)
}

#[parallel(inner = "seq")]
fn row_sums_thread(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(r), x)
}

#[parallel(inner = "warp")]
fn row_sums_warp(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(r), x)
}

#[parallel(inner = "block")]
fn row_sums_block(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(r), x)
}

/// Three warps: two take tiles (the largest power of two), one waits.
#[parallel(inner = "block", block = 96)]
fn row_sums_block96(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(r), x)
}

#[parallel(inner = "block", block = 1024)]
fn row_sums_block1024(x: &Nested<f32>) -> Vec<f32> {
    map(|r| reduce(|a, b| a + b, r, 0.5), x)
}

#[parallel]
fn matrix_row_sums(m: &Matrix<f64>) -> Vec<f64> {
    map(|r| sum(r), m)
}

/// A function of per-row sums.
type RowSums = fn(&Nested<f32>) -> Vec<f32>;

/// A reduction of a streamed sequence (a lazy `filter` in the GPU's thread).
#[parallel]
fn row_positive_sums(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(filter(|v| v > 0.0, r)), x)
}

#[parallel]
fn prefix32(x: &[f32]) -> Vec<f32> {
    scan(|a, b| a + b, x)
}

#[parallel]
fn prefix64_from(x: &[f64]) -> Vec<f64> {
    exclusive_scan(|a, b| a + b, x, 0.25)
}

/// A scan of a fused map.
#[parallel]
fn prefix_of_squares(x: &[f32]) -> Vec<f32> {
    scan(|a, b| a + b, map(|v| v * v, x))
}

#[parallel]
fn row_prefixes(x: &Nested<f32>) -> Nested<f32> {
    map(|r| scan(|a, b| a + b, r), x)
}

#[parallel]
fn row_prefixes_from(x: &Nested<f32>) -> Nested<f32> {
    map(|r| exclusive_scan(|a, b| a + b, r, 0.5), x)
}

#[parallel(inner = "seq")]
fn row_prefixes_thread(x: &Nested<f32>) -> Nested<f32> {
    map(|r| scan(|a, b| a + b, r), x)
}

#[parallel(inner = "warp")]
fn row_prefixes_warp(x: &Nested<f32>) -> Nested<f32> {
    map(|r| scan(|a, b| a + b, r), x)
}

#[parallel(inner = "block")]
fn row_prefixes_block(x: &Nested<f32>) -> Nested<f32> {
    map(|r| scan(|a, b| a + b, r), x)
}

#[parallel(inner = "seq")]
fn row_prefixes_from_thread(x: &Nested<f32>) -> Nested<f32> {
    map(|r| exclusive_scan(|a, b| a + b, r, 0.5), x)
}

#[parallel(inner = "warp")]
fn row_prefixes_from_warp(x: &Nested<f32>) -> Nested<f32> {
    map(|r| exclusive_scan(|a, b| a + b, r, 0.5), x)
}

#[parallel(inner = "block")]
fn row_prefixes_from_block(x: &Nested<f32>) -> Nested<f32> {
    map(|r| exclusive_scan(|a, b| a + b, r, 0.5), x)
}

/// A row scan streamed into a reduction (not stored).
#[parallel]
fn row_prefix_sums(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(scan(|a, b| a + b, r)), x)
}

#[parallel(inner = "seq")]
fn row_prefix_sums_thread(x: &Nested<f32>) -> Vec<f32> {
    map(|r| sum(scan(|a, b| a + b, r)), x)
}

/// A row scan streamed into a map.
#[parallel]
fn row_prefixes_doubled(x: &Nested<f32>) -> Nested<f32> {
    map(|r| map(|v| v * 2.0, scan(|a, b| a + b, r)), x)
}

#[parallel(inner = "warp")]
fn row_prefixes_doubled_warp(x: &Nested<f32>) -> Nested<f32> {
    map(|r| map(|v| v * 2.0, scan(|a, b| a + b, r)), x)
}

/// A function of per-row scans.
type RowScans = fn(&Nested<f32>) -> Nested<f32>;

/// The bits of `v`, with both zeros as 0.
fn bits_or_zero(v: f32) -> u32 {
    if v == 0.0 { 0 } else { v.to_bits() }
}

/// Values of mixed magnitude and sign.
fn data(rng: &mut Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let m = 10f64.powi((rng.u64() % 8) as i32 - 3);
            (rng.f64() - 0.5) * m
        })
        .collect()
}

/// Lengths that cross each boundary of the order: the lanes, a tile, 32 tiles (the
/// empty sum, a signed zero, is the special-value tests' business).
fn lengths(place: Place) -> Vec<usize> {
    let mut v = vec![
        1, 5, 31, 32, 33, 100, 2047, 2048, 2049, 5000, 65_536, 65_537, 70_001,
    ];
    if !matches!(place, Place::Sim) {
        v.push((1 << 20) + 7);
    }
    v
}

/// Runs `check` on `place`; on the CPU, also in pools of 1 to 5 threads.
fn on(place: Place, check: &(dyn Fn() + Sync)) {
    if place == Place::Cpu {
        for threads in 1..=5 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| with_place(place, check));
        }
    } else {
        with_place(place, check);
    }
}

fn flat(place: Place) {
    let mut rng = Rng::new(0x5eed_0019);
    for n in lengths(place) {
        let x64 = data(&mut rng, n);
        let x: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        let y: Vec<f32> = data(&mut rng, n).iter().map(|&v| v as f32).collect();
        let add32 = |a: f32, b: f32| a + b;
        let add64 = |a: f64, b: f64| a + b;
        let want32 = oracle(&x, add32).unwrap_or(-0.0);
        let want64 = oracle(&x64, add64).unwrap_or(-0.0);
        let prods: Vec<f32> = x.iter().zip(&y).map(|(a, b)| a * b).collect();
        let want_dot = oracle(&prods, add32).unwrap_or(-0.0);
        let squares: Vec<f32> = x.iter().map(|v| v * v).collect();
        let want_sq = oracle(&squares, add32).unwrap_or(-0.0);
        let want_start = oracle_init(&x64, 0.25, add64);
        if n >= 100 {
            let left: f32 = x.iter().fold(-0.0, |a, b| a + b);
            assert_ne!(
                left.to_bits(),
                want32.to_bits(),
                "n = {n}: the order is visible"
            );
        }
        on(place, &|| {
            let what = format!(
                "{place:?}, n = {n}, {} threads",
                rayon::current_num_threads()
            );
            assert_eq!(sum32(&x).to_bits(), want32.to_bits(), "sum f32: {what}");
            assert_eq!(sum64(&x64).to_bits(), want64.to_bits(), "sum f64: {what}");
            assert_eq!(dot(&x, &y).to_bits(), want_dot.to_bits(), "dot: {what}");
            assert_eq!(
                with_start(&x64).to_bits(),
                want_start.to_bits(),
                "init: {what}"
            );
            let (s, q) = two(&x);
            assert_eq!(
                (s.to_bits(), q.to_bits()),
                (want32.to_bits(), want_sq.to_bits()),
                "two: {what}"
            );
        });
    }
}

fn rows(place: Place) {
    let mut rng = Rng::new(0x5eed_0020);
    let lens: Vec<usize> = lengths(place)
        .into_iter()
        .filter(|&n| n < 100_000)
        .collect();
    let values: Vec<Vec<f32>> = lens
        .iter()
        .map(|&n| data(&mut rng, n).iter().map(|&v| v as f32).collect())
        .collect();
    let nested = Nested::from_rows(values.iter().cloned());
    let want: Vec<u32> = values
        .iter()
        .map(|r| oracle(r, |a: f32, b| a + b).unwrap_or(-0.0).to_bits())
        .collect();
    let want_pos: Vec<u32> = values
        .iter()
        .map(|r| {
            let kept: Vec<f32> = r.iter().copied().filter(|&v| v > 0.0).collect();
            bits_or_zero(oracle(&kept, |a: f32, b| a + b).unwrap_or(0.0))
        })
        .collect();
    let want_start: Vec<u32> = values
        .iter()
        .map(|r| oracle_init(r, 0.5, |a: f32, b| a + b).to_bits())
        .collect();
    // Many short rows and a few long ones in one matrix, each major order.
    let (r, c) = (300, 2100);
    let m = data(&mut rng, r * c);
    let row_major = Matrix::row_major(r, c, m.clone()).unwrap();
    let col_major = row_major.to_col_major_copy();
    let want_m: Vec<u64> = m
        .chunks(c)
        .map(|row| oracle(row, |a: f64, b| a + b).unwrap().to_bits())
        .collect();
    on(place, &|| {
        let what = format!("{place:?}, {} threads", rayon::current_num_threads());
        let schedules: [(&str, RowSums); 5] = [
            ("auto", row_sums),
            ("thread", row_sums_thread),
            ("warp", row_sums_warp),
            ("block", row_sums_block),
            ("block of 96", row_sums_block96),
        ];
        for (schedule, f) in schedules {
            let got: Vec<u32> = f(&nested).iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want, "Nested rows, {schedule}: {what}");
        }
        // An empty row's sum is a zero whose sign the special-value tests check.
        let got: Vec<u32> = row_positive_sums(&nested)
            .iter()
            .map(|&v| bits_or_zero(v))
            .collect();
        assert_eq!(got, want_pos, "Nested rows, positives: {what}");
        let got: Vec<u32> = row_sums_block1024(&nested)
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(
            got, want_start,
            "Nested rows from 0.5, block of 1024: {what}"
        );
        for mat in [&row_major, &col_major] {
            let got: Vec<u64> = matrix_row_sums(mat).iter().map(|v| v.to_bits()).collect();
            assert_eq!(got, want_m, "Matrix rows ({:?}): {what}", mat.strides());
        }
    });
}

/// The test data of [`rows`] in column-major order.
trait ColMajor {
    fn to_col_major_copy(&self) -> Self;
}

impl ColMajor for Matrix<f64> {
    fn to_col_major_copy(&self) -> Self {
        let (r, c) = self.shape();
        let mut data = vec![0.0; r * c];
        for i in 0..r {
            for j in 0..c {
                data[j * r + i] = *self.get(i, j).unwrap();
            }
        }
        Matrix::col_major(r, c, data).unwrap()
    }
}

/// The bits of each value.
fn bits32(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The bits of each value.
fn bits64(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Flat and per-row float scans against the oracle of the scan order.
fn scans(place: Place) {
    let mut rng = Rng::new(0x5eed_0021);
    let mut lens = lengths(place);
    lens.extend([0, 64, 65, 2048 * 33 + 1]);
    let add32 = |a: f32, b: f32| a + b;
    let add64 = |a: f64, b: f64| a + b;
    for n in lens {
        let x64 = data(&mut rng, n);
        let x: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
        let want = bits32(&scanned(&x, None, add32));
        let want_from = bits64(&scanned_exclusive(&x64, 0.25, add64));
        let squares: Vec<f32> = x.iter().map(|v| v * v).collect();
        let want_sq = bits32(&scanned(&squares, None, add32));
        if n >= 100 {
            let left: Vec<f32> = x
                .iter()
                .scan(0.0, |acc, v| {
                    *acc += v;
                    Some(*acc)
                })
                .collect();
            assert_ne!(bits32(&left), want, "n = {n}: the order is visible");
        }
        on(place, &|| {
            let what = format!(
                "{place:?}, n = {n}, {} threads",
                rayon::current_num_threads()
            );
            assert!(bits32(&prefix32(&x)) == want, "scan f32: {what}");
            assert!(
                bits64(&prefix64_from(&x64)) == want_from,
                "exclusive f64: {what}"
            );
            assert!(
                bits32(&prefix_of_squares(&x)) == want_sq,
                "scan of map: {what}"
            );
        });
    }
    let lens = [0, 1, 63, 64, 65, 2047, 2048, 2049, 5000, 70_001];
    let values: Vec<Vec<f32>> = lens
        .iter()
        .map(|&n| data(&mut rng, n).iter().map(|&v| v as f32).collect())
        .collect();
    let nested = Nested::from_rows(values.iter().cloned());
    let want: Vec<Vec<u32>> = values
        .iter()
        .map(|r| bits32(&scanned(r, None, add32)))
        .collect();
    let want_from: Vec<Vec<u32>> = values
        .iter()
        .map(|r| bits32(&scanned_exclusive(r, 0.5, add32)))
        .collect();
    let want_doubled: Vec<Vec<u32>> = values
        .iter()
        .map(|r| {
            let doubled: Vec<f32> = scanned(r, None, add32).iter().map(|v| v * 2.0).collect();
            bits32(&doubled)
        })
        .collect();
    let want_sums: Vec<u32> = values
        .iter()
        .map(|r| bits_or_zero(oracle(&scanned(r, None, add32), add32).unwrap_or(0.0)))
        .collect();
    on(place, &|| {
        let what = format!("{place:?}, {} threads", rayon::current_num_threads());
        let rows = |m: Nested<f32>| -> Vec<Vec<u32>> { m.rows().map(bits32).collect() };
        let inclusive: [(&str, RowScans); 4] = [
            ("auto", row_prefixes),
            ("thread", row_prefixes_thread),
            ("warp", row_prefixes_warp),
            ("block", row_prefixes_block),
        ];
        for (schedule, f) in inclusive {
            assert!(rows(f(&nested)) == want, "row scans, {schedule}: {what}");
        }
        let exclusive: [(&str, RowScans); 4] = [
            ("auto", row_prefixes_from),
            ("thread", row_prefixes_from_thread),
            ("warp", row_prefixes_from_warp),
            ("block", row_prefixes_from_block),
        ];
        for (schedule, f) in exclusive {
            assert!(
                rows(f(&nested)) == want_from,
                "row exclusive scans, {schedule}: {what}"
            );
        }
        for (schedule, f) in [
            ("auto", row_prefixes_doubled as RowScans),
            ("warp", row_prefixes_doubled_warp),
        ] {
            assert!(
                rows(f(&nested)) == want_doubled,
                "a map over row scans, {schedule}: {what}"
            );
        }
        // An empty row's sum is a zero whose sign the special-value tests check.
        for (schedule, f) in [
            ("auto", row_prefix_sums as RowSums),
            ("thread", row_prefix_sums_thread),
        ] {
            let got: Vec<u32> = f(&nested).into_iter().map(bits_or_zero).collect();
            assert_eq!(got, want_sums, "sums of row scans, {schedule}: {what}");
        }
    });
}

#[test]
fn scans_have_one_order() {
    for place in available_places() {
        scans(place);
    }
}

#[test]
fn reductions_have_one_order() {
    for place in available_places() {
        flat(place);
        rows(place);
    }
}
