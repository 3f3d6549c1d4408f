//! Benchmarks of the `svm` and `ragged` examples: dpl (`Place::Cpu`) against the same
//! algorithm hand-written with rayon and written sequentially.
//!
//! Groups (naming scheme of `xtask/src/bench.rs`):
//!
//! * `svm_kernel_row_d32_f32/10000` — one RBF kernel row (Copperhead's Figure 9 inside a
//!   `map` over the 10,000 points of 32 features, a row-major `Matrix<f32>`). The extra id
//!   `dpl_nested` is the same `#[parallel]` body over the points as a `Nested<f32>` (rows
//!   are slices instead of strided views): listed, not compared.
//! * `svm_smo_100it_f32/10000` — SMO training for exactly [`SMO_ITERATIONS`] steps (tolerance
//!   0, so it never stops early): per step two kernel rows, the update of `f` and the
//!   working-set selection, with the host loop in plain Rust.
//! * `ragged_prefix_sum_i64/2^20`, `ragged_filter_i64/2^20`, `ragged_sum_max_i64/2^20`,
//!   `ragged_balances_i64/2^20`, `ragged_account_summary_i64/2^20` — the per-row operations
//!   of the ragged example on a skewed transaction log of 2^20 transactions of 50,000 users
//!   (rows of very different lengths, some empty).
//!
//! Throughput: bytes read once plus bytes written once. `DPL_BENCH_QUICK=1` shortens the run.
#![allow(missing_docs)] // criterion_group! generates undocumented items.

mod shared;

use shared::group;

// Both examples include `examples/shared/timing.rs` as their own module.
#[path = "../examples/ragged.rs"]
#[allow(dead_code, clippy::duplicate_mod)]
mod ragged;
#[path = "../examples/svm.rs"]
#[allow(dead_code, clippy::duplicate_mod)]
mod svm;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpl::prelude::*;
use svm::{Dpl, Engine, Params, Rayon, Sequential};

/// Points of the SVM cases.
const POINTS: usize = 10_000;
/// Features per point.
const FEATURES: usize = 32;
/// Steps of the training case.
const SMO_ITERATIONS: usize = 100;
/// Transactions of the ragged cases (the size label says `2^20`).
const TX: usize = 1 << 20;
/// Users (rows) of the ragged cases.
const USERS: usize = 50_000;

#[parallel]
fn kernel_row_nested(ngamma: f32, points: &Nested<f32>, x: &[f32]) -> Vec<f32> {
    fn rbf(ngamma: f32, a: &[f32], b: &[f32]) -> f32 {
        (ngamma * sum(map(|ai, bi| (ai - bi) * (ai - bi), a, b))).exp()
    }
    map(|xi| rbf(ngamma, xi, x), points)
}

fn svm_cases(c: &mut Criterion) {
    let (points, y) = svm::blobs(POINTS, FEATURES, 2.5, 1);
    let nested = points.to_nested();
    let p = svm::default_params(FEATURES);
    let x = points.row_slice(POINTS / 3).expect("row-major").to_vec();
    // dpl adds each row in its one order on every place (bit-identical between places);
    // the plain loop adds left to right, so the two agree to rounding.
    let plain = Sequential.kernel_row(p.ngamma, &points, &x);
    let dpl_row = with_place(Place::Cpu, || svm::kernel_row(p.ngamma, &points, &x));
    assert_eq!(
        dpl_row,
        with_place(Place::Seq, || svm::kernel_row(p.ngamma, &points, &x))
    );
    assert_eq!(
        with_place(Place::Cpu, || kernel_row_nested(p.ngamma, &nested, &x)),
        dpl_row
    );
    for (d, s) in dpl_row.iter().zip(&plain) {
        assert!((d - s).abs() <= 1e-5 * s.abs().max(1e-30), "{d} vs {s}");
    }

    let mut g = group(
        c,
        format!("svm_kernel_row_d{FEATURES}_f32/{POINTS}"),
        (POINTS * FEATURES + POINTS) * 4,
    );
    g.bench_function("dpl", |b| {
        b.iter(|| {
            with_place(Place::Cpu, || {
                svm::kernel_row(p.ngamma, black_box(&points), &x)
            })
        })
    });
    g.bench_function("dpl_nested", |b| {
        b.iter(|| {
            with_place(Place::Cpu, || {
                kernel_row_nested(p.ngamma, black_box(&nested), &x)
            })
        })
    });
    g.bench_function("rayon", |b| {
        b.iter(|| Rayon.kernel_row(p.ngamma, black_box(&points), &x))
    });
    g.bench_function("seq", |b| {
        b.iter(|| Sequential.kernel_row(p.ngamma, black_box(&points), &x))
    });
    g.finish();

    let fixed = Params {
        tol: 0.0,
        max_iter: SMO_ITERATIONS,
        ..p
    };
    let want = svm::train(&Sequential, &points, &y, fixed);
    assert_eq!(
        want.iterations, SMO_ITERATIONS,
        "the case must not converge early"
    );
    // The same steps, each kernel row added in dpl's order: identical on every place.
    let trained = with_place(Place::Cpu, || svm::train(&Dpl, &points, &y, fixed));
    assert_eq!(trained.iterations, want.iterations);
    assert_eq!(
        with_place(Place::Seq, || svm::train(&Dpl, &points, &y, fixed)),
        trained
    );
    // Per step: two kernel rows (the matrix, twice) and f, alpha, y read, f written.
    let step_bytes = 2 * (POINTS * FEATURES + POINTS) * 4 + 4 * POINTS * 4;
    let mut g = group(
        c,
        format!("svm_smo_{SMO_ITERATIONS}it_f32/{POINTS}"),
        SMO_ITERATIONS * step_bytes,
    );
    g.sample_size(10);
    g.bench_function("dpl", |b| {
        b.iter(|| {
            with_place(Place::Cpu, || {
                svm::train(&Dpl, black_box(&points), &y, fixed)
            })
        })
    });
    g.bench_function("rayon", |b| {
        b.iter(|| svm::train(&Rayon, black_box(&points), &y, fixed))
    });
    g.bench_function("seq", |b| {
        b.iter(|| svm::train(&Sequential, black_box(&points), &y, fixed))
    });
    g.finish();
}

/// One ragged case: checks dpl and rayon against the sequential version, then times all
/// three.
fn ragged_case<T: PartialEq + std::fmt::Debug>(
    c: &mut Criterion,
    case: &str,
    bytes: usize,
    dpl_fn: impl Fn() -> T,
    rayon_fn: impl Fn() -> T,
    seq_fn: impl Fn() -> T,
) {
    let want = seq_fn();
    assert!(
        with_place(Place::Cpu, &dpl_fn) == want,
        "{case}: dpl disagrees with plain Rust"
    );
    assert!(
        rayon_fn() == want,
        "{case}: rayon disagrees with plain Rust"
    );
    let mut g = group(c, format!("{case}/2^20"), bytes);
    g.bench_function("dpl", |b| b.iter(|| with_place(Place::Cpu, &dpl_fn)));
    g.bench_function("rayon", |b| b.iter(&rayon_fn));
    g.bench_function("seq", |b| b.iter(&seq_fn));
    g.finish();
}

fn ragged_cases(c: &mut Criterion) {
    use ragged::{hand, plain};
    let log = ragged::transaction_log(TX, USERS, 7);
    let amounts = ragged::group_by_user(&log, USERS);
    let opening = ragged::opening_balances(USERS, 8);
    let a = &amounts;
    let o = &opening[..];
    // Values and offsets in, the same shape out.
    let same_shape = 2 * (TX * 8 + (USERS + 1) * 8);
    let per_row = TX * 8 + (USERS + 1) * 8 + USERS * 16;
    ragged_case(
        c,
        "ragged_prefix_sum_i64",
        same_shape,
        || ragged::row_prefix_sums(a),
        || hand::prefix_sums(a),
        || plain::prefix_sums(a),
    );
    let kept = plain::positives(a).total_len();
    ragged_case(
        c,
        "ragged_filter_i64",
        TX * 8 + (USERS + 1) * 8 + kept * 8 + (USERS + 1) * 8,
        || ragged::row_positives(a),
        || hand::filter(a, |v| v > 0),
        || plain::positives(a),
    );
    ragged_case(
        c,
        "ragged_sum_max_i64",
        per_row,
        || ragged::row_sums_and_maxima(a),
        || hand::sums_and_maxima(a),
        || plain::sums_and_maxima(a),
    );
    ragged_case(
        c,
        "ragged_balances_i64",
        same_shape + USERS * 8,
        || ragged::running_balances(a, o),
        || hand::running_balances(a, o),
        || plain::running_balances(a, o),
    );
    ragged_case(
        c,
        "ragged_account_summary_i64",
        per_row + USERS * 16,
        || ragged::account_summary(a, o),
        || hand::account_summary(a, o),
        || plain::account_summary(a, o),
    );
}

criterion_group!(benches, svm_cases, ragged_cases);
criterion_main!(benches);
