//! The preconditioned conjugate gradient loop of the `pcg` example, written once over a set
//! of kernels ([`Kernels`]) so that the dpl solver and the hand-written rayon and sequential
//! baselines run exactly the same algorithm: the same operations in the same order, with
//! the same scalars; they differ only in how each kernel is executed.
//!
//! Vectors are `f32` (as in Copperhead's single-precision solver: the solver is bound by
//! memory traffic), dot products are accumulated in `f64` and the scalar recurrences
//! (`alpha`, `beta`, the residual norm) are kept in `f64`.
// Each includer uses a different subset of these items.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use crate::problem::Field;

/// The kernels one PCG iteration is made of, on [`Field`]s (one array per component); the
/// system and the preconditioner are held by the implementation. Outputs may come in with
/// any sizes and contents.
pub trait Kernels {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// `q = A p` (the coupled 5-point stencil).
    fn apply(&self, p: &Field, q: &mut Field);
    /// `z = M^-1 r` (block Jacobi: each pixel's 2x2 diagonal block inverted).
    fn precondition(&self, r: &Field, z: &mut Field);
    /// `sum x[k] * y[k]` over both components, each product rounded to `f32` and
    /// accumulated in `f64`.
    fn dot(&self, x: &Field, y: &Field) -> f64;
    /// `x = x + s * y`, component by component.
    fn add_scaled(&self, x: &mut Field, s: f32, y: &Field);
    /// `p = z + s * p`, component by component.
    fn scale_add(&self, z: &Field, s: f32, p: &mut Field);
}

/// When to stop.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Stop when the relative residual `|r| / |b|` is at most this (0: never, run
    /// `max_iterations`).
    pub tolerance: f64,
    /// Stop after this many iterations at the latest.
    pub max_iterations: usize,
}

impl Options {
    /// Iterate until `|r| / |b| <= tolerance`, at most `max_iterations` times.
    pub fn converge(tolerance: f64, max_iterations: usize) -> Options {
        Options {
            tolerance,
            max_iterations,
        }
    }

    /// Exactly `iterations` iterations (for timing), unless the method breaks down.
    pub fn fixed(iterations: usize) -> Options {
        Options {
            tolerance: 0.0,
            max_iterations: iterations,
        }
    }
}

/// The outcome of a solve.
#[derive(Clone, Debug)]
pub struct Solution {
    /// The approximate solution.
    pub x: Field,
    /// Iterations run (matrix-vector products).
    pub iterations: usize,
    /// The relative residual `|r| / |b|` of the recurrence after the last iteration.
    pub residual: f64,
    /// Whether the residual reached the tolerance.
    pub converged: bool,
    /// Wall time of the iterations (the preconditioner is formed before, not counted).
    pub elapsed: Duration,
}

impl Solution {
    /// Mean wall time of one iteration.
    pub fn per_iteration(&self) -> Duration {
        self.elapsed / self.iterations.max(1) as u32
    }
}

/// Solves `A x = rhs` from `x = 0` with the preconditioned conjugate gradient method.
///
/// Errors when the method breaks down (`p . A p` or `r . z` not positive and finite: the
/// operator or the preconditioner is not positive definite, or the values overflowed).
pub fn pcg<K: Kernels + ?Sized>(k: &K, rhs: &Field, opts: Options) -> Result<Solution, String> {
    let start = Instant::now();
    let mut x = Field::zeros(rhs.pixels());
    let b_norm = k.dot(rhs, rhs).sqrt();
    if b_norm == 0.0 {
        return Ok(Solution {
            x,
            iterations: 0,
            residual: 0.0,
            converged: true,
            elapsed: start.elapsed(),
        });
    }
    let mut r = rhs.clone();
    let mut z = Field::default();
    let mut q = Field::default();
    k.precondition(&r, &mut z);
    let mut p = z.clone();
    let mut rz = k.dot(&r, &z);
    let mut residual = 1.0;
    let mut iterations = 0;
    while iterations < opts.max_iterations && residual > opts.tolerance {
        if !(rz.is_finite() && rz > 0.0) {
            return Err(format!(
                "{}: breakdown at iteration {iterations}: r . z = {rz}",
                k.name()
            ));
        }
        k.apply(&p, &mut q);
        let pq = k.dot(&p, &q);
        if !(pq.is_finite() && pq > 0.0) {
            return Err(format!(
                "{}: breakdown at iteration {iterations}: p . Ap = {pq}",
                k.name()
            ));
        }
        let alpha = rz / pq;
        k.add_scaled(&mut x, alpha as f32, &p);
        k.add_scaled(&mut r, -alpha as f32, &q);
        iterations += 1;
        residual = k.dot(&r, &r).sqrt() / b_norm;
        if residual <= opts.tolerance || iterations == opts.max_iterations {
            break;
        }
        k.precondition(&r, &mut z);
        let rz_next = k.dot(&r, &z);
        let beta = rz_next / rz;
        rz = rz_next;
        k.scale_add(&z, beta as f32, &mut p);
    }
    Ok(Solution {
        x,
        iterations,
        residual,
        converged: residual <= opts.tolerance,
        elapsed: start.elapsed(),
    })
}
