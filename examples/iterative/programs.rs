//! The `#[parallel]` functions of the `iterative` example: loops inside element functions
//! (one sequential loop per element: [`binomial_calls`], [`lambert_w`]) and loops at the
//! top level of a body (each iteration a whole parallel step, carrying sequences:
//! [`power_iteration`], [`jacobi_poisson`]).
//!
//! Included by `examples/iterative.rs`, `tests/example_iterative.rs` and
//! `benches/iterative.rs`.

use dpl::prelude::*;

/// European call prices on a Cox-Ross-Rubinstein binomial tree of `steps` steps, one per
/// option: spot price, strike, volatility and time to expiry (in years) per option, and
/// one risk-free rate `rate` for all.
///
/// The tree moves up by `u = e^(sigma sqrt(dt))` or down by `d = 1/u` each step of
/// `dt = expiry / steps`, up with the risk-neutral probability `p = (e^(rate dt) - d) /
/// (u - d)` (assumed in `(0, 1)`, that is `rate dt < sigma sqrt(dt)`). The usual backward
/// induction over the tree needs an array per option, and a loop in an element function
/// carries only scalars; for a European option the tree's price is also the discounted
/// expectation of the payoff over the terminal nodes,
///
/// ```text
/// e^(-rate expiry) sum_j C(n, j) p^j (1 - p)^(n - j) max(S u^j d^(n - j) - K, 0),
/// ```
///
/// which two scalar loops compute exactly (the same price up to rounding). The binomial
/// weights are carried relative to the weight of the mode `m = floor((n + 1) p)` (1 there,
/// the largest): up from `m` with `w(j + 1) = w(j) (n - j) / (j + 1) p / (1 - p)`, down
/// with the inverse ratio, each loop stopping at the end of the tree or where the weight
/// underflows to 0 (all further ones would too); the sum is divided by the sum of the
/// weights. No weight overflows or underflows before it is negligible, even for
/// thousands of steps, where `(1 - p)^n` alone would underflow, and the loops use only
/// `+ - * /` (the same bits on every place). Terminal prices are carried the same way,
/// `S u^(2j - n)` times or divided by `u^2` per node.
#[parallel]
pub fn binomial_calls(
    spot: &[f64],
    strike: &[f64],
    vol: &[f64],
    expiry: &[f64],
    rate: f64,
    steps: u32,
) -> Vec<f64> {
    map(
        |s0, k, sigma, t| {
            let dt = t / steps as f64;
            let u = (sigma * dt.sqrt()).exp();
            let d = 1.0 / u;
            let p = ((rate * dt).exp() - d) / (u - d);
            let odds = p / (1.0 - p);
            let u2 = u * u;
            let mode = (((steps + 1) as f64 * p).floor() as u32).min(steps);
            let at_mode = s0 * u.powi(2 * mode as i32 - steps as i32);
            let mut total = 0.0;
            let mut value = 0.0;
            // From the mode up to the top of the tree.
            let mut w = 1.0;
            let mut s = at_mode;
            let mut j = mode;
            loop {
                total += w;
                value += w * (s - k).max(0.0);
                if j == steps {
                    break;
                }
                w *= (steps - j) as f64 / (j + 1) as f64 * odds;
                if w == 0.0 {
                    break;
                }
                s *= u2;
                j += 1;
            }
            // From below the mode down to the bottom.
            w = 1.0;
            s = at_mode;
            j = mode;
            while j > 0 {
                w *= j as f64 / (steps - j + 1) as f64 / odds;
                if w == 0.0 {
                    break;
                }
                s /= u2;
                j -= 1;
                total += w;
                value += w * (s - k).max(0.0);
            }
            value / total * (-rate * t).exp()
        },
        spot,
        strike,
        vol,
        expiry,
    )
}

/// The principal branch of Lambert's W for every `y >= 0`: the `x >= 0` with `x e^x = y`,
/// by Newton's method, and the number of Newton steps each took.
///
/// Newton's step for `f(x) = x e^x - y` is `f(x) / f'(x) = (x e^x - y) / (e^x (x + 1))`.
/// It starts from `ln(1 + y)`, which is never below the root (`ln(1 + y) (1 + y) >= y`),
/// and as `f` is convex for `x > -2` the steps then approach the root from above. Each
/// element loops `while` the last step moved `x` by more than `tol` relative to `x`, at
/// most `max_iter` times.
#[parallel]
pub fn lambert_w(y: &[f64], tol: f64, max_iter: u32) -> (Vec<f64>, Vec<u32>) {
    unzip(map(
        |yi| {
            let mut x = (1.0 + yi).ln();
            let mut step = f64::INFINITY;
            let mut i = 0u32;
            while i < max_iter && step.abs() > tol * x.abs() {
                let e = x.exp();
                step = (x * e - yi) / (e * (x + 1.0));
                x -= step;
                i += 1;
            }
            (x, i)
        },
        y,
    ))
}

/// The SPEC's power iteration, verbatim: `iters` steps of `v = A v / |A v|` from `v0`, and
/// the last norm `|A v|` (the dominant eigenvalue's magnitude once converged).
#[parallel]
pub fn power_iteration(a: &Matrix<f64>, v0: &[f64], iters: usize) -> (Vec<f64>, f64) {
    let mut v = v0.to_vec();
    let mut lambda = 0.0;
    for _ in 0..iters {
        let w = map(|row| sum(map(|aij, vj| aij * vj, row, v)), a);
        lambda = sum(map(|wi| wi * wi, w)).sqrt();
        v = map(|wi| wi / lambda, w);
    }
    (v, lambda)
}

/// Jacobi sweeps for the 2-D Poisson equation `-Δu = g` on a grid of `width` columns
/// (`len(f) / width` rows, row by row) with `u = 0` outside it: each sweep replaces every
/// value by `(f + west + east + north + south) / 4`, where `f = h² g` (`h` the grid
/// spacing). Sweeps until no value changes by more than `tol` (a `max` of the changes,
/// read by the `while` condition), at most `max_sweeps` times; returns the grid and the
/// number of sweeps. `len(f)` must be a multiple of `width` (and `width > 0` unless `f`
/// is empty).
#[parallel]
pub fn jacobi_poisson(f: &[f64], width: usize, tol: f64, max_sweeps: u32) -> (Vec<f64>, u32) {
    let n = len(f);
    let mut x = map(|_| 0.0, f);
    let mut change = f64::INFINITY;
    let mut sweeps = 0u32;
    while sweeps < max_sweeps && change > tol {
        let next = map(
            |i| {
                let col = i % width;
                let west = if col > 0 { x[i - 1] } else { 0.0 };
                let east = if col + 1 < width { x[i + 1] } else { 0.0 };
                let north = if i >= width { x[i - width] } else { 0.0 };
                let south = if i + width < n { x[i + width] } else { 0.0 };
                (f[i] + west + east + north + south) * 0.25
            },
            indices(f),
        );
        change = reduce(|p, q| p.max(q), map(|p, q| (p - q).abs(), next, x), 0.0);
        x = next;
        sweeps += 1;
    }
    (x, sweeps)
}
