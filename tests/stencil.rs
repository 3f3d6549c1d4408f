//! `stencil(f, x, offsets, default)` on every place against plain Rust: one dimension
//! (symmetric, one-sided and wide windows, offsets longer than the input, a window of one,
//! tuples and integers as values), two dimensions over a `Matrix` (the 5-point Laplacian,
//! a 3x3 box with corners) and over a ragged `Nested` (rows shorter than their neighbours
//! read `default` past their end), and stencils inside larger bodies (reduced, fed from a
//! `map`, applied twice, over each row of a `Nested`). On the simulator each must run as PTX, not the CPU fallback.

mod common;

use common::*;
use dpl::{Matrix, Nested, Place};

#[path = "programs/stencil.rs"]
mod stencil;

mod prog {
    pub use super::stencil::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn ahead(x: &[u32]) -> Vec<u32> {
        stencil(|w| w[0], x, [1], u32::MAX)
    }

    #[parallel]
    pub fn local_max(x: &[f64]) -> Vec<bool> {
        stencil(
            |w| w[1] > w[0] && w[1] > w[2],
            x,
            [-1, 0, 1],
            f64::NEG_INFINITY,
        )
    }

    #[parallel]
    pub fn pairs(x: &[i32]) -> Vec<(i32, i32)> {
        stencil(
            |w| (w[0].0 + w[1].0, w[0].1 * w[1].1),
            map(|v| (v, v % 7), x),
            [0, 1],
            (0, 1),
        )
    }

    #[parallel]
    pub fn row_differences(rows: &Nested<i64>) -> Nested<i64> {
        map(|r| stencil(|w| w[1] - w[0], r, [-1, 0], r[0]), rows)
    }

    #[parallel]
    pub fn smoothed_energy(x: &[f64], a: f64) -> f64 {
        let s = stencil(
            |w| a * w[0] + (1.0 - 2.0 * a) * w[1] + a * w[2],
            x,
            [-1, 0, 1],
            0.0,
        );
        let t = stencil(|w| w[1] - w[0], s, [-1, 0], 0.0);
        sum(map(|v| v * v, t))
    }
}

const SIZES: [usize; 7] = [0, 1, 2, 3, 6, 1001, 100_003];

/// `x[i + d]` if in range, else `default`.
fn at<T: Copy>(x: &[T], i: usize, d: i64, default: T) -> T {
    let j = i as i64 + d;
    if j >= 0 && (j as usize) < x.len() {
        x[j as usize]
    } else {
        default
    }
}

/// `u[r + dr][c + dc]` of ragged rows if in range, else `default`.
fn at2<T: Copy>(u: &[Vec<T>], r: usize, c: usize, (dr, dc): (i64, i64), default: T) -> T {
    let rr = r as i64 + dr;
    if rr < 0 || rr as usize >= u.len() {
        return default;
    }
    at(&u[rr as usize], c, dc, default)
}

fn one_dimension(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x: Vec<f32> = (0..n)
            .map(|_| rng.int_in(-100..=100) as f32 / 8.0)
            .collect();
        let want: Vec<f32> = (0..n)
            .map(|i| (at(&x, i, -1, 0.0) + x[i] + at(&x, i, 1, 0.0)) / 3.0)
            .collect();
        assert_eq!(prog::blur3(&x), want);

        let y: Vec<i64> = (0..n).map(|_| rng.int_in(-1000..=1000)).collect();
        let d = rng.int_in(-5..=5);
        let want: Vec<i64> = (0..n)
            .map(|i| at(&y, i, -3, d) * 1000 + at(&y, i, 2, d) * 10 - at(&y, i, 5, d))
            .collect();
        assert_eq!(prog::wide(&y, d), want);

        let z: Vec<u32> = rng.u32s(n);
        let want: Vec<u32> = (0..n).map(|i| at(&z, i, 1, u32::MAX)).collect();
        assert_eq!(prog::ahead(&z), want);

        let f: Vec<f64> = (0..n).map(|_| rng.int_in(0..=9) as f64).collect();
        let want: Vec<bool> = (0..n)
            .map(|i| {
                let l = at(&f, i, -1, f64::NEG_INFINITY);
                let r = at(&f, i, 1, f64::NEG_INFINITY);
                f[i] > l && f[i] > r
            })
            .collect();
        assert_eq!(prog::local_max(&f), want);

        let p: Vec<i32> = (0..n).map(|_| rng.int_in(-50..=50) as i32).collect();
        let t: Vec<(i32, i32)> = p.iter().map(|&v| (v, v % 7)).collect();
        let want: Vec<(i32, i32)> = (0..n)
            .map(|i| {
                let (a, b) = (t[i], at(&t, i, 1, (0, 1)));
                (a.0 + b.0, a.1 * b.1)
            })
            .collect();
        assert_eq!(prog::pairs(&p), want);
    });
}

fn two_dimensions(place: Place) {
    for (rows, cols) in [(0, 0), (1, 1), (1, 7), (7, 1), (3, 4), (61, 45), (300, 257)] {
        let data: Vec<f64> = (0..rows * cols)
            .map(|k| ((k * 37) % 101) as f64 / 4.0)
            .collect();
        let grid: Vec<Vec<f64>> = data.chunks(cols.max(1)).map(<[f64]>::to_vec).collect();
        let grid = if cols == 0 { Vec::new() } else { grid };
        let want: Vec<Vec<f64>> = (0..grid.len())
            .map(|r| {
                (0..cols)
                    .map(|c| {
                        let g = |d| at2(&grid, r, c, d, 0.0);
                        4.0 * g((0, 0)) - g((-1, 0)) - g((0, -1)) - g((0, 1)) - g((1, 0))
                    })
                    .collect()
            })
            .collect();
        dpl::with_place(place, || {
            let row_major = Matrix::row_major(rows, cols, data.clone()).unwrap();
            assert_eq!(prog::laplacian(&row_major).to_vecs(), want, "{rows}x{cols}");
            // The same grid stored by columns: the rows are strided views.
            let by_cols: Vec<f64> = (0..cols)
                .flat_map(|c| (0..rows).map(move |r| (r, c)))
                .map(|(r, c)| data[r * cols + c])
                .collect();
            let col_major = Matrix::col_major(rows, cols, by_cols).unwrap();
            assert_eq!(
                prog::laplacian(&col_major).to_vecs(),
                want,
                "{rows}x{cols} by columns"
            );
        });
    }
}

fn ragged(place: Place) {
    each_size(place, &[0, 1, 2, 5, 1001], |n, rng| {
        let u: Vec<Vec<i32>> = (0..n)
            .map(|_| {
                let len = rng.below(9);
                (0..len).map(|_| rng.int_in(-9..=9) as i32).collect()
            })
            .collect();
        let edge = rng.int_in(-3..=3) as i32;
        let want: Vec<Vec<i32>> = u
            .iter()
            .enumerate()
            .map(|(r, row)| {
                (0..row.len())
                    .map(|c| {
                        let mut s = 0;
                        for dr in -1..=1 {
                            for dc in -1..=1 {
                                s += at2(&u, r, c, (dr, dc), edge);
                            }
                        }
                        s
                    })
                    .collect()
            })
            .collect();
        assert_eq!(prog::box3(&Nested::from_rows(u), edge).to_vecs(), want);
    });
}

fn per_row(place: Place) {
    each_size(place, &[0, 1, 2, 1001], |n, rng| {
        // Rows of one element and up: `r[0]` is the default.
        let u: Vec<Vec<i64>> = (0..n)
            .map(|_| {
                let len = 1 + rng.below(12);
                (0..len).map(|_| rng.int_in(-99..=99)).collect()
            })
            .collect();
        let want: Vec<Vec<i64>> = u
            .iter()
            .map(|r| (0..r.len()).map(|i| r[i] - at(r, i, -1, r[0])).collect())
            .collect();
        assert_eq!(prog::row_differences(&Nested::from_rows(u)).to_vecs(), want);
    });
}

fn composed(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x: Vec<f64> = (0..n).map(|_| rng.int_in(-64..=64) as f64 / 16.0).collect();
        let a = 0.25;
        let s: Vec<f64> = (0..n)
            .map(|i| a * at(&x, i, -1, 0.0) + (1.0 - 2.0 * a) * x[i] + a * at(&x, i, 1, 0.0))
            .collect();
        let t: Vec<f64> = (0..n).map(|i| s[i] - at(&s, i, -1, 0.0)).collect();
        let want: f64 = t.iter().map(|v| v * v).sum();
        let got = prog::smoothed_energy(&x, a);
        // Values on a 1/64 grid squared: every partial sum is exact in f64.
        assert_eq!(got, want);
    });
}

on_every_place!(one_dimension, two_dimensions, ragged, per_row, composed);

/// On the simulator these are PTX, not the CPU fallback.
#[cfg(feature = "sim")]
#[test]
fn all_compiled_for_the_gpu() {
    let reasons = [
        dpl::inspect!(prog::blur3).gpu_not_compiled,
        dpl::inspect!(prog::wide).gpu_not_compiled,
        dpl::inspect!(prog::ahead).gpu_not_compiled,
        dpl::inspect!(prog::local_max).gpu_not_compiled,
        dpl::inspect!(prog::pairs).gpu_not_compiled,
        dpl::inspect!(prog::laplacian).gpu_not_compiled,
        dpl::inspect!(prog::box3).gpu_not_compiled,
        dpl::inspect!(prog::smoothed_energy).gpu_not_compiled,
        dpl::inspect!(prog::row_differences).gpu_not_compiled,
    ];
    for r in reasons {
        assert!(r.is_empty(), "{r}");
    }
}

/// A stencil is a `map` with guarded reads: fused into one loop, no temporaries of its
/// own, and no bounds checks left on the reads.
#[test]
fn one_loop_without_checks() {
    let i = dpl::inspect!(prog::blur3);
    assert_eq!(i.loops, 1, "{}", i.fused_ir);
    assert_eq!(i.temporaries, 0, "{}", i.fused_ir);
    let reads = i.fused_ir.matches("index").count();
    assert_eq!(reads, 3, "{}", i.fused_ir);
    assert_eq!(
        i.fused_ir.matches("index(unchecked)").count(),
        reads,
        "{}",
        i.fused_ir
    );
    let i = dpl::inspect!(prog::smoothed_energy);
    assert!(i.loops <= 3, "{}", i.fused_ir);
}
