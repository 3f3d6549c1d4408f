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

use crate::problem::{Field, Problem};
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
        Plain {
            problem,
            parallel,
            p_a,
            p_b,
            p_c,
        }
    }

    /// The preconditioner's three distinct entries per pixel (for tests).
    pub fn preconditioner(&self) -> (&[f32], &[f32], &[f32]) {
        (&self.p_a, &self.p_b, &self.p_c)
    }

    /// Calls `row_fn(row, u_row, v_row)` for every row of a field, in parallel or not.
    fn by_rows(&self, out: &mut Field, row_fn: impl Fn(usize, &mut [f32], &mut [f32]) + Sync) {
        let (n, w) = (self.problem.pixels(), self.problem.width);
        out.u.resize(n, 0.0);
        out.v.resize(n, 0.0);
        if self.parallel {
            out.u
                .par_chunks_mut(w)
                .zip(out.v.par_chunks_mut(w))
                .enumerate()
                .for_each(|(row, (u, v))| row_fn(row, u, v));
        } else {
            out.u
                .chunks_mut(w)
                .zip(out.v.chunks_mut(w))
                .enumerate()
                .for_each(|(row, (u, v))| row_fn(row, u, v));
        }
    }

    /// `x = x + s * y` on one component.
    fn axpy(&self, x: &mut [f32], s: f32, y: &[f32]) {
        assert_eq!(x.len(), y.len(), "axpy of vectors of different lengths");
        if self.parallel {
            x.par_iter_mut().zip(y).for_each(|(a, b)| *a += s * b);
        } else {
            x.iter_mut().zip(y).for_each(|(a, b)| *a += s * b);
        }
    }

    /// `p = z + s * p` on one component.
    fn xpay(&self, z: &[f32], s: f32, p: &mut [f32]) {
        assert_eq!(z.len(), p.len(), "axpy of vectors of different lengths");
        if self.parallel {
            p.par_iter_mut()
                .zip(z)
                .for_each(|(pi, zi)| *pi = zi + s * *pi);
        } else {
            p.iter_mut().zip(z).for_each(|(pi, zi)| *pi = zi + s * *pi);
        }
    }
}

/// The weighted neighbours `(west + east) + (north + south)` of pixel `col` of a row of
/// one component: `y` is the row, `above`/`below` the rows next to it with the weights of
/// the edges to them.
#[inline(always)]
fn coupling(
    y: &[f32],
    right: &[f32],
    above: Option<(&[f32], &[f32])>,
    below: Option<(&[f32], &[f32])>,
    col: usize,
) -> f32 {
    let west = if col > 0 {
        right[col - 1] * y[col - 1]
    } else {
        0.0
    };
    let east = if col + 1 < y.len() {
        right[col] * y[col + 1]
    } else {
        0.0
    };
    let north = above.map_or(0.0, |(ya, wa)| wa[col] * ya[col]);
    let south = below.map_or(0.0, |(yb, wb)| wb[col] * yb[col]);
    (west + east) + (north + south)
}

/// One row of `q = A x`: per pixel, the 2x2 block times `(u, v)`, minus the weighted
/// neighbours of the same component.
fn apply_row(s: &Problem, x: &Field, row: usize, qu: &mut [f32], qv: &mut [f32]) {
    let (w, h) = (s.width, s.height);
    let this = row * w..(row + 1) * w;
    let (a, b, c) = (&s.a[this.clone()], &s.b[this.clone()], &s.c[this.clone()]);
    let right = &s.right[this.clone()];
    let (u, v) = (&x.u[this.clone()], &x.v[this.clone()]);
    let (mut u_above, mut v_above, mut u_below, mut v_below) = (None, None, None, None);
    if row > 0 {
        let (up, weights) = (
            this.start - w..this.start,
            &s.down[this.start - w..this.start],
        );
        u_above = Some((&x.u[up.clone()], weights));
        v_above = Some((&x.v[up], weights));
    }
    if row + 1 < h {
        let (down, weights) = (this.end..this.end + w, &s.down[this.clone()]);
        u_below = Some((&x.u[down.clone()], weights));
        v_below = Some((&x.v[down], weights));
    }
    let (qu, qv) = (&mut qu[..w], &mut qv[..w]);
    for col in 0..w {
        qu[col] = (a[col] * u[col] + b[col] * v[col]) - coupling(u, right, u_above, u_below, col);
        qv[col] = (b[col] * u[col] + c[col] * v[col]) - coupling(v, right, v_above, v_below, col);
    }
}

/// One row of `z = M^-1 r`: per pixel, the inverted 2x2 block times `(u, v)`.
fn precondition_row(m: &Plain<'_>, r: &Field, row: usize, zu: &mut [f32], zv: &mut [f32]) {
    let w = m.problem.width;
    let this = row * w..(row + 1) * w;
    let (pa, pb, pc) = (
        &m.p_a[this.clone()],
        &m.p_b[this.clone()],
        &m.p_c[this.clone()],
    );
    let (u, v) = (&r.u[this.clone()], &r.v[this]);
    let (zu, zv) = (&mut zu[..w], &mut zv[..w]);
    for col in 0..w {
        zu[col] = pa[col] * u[col] + pb[col] * v[col];
        zv[col] = pb[col] * u[col] + pc[col] * v[col];
    }
}

impl Kernels for Plain<'_> {
    fn name(&self) -> &'static str {
        if self.parallel { "rayon" } else { "seq" }
    }

    fn apply(&self, p: &Field, q: &mut Field) {
        self.by_rows(q, |row, qu, qv| apply_row(self.problem, p, row, qu, qv));
    }

    fn precondition(&self, r: &Field, z: &mut Field) {
        self.by_rows(z, |row, zu, zv| precondition_row(self, r, row, zu, zv));
    }

    fn dot(&self, x: &Field, y: &Field) -> f64 {
        assert!(
            x.u.len() == y.u.len() && x.v.len() == y.v.len() && x.u.len() == x.v.len(),
            "dot of fields of different sizes"
        );
        let term = |((a, b), (c, d)): ((&f32, &f32), (&f32, &f32))| (a * b) as f64 + (c * d) as f64;
        if self.parallel {
            x.u.par_iter()
                .zip(&y.u)
                .zip(x.v.par_iter().zip(&y.v))
                .map(term)
                .sum()
        } else {
            x.u.iter()
                .zip(&y.u)
                .zip(x.v.iter().zip(&y.v))
                .map(term)
                .sum()
        }
    }

    fn add_scaled(&self, x: &mut Field, s: f32, y: &Field) {
        self.axpy(&mut x.u, s, &y.u);
        self.axpy(&mut x.v, s, &y.v);
    }

    fn scale_add(&self, z: &Field, s: f32, p: &mut Field) {
        self.xpay(&z.u, s, &mut p.u);
        self.xpay(&z.v, s, &mut p.v);
    }
}
