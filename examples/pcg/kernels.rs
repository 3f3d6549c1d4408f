//! The dpl kernels of the `pcg` example: one `#[parallel] mod` ([`pcg`]), so that calls
//! between its functions are inlined and fused, and the [`Dpl`] kernel set that the PCG
//! loop calls. [`pcg::solve`] is the whole solver as one `#[parallel]` function, its loop
//! inside ([`Dpl::solve`] calls it).
//!
//! [`pcg::form_preconditioner`] and [`pcg::precondition`] are Copperhead's Figure 6 as
//! written there. Each output of `precondition` fuses into one loop (`vadd(vmul(p_a, u),
//! vmul(p_b, v))`: three calls, two temporaries before fusion, one loop and none after,
//! [`pcg::block_row`]), and horizontal fusion merges the two loops (same index space, same
//! phase) into one that writes both outputs. The operator, [`pcg::apply`], computes both
//! components in one `map` returning a pair (it reads the neighbours with checked reads, so
//! the compiler would not merge two separate maps of it: see `dpl_core::phases`);
//! [`pcg::apply_half`] is one component, the block product minus the weighted neighbours
//! ([`pcg::coupling`]): one loop (six calls, five temporaries before fusion).

use dpl::prelude::*;

use std::time::Instant;

use crate::problem::{Field, Problem};
use crate::solver::{Kernels, Options, Solution};

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
    pub fn form_preconditioner(a: &[f32], b: &[f32], c: &[f32]) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
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
    /// off-diagonal part of the stencil, with the weight of each pixel's edge to the west,
    /// east, north and south (0 across the field's border) and `width` the row length.
    ///
    /// Written without branches: every neighbour index is clamped into the array (a pixel
    /// on the border reads some pixel, times a zero weight). Written with
    /// `if i > 0 { right[i - 1] * y[i - 1] } else { 0.0 }` and the like instead, the loop is
    /// about twice as slow: the generated code checks each read and materializes its
    /// source `Location` on the stack before every check, and the branches keep it
    /// scalar; here the weights are zipped inputs (not checked) and only the four reads of
    /// `y` are checked.
    pub fn coupling(
        y: &[f32],
        left: &[f32],
        right: &[f32],
        up: &[f32],
        down: &[f32],
        width: usize,
    ) -> Vec<f32> {
        let n = len(y);
        map(
            |i, west_weight, east_weight, north_weight, south_weight| {
                let last = n - 1;
                let west = west_weight * y[i.max(1) - 1];
                let east = east_weight * y[(i + 1).min(last)];
                let north = north_weight * y[i.max(width) - width];
                let south = south_weight * y[(i + width).min(last)];
                (west + east) + (north + south)
            },
            indices(y),
            left,
            right,
            up,
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
        left: &[f32],
        right: &[f32],
        up: &[f32],
        down: &[f32],
        width: usize,
    ) -> Vec<f32> {
        map(
            |d, s| d - s,
            block_row(p, q, u, v),
            coupling(y, left, right, up, down, width),
        )
    }

    /// Both components of `A x` in one loop: per pixel, the two block rows minus the
    /// weighted neighbours of each component (the arithmetic of [`apply_half`] twice, in the
    /// same order), as one `map` returning a pair, unzipped. Each input is read once for
    /// both outputs, which the two calls of [`apply_half`] cannot do. (`map` zips at most
    /// 8 sequences: `u[i]` and `v[i]` are reads instead.)
    pub fn apply(
        a: &[f32],
        b: &[f32],
        c: &[f32],
        u: &[f32],
        v: &[f32],
        left: &[f32],
        right: &[f32],
        up: &[f32],
        down: &[f32],
        width: usize,
    ) -> (Vec<f32>, Vec<f32>) {
        let n = len(u);
        unzip(map(
            |i, ai, bi, ci, west_weight, east_weight, north_weight, south_weight| {
                let last = n - 1;
                let (ui, vi) = (u[i], v[i]);
                let w = i.max(1) - 1;
                let e = (i + 1).min(last);
                let no = i.max(width) - width;
                let so = (i + width).min(last);
                let cu = (west_weight * u[w] + east_weight * u[e])
                    + (north_weight * u[no] + south_weight * u[so]);
                let cv = (west_weight * v[w] + east_weight * v[e])
                    + (north_weight * v[no] + south_weight * v[so]);
                ((ai * ui + bi * vi) - cu, (bi * ui + ci * vi) - cv)
            },
            indices(u),
            a,
            b,
            c,
            left,
            right,
            up,
            down,
        ))
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

    /// `x = x + s * y`, written into `x` ([`axpy`]: one pass on the CPU, no new vector).
    pub fn axpy_in_place(s: f32, x: &mut [f32], y: &[f32]) {
        *x = axpy(s, x, y);
    }

    /// `y = x + s * y`, written into `y`.
    pub fn scale_add_in_place(x: &[f32], s: f32, y: &mut [f32]) {
        *y = axpy(s, x, y);
    }

    /// [`precondition`] written into `e` and `f`: the two maps fuse into one loop, which on
    /// the CPU writes both in place (no new vectors).
    #[allow(clippy::too_many_arguments)]
    pub fn precondition_into(
        u: &[f32],
        v: &[f32],
        p_a: &[f32],
        p_b: &[f32],
        p_c: &[f32],
        e: &mut [f32],
        f: &mut [f32],
    ) {
        let (pe, pf) = precondition(u, v, p_a, p_b, p_c);
        *e = pe;
        *f = pf;
    }

    /// The whole solve in one call, its loop inside: `solver::pcg` with these kernels (the
    /// same operations in the same order), from `x = 0` until `|r| / |b| <= tolerance` or
    /// `max_iterations`. Returns `x`'s two components, the iterations run, the relative
    /// residual, and `(0, 0.0)` or the breakdown: `(1, r . z)` or `(2, p . A p)` when that
    /// product was not positive and finite. On a GPU place every vector stays on the
    /// device for the whole solve; only the dot products come back.
    pub fn solve(
        a: &[f32],
        b: &[f32],
        c: &[f32],
        left: &[f32],
        right: &[f32],
        up: &[f32],
        down: &[f32],
        width: usize,
        p_a: &[f32],
        p_b: &[f32],
        p_c: &[f32],
        rhs_u: &[f32],
        rhs_v: &[f32],
        tolerance: f64,
        max_iterations: usize,
    ) -> (Vec<f32>, Vec<f32>, usize, f64, (u32, f64)) {
        let b_norm = dot(rhs_u, rhs_v, rhs_u, rhs_v).sqrt();
        let mut xu = map(|_| 0.0f32, rhs_u);
        let mut xv = map(|_| 0.0f32, rhs_v);
        let mut ru = rhs_u.to_vec();
        let mut rv = rhs_v.to_vec();
        let (zu, zv) = precondition(ru, rv, p_a, p_b, p_c);
        let mut rz = dot(ru, rv, zu, zv);
        let mut pu = zu;
        let mut pv = zv;
        let mut residual = if b_norm == 0.0 { 0.0 } else { 1.0 };
        let mut iterations = 0usize;
        let mut breakdown = (0u32, 0.0);
        while iterations < max_iterations && residual > tolerance {
            if !(rz > 0.0 && rz < f64::INFINITY) {
                breakdown = (1u32, rz);
                break;
            }
            let (qu, qv) = apply(a, b, c, pu, pv, left, right, up, down, width);
            let pq = dot(pu, pv, qu, qv);
            if !(pq > 0.0 && pq < f64::INFINITY) {
                breakdown = (2u32, pq);
                break;
            }
            let alpha = rz / pq;
            xu = axpy(alpha as f32, xu, pu);
            xv = axpy(alpha as f32, xv, pv);
            ru = axpy(-alpha as f32, ru, qu);
            rv = axpy(-alpha as f32, rv, qv);
            iterations += 1;
            residual = dot(ru, rv, ru, rv).sqrt() / b_norm;
            if residual <= tolerance || iterations == max_iterations {
                break;
            }
            let (zu, zv) = precondition(ru, rv, p_a, p_b, p_c);
            let rz_next = dot(ru, rv, zu, zv);
            let beta = rz_next / rz;
            rz = rz_next;
            pu = axpy(beta as f32, zu, pu);
            pv = axpy(beta as f32, zv, pv);
        }
        (xu, xv, iterations, residual, breakdown)
    }
}

/// The PCG kernels as dpl calls: every method calls `#[parallel]` functions of [`pcg`], run
/// on the current place.
///
/// Besides the preconditioner it keeps the weights of each pixel's edges to the west and
/// north (`right` and `down` shifted by one pixel and by one row), formed once like the
/// preconditioner, so that [`pcg::coupling`] reads all four weights as zipped inputs.
///
/// The preconditioner is Figure 6's `precondition`, one loop writing both components.
pub struct Dpl<'a> {
    problem: &'a Problem,
    p_a: Vec<f32>,
    p_b: Vec<f32>,
    p_c: Vec<f32>,
    /// Weight of the edge to the west (`right[i - 1]`, 0 in the first column).
    left: Vec<f32>,
    /// Weight of the edge to the north (`down[i - width]`, 0 in the first row).
    up: Vec<f32>,
}

impl<'a> Dpl<'a> {
    /// Forms the block-Jacobi preconditioner of `problem` ([`pcg::form_preconditioner`])
    /// and the west and north weights.
    pub fn new(problem: &'a Problem) -> Dpl<'a> {
        let (p_a, p_b, p_c) = pcg::form_preconditioner(&problem.a, &problem.b, &problem.c);
        let n = problem.pixels();
        let w = problem.width;
        let left = (0..n)
            .map(|i| if i > 0 { problem.right[i - 1] } else { 0.0 })
            .collect();
        let up = (0..n)
            .map(|i| if i >= w { problem.down[i - w] } else { 0.0 })
            .collect();
        Dpl {
            problem,
            p_a,
            p_b,
            p_c,
            left,
            up,
        }
    }

    /// Solves `A x = rhs` from `x = 0` in one call of [`pcg::solve`] (the loop inside the
    /// `#[parallel]` function), with the options and the errors of `solver::pcg`.
    pub fn solve(&self, rhs: &Field, opts: Options) -> Result<Solution, String> {
        let s = self.problem;
        let start = Instant::now();
        let (u, v, iterations, residual, (breakdown, product)) = pcg::solve(
            &s.a,
            &s.b,
            &s.c,
            &self.left,
            &s.right,
            &self.up,
            &s.down,
            s.width,
            &self.p_a,
            &self.p_b,
            &self.p_c,
            &rhs.u,
            &rhs.v,
            opts.tolerance,
            opts.max_iterations,
        );
        let what = match breakdown {
            0 => {
                return Ok(Solution {
                    x: Field { u, v },
                    iterations,
                    residual,
                    converged: residual <= opts.tolerance,
                    elapsed: start.elapsed(),
                });
            }
            1 => "r . z",
            _ => "p . Ap",
        };
        Err(format!(
            "dpl (one call): breakdown at iteration {iterations}: {what} = {product}"
        ))
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
        let (l, u) = (&self.left, &self.up);
        (q.u, q.v) = pcg::apply(
            &s.a, &s.b, &s.c, &p.u, &p.v, l, &s.right, u, &s.down, s.width,
        );
    }

    fn precondition(&self, r: &Field, z: &mut Field) {
        if (z.u.len(), z.v.len()) == (r.u.len(), r.v.len()) {
            let (p_a, p_b, p_c) = (&self.p_a, &self.p_b, &self.p_c);
            pcg::precondition_into(&r.u, &r.v, p_a, p_b, p_c, &mut z.u, &mut z.v);
        } else {
            (z.u, z.v) = pcg::precondition(&r.u, &r.v, &self.p_a, &self.p_b, &self.p_c);
        }
    }

    fn dot(&self, x: &Field, y: &Field) -> f64 {
        pcg::dot(&x.u, &x.v, &y.u, &y.v)
    }

    fn add_scaled(&self, x: &mut Field, s: f32, y: &Field) {
        pcg::axpy_in_place(s, &mut x.u, &y.u);
        pcg::axpy_in_place(s, &mut x.v, &y.v);
    }

    fn scale_add(&self, z: &Field, s: f32, p: &mut Field) {
        pcg::scale_add_in_place(&z.u, s, &mut p.u);
        pcg::scale_add_in_place(&z.v, s, &mut p.v);
    }
}
