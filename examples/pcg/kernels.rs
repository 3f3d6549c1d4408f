//! The dpl kernels of the `pcg` example: one `#[parallel] mod`, so calls between its
//! functions are inlined and fused, and the [`Dpl`] kernel set that the PCG loop calls.
//!
//! [`form_preconditioner`] and [`precondition_split`] are Copperhead's Figure 6 as written
//! there, on separate `u` and `v` arrays (`vmul`/`vadd` calls fused into one loop per
//! output). The solver's vectors are interleaved (`x[2i] = u_i`, `x[2i + 1] = v_i`), and
//! [`precondition`] is Figure 6's `e` and `f` computed as one sequence: with
//! `spread(p, q) = [p0, q0, p1, q1, ...]`, `first(x) = [u0, u0, u1, u1, ...]` and
//! `second(x) = [v0, v0, v1, v1, ...]`,
//!
//! ```text
//! precondition(x) = vadd(vmul(spread(p_a, p_b), first(x)), vmul(spread(p_b, p_c), second(x)))
//!                 = [e0, f0, e1, f1, ...]
//! ```
//!
//! which the compiler fuses (eleven calls, twelve temporaries before fusion) into one loop
//! with no temporary. The operator [`apply`] reuses the same block product
//! ([`block_apply`]) with the system's blocks and subtracts the weighted neighbours
//! ([`coupling`]): again one loop.

use dpl::prelude::*;

use crate::problem::Problem;
use crate::solver::Kernels;

/// The kernels, compiled by dpl. Vectors of unknowns are interleaved (see the module docs).
#[parallel]
pub mod pcg {
    /// Element-wise sum (Figure 6).
    pub fn vadd(x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|a, b| a + b, x, y)
    }

    /// Element-wise product (Figure 6).
    pub fn vmul(x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|a, b| a * b, x, y)
    }

    /// Figure 6's `form_preconditioner`: the inverses of the symmetric blocks
    /// `[a b; b c]`, as their three distinct entries `(p_a, p_b, p_c)`.
    pub fn form_preconditioner(
        a: &[f32],
        b: &[f32],
        c: &[f32],
    ) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let det_inverse = |ai, bi, ci| 1.0 / (ai * ci - bi * bi);
        let indets = map(det_inverse, a, b, c);
        let p_a = vmul(indets, c);
        let p_b = map(|d, bi| -d * bi, indets, b);
        let p_c = vmul(indets, a);
        (p_a, p_b, p_c)
    }

    /// Figure 6's `precondition` on separate `u` and `v` arrays: `(e, f) = [p_a p_b; p_b
    /// p_c] (u, v)` per pixel.
    pub fn precondition_split(
        u: &[f32],
        v: &[f32],
        p_a: &[f32],
        p_b: &[f32],
        p_c: &[f32],
    ) -> (Vec<f32>, Vec<f32>) {
        let e = vadd(vmul(p_a, u), vmul(p_b, v));
        let f = vadd(vmul(p_b, u), vmul(p_c, v));
        (e, f)
    }

    /// `[p0, q0, p1, q1, ...]`: per-pixel values spread over the two interleaved components.
    pub fn spread(p: &[f32], q: &[f32]) -> Vec<f32> {
        map(
            |k| if k % 2 == 0 { p[k / 2] } else { q[k / 2] },
            range(2 * len(p)),
        )
    }

    /// `[u0, u0, u1, u1, ...]`: each pixel's `u` at both of its positions.
    pub fn first(x: &[f32]) -> Vec<f32> {
        gather(x, map(|k| k - k % 2, indices(x)))
    }

    /// `[v0, v0, v1, v1, ...]`: each pixel's `v` at both of its positions.
    pub fn second(x: &[f32]) -> Vec<f32> {
        gather(x, map(|k| k - k % 2 + 1, indices(x)))
    }

    /// The block-diagonal product: `[a b; b c] (u, v)` per pixel, interleaved.
    pub fn block_apply(x: &[f32], a: &[f32], b: &[f32], c: &[f32]) -> Vec<f32> {
        vadd(vmul(spread(a, b), first(x)), vmul(spread(b, c), second(x)))
    }

    /// Figure 6's `precondition` on the interleaved field: `[e0, f0, e1, f1, ...]`.
    pub fn precondition(x: &[f32], p_a: &[f32], p_b: &[f32], p_c: &[f32]) -> Vec<f32> {
        block_apply(x, p_a, p_b, p_c)
    }

    /// The weighted sum of each unknown's 4-neighbours (same component): the off-diagonal
    /// part of the stencil. `right`/`down` are the edge weights, `width` the row length; the
    /// weights are 0 across the field's border, so only the ends of the arrays need tests.
    pub fn coupling(x: &[f32], right: &[f32], down: &[f32], width: usize) -> Vec<f32> {
        let n = len(right);
        map(
            |k| {
                let i = k / 2;
                let west = if i > 0 { right[i - 1] * x[k - 2] } else { 0.0 };
                let east = if i + 1 < n { right[i] * x[k + 2] } else { 0.0 };
                let north = if i >= width { down[i - width] * x[k - 2 * width] } else { 0.0 };
                let south = if i + width < n { down[i] * x[k + 2 * width] } else { 0.0 };
                (west + east) + (north + south)
            },
            indices(x),
        )
    }

    /// `A x`: the diagonal blocks minus the weighted neighbours.
    pub fn apply(
        x: &[f32],
        a: &[f32],
        b: &[f32],
        c: &[f32],
        right: &[f32],
        down: &[f32],
        width: usize,
    ) -> Vec<f32> {
        map(
            |d, s| d - s,
            block_apply(x, a, b, c),
            coupling(x, right, down, width),
        )
    }

    /// `sum x[k] * y[k]`, the products accumulated in `f64`.
    pub fn dot(x: &[f32], y: &[f32]) -> f64 {
        sum(map(|a, b| (a * b) as f64, x, y))
    }

    /// `x + s * y`.
    pub fn axpy(s: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|a, b| a + s * b, x, y)
    }
}

/// The PCG kernels as dpl calls: every method is one call of a `#[parallel]` function,
/// run on the current place.
pub struct Dpl<'a> {
    problem: &'a Problem,
    p_a: Vec<f32>,
    p_b: Vec<f32>,
    p_c: Vec<f32>,
}

impl<'a> Dpl<'a> {
    /// Forms the block-Jacobi preconditioner of `problem` ([`pcg::form_preconditioner`]).
    pub fn new(problem: &'a Problem) -> Dpl<'a> {
        let (p_a, p_b, p_c) = pcg::form_preconditioner(&problem.a, &problem.b, &problem.c);
        Dpl { problem, p_a, p_b, p_c }
    }
}

impl Kernels for Dpl<'_> {
    fn name(&self) -> &'static str {
        "dpl"
    }

    fn apply(&self, p: &[f32], q: &mut Vec<f32>) {
        let s = self.problem;
        *q = pcg::apply(p, &s.a, &s.b, &s.c, &s.right, &s.down, s.width);
    }

    fn precondition(&self, r: &[f32], z: &mut Vec<f32>) {
        *z = pcg::precondition(r, &self.p_a, &self.p_b, &self.p_c);
    }

    fn dot(&self, x: &[f32], y: &[f32]) -> f64 {
        pcg::dot(x, y)
    }

    fn add_scaled(&self, x: &mut Vec<f32>, s: f32, y: &[f32]) {
        *x = pcg::axpy(s, x, y);
    }

    fn scale_add(&self, z: &[f32], s: f32, p: &mut Vec<f32>) {
        *p = pcg::axpy(s, z, p);
    }
}
