//! The `iterative` example's algorithms written by hand: plain sequential Rust (`*_seq`,
//! the reference the example checks dpl against) and rayon (`*_rayon`, what a user would
//! write instead of dpl), with the same arithmetic per element as the `#[parallel]`
//! functions of `programs.rs`, so that per-element results agree to the bit.
//!
//! Included by `examples/iterative.rs` and `benches/iterative.rs`.
#![allow(dead_code)] // Each includer uses some of these.

use rayon::prelude::*;

/// One European call on a Cox-Ross-Rubinstein tree of `steps` steps, summed over the
/// terminal nodes with binomial weights relative to the mode (the method of
/// `programs::binomial_calls`).
pub fn crr_call(s0: f64, k: f64, sigma: f64, t: f64, rate: f64, steps: u32) -> f64 {
    let dt = t / f64::from(steps);
    let u = (sigma * dt.sqrt()).exp();
    let d = 1.0 / u;
    let p = ((rate * dt).exp() - d) / (u - d);
    let odds = p / (1.0 - p);
    let u2 = u * u;
    let mode = ((f64::from(steps + 1) * p).floor() as u32).min(steps);
    let at_mode = s0 * u.powi(2 * mode as i32 - steps as i32);
    let (mut total, mut value) = (0.0, 0.0);
    let (mut w, mut s) = (1.0f64, at_mode);
    for j in mode..=steps {
        if j > mode {
            w *= f64::from(steps - (j - 1)) / f64::from(j) * odds;
            if w == 0.0 {
                break;
            }
            s *= u2;
        }
        total += w;
        value += w * (s - k).max(0.0);
    }
    let (mut w, mut s) = (1.0f64, at_mode);
    for j in (0..mode).rev() {
        w *= f64::from(j + 1) / f64::from(steps - j) / odds;
        if w == 0.0 {
            break;
        }
        s /= u2;
        total += w;
        value += w * (s - k).max(0.0);
    }
    value / total * (-rate * t).exp()
}

/// The batch of options of `programs::binomial_calls`, one after the other.
pub fn binomial_seq(
    spot: &[f64],
    strike: &[f64],
    vol: &[f64],
    expiry: &[f64],
    rate: f64,
    steps: u32,
) -> Vec<f64> {
    (0..spot.len())
        .map(|i| crr_call(spot[i], strike[i], vol[i], expiry[i], rate, steps))
        .collect()
}

/// The batch of options with rayon.
pub fn binomial_rayon(
    spot: &[f64],
    strike: &[f64],
    vol: &[f64],
    expiry: &[f64],
    rate: f64,
    steps: u32,
) -> Vec<f64> {
    (0..spot.len())
        .into_par_iter()
        .map(|i| crr_call(spot[i], strike[i], vol[i], expiry[i], rate, steps))
        .collect()
}

/// Lambert's W of one `y >= 0` by Newton's method from `ln(1 + y)`, and the steps taken
/// (the method of `programs::lambert_w`).
pub fn newton_w(y: f64, tol: f64, max_iter: u32) -> (f64, u32) {
    let mut x = (1.0 + y).ln();
    for i in 0..max_iter {
        let e = x.exp();
        let step = (x * e - y) / (e * (x + 1.0));
        x -= step;
        if step.abs() <= tol * x.abs() {
            return (x, i + 1);
        }
    }
    (x, max_iter)
}

/// Lambert's W of every element, one after the other.
pub fn lambert_seq(y: &[f64], tol: f64, max_iter: u32) -> (Vec<f64>, Vec<u32>) {
    y.iter().map(|&yi| newton_w(yi, tol, max_iter)).unzip()
}

/// Lambert's W of every element with rayon.
pub fn lambert_rayon(y: &[f64], tol: f64, max_iter: u32) -> (Vec<f64>, Vec<u32>) {
    y.par_iter().map(|&yi| newton_w(yi, tol, max_iter)).unzip()
}

/// `iters` steps of power iteration on the row-major `n x n` matrix `a` from `v0`,
/// sequentially: the vector and the last norm.
pub fn power_seq(a: &[f64], v0: &[f64], iters: usize) -> (Vec<f64>, f64) {
    let n = v0.len();
    let (mut v, mut lambda) = (v0.to_vec(), 0.0);
    let mut w = vec![0.0; n];
    for _ in 0..iters {
        for (wi, row) in w.iter_mut().zip(a.chunks_exact(n.max(1))) {
            *wi = row.iter().zip(&v).map(|(x, y)| x * y).sum();
        }
        lambda = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        for (vi, wi) in v.iter_mut().zip(&w) {
            *vi = wi / lambda;
        }
    }
    (v, lambda)
}

/// Power iteration with rayon: rows in parallel, a parallel sum, a parallel update.
pub fn power_rayon(a: &[f64], v0: &[f64], iters: usize) -> (Vec<f64>, f64) {
    let n = v0.len();
    let (mut v, mut lambda) = (v0.to_vec(), 0.0);
    let mut w = vec![0.0; n];
    for _ in 0..iters {
        w.par_iter_mut()
            .zip(a.par_chunks_exact(n.max(1)))
            .for_each(|(wi, row)| *wi = row.iter().zip(&v).map(|(x, y)| x * y).sum());
        lambda = w.par_iter().map(|x| x * x).sum::<f64>().sqrt();
        v.par_iter_mut()
            .zip(&w)
            .for_each(|(vi, wi)| *vi = wi / lambda);
    }
    (v, lambda)
}

/// One Jacobi update of the value at `i` of the grid `x` (`width` columns, `n` values).
#[inline]
fn jacobi_point(f: &[f64], x: &[f64], width: usize, i: usize) -> f64 {
    let n = x.len();
    let col = i % width;
    let west = if col > 0 { x[i - 1] } else { 0.0 };
    let east = if col + 1 < width { x[i + 1] } else { 0.0 };
    let north = if i >= width { x[i - width] } else { 0.0 };
    let south = if i + width < n { x[i + width] } else { 0.0 };
    (f[i] + west + east + north + south) * 0.25
}

/// Jacobi sweeps of `programs::jacobi_poisson`, sequentially (the new grid and the largest
/// change in one pass).
pub fn jacobi_seq(f: &[f64], width: usize, tol: f64, max_sweeps: u32) -> (Vec<f64>, u32) {
    let (mut x, mut next) = (vec![0.0; f.len()], vec![0.0; f.len()]);
    let mut sweeps = 0;
    let mut change = f64::INFINITY;
    while sweeps < max_sweeps && change > tol {
        change = 0.0;
        for (i, y) in next.iter_mut().enumerate() {
            *y = jacobi_point(f, &x, width, i);
            change = f64::max(change, (*y - x[i]).abs());
        }
        std::mem::swap(&mut x, &mut next);
        sweeps += 1;
    }
    (x, sweeps)
}

/// Jacobi sweeps with rayon: each sweep one parallel pass computing the new grid and the
/// largest change.
pub fn jacobi_rayon(f: &[f64], width: usize, tol: f64, max_sweeps: u32) -> (Vec<f64>, u32) {
    let (mut x, mut next) = (vec![0.0; f.len()], vec![0.0; f.len()]);
    let mut sweeps = 0;
    let mut change = f64::INFINITY;
    while sweeps < max_sweeps && change > tol {
        change = next
            .par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .map(|(i, y)| {
                *y = jacobi_point(f, &x, width, i);
                (*y - x[i]).abs()
            })
            .reduce(|| 0.0, f64::max);
        std::mem::swap(&mut x, &mut next);
        sweeps += 1;
    }
    (x, sweeps)
}
