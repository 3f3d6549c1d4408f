//! The hand-written baselines of the `pcg` example: the same kernels as the dpl ones, the
//! same arithmetic in the same order for every element, written directly in Rust, once
//! with rayon and once sequentially. They update vectors in place, as a user writing them
//! by hand would.
//!
//! Nothing here uses dpl's compiler, so a mistake in the generated code cannot hide in
//! them.
// Each includer uses a different subset of these items.
#![allow(dead_code)]

use rayon::prelude::*;

use crate::problem::Problem;
use crate::solver::Kernels;

/// The PCG kernels in plain Rust, run with rayon or sequentially.
pub struct Plain<'a> {
    problem: &'a Problem,
    parallel: bool,
    p_a: Vec<f32>,
    p_b: Vec<f32>,
    p_c: Vec<f32>,
}

impl<'a> Plain<'a> {
    /// The rayon kernels for `problem`, with its block-Jacobi preconditioner formed.
    pub fn rayon(problem: &'a Problem) -> Plain<'a> {
        Plain::new(problem, true)
    }

    /// The sequential kernels for `problem`, with its block-Jacobi preconditioner formed.
    pub fn sequential(problem: &'a Problem) -> Plain<'a> {
        Plain::new(problem, false)
    }

    fn new(problem: &'a Problem, parallel: bool) -> Plain<'a> {
        let n = problem.pixels();
        let (mut p_a, mut p_b, mut p_c) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for i in 0..n {
            let (a, b, c) = (problem.a[i], problem.b[i], problem.c[i]);
            let inv_det = 1.0 / (a * c - b * b);
            p_a[i] = inv_det * c;
            p_b[i] = -inv_det * b;
            p_c[i] = inv_det * a;
        }
        Plain { problem, parallel, p_a, p_b, p_c }
    }

    /// The preconditioner's three distinct entries per pixel (for tests).
    pub fn preconditioner(&self) -> (&[f32], &[f32], &[f32]) {
        (&self.p_a, &self.p_b, &self.p_c)
    }

    /// Calls `row_fn(row, out_row)` for every row of an interleaved vector (`2 * width`
    /// entries per row), in parallel or not.
    fn by_rows(&self, out: &mut [f32], row_fn: impl Fn(usize, &mut [f32]) + Sync) {
        let row_len = 2 * self.problem.width;
        if self.parallel {
            out.par_chunks_mut(row_len).enumerate().for_each(|(row, o)| row_fn(row, o));
        } else {
            out.chunks_mut(row_len).enumerate().for_each(|(row, o)| row_fn(row, o));
        }
    }
}

/// One row of `q = A x`: per pixel, the 2x2 block times `(u, v)`, minus the weighted
/// neighbours `(west + east) + (north + south)` of the same component.
fn apply_row(s: &Problem, x: &[f32], row: usize, out: &mut [f32]) {
    let (w, h) = (s.width, s.height);
    for col in 0..w {
        let i = row * w + col;
        let k = 2 * i;
        let (u, v) = (x[k], x[k + 1]);
        let neighbours = |k: usize| {
            let west = if col > 0 { s.right[i - 1] * x[k - 2] } else { 0.0 };
            let east = if col + 1 < w { s.right[i] * x[k + 2] } else { 0.0 };
            let north = if row > 0 { s.down[i - w] * x[k - 2 * w] } else { 0.0 };
            let south = if row + 1 < h { s.down[i] * x[k + 2 * w] } else { 0.0 };
            (west + east) + (north + south)
        };
        out[2 * col] = (s.a[i] * u + s.b[i] * v) - neighbours(k);
        out[2 * col + 1] = (s.b[i] * u + s.c[i] * v) - neighbours(k + 1);
    }
}

impl Kernels for Plain<'_> {
    fn name(&self) -> &'static str {
        if self.parallel { "rayon" } else { "seq" }
    }

    fn apply(&self, p: &[f32], q: &mut Vec<f32>) {
        q.resize(p.len(), 0.0);
        self.by_rows(q, |row, out| apply_row(self.problem, p, row, out));
    }

    fn precondition(&self, r: &[f32], z: &mut Vec<f32>) {
        z.resize(r.len(), 0.0);
        let w = self.problem.width;
        self.by_rows(z, |row, out| {
            for col in 0..w {
                let i = row * w + col;
                let (u, v) = (r[2 * i], r[2 * i + 1]);
                out[2 * col] = self.p_a[i] * u + self.p_b[i] * v;
                out[2 * col + 1] = self.p_b[i] * u + self.p_c[i] * v;
            }
        });
    }

    fn dot(&self, x: &[f32], y: &[f32]) -> f64 {
        assert_eq!(x.len(), y.len(), "dot of vectors of different lengths");
        if self.parallel {
            x.par_iter().zip(y).map(|(a, b)| (a * b) as f64).sum()
        } else {
            x.iter().zip(y).map(|(a, b)| (a * b) as f64).sum()
        }
    }

    fn add_scaled(&self, x: &mut Vec<f32>, s: f32, y: &[f32]) {
        assert_eq!(x.len(), y.len(), "axpy of vectors of different lengths");
        if self.parallel {
            x.par_iter_mut().zip(y).for_each(|(a, b)| *a = *a + s * b);
        } else {
            x.iter_mut().zip(y).for_each(|(a, b)| *a = *a + s * b);
        }
    }

    fn scale_add(&self, z: &[f32], s: f32, p: &mut Vec<f32>) {
        assert_eq!(z.len(), p.len(), "axpy of vectors of different lengths");
        if self.parallel {
            p.par_iter_mut().zip(z).for_each(|(pi, zi)| *pi = zi + s * *pi);
        } else {
            p.iter_mut().zip(z).for_each(|(pi, zi)| *pi = zi + s * *pi);
        }
    }
}
