//! Benchmark of the `iterative` example (`examples/iterative.rs`): loops inside element
//! functions and at the top level of a `#[parallel]` body, dpl (`Place::Cpu`) against the
//! same algorithms hand-written with rayon and sequentially (`examples/iterative/baselines.rs`).
//!
//! Groups (naming scheme of `xtask/src/bench.rs`; the size is the number of elements the
//! parallel steps run over):
//!
//! * `iter_binomial_f64/4096` — 4096 European calls on 1000-step binomial trees, a loop
//!   over the terminal nodes per option.
//! * `iter_newton_f64/2^20` — Lambert's W by Newton's method, a `while` loop per element.
//! * `iter_power_f64/1024` — 20 steps of power iteration on a dense 1024 x 1024 matrix
//!   (a top-level `for` loop carrying the vector).
//! * `iter_jacobi_f64/2^16` — 50 Jacobi sweeps on a 256 x 256 Poisson grid (a top-level
//!   `while` whose condition reads a `max` reduction; a zero tolerance, so every sweep
//!   runs).
//!
//! Throughput: the bytes of the inputs read once and of the outputs written once per call.
//! `DPL_BENCH_QUICK=1` shortens the run.
#![allow(missing_docs)] // criterion_group! generates undocumented items.

#[path = "../examples/iterative/baselines.rs"]
mod baselines;
#[path = "../examples/iterative/programs.rs"]
mod programs;
#[path = "shared/mod.rs"]
mod shared;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpl::prelude::*;
use dpl_testkit::SplitMix64;
use shared::configure;

/// Benchmarks `dpl` (on `Place::Cpu`), `rayon` and `seq` in the group `name`.
fn three_ways<T>(
    c: &mut Criterion,
    name: &str,
    bytes: usize,
    dpl: impl Fn() -> T,
    rayon: impl Fn() -> T,
    seq: impl Fn() -> T,
) {
    let mut g = c.benchmark_group(name);
    configure(&mut g, bytes as u64);
    g.bench_function("dpl", |b| {
        with_place(Place::Cpu, || b.iter(|| black_box(dpl())))
    });
    g.bench_function("rayon", |b| b.iter(|| black_box(rayon())));
    g.bench_function("seq", |b| b.iter(|| black_box(seq())));
    g.finish();
}

fn binomial(c: &mut Criterion) {
    let (n, steps, rate) = (4096, 1000, 0.03);
    let mut rng = SplitMix64::new(7);
    let s = rng.f64s(n, 50.0, 150.0);
    let k = rng.f64s(n, 60.0, 140.0);
    let v = rng.f64s(n, 0.1, 0.5);
    let t = rng.f64s(n, 0.1, 2.0);
    three_ways(
        c,
        "iter_binomial_f64/4096",
        5 * n * 8,
        || programs::binomial_calls(&s, &k, &v, &t, rate, steps),
        || baselines::binomial_rayon(&s, &k, &v, &t, rate, steps),
        || baselines::binomial_seq(&s, &k, &v, &t, rate, steps),
    );
}

fn newton(c: &mut Criterion) {
    let n = 1 << 20;
    let mut rng = SplitMix64::new(11);
    let y: Vec<f64> = (0..n).map(|_| 10f64.powf(rng.f64_in(-3.0, 9.0))).collect();
    three_ways(
        c,
        "iter_newton_f64/2^20",
        n * (8 + 8 + 4),
        || programs::lambert_w(&y, 1e-14, 60),
        || baselines::lambert_rayon(&y, 1e-14, 60),
        || baselines::lambert_seq(&y, 1e-14, 60),
    );
}

fn power(c: &mut Criterion) {
    let (n, iters) = (1024, 20);
    let mut rng = SplitMix64::new(3);
    let a = rng.f64s(n * n, -1.0, 1.0);
    let m = Matrix::row_major(n, n, a.clone()).expect("an n x n matrix");
    let v0 = vec![1.0; n];
    three_ways(
        c,
        "iter_power_f64/1024",
        iters * (n * n + 2 * n) * 8,
        || programs::power_iteration(&m, &v0, iters),
        || baselines::power_rayon(&a, &v0, iters),
        || baselines::power_seq(&a, &v0, iters),
    );
}

fn jacobi(c: &mut Criterion) {
    let (width, height, sweeps) = (256, 256, 50);
    let f = SplitMix64::new(17).f64s(width * height, -1.0, 1.0);
    three_ways(
        c,
        "iter_jacobi_f64/2^16",
        sweeps as usize * 3 * width * height * 8,
        || programs::jacobi_poisson(&f, width, 0.0, sweeps),
        || baselines::jacobi_rayon(&f, width, 0.0, sweeps),
        || baselines::jacobi_seq(&f, width, 0.0, sweeps),
    );
}

fn benches(c: &mut Criterion) {
    binomial(c);
    newton(c);
    power(c);
    jacobi(c);
}

criterion_group!(iterative_benches, benches);
criterion_main!(iterative_benches);
