//! Generic `#[parallel]` functions against the same functions written for one type, and
//! against hand-written rayon, on `Place::Cpu`, in the same criterion run.
//!
//! Groups follow the naming scheme of `cargo xtask bench-report` (`xtask/src/bench.rs`):
//!
//! * `generic_dot_f32/<n>` — `dpl`: `fn dot<T: Float>(x: &[T], y: &[T]) -> T { sum(map(|a,
//!   b| a * b, x, y)) }` called at `f32`; `written`: the same body written for `f32`;
//!   `rayon`: `par_iter().zip().map().sum()`.
//! * `generic_clamp_u8/<n>` — `dpl`: `fn clamp_all<T: Num>(x: &[T], lo: T, hi: T) ->
//!   Vec<T>` at `u8` (a quarter of the bytes of `u32`); `written`: the same for `u8`;
//!   `rayon`: `par_iter().map(clamp).collect()`.
//! * `generic_saxpy_f16/<n>` — `dpl`: `fn saxpy<T: Float>(a: T, x: &[T], y: &[T]) -> Vec<T>`
//!   at `f16` (each operation computed in `f32` and rounded once, as the `half` crate's
//!   operators do); `rayon`: `par_iter().zip().map(|(x, y)| a * x + y).collect()` with the
//!   `half` crate's operators; `f32`: the same function at `f32` (twice the bytes).
//!
//! The instantiation compiles to the same code as the written function
//! (`tests/conformance/generics.rs` compares them), so `written / dpl` should be 1 within
//! the noise. Throughput is the bytes read and written once. `DPL_BENCH_QUICK=1` shortens
//! the runs.

#![allow(missing_docs)] // criterion_group! generates undocumented items.

mod shared;
#[path = "../examples/shared/timing.rs"]
mod timing;

use shared::{group, quick};

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpl::Place;
use dpl_testkit::SplitMix64;
use rayon::prelude::*;

mod kernels {
    use dpl::prelude::*;

    #[parallel]
    pub fn dot<T: Float>(x: &[T], y: &[T]) -> T {
        sum(map(|a, b| a * b, x, y))
    }

    #[parallel]
    pub fn dot_f32(x: &[f32], y: &[f32]) -> f32 {
        sum(map(|a, b| a * b, x, y))
    }

    #[parallel]
    pub fn clamp_all<T: Num>(x: &[T], lo: T, hi: T) -> Vec<T> {
        map(|v| v.max(lo).min(hi), x)
    }

    #[parallel]
    pub fn clamp_u8(x: &[u8], lo: u8, hi: u8) -> Vec<u8> {
        map(|v| v.max(lo).min(hi), x)
    }

    #[parallel]
    pub fn saxpy<T: Float>(a: T, x: &[T], y: &[T]) -> Vec<T> {
        map(|xi, yi| a * xi + yi, x, y)
    }
}

fn sizes() -> Vec<usize> {
    if quick() {
        vec![1 << 16, 1 << 22]
    } else {
        vec![1 << 12, 1 << 16, 1 << 20, 1 << 24]
    }
}

/// `v` rounded to `f16`.
fn halves(v: &[f32]) -> Vec<dpl::f16> {
    v.iter().map(|&v| dpl::f16::from_f32(v)).collect()
}

/// The f16 saxpy a rayon user writes, with the `half` crate's operators.
fn saxpy_f16_rayon(a: dpl::f16, x: &[dpl::f16], y: &[dpl::f16]) -> Vec<dpl::f16> {
    x.par_iter().zip(y).map(|(&xi, &yi)| a * xi + yi).collect()
}

/// The generic and the written function in interleaved rounds (load on the shared machine
/// hits both alike): `written / generic` of the least disturbed calls, printed.
fn interleaved_ratios() {
    dpl::with_place(Place::Cpu, || {
        for n in sizes() {
            let mut rng = SplitMix64::new(n as u64 + 1);
            let (x, y) = (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0));
            let p: Vec<u8> = rng.vec(n, |r| r.u64() as u8);
            let (xh, yh) = (halves(&x), halves(&y));
            let a = dpl::f16::from_f32(1.5);
            let rounds = if quick() { 20 } else { 100 };
            let t = timing::interleaved(
                &[
                    &|| {
                        black_box(kernels::dot(black_box(&x), black_box(&y)));
                    },
                    &|| {
                        black_box(kernels::dot_f32(black_box(&x), black_box(&y)));
                    },
                    &|| drop(black_box(kernels::clamp_all(black_box(&p), 20u8, 200))),
                    &|| drop(black_box(kernels::clamp_u8(black_box(&p), 20, 200))),
                ],
                rounds,
            );
            // The f16 pair in rounds of its own: its long calls and large allocations in
            // the same rounds disturbed the others (written / generic fell to 0.3-0.6 at
            // 2^20 with the same code on both sides).
            let h = timing::interleaved(
                &[
                    &|| drop(black_box(kernels::saxpy(a, black_box(&xh), black_box(&yh)))),
                    &|| {
                        drop(black_box(saxpy_f16_rayon(
                            a,
                            black_box(&xh),
                            black_box(&yh),
                        )))
                    },
                ],
                rounds,
            );
            let ratio = |w: usize, g: usize| t[w].0.as_secs_f64() / t[g].0.as_secs_f64();
            eprintln!(
                "interleaved, n = 2^{}: written / generic = {:.3} (dot f32), {:.3} (clamp u8); \
                 rayon / dpl = {:.3} (saxpy f16)",
                n.trailing_zeros(),
                ratio(1, 0),
                ratio(3, 2),
                h[1].0.as_secs_f64() / h[0].0.as_secs_f64()
            );
        }
    });
}

fn generics(c: &mut Criterion) {
    interleaved_ratios();
    dpl::with_place(Place::Cpu, || {
        for n in sizes() {
            let mut rng = SplitMix64::new(n as u64);
            let x = rng.f32s(n, -1.0, 1.0);
            let y = rng.f32s(n, -1.0, 1.0);
            let mut g = group(
                c,
                format!("generic_dot_f32/2^{}", n.trailing_zeros()),
                8 * n,
            );
            g.bench_function("dpl", |b| {
                b.iter(|| kernels::dot(black_box(&x), black_box(&y)))
            });
            g.bench_function("written", |b| {
                b.iter(|| kernels::dot_f32(black_box(&x), black_box(&y)))
            });
            g.bench_function("rayon", |b| {
                b.iter(|| {
                    black_box(&x)
                        .par_iter()
                        .zip(black_box(&y))
                        .map(|(a, b)| a * b)
                        .sum::<f32>()
                })
            });
            g.finish();

            let (xh, yh) = (halves(&x), halves(&y));
            let a = dpl::f16::from_f32(1.5);
            let mut g = group(
                c,
                format!("generic_saxpy_f16/2^{}", n.trailing_zeros()),
                6 * n,
            );
            g.bench_function("dpl", |b| {
                b.iter(|| kernels::saxpy(a, black_box(&xh), black_box(&yh)))
            });
            g.bench_function("rayon", |b| {
                b.iter(|| saxpy_f16_rayon(a, black_box(&xh), black_box(&yh)))
            });
            g.bench_function("f32", |b| {
                b.iter(|| kernels::saxpy(1.5f32, black_box(&x), black_box(&y)))
            });
            g.finish();

            let p: Vec<u8> = rng.vec(n, |r| r.u64() as u8);
            let mut g = group(
                c,
                format!("generic_clamp_u8/2^{}", n.trailing_zeros()),
                2 * n,
            );
            g.bench_function("dpl", |b| {
                b.iter(|| kernels::clamp_all(black_box(&p), 20u8, 200))
            });
            g.bench_function("written", |b| {
                b.iter(|| kernels::clamp_u8(black_box(&p), 20, 200))
            });
            g.bench_function("rayon", |b| {
                b.iter(|| {
                    black_box(&p)
                        .par_iter()
                        .map(|v| (*v).clamp(20, 200))
                        .collect::<Vec<u8>>()
                })
            });
            g.finish();
        }
    });
}

criterion_group!(benches, generics);
criterion_main!(benches);
