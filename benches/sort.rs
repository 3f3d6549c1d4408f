//! Benchmarks of `sort` and `sort_by_key` on `Place::Cpu` against hand-written rayon and
//! sequential Rust, in the same criterion run.
//!
//! Groups follow the naming scheme of `cargo xtask bench-report` (see `xtask/src/bench.rs`):
//!
//! * `sort_u32/<n>` — `dpl`: `#[parallel] fn sort_u32(x: &[u32]) -> Vec<u32> { sort(x) }`;
//!   `rayon`: `par_sort_unstable` of a copy (the parallel sort rayon users reach for
//!   first when equal elements are indistinguishable); `seq`: `sort_unstable` of a copy.
//! * `sort_f32/<n>` — the same for `f32` in `total_cmp` order (`par_sort_unstable_by`).
//! * `sort_by_key_u32/<n>` — `dpl`: `sort_by_key(keys, vals)` with `u32` keys (many
//!   duplicates) and `f32` values; `rayon`: zip into pairs, stable `par_sort_by_key`, copy
//!   the values out in parallel; `seq`: the same with `sort_by_key` and a sequential copy.
//!
//! Every function starts from the borrowed input and returns a fresh `Vec`, as the dpl
//! call does (the copy is part of the work). Throughput is the algorithm's bytes: input read
//! once, output written once. Measurement is short (10 flat samples, ~1 s per function):
//! the machine is shared. `DPL_BENCH_QUICK=1` shortens it further.

#![allow(missing_docs)] // criterion_group! generates undocumented items.

mod shared;

use shared::{configure, quick};

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpl::Place;
use dpl_testkit::SplitMix64;
use rayon::prelude::*;

mod kernels {
    use dpl::prelude::*;

    #[parallel]
    pub fn sort_u32(x: &[u32]) -> Vec<u32> {
        sort(x)
    }

    #[parallel]
    pub fn sort_f32(x: &[f32]) -> Vec<f32> {
        sort(x)
    }

    #[parallel]
    pub fn sort_by_key_u32(k: &[u32], v: &[f32]) -> Vec<f32> {
        sort_by_key(k, v)
    }
}

/// `n` pseudo-random 32-bit values.
fn random_u32(n: usize, seed: u64) -> Vec<u32> {
    SplitMix64::new(seed).vec(n, SplitMix64::u32)
}

fn sizes() -> Vec<usize> {
    if quick() {
        vec![1 << 16, 1 << 20]
    } else {
        vec![1 << 12, 1 << 16, 1 << 20, 1 << 23]
    }
}

fn rayon_sort_by_key(k: &[u32], v: &[f32]) -> Vec<f32> {
    let mut pairs: Vec<(u32, f32)> = k.par_iter().copied().zip(v.par_iter().copied()).collect();
    pairs.par_sort_by_key(|p| p.0);
    pairs.par_iter().map(|p| p.1).collect()
}

fn seq_sort_by_key(k: &[u32], v: &[f32]) -> Vec<f32> {
    let mut pairs: Vec<(u32, f32)> = k.iter().copied().zip(v.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    pairs.iter().map(|p| p.1).collect()
}

fn sorts(c: &mut Criterion) {
    dpl::with_place(Place::Cpu, || {
        for n in sizes() {
            let x = random_u32(n, n as u64);
            let f: Vec<f32> = x.iter().map(|&v| v as f32 / 7.0 - 1e8).collect();
            // Keys with many duplicates (n / 16 distinct values): stability matters.
            let k: Vec<u32> = x.iter().map(|&v| v % (n as u32 / 16).max(1)).collect();

            // Never time a wrong kernel.
            let mut want = x.clone();
            want.sort_unstable();
            assert_eq!(kernels::sort_u32(&x), want);
            let mut want = f.clone();
            want.sort_by(f32::total_cmp);
            assert_eq!(kernels::sort_f32(&f), want);
            assert_eq!(kernels::sort_by_key_u32(&k, &f), seq_sort_by_key(&k, &f));
            assert_eq!(rayon_sort_by_key(&k, &f), seq_sort_by_key(&k, &f));

            let mut g = c.benchmark_group(format!("sort_u32/{n}"));
            configure(&mut g, 8 * n as u64);
            g.bench_function("dpl", |b| b.iter(|| black_box(kernels::sort_u32(&x))));
            g.bench_function("rayon", |b| {
                b.iter(|| {
                    let mut y = x.clone();
                    y.par_sort_unstable();
                    black_box(y)
                })
            });
            g.bench_function("seq", |b| {
                b.iter(|| {
                    let mut y = x.clone();
                    y.sort_unstable();
                    black_box(y)
                })
            });
            g.finish();

            let mut g = c.benchmark_group(format!("sort_f32/{n}"));
            configure(&mut g, 8 * n as u64);
            g.bench_function("dpl", |b| b.iter(|| black_box(kernels::sort_f32(&f))));
            g.bench_function("rayon", |b| {
                b.iter(|| {
                    let mut y = f.clone();
                    y.par_sort_unstable_by(f32::total_cmp);
                    black_box(y)
                })
            });
            g.bench_function("seq", |b| {
                b.iter(|| {
                    let mut y = f.clone();
                    y.sort_unstable_by(f32::total_cmp);
                    black_box(y)
                })
            });
            g.finish();

            let mut g = c.benchmark_group(format!("sort_by_key_u32/{n}"));
            configure(&mut g, 12 * n as u64);
            g.bench_function("dpl", |b| {
                b.iter(|| black_box(kernels::sort_by_key_u32(&k, &f)))
            });
            g.bench_function("rayon", |b| b.iter(|| black_box(rayon_sort_by_key(&k, &f))));
            g.bench_function("seq", |b| b.iter(|| black_box(seq_sort_by_key(&k, &f))));
            g.finish();
        }
    });
}

criterion_group!(benches, sorts);
criterion_main!(benches);
