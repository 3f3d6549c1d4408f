//! The dpl kernels of the `pcg` example: one `#[parallel] mod` ([`pcg`]), so that calls
//! between its functions are inlined and fused, and the [`Dpl`] kernel set that the PCG
//! loop calls.
//!
//! [`pcg::form_preconditioner`] and [`pcg::precondition`] are Copperhead's Figure 6 as
//! written there. Each output of `precondition` is one fused loop (`vadd(vmul(p_a, u),
//! vmul(p_b, v))`: three calls, two temporaries before fusion, one loop and none after),
//! [`pcg::block_row`]; the solver calls it once per output (see [`Dpl`] for why). The
//! operator, [`pcg::apply_half`], reuses the same block product with the system's blocks
//! and subtracts the weighted neighbours ([`pcg::coupling`]): again one loop per component.

use dpl::prelude::*;

use crate::problem::{Field, Problem};
use crate::solver::Kernels;

/// The kernels, compiled by dpl.
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

    /// Figure 6's `precondition`: `(e, f) = [p_a p_b; p_b p_c] (u, v)` per pixel.
    pub fn precondition(
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

    /// One row of a symmetric 2x2 block product per pixel: `p * u + q * v` (`e` of
    /// Figure 6 with `(p, q) = (p_a, p_b)`, `f` with `(p_b, p_c)`).
    pub fn block_row(p: &[f32], q: &[f32], u: &[f32], v: &[f32]) -> Vec<f32> {
        vadd(vmul(p, u), vmul(q, v))
    }

    /// The weighted sum of each pixel's 4-neighbours in one component `y`: the
    /// off-diagonal part of the stencil. `right`/`down` are the edge weights, `width` the row
    /// length; the weights are 0 across the field's border, so only the ends of the arrays
    /// need tests.
    ///
    /// The neighbours are read through one helper, `at`, so that every bounds check has the
    /// same source location: the generated code then needs one check for `right[i - 1]` and
    /// `y[i - 1]` together (same index, lengths known equal) instead of two, and this loop
    /// runs about a third faster (each checked read materializes its `Location` on the
    /// stack before the comparison).
    pub fn coupling(y: &[f32], right: &[f32], down: &[f32], width: usize) -> Vec<f32> {
        let n = len(y);
        let at = |s, j| s[j];
        map(
            |i, east_weight, south_weight| {
                let west = if i > 0 { at(right, i - 1) * at(y, i - 1) } else { 0.0 };
                let east = if i + 1 < n { east_weight * at(y, i + 1) } else { 0.0 };
                let north = if i >= width { at(down, i - width) * at(y, i - width) } else { 0.0 };
                let south = if i + width < n { south_weight * at(y, i + width) } else { 0.0 };
                (west + east) + (north + south)
            },
            indices(y),
            right,
            down,
        )
    }

    /// One component of `A x`: the block row `p * u + q * v` minus the weighted neighbours
    /// of the same component `y` (`(a, b, u, v, u)` gives the `u` component, `(b, c, u, v,
    /// v)` the `v` component).
    pub fn apply_half(
        p: &[f32],
        q: &[f32],
        u: &[f32],
        v: &[f32],
        y: &[f32],
        right: &[f32],
        down: &[f32],
        width: usize,
    ) -> Vec<f32> {
        map(
            |d, s| d - s,
            block_row(p, q, u, v),
            coupling(y, right, down, width),
        )
    }

    /// `sum xu[k] * yu[k] + xv[k] * yv[k]`, each product accumulated in `f64`.
    pub fn dot(xu: &[f32], xv: &[f32], yu: &[f32], yv: &[f32]) -> f64 {
        sum(map(
            |a, b, c, d| (a * b) as f64 + (c * d) as f64,
            xu,
            yu,
            xv,
            yv,
        ))
    }

    /// `x + s * y`.
    pub fn axpy(s: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|a, b| a + s * b, x, y)
    }
}

/// The PCG kernels as dpl calls: every method calls `#[parallel]` functions of [`pcg`], run
/// on the current place.
///
/// The preconditioner is Figure 6's `precondition` called once per output
/// ([`pcg::block_row`]): the tuple-returning [`pcg::precondition`] computes the same two
/// loops but copies each result once more on return (generated `<[_]>::to_vec` of each
/// tuple element), which costs two extra passes over the field per iteration.
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

    /// The preconditioner's three distinct entries per pixel.
    #[allow(dead_code)] // used by the tests
    pub fn preconditioner(&self) -> (&[f32], &[f32], &[f32]) {
        (&self.p_a, &self.p_b, &self.p_c)
    }
}

impl Kernels for Dpl<'_> {
    fn name(&self) -> &'static str {
        "dpl"
    }

    fn apply(&self, p: &Field, q: &mut Field) {
        let s = self.problem;
        q.u = pcg::apply_half(&s.a, &s.b, &p.u, &p.v, &p.u, &s.right, &s.down, s.width);
        q.v = pcg::apply_half(&s.b, &s.c, &p.u, &p.v, &p.v, &s.right, &s.down, s.width);
    }

    fn precondition(&self, r: &Field, z: &mut Field) {
        z.u = pcg::block_row(&self.p_a, &self.p_b, &r.u, &r.v);
        z.v = pcg::block_row(&self.p_b, &self.p_c, &r.u, &r.v);
    }

    fn dot(&self, x: &Field, y: &Field) -> f64 {
        pcg::dot(&x.u, &x.v, &y.u, &y.v)
    }

    fn add_scaled(&self, x: &mut Field, s: f32, y: &Field) {
        x.u = pcg::axpy(s, &x.u, &y.u);
        x.v = pcg::axpy(s, &x.v, &y.v);
    }

    fn scale_add(&self, z: &Field, s: f32, p: &mut Field) {
        p.u = pcg::axpy(s, &z.u, &p.u);
        p.v = pcg::axpy(s, &z.v, &p.v);
    }
}
