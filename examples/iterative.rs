//! Iterative algorithms in dpl: loops inside element functions and at the top level of a
//! `#[parallel]` body.
//!
//! * Binomial option pricing (LitP's benchmark): a batch of European calls, each priced on
//!   a Cox-Ross-Rubinstein tree by a per-element loop over the tree's terminal nodes
//!   ([`programs::binomial_calls`]; why not backward induction: its doc).
//! * Newton's method per element: Lambert's W, the `x` with `x e^x = y`, a `while` loop
//!   with a tolerance and an iteration cap ([`programs::lambert_w`]).
//! * Power iteration (the SPEC's function): a `for` loop at the top level carrying a vector
//!   through whole parallel steps over a `Matrix<f64>` ([`programs::power_iteration`]).
//! * Jacobi sweeps for the 2-D Poisson equation until convergence: a top-level `while`
//!   whose condition reads a `max` reduction of the body ([`programs::jacobi_poisson`]).
//!
//! Each runs on `Place::Cpu` and `Place::Seq` and is checked against plain sequential Rust
//! written in `iterative/baselines.rs` (to the bit where each element is computed alone,
//! to rounding where sums are reassociated), then timed against the same algorithm
//! hand-written with rayon and sequentially, in interleaved rounds. Ratios above 1 mean
//! dpl is faster; timings on a shared machine vary: read the ratios.
//!
//! ```text
//! cargo run --release --example iterative
//! ```
//!
//! # Where dpl loses time against the hand-written code
//!
//! * Binomial pricing used to: every floating-point `+`, `*` and `/` on the loop's chain
//!   of dependent operations went through NaN canonicalization (`dpl_core::nan::canon_f64`,
//!   a compare and a select, so that every place gives the same NaN bits), because the
//!   loop carries its values. The values a loop carries are now made canonical once, after
//!   the loop, where that gives the same bits (`dpl_core::nan::plan`: each carried value is
//!   read only by arithmetic and comparisons in the loop and its next value is an
//!   operation's result), and the loop runs at the hand-written one's speed.
//! * Newton's method used to (0.87-0.94x rayon, 2026-12-07): the canonicalization after
//!   the loop tests the bits of `x` (`to_bits`), and LLVM then kept `x` in an integer
//!   register across the loop, moving it to a float register and back on every
//!   iteration's chain of an `exp` and a division. A carried value that is a component of
//!   the map's result is now made canonical by the run time where it is stored (as the
//!   results of other float operations are), so the loop never reads its bits: 0.98-1.00x.
//! * Jacobi: each sweep is two passes (the new grid, then the `max` of the changes, which
//!   reads both grids) and a new vector, where the hand-written sweep computes both in one
//!   pass into a reused buffer. On a small grid the cost of each parallel step dominates
//!   either way (the 64 x 64 problem runs as fast sequentially).

#[path = "iterative/baselines.rs"]
mod baselines;
#[path = "iterative/programs.rs"]
mod programs;
#[path = "shared/timing.rs"]
mod timing;

use dpl::prelude::*;
use dpl_testkit::SplitMix64;

/// Timing rounds per comparison.
const ROUNDS: usize = 5;

/// Times `dpl` (on `Place::Cpu`), `rayon` and `seq` in interleaved rounds and prints the
/// minima and the ratios `rayon / dpl` and `seq / dpl`.
fn compare(what: &str, dpl: &dyn Fn(), rayon: &dyn Fn(), seq: &dyn Fn()) {
    let on_cpu = || with_place(Place::Cpu, dpl);
    let t = timing::interleaved(&[&on_cpu, rayon, seq], ROUNDS);
    let secs = |i: usize| t[i].0.as_secs_f64();
    println!(
        "  {what}: dpl {}, rayon {}, seq {}; rayon / dpl {:.2}, seq / dpl {:.2}",
        timing::fmt(t[0].0),
        timing::fmt(t[1].0),
        timing::fmt(t[2].0),
        secs(1) / secs(0),
        secs(2) / secs(0)
    );
}

/// The largest difference between `got` and `want`, relative to `1 + |want|`.
fn max_relative(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "lengths");
    got.iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs() / (1.0 + w.abs()))
        .fold(0.0, f64::max)
}

/// A batch of `n` options: spots 50..150, strikes 60..140, volatilities 10%..50%,
/// expiries 0.1..2 years.
fn options(n: usize) -> [Vec<f64>; 4] {
    let mut rng = SplitMix64::new(7);
    [
        rng.f64s(n, 50.0, 150.0),
        rng.f64s(n, 60.0, 140.0),
        rng.f64s(n, 0.1, 0.5),
        rng.f64s(n, 0.1, 2.0),
    ]
}

fn binomial() {
    let (n, steps, rate) = (4096, 1000, 0.03);
    let [s, k, v, t] = options(n);
    println!("binomial pricing: {n} European calls, {steps} steps each");
    let want = baselines::binomial_seq(&s, &k, &v, &t, rate, steps);
    for place in [Place::Cpu, Place::Seq] {
        let got = with_place(place, || {
            programs::binomial_calls(&s, &k, &v, &t, rate, steps)
        });
        assert_eq!(got, want, "{place:?}: dpl and plain Rust disagree");
    }
    assert_eq!(baselines::binomial_rayon(&s, &k, &v, &t, rate, steps), want);
    let mean = want.iter().sum::<f64>() / n as f64;
    println!("  the same prices on Cpu, Seq and in plain Rust; mean price {mean:.4}");
    compare(
        "pricing",
        &|| drop(programs::binomial_calls(&s, &k, &v, &t, rate, steps)),
        &|| drop(baselines::binomial_rayon(&s, &k, &v, &t, rate, steps)),
        &|| drop(baselines::binomial_seq(&s, &k, &v, &t, rate, steps)),
    );
}

fn newton() {
    let n = 1 << 20;
    let (tol, max_iter) = (1e-14, 60);
    // Spread over many magnitudes: 10^-3 .. 10^9.
    let mut rng = SplitMix64::new(11);
    let y: Vec<f64> = (0..n).map(|_| 10f64.powf(rng.f64_in(-3.0, 9.0))).collect();
    println!("Newton's method: Lambert's W of {n} values");
    let want = baselines::lambert_seq(&y, tol, max_iter);
    for place in [Place::Cpu, Place::Seq] {
        let got = with_place(place, || programs::lambert_w(&y, tol, max_iter));
        assert!(got == want, "{place:?}: dpl and plain Rust disagree");
    }
    let steps: u64 = want.1.iter().map(|&i| u64::from(i)).sum();
    let worst = want.1.iter().max().copied().unwrap_or(0);
    assert!(worst < max_iter, "every element converged");
    let residual = want
        .0
        .iter()
        .zip(&y)
        .map(|(x, y)| (x * x.exp() - y).abs() / y)
        .fold(0.0, f64::max);
    println!(
        "  the same roots and step counts on Cpu, Seq and in plain Rust: {steps} steps, \
         at most {worst} per element, largest relative residual {residual:.1e}"
    );
    compare(
        "Newton",
        &|| drop(programs::lambert_w(&y, tol, max_iter)),
        &|| drop(baselines::lambert_rayon(&y, tol, max_iter)),
        &|| drop(baselines::lambert_seq(&y, tol, max_iter)),
    );
}

fn power() {
    let (n, iters) = (1500, 30);
    // A symmetric matrix with a dominant eigenvalue: 2 + i / n on the diagonal, -0.5 beside
    // it, and small random entries elsewhere.
    let mut rng = SplitMix64::new(3);
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..i {
            let e = if j + 1 == i {
                -0.5
            } else {
                rng.f64_in(-1e-3, 1e-3)
            };
            a[i * n + j] = e;
            a[j * n + i] = e;
        }
        a[i * n + i] = 2.0 + i as f64 / n as f64;
    }
    let m = Matrix::row_major(n, n, a.clone()).expect("an n x n matrix");
    let v0 = vec![1.0; n];
    println!("power iteration: {n} x {n} matrix, {iters} iterations");
    let (want_v, want_lambda) = baselines::power_seq(&a, &v0, iters);
    for place in [Place::Cpu, Place::Seq] {
        let (v, lambda) = with_place(place, || programs::power_iteration(&m, &v0, iters));
        // Sums are reassociated: equal to rounding.
        let dv = max_relative(&v, &want_v);
        let dl = (lambda - want_lambda).abs() / want_lambda;
        assert!(dv < 1e-12 && dl < 1e-12, "{place:?}: {dv:e} {dl:e}");
    }
    println!("  eigenvalue estimate {want_lambda:.6} on Cpu, Seq and in plain Rust");
    compare(
        "power iteration",
        &|| drop(programs::power_iteration(&m, &v0, iters)),
        &|| drop(baselines::power_rayon(&a, &v0, iters)),
        &|| drop(baselines::power_seq(&a, &v0, iters)),
    );
}

fn jacobi() {
    let (width, height) = (64, 64);
    let (tol, max_sweeps) = (1e-7, 100_000);
    // -Δu = 2π² sin(πx) sin(πy) on the unit square: u = sin(πx) sin(πy).
    let h = 1.0 / (width + 1) as f64;
    let pi = std::f64::consts::PI;
    let at = |i: usize| {
        let (x, y) = ((i % width + 1) as f64 * h, (i / width + 1) as f64 * h);
        (pi * x).sin() * (pi * y).sin()
    };
    let f: Vec<f64> = (0..width * height)
        .map(|i| h * h * 2.0 * pi * pi * at(i))
        .collect();
    println!("Jacobi: 2-D Poisson equation on a {width} x {height} grid, until changes <= {tol:e}");
    let want = baselines::jacobi_seq(&f, width, tol, max_sweeps);
    for place in [Place::Cpu, Place::Seq] {
        let got = with_place(place, || {
            programs::jacobi_poisson(&f, width, tol, max_sweeps)
        });
        assert!(got == want, "{place:?}: dpl and plain Rust disagree");
    }
    assert!(baselines::jacobi_rayon(&f, width, tol, max_sweeps) == want);
    assert!(want.1 < max_sweeps, "converged");
    let error = (0..width * height)
        .map(|i| (want.0[i] - at(i)).abs())
        .fold(0.0, f64::max);
    println!(
        "  the same grid after {} sweeps on Cpu, Seq and in plain Rust; \
         largest error against the exact solution {error:.1e}",
        want.1
    );
    compare(
        "Jacobi until convergence",
        &|| drop(programs::jacobi_poisson(&f, width, tol, max_sweeps)),
        &|| drop(baselines::jacobi_rayon(&f, width, tol, max_sweeps)),
        &|| drop(baselines::jacobi_seq(&f, width, tol, max_sweeps)),
    );
    // A small grid's sweeps are short next to the cost of a parallel step: also a larger
    // grid, a fixed number of sweeps (a zero tolerance).
    let (side, sweeps) = (512, 50);
    let f = SplitMix64::new(17).f64s(side * side, -1.0, 1.0);
    let want = baselines::jacobi_seq(&f, side, 0.0, sweeps);
    let got = with_place(Place::Cpu, || {
        programs::jacobi_poisson(&f, side, 0.0, sweeps)
    });
    assert!(got == want, "Cpu: dpl and plain Rust disagree");
    compare(
        &format!("{sweeps} sweeps on {side} x {side}"),
        &|| drop(programs::jacobi_poisson(&f, side, 0.0, sweeps)),
        &|| drop(baselines::jacobi_rayon(&f, side, 0.0, sweeps)),
        &|| drop(baselines::jacobi_seq(&f, side, 0.0, sweeps)),
    );
}

fn main() {
    binomial();
    newton();
    power();
    jacobi();
}
