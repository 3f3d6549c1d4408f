//! Benchmarks of `stencil`: dpl (`Place::Cpu`) against the same computation hand-written
//! with rayon and written sequentially, in one criterion run.
//!
//! Groups (naming scheme of `xtask/src/bench.rs`):
//!
//! * `stencil_blur3_f32/2^22` — the 3-point average `(x[i-1] + x[i] + x[i+1]) / 3` over a
//!   flat `[f32]`, zero outside.
//! * `stencil_laplacian_f64/1024x1024` — the 5-point Laplacian over a row-major
//!   `Matrix<f64>`, zero outside; the result is rows (a `Nested<f64>` for dpl, one `Vec`
//!   for the hand-written versions, which is what a user would write).
//!
//! Throughput: bytes read once plus bytes written once. `DPL_BENCH_QUICK=1` shortens the run.
#![allow(missing_docs)] // criterion_group! generates undocumented items.

mod shared;

use shared::group;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dpl::prelude::*;
use rayon::prelude::*;

/// Elements of the 1-D case (the size label says `2^22`).
const N: usize = 1 << 22;
/// Side of the 2-D case.
const SIDE: usize = 1024;

#[parallel]
fn blur3(x: &[f32]) -> Vec<f32> {
    stencil(|w| (w[0] + w[1] + w[2]) / 3.0, x, [-1, 0, 1], 0.0)
}

#[parallel]
fn laplacian(u: &Matrix<f64>) -> Nested<f64> {
    stencil(
        |w| 4.0 * w[2] - w[0] - w[1] - w[3] - w[4],
        u,
        [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
        0.0,
    )
}

/// `x[i]`, zero outside.
fn at(x: &[f32], i: isize) -> f32 {
    if i >= 0 && (i as usize) < x.len() {
        x[i as usize]
    } else {
        0.0
    }
}

fn blur3_at(x: &[f32], i: usize) -> f32 {
    let i = i as isize;
    (at(x, i - 1) + at(x, i) + at(x, i + 1)) / 3.0
}

fn blur3_seq(x: &[f32]) -> Vec<f32> {
    (0..x.len()).map(|i| blur3_at(x, i)).collect()
}

fn blur3_rayon(x: &[f32]) -> Vec<f32> {
    (0..x.len())
        .into_par_iter()
        .map(|i| blur3_at(x, i))
        .collect()
}

/// One row of the Laplacian of the `side x side` row-major grid `u`.
fn laplacian_row(u: &[f64], side: usize, r: usize, out: &mut [f64]) {
    let row = &u[r * side..(r + 1) * side];
    for (c, o) in out.iter_mut().enumerate() {
        let up = if r > 0 { u[(r - 1) * side + c] } else { 0.0 };
        let down = if r + 1 < side {
            u[(r + 1) * side + c]
        } else {
            0.0
        };
        let left = if c > 0 { row[c - 1] } else { 0.0 };
        let right = if c + 1 < side { row[c + 1] } else { 0.0 };
        *o = 4.0 * row[c] - up - left - right - down;
    }
}

fn laplacian_seq(u: &[f64], side: usize) -> Vec<f64> {
    let mut out = vec![0.0; side * side];
    for (r, o) in out.chunks_mut(side).enumerate() {
        laplacian_row(u, side, r, o);
    }
    out
}

fn laplacian_rayon(u: &[f64], side: usize) -> Vec<f64> {
    let mut out = vec![0.0; side * side];
    out.par_chunks_mut(side)
        .enumerate()
        .for_each(|(r, o)| laplacian_row(u, side, r, o));
    out
}

fn cases(c: &mut Criterion) {
    let x: Vec<f32> = (0..N).map(|i| ((i * 37) % 101) as f32 / 8.0).collect();
    assert_eq!(with_place(Place::Cpu, || blur3(&x)), blur3_seq(&x));
    assert_eq!(blur3_rayon(&x), blur3_seq(&x));
    let mut g = group(c, "stencil_blur3_f32/2^22".into(), 2 * N * 4);
    g.bench_function("dpl", |b| {
        b.iter(|| with_place(Place::Cpu, || blur3(black_box(&x))))
    });
    g.bench_function("rayon", |b| b.iter(|| blur3_rayon(black_box(&x))));
    g.bench_function("seq", |b| b.iter(|| blur3_seq(black_box(&x))));
    g.finish();

    let data: Vec<f64> = (0..SIDE * SIDE)
        .map(|k| ((k * 53) % 97) as f64 / 4.0)
        .collect();
    let u = Matrix::row_major(SIDE, SIDE, data.clone()).expect("a square grid");
    let want = laplacian_seq(&data, SIDE);
    let got = with_place(Place::Cpu, || laplacian(&u));
    assert_eq!(got.to_vecs().concat(), want);
    assert_eq!(laplacian_rayon(&data, SIDE), want);
    let mut g = group(
        c,
        format!("stencil_laplacian_f64/{SIDE}x{SIDE}"),
        2 * SIDE * SIDE * 8,
    );
    g.bench_function("dpl", |b| {
        b.iter(|| with_place(Place::Cpu, || laplacian(black_box(&u))))
    });
    g.bench_function("rayon", |b| {
        b.iter(|| laplacian_rayon(black_box(&data), SIDE))
    });
    g.bench_function("seq", |b| b.iter(|| laplacian_seq(black_box(&data), SIDE)));
    g.finish();
}

criterion_group!(benches, cases);
criterion_main!(benches);
