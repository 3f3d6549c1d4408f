//! A preconditioned conjugate gradient solve on `Place::Mpi`: `(-Δ + c) u = b` on an
//! `n x n` grid (the 5-point Laplacian with zero boundary values, plus a varying positive
//! `c`), Jacobi-preconditioned. The vectors are distributed in balanced blocks of the
//! grid's points in row order; the operator reads each point's four neighbours, so every
//! application exchanges halos of one grid row with the neighbouring ranks, and each dot
//! product combines one partial per rank in rank order. The host loop is plain Rust;
//! each step is one fused `#[parallel]` call.
//!
//! The same solve then runs as one `#[parallel]` call with its loop inside
//! (`kernels::solve`: every rank runs the loop, the vectors stay its blocks) and must give
//! the same iterations and the same bits.
//!
//! The same solver then runs on one node (`Place::Cpu`, whole vectors, on rank 0): it
//! must take the same number of iterations and reach the same solution.
//!
//! ```text
//! cargo build --release --features mpi --example mpi_cg
//! mpirun -n 2 target/release/examples/mpi_cg 1000
//! ```

#[path = "mpi/common.rs"]
mod common;

use common::*;
use dpl::prelude::*;

#[parallel]
mod kernels {
    /// `(A x, p . A x)` with `A = -Δ + c` on a grid `width` points wide: the four
    /// neighbours are read at clamped indices (always in range) times 0 or 1 (0 across
    /// the border), so the loop has no branch.
    pub fn apply_dot(x: &[f64], c: &[f64], width: usize) -> (Vec<f64>, f64) {
        let n = len(x);
        let q = map(
            |i, xi, ci| {
                let last = n - 1;
                let col = i % width;
                let west = if col > 0 { 1.0 } else { 0.0 } * x[i.max(1) - 1];
                let east = if col + 1 < width { 1.0 } else { 0.0 } * x[(i + 1).min(last)];
                let north = if i >= width { 1.0 } else { 0.0 } * x[i.max(width) - width];
                let south = if i + width < n { 1.0 } else { 0.0 } * x[(i + width).min(last)];
                (4.0 + ci) * xi - ((west + east) + (north + south))
            },
            indices(x),
            x,
            c,
        );
        (q, sum(map(|a, b| a * b, x, q)))
    }

    /// `x + alpha p`, `r - alpha q` and `|r - alpha q|^2`.
    pub fn update(
        x: &[f64],
        r: &[f64],
        p: &[f64],
        q: &[f64],
        alpha: f64,
    ) -> (Vec<f64>, Vec<f64>, f64) {
        let x2 = map(|a, b| a + alpha * b, x, p);
        let r2 = map(|a, b| a - alpha * b, r, q);
        (x2, r2, sum(map(|v| v * v, r2)))
    }

    /// The Jacobi step `z = r / diag(A)` and `r . z`.
    pub fn precondition(r: &[f64], c: &[f64]) -> (Vec<f64>, f64) {
        let z = map(|a, ci| a / (4.0 + ci), r, c);
        (z, sum(map(|a, b| a * b, r, z)))
    }

    /// `z + beta p`.
    pub fn direction(z: &[f64], p: &[f64], beta: f64) -> Vec<f64> {
        map(|a, b| a + beta * b, z, p)
    }

    /// `|v|^2`.
    pub fn norm2(v: &[f64]) -> f64 {
        sum(map(|a| a * a, v))
    }

    /// The whole solve in one call, its loop inside (the host loop of [`super::pcg`] with
    /// the same operations in the same order): `(u, iterations, residual)`. On
    /// `Place::Mpi` every rank runs the loop; the vectors stay the ranks' blocks.
    pub fn solve(
        b: &[f64],
        c: &[f64],
        width: usize,
        tol: f64,
        max_iter: usize,
    ) -> (Vec<f64>, usize, f64) {
        let bb = norm2(b).sqrt();
        let mut u = map(|_v| 0.0, b);
        let mut r = b.to_vec();
        let (z0, rz0) = precondition(r, c);
        let mut p = z0;
        let mut rz = rz0;
        let mut iterations = 0;
        let mut residual = 1.0;
        while iterations < max_iter {
            let (q, pq) = apply_dot(p, c, width);
            let alpha = rz / pq;
            let (u2, r2, rr) = update(u, r, p, q, alpha);
            u = u2;
            r = r2;
            iterations += 1;
            residual = rr.sqrt() / bb;
            if residual < tol {
                break;
            }
            let (z, rz2) = precondition(r, c);
            p = direction(z, p, rz2 / rz);
            rz = rz2;
        }
        (u, iterations, residual)
    }
}

/// The solution, the iterations and the final relative residual.
struct Solved {
    u: Vec<f64>,
    iterations: usize,
    residual: f64,
}

/// PCG from `u = 0` until `|r| / |b| < tol` (or `max_iter` steps), on the current place.
fn pcg(b: &[f64], c: &[f64], width: usize, tol: f64, max_iter: usize) -> Solved {
    let bb = kernels::norm2(b).sqrt();
    let mut u = vec![0.0; b.len()];
    let mut r = b.to_vec();
    let (z, mut rz) = kernels::precondition(&r, c);
    let mut p = z;
    let mut iterations = 0;
    let mut residual = 1.0;
    while iterations < max_iter {
        let (q, pq) = kernels::apply_dot(&p, c, width);
        let alpha = rz / pq;
        let (u2, r2, rr) = kernels::update(&u, &r, &p, &q, alpha);
        (u, r) = (u2, r2);
        iterations += 1;
        residual = rr.sqrt() / bb;
        if residual < tol {
            break;
        }
        let (z, rz2) = kernels::precondition(&r, c);
        p = kernels::direction(&z, &p, rz2 / rz);
        rz = rz2;
    }
    Solved {
        u,
        iterations,
        residual,
    }
}

fn main() {
    let mpi = dpl::mpi::init();
    let (rank, size) = (mpi.rank(), mpi.size());
    let width = size_arg(1000);
    let n = width * width;
    let tol = 1e-8;
    let b_at = |i: usize| 1.0 + ((i * 7919) % 13) as f64 * 0.1;
    let c_at = |i: usize| 0.01 + ((i * 104_729) % 17) as f64 * 0.002;
    let mine = dpl::mpi::block(n, rank, size);
    let b: Vec<f64> = mine.clone().map(b_at).collect();
    let c: Vec<f64> = mine.clone().map(c_at).collect();
    let mut dist = None;
    let t = job_time(3, &mut || {
        dist = Some(with_place(Place::Mpi, || {
            pcg(&b, &c, width, tol, 10 * width)
        }));
    });
    let dist = dist.expect("solved");
    // The solver as one call, its loop inside: the same iterations and the same bits.
    let mut one_call = None;
    let t_one = job_time(3, &mut || {
        one_call = Some(with_place(Place::Mpi, || {
            kernels::solve(&b, &c, width, tol, 10 * width)
        }));
    });
    let (u_one, iterations_one, residual_one) = one_call.expect("solved");
    assert_eq!(
        (iterations_one, residual_one.to_bits()),
        (dist.iterations, dist.residual.to_bits()),
        "the one-call solve took another path than the host loop"
    );
    assert!(
        u_one
            .iter()
            .zip(&dist.u)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "the one-call solve's solution differs from the host loop's"
    );
    let per_iteration = ms(t) / dist.iterations as f64;
    if rank == 0 {
        println!(
            "PCG, {width}x{width} grid on {size} rank(s) x {} thread(s): {} iterations, residual {:.2e}, {:.1} ms ({:.3} ms per iteration)",
            rayon::current_num_threads(),
            dist.iterations,
            dist.residual,
            ms(t),
            per_iteration
        );
    }
    if rank == 0 {
        println!(
            "the same solve as one #[parallel] call (its loop inside): {:.1} ms, {:.2}x the host loop's time; the same iterations and bits",
            ms(t_one),
            ms(t_one) / ms(t)
        );
    }
    report(rank, "cg", "time", ms(t), "ms");
    report(rank, "cg", "one_call_time", ms(t_one), "ms");
    report(rank, "cg", "iterations", dist.iterations as f64, "count");
    // The single-node solver on the whole problem: the same iterations, the same solution.
    let u = dpl::mpi::gather_to_root(&dist.u, 0);
    if let Some(u) = u {
        let b: Vec<f64> = (0..n).map(b_at).collect();
        let c: Vec<f64> = (0..n).map(c_at).collect();
        let one = with_place(Place::Cpu, || pcg(&b, &c, width, tol, 10 * width));
        let diff = u
            .iter()
            .zip(&one.u)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let scale = one.u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        println!(
            "single node (Place::Cpu): {} iterations, residual {:.2e}; largest difference of the solutions {:.1e} (of {:.2})",
            one.iterations, one.residual, diff, scale
        );
        assert_eq!(
            one.iterations, dist.iterations,
            "the distributed solve took another number of iterations"
        );
        assert!(diff <= 1e-6 * scale, "the solutions differ");
        compare_with_cpu(rank, size, "cg", 3, &|| pcg(&b, &c, width, tol, 10 * width));
    }
}
