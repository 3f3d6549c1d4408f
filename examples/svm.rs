//! Nonlinear SVM training with SMO and the RBF kernel (Copperhead, section 6.3 and Figure 9).
//!
//! The solver is Sequential Minimal Optimization with the first-order working-set selection
//! of Keerthi et al., in the formulation GPU SVM solvers use (Catanzaro et al.): keep the
//! auxiliary vector `f_i = sum_j alpha_j y_j K(x_i, x_j) - y_i` and, each iteration,
//!
//! * select `high = argmin { f_i : i in I_up }` and `low = argmax { f_i : i in I_low }`,
//!   with `I_up = { y_i = +1, alpha_i < C } u { y_i = -1, alpha_i > 0 }` and
//!   `I_low = { y_i = +1, alpha_i > 0 } u { y_i = -1, alpha_i < C }`. Since
//!   `-y_i * grad_i = -f_i` for the dual gradient `grad_i = (Q alpha)_i - 1`, this is LIBSVM's
//!   "i = argmax over I_up of -y_i grad_i, j = argmin over I_low"; ties go to the smaller
//!   index, so the choice does not depend on the order of a parallel reduction;
//! * stop when `b_low <= b_high + 2 tau` (the KKT conditions hold to `tau`);
//! * evaluate the two kernel rows `K(., x_high)` and `K(., x_low)`, move `alpha_low` by
//!   `y_low (b_high - b_low) / eta` (`eta = K_hh + K_ll - 2 K_hl`), clip it to its box
//!   `[L, H]` inside `[0, C]`, move `alpha_high` so that `sum_i alpha_i y_i` stays 0, and
//!   update `f` with both kernel rows.
//!
//! The per-iteration data-parallel work is written as `#[parallel]` functions: the kernel
//! row ([`kernel_row`], Figure 9 nested inside a `map` over the points, the rows of a
//! row-major `Matrix<f32>`), the update of `f` ([`update_f`]) and the working-set selection
//! ([`select`]: two `(value, index)` reductions that the compiler fuses into one pass). The
//! host loop ([`train`]) is plain Rust and is shared by three engines: dpl (whatever the
//! current place is), a hand-written rayon version and a plain sequential version of the same
//! three steps, so the engines differ only where the parallel work is done.
//!
//! Run it with `cargo run --release --example svm` (`SVM_N`, `SVM_D`, `SVM_TEST_N` change the
//! sizes). It trains on two partly overlapping Gaussian blobs (10,000 x 32 by default) with
//! every engine, reports iterations, support vectors, training and held-out accuracy and the
//! time, checks that the engines agree, and times the kernel row alone (dpl, rayon and
//! sequential in interleaved rounds, so that load hits the three alike).

use dpl::prelude::*;
use dpl_testkit::SplitMix64;
use rayon::prelude::*;
use std::time::{Duration, Instant};

#[path = "shared/timing.rs"]
mod timing;

// ---------------------------------------------------------------------------------------
// The data-parallel part: #[parallel] functions
// ---------------------------------------------------------------------------------------

/// One kernel row: `K(x_i, x) = exp(ngamma * |x_i - x|^2)` for every point `x_i` (a row of
/// `points`). `norm2_diff` and `rbf` are Copperhead's Figure 9; the inner `sum(map(..))`
/// runs sequentially inside each element of the outer, parallel `map`.
#[parallel]
pub fn kernel_row(ngamma: f32, points: &Matrix<f32>, x: &[f32]) -> Vec<f32> {
    fn norm2_diff(a: &[f32], b: &[f32]) -> f32 {
        sum(map(
            |ai, bi| {
                let d = ai - bi;
                d * d
            },
            a,
            b,
        ))
    }
    fn rbf(ngamma: f32, a: &[f32], b: &[f32]) -> f32 {
        (ngamma * norm2_diff(a, b)).exp()
    }
    map(|xi| rbf(ngamma, xi, x), points)
}

/// The update of the auxiliary vector after a step:
/// `f_i + dh * K(x_i, x_high) + dl * K(x_i, x_low)` where `dh = (alpha_high' - alpha_high)
/// y_high` and `dl = (alpha_low' - alpha_low) y_low`.
#[parallel]
pub fn update_f(f: &[f32], k_high: &[f32], k_low: &[f32], dh: f32, dl: f32) -> Vec<f32> {
    map(|fi, kh, kl| fi + dh * kh + dl * kl, f, k_high, k_low)
}

/// The working-set selection: `((b_high, high), (b_low, low))`, the smallest `f_i` over
/// `I_up` and the largest over `I_low`, ties to the smaller index. An empty set gives
/// `(+inf, n)` or `(-inf, n)`. The two reductions read the same inputs and the compiler
/// fuses them into one pass over `f`, `alpha` and `y`.
#[parallel]
pub fn select(f: &[f32], alpha: &[f32], y: &[f32], c: f32) -> ((f32, usize), (f32, usize)) {
    let n = len(f);
    let up = map(
        |fi, ai, yi, i| {
            if (yi > 0.0 && ai < c) || (yi < 0.0 && ai > 0.0) {
                (fi, i)
            } else {
                (f32::INFINITY, n)
            }
        },
        f,
        alpha,
        y,
        range(n),
    );
    let low = map(
        |fi, ai, yi, i| {
            if (yi > 0.0 && ai > 0.0) || (yi < 0.0 && ai < c) {
                (fi, i)
            } else {
                (f32::NEG_INFINITY, n)
            }
        },
        f,
        alpha,
        y,
        range(n),
    );
    let high = reduce(
        |p, q| {
            if q.0 < p.0 || (q.0 == p.0 && q.1 < p.1) {
                q
            } else {
                p
            }
        },
        up,
        (f32::INFINITY, n),
    );
    let lowest = reduce(
        |p, q| {
            if q.0 > p.0 || (q.0 == p.0 && q.1 < p.1) {
                q
            } else {
                p
            }
        },
        low,
        (f32::NEG_INFINITY, n),
    );
    (high, lowest)
}

/// The decision values of a trained model on new points:
/// `sum_j coef_j K(x, sv_j) - b` for every row `x` of `points`, with `coef_j = alpha_j y_j`
/// of the support vectors `svs`. Three nesting levels: points, support vectors, features.
#[parallel]
pub fn decision(
    ngamma: f32,
    points: &Matrix<f32>,
    svs: &Matrix<f32>,
    coef: &[f32],
    b: f32,
) -> Vec<f32> {
    fn rbf(ngamma: f32, a: &[f32], b: &[f32]) -> f32 {
        (ngamma * sum(map(|ai, bi| (ai - bi) * (ai - bi), a, b))).exp()
    }
    map(
        |x| sum(map(|sv, cj| cj * rbf(ngamma, x, sv), svs, coef)) - b,
        points,
    )
}

// ---------------------------------------------------------------------------------------
// The three engines of the per-iteration work
// ---------------------------------------------------------------------------------------

/// A selected pair: `((b_high, high), (b_low, low))`.
pub type Selection = ((f32, usize), (f32, usize));

/// The per-iteration data-parallel steps of SMO; [`train`] is the host loop around them.
pub trait Engine {
    /// A short name for reports.
    fn name(&self) -> &'static str;
    /// `K(x_i, x)` for every point `x_i`.
    fn kernel_row(&self, ngamma: f32, points: &Matrix<f32>, x: &[f32]) -> Vec<f32>;
    /// `f_i + dh * k_high_i + dl * k_low_i`, in place.
    fn update_f(&self, f: &mut Vec<f32>, k_high: &[f32], k_low: &[f32], dh: f32, dl: f32);
    /// The working-set selection (see [`select`]).
    fn select(&self, f: &[f32], alpha: &[f32], y: &[f32], c: f32) -> Selection;
}

/// The `#[parallel]` functions above, on the current place.
pub struct Dpl;

impl Engine for Dpl {
    fn name(&self) -> &'static str {
        "dpl"
    }
    fn kernel_row(&self, ngamma: f32, points: &Matrix<f32>, x: &[f32]) -> Vec<f32> {
        kernel_row(ngamma, points, x)
    }
    fn update_f(&self, f: &mut Vec<f32>, k_high: &[f32], k_low: &[f32], dh: f32, dl: f32) {
        *f = update_f(f, k_high, k_low, dh, dl);
    }
    fn select(&self, f: &[f32], alpha: &[f32], y: &[f32], c: f32) -> Selection {
        select(f, alpha, y, c)
    }
}

/// `(value, index)` with the smaller value, ties to the smaller index.
fn arg_min(p: (f32, usize), q: (f32, usize)) -> (f32, usize) {
    if q.0 < p.0 || (q.0 == p.0 && q.1 < p.1) {
        q
    } else {
        p
    }
}

/// `(value, index)` with the larger value, ties to the smaller index.
fn arg_max(p: (f32, usize), q: (f32, usize)) -> (f32, usize) {
    if q.0 > p.0 || (q.0 == p.0 && q.1 < p.1) {
        q
    } else {
        p
    }
}

fn in_up(y: f32, a: f32, c: f32) -> bool {
    (y > 0.0 && a < c) || (y < 0.0 && a > 0.0)
}

fn in_low(y: f32, a: f32, c: f32) -> bool {
    (y > 0.0 && a > 0.0) || (y < 0.0 && a < c)
}

fn rbf_plain(ngamma: f32, a: &[f32], b: &[f32]) -> f32 {
    let d2: f32 = a
        .iter()
        .zip(b)
        .map(|(p, q)| {
            let d = p - q;
            d * d
        })
        .sum();
    (ngamma * d2).exp()
}

/// Plain sequential Rust: what the algorithm is without any parallelism.
pub struct Sequential;

impl Engine for Sequential {
    fn name(&self) -> &'static str {
        "sequential"
    }
    fn kernel_row(&self, ngamma: f32, points: &Matrix<f32>, x: &[f32]) -> Vec<f32> {
        row_major_data(points)
            .chunks_exact(points.cols().max(1))
            .map(|p| rbf_plain(ngamma, p, x))
            .collect()
    }
    fn update_f(&self, f: &mut Vec<f32>, k_high: &[f32], k_low: &[f32], dh: f32, dl: f32) {
        for ((fi, kh), kl) in f.iter_mut().zip(k_high).zip(k_low) {
            *fi = *fi + dh * kh + dl * kl;
        }
    }
    fn select(&self, f: &[f32], alpha: &[f32], y: &[f32], c: f32) -> Selection {
        let n = f.len();
        let mut high = (f32::INFINITY, n);
        let mut low = (f32::NEG_INFINITY, n);
        for i in 0..n {
            if in_up(y[i], alpha[i], c) {
                high = arg_min(high, (f[i], i));
            }
            if in_low(y[i], alpha[i], c) {
                low = arg_max(low, (f[i], i));
            }
        }
        (high, low)
    }
}

/// Hand-written rayon: what a user would write without dpl.
pub struct Rayon;

impl Engine for Rayon {
    fn name(&self) -> &'static str {
        "rayon"
    }
    fn kernel_row(&self, ngamma: f32, points: &Matrix<f32>, x: &[f32]) -> Vec<f32> {
        row_major_data(points)
            .par_chunks_exact(points.cols().max(1))
            .map(|p| rbf_plain(ngamma, p, x))
            .collect()
    }
    fn update_f(&self, f: &mut Vec<f32>, k_high: &[f32], k_low: &[f32], dh: f32, dl: f32) {
        f.par_iter_mut()
            .zip(k_high)
            .zip(k_low)
            .for_each(|((fi, kh), kl)| *fi = *fi + dh * kh + dl * kl);
    }
    fn select(&self, f: &[f32], alpha: &[f32], y: &[f32], c: f32) -> Selection {
        let n = f.len();
        let none = ((f32::INFINITY, n), (f32::NEG_INFINITY, n));
        (0..n)
            .into_par_iter()
            .fold(
                || none,
                |(high, low), i| {
                    let high = if in_up(y[i], alpha[i], c) {
                        arg_min(high, (f[i], i))
                    } else {
                        high
                    };
                    let low = if in_low(y[i], alpha[i], c) {
                        arg_max(low, (f[i], i))
                    } else {
                        low
                    };
                    (high, low)
                },
            )
            .reduce(|| none, |a, b| (arg_min(a.0, b.0), arg_max(a.1, b.1)))
    }
}

/// The flat row-major data of a matrix the baselines index by hand.
fn row_major_data(points: &Matrix<f32>) -> &[f32] {
    assert!(
        points.is_row_major(),
        "the baselines expect a row-major matrix without padding"
    );
    &points.data()[..points.rows() * points.cols()]
}

// ---------------------------------------------------------------------------------------
// The host loop
// ---------------------------------------------------------------------------------------

/// Training parameters.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// The box constraint: `0 <= alpha_i <= c`.
    pub c: f32,
    /// `-gamma` of the RBF kernel `exp(-gamma |x - y|^2)`.
    pub ngamma: f32,
    /// The KKT tolerance `tau`: stop when `b_low <= b_high + 2 tau`.
    pub tol: f32,
    /// Stop after this many steps even when not converged.
    pub max_iter: usize,
}

/// Why training stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Not stopped (never in a returned [`Model`]).
    Running,
    /// The KKT gap closed to `2 tol`.
    Converged,
    /// `max_iter` steps were taken first.
    MaxIter,
    /// A step changed neither alpha (f32 rounding); the gap is still above `2 tol`.
    Stalled,
}

/// A trained model and how training went.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The dual variables.
    pub alpha: Vec<f32>,
    /// The final auxiliary vector `f_i = sum_j alpha_j y_j K_ij - y_i`.
    pub f: Vec<f32>,
    /// The threshold: the decision value is `sum_j alpha_j y_j K(x, x_j) - b`.
    pub b: f32,
    /// Steps taken (pairs of alphas updated).
    pub iterations: usize,
    /// Why training stopped.
    pub stop: Stop,
    /// The final `b_low - b_high`.
    pub gap: f32,
}

impl Model {
    /// The number of support vectors (`alpha_i > 0`).
    pub fn support_vectors(&self) -> usize {
        self.alpha.iter().filter(|&&a| a > 0.0).count()
    }

    /// The fraction of the training points classified correctly, from `f` (no kernel
    /// evaluations: the decision value of `x_i` is `f_i + y_i - b`).
    pub fn training_accuracy(&self, y: &[f32]) -> f64 {
        let right = self
            .f
            .iter()
            .zip(y)
            .filter(|&(&fi, &yi)| (fi + yi - self.b > 0.0) == (yi > 0.0))
            .count();
        right as f64 / y.len().max(1) as f64
    }

    /// The support vectors and their coefficients `alpha_j y_j`, for [`decision`].
    pub fn support(&self, points: &Matrix<f32>, y: &[f32]) -> (Matrix<f32>, Vec<f32>) {
        let d = points.cols();
        let mut data = Vec::new();
        let mut coef = Vec::new();
        for (i, (&a, &yi)) in self.alpha.iter().zip(y).enumerate() {
            if a > 0.0 {
                data.extend(points.row(i).iter().copied());
                coef.push(a * yi);
            }
        }
        let svs = Matrix::row_major(coef.len(), d, data).expect("rows of equal length");
        (svs, coef)
    }
}

/// An alpha within rounding of a bound is put on the bound; otherwise `C - 1 ulp` would stay
/// in `I_up` and be chosen again and again with a step that rounds to nothing.
fn snap(a: f32, c: f32) -> f32 {
    let eps = 1e-6 * c;
    if a <= eps {
        0.0
    } else if a >= c - eps {
        c
    } else {
        a
    }
}

/// Trains an SVM on `points` (rows) with labels `y` (each `+1.0` or `-1.0`) by SMO, doing
/// the data-parallel steps with `engine`.
///
/// # Panics
///
/// If the labels are not all `+1.0`/`-1.0`, their count differs from the number of points,
/// or the parameters are out of range (`c <= 0`, `ngamma > 0`, `tol < 0`, non-finite).
pub fn train(engine: &impl Engine, points: &Matrix<f32>, y: &[f32], p: Params) -> Model {
    assert_eq!(points.rows(), y.len(), "svm: one label per point");
    assert!(
        y.iter().all(|&v| v == 1.0 || v == -1.0),
        "svm: labels must be +1.0 or -1.0"
    );
    assert!(
        p.c > 0.0 && p.c.is_finite(),
        "svm: C must be positive and finite"
    );
    assert!(
        p.ngamma <= 0.0 && p.ngamma.is_finite(),
        "svm: ngamma = -gamma must be <= 0"
    );
    assert!(
        p.tol >= 0.0 && p.tol.is_finite(),
        "svm: the tolerance must be >= 0"
    );
    let n = y.len();
    let mut alpha = vec![0.0f32; n];
    let mut f: Vec<f32> = y.iter().map(|&v| -v).collect();
    let mut iterations = 0;
    loop {
        let ((b_high, high), (b_low, low)) = engine.select(&f, &alpha, y, p.c);
        let gap = b_low - b_high;
        let empty = high == n || low == n;
        let stop = if empty || gap <= 2.0 * p.tol {
            Stop::Converged
        } else if iterations == p.max_iter {
            Stop::MaxIter
        } else {
            Stop::Running
        };
        if stop != Stop::Running {
            let b = if empty { 0.0 } else { (b_low + b_high) / 2.0 };
            return Model {
                alpha,
                f,
                b,
                iterations,
                stop,
                gap,
            };
        }
        let x_high = points.row_slice(high).expect("row-major points");
        let x_low = points.row_slice(low).expect("row-major points");
        let k_high = engine.kernel_row(p.ngamma, points, x_high);
        let k_low = engine.kernel_row(p.ngamma, points, x_low);
        let (y_high, y_low) = (y[high], y[low]);
        let (a_high, a_low) = (alpha[high], alpha[low]);
        // eta = K_hh + K_ll - 2 K_hl (2 - 2 K_hl for the RBF kernel); identical points give 0.
        let eta = (k_high[high] + k_low[low] - 2.0 * k_high[low]).max(1e-12);
        let s = y_high * y_low;
        let (lo, hi) = if s > 0.0 {
            ((a_low + a_high - p.c).max(0.0), (a_low + a_high).min(p.c))
        } else {
            ((a_low - a_high).max(0.0), (p.c + a_low - a_high).min(p.c))
        };
        let a_low_new = snap((a_low + y_low * (b_high - b_low) / eta).clamp(lo, hi), p.c);
        let a_high_new = snap((a_high + s * (a_low - a_low_new)).clamp(0.0, p.c), p.c);
        if a_low_new == a_low && a_high_new == a_high {
            // Rounding left both where they were: the same pair would be chosen forever.
            return Model {
                alpha,
                f,
                b: (b_low + b_high) / 2.0,
                iterations,
                stop: Stop::Stalled,
                gap,
            };
        }
        let dh = (a_high_new - a_high) * y_high;
        let dl = (a_low_new - a_low) * y_low;
        engine.update_f(&mut f, &k_high, &k_low, dh, dl);
        alpha[high] = a_high_new;
        alpha[low] = a_low_new;
        iterations += 1;
    }
}

// ---------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------

/// A standard normal value (Box-Muller) from two uniform draws in `(0, 1]`.
pub fn normal(rng: &mut SplitMix64) -> f64 {
    let (u, v) = (1.0 - rng.f64(), 1.0 - rng.f64());
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// Two Gaussian blobs in `d` dimensions, unit variance, centred at `+mu` and `-mu` in every
/// coordinate, labels alternating `+1`/`-1`; `separation` is the distance between the
/// centres in standard deviations (the Bayes error is `Phi(-separation / 2)`). Points are
/// the rows of a row-major matrix.
pub fn blobs(n: usize, d: usize, separation: f64, seed: u64) -> (Matrix<f32>, Vec<f32>) {
    let mu = separation / 2.0 / (d.max(1) as f64).sqrt();
    let mut rng = SplitMix64::new(seed);
    let mut data = Vec::with_capacity(n * d);
    let mut y = Vec::with_capacity(n);
    for i in 0..n {
        let label = if i % 2 == 0 { 1.0f32 } else { -1.0 };
        data.extend((0..d).map(|_| (normal(&mut rng) + label as f64 * mu) as f32));
        y.push(label);
    }
    (Matrix::row_major(n, d, data).expect("n * d elements"), y)
}

/// The fraction of points whose decision value has the sign of the label.
pub fn accuracy(decision_values: &[f32], y: &[f32]) -> f64 {
    let right = decision_values
        .iter()
        .zip(y)
        .filter(|&(&v, &yi)| (v > 0.0) == (yi > 0.0))
        .count();
    right as f64 / y.len().max(1) as f64
}

/// The default parameters for `d` features: `C = 1`, `gamma = 1 / d`, `tau = 1e-3`.
pub fn default_params(d: usize) -> Params {
    Params {
        c: 1.0,
        ngamma: -1.0 / d.max(1) as f32,
        tol: 1e-3,
        max_iter: 1_000_000,
    }
}

// ---------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[allow(dead_code)] // unused where tests and benches include this file as a module
fn main() {
    let n = env_usize("SVM_N", 10_000);
    let d = env_usize("SVM_D", 32);
    let n_test = env_usize("SVM_TEST_N", 2_000);
    let (points, y) = blobs(n, d, 2.5, 1);
    let (test, y_test) = blobs(n_test, d, 2.5, 2);
    let p = default_params(d);
    println!(
        "SVM training by SMO, RBF kernel: {n} points x {d} features (two Gaussian blobs), C = {}, gamma = {}, tau = {}; {} rayon threads\n",
        p.c,
        -p.ngamma,
        p.tol,
        rayon::current_num_threads()
    );

    let t = Instant::now();
    let reference = train(&Sequential, &points, &y, p);
    let seq_time = t.elapsed();
    let mut runs: Vec<(String, Model, Duration)> =
        vec![("plain Rust, sequential".into(), reference.clone(), seq_time)];
    let t = Instant::now();
    let m = train(&Rayon, &points, &y, p);
    runs.push(("hand-written rayon".into(), m, t.elapsed()));
    for place in dpl::available_places() {
        let t = Instant::now();
        let m = with_place(place, || train(&Dpl, &points, &y, p));
        runs.push((format!("dpl on {place}"), m, t.elapsed()));
    }

    println!(
        "{:<24} {:>10} {:>9} {:>6} {:>10} {:>10} {:>10}",
        "engine", "iterations", "stop", "SVs", "train acc", "test acc", "time"
    );
    let mut mismatches = 0;
    for (name, m, time) in &runs {
        let (svs, coef) = m.support(&points, &y);
        let test_acc = accuracy(&decision(p.ngamma, &test, &svs, &coef, m.b), &y_test);
        println!(
            "{name:<24} {:>10} {:>9} {:>6} {:>9.2}% {:>9.2}% {:>7.0} ms",
            m.iterations,
            format!("{:?}", m.stop),
            m.support_vectors(),
            100.0 * m.training_accuracy(&y),
            100.0 * test_acc,
            time.as_secs_f64() * 1e3
        );
        // Same algorithm, same selection rule, same arithmetic in the same order: the
        // engines are expected to agree exactly; the tolerance only allows a different
        // rounding somewhere to change a tie late in training.
        let iter_tol = reference.iterations / 100 + 2;
        let agree = m.iterations.abs_diff(reference.iterations) <= iter_tol
            && m.support_vectors().abs_diff(reference.support_vectors())
                <= reference.support_vectors() / 100 + 2
            && (m.training_accuracy(&y) - reference.training_accuracy(&y)).abs() <= 0.01;
        if !agree {
            mismatches += 1;
            println!("  ^ disagrees with the plain-Rust SMO beyond the tolerance");
        } else if *m != reference {
            println!("  ^ within the tolerance of the plain-Rust SMO, not bit-identical");
        }
    }
    println!(
        "\nseconds per iteration: plain {:.1} us, rayon {:.1} us, dpl cpu {:.1} us",
        runs[0].2.as_secs_f64() * 1e6 / runs[0].1.iterations.max(1) as f64,
        runs[1].2.as_secs_f64() * 1e6 / runs[1].1.iterations.max(1) as f64,
        runs.iter()
            .find(|r| r.0.ends_with("cpu"))
            .map_or(f64::NAN, |r| r.2.as_secs_f64() * 1e6
                / r.1.iterations.max(1) as f64)
    );

    // The kernel row alone.
    let x = points.row_slice(n / 3).expect("row-major");
    let want = Sequential.kernel_row(p.ngamma, &points, x);
    let got = with_place(Place::Cpu, || kernel_row(p.ngamma, &points, x));
    let max_diff = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    // Interleaved rounds: load on a shared machine hits the three alike.
    let t = timing::interleaved(
        &[
            &|| drop(with_place(Place::Cpu, || kernel_row(p.ngamma, &points, x))),
            &|| drop(Rayon.kernel_row(p.ngamma, &points, x)),
            &|| drop(Sequential.kernel_row(p.ngamma, &points, x)),
        ],
        201,
    );
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "kernel row ({n} x {d}), min (median) of 201 interleaved rounds: dpl {:.1} ({:.1}) us, rayon {:.1} ({:.1}) us, sequential {:.1} ({:.1}) us; rayon/dpl {:.2}x (medians {:.2}x); max |dpl - plain| = {max_diff:e}",
        us(t[0].0),
        us(t[0].1),
        us(t[1].0),
        us(t[1].1),
        us(t[2].0),
        us(t[2].1),
        us(t[1].0) / us(t[0].0),
        us(t[1].1) / us(t[0].1)
    );
    if mismatches > 0 || got.len() != want.len() || max_diff > 1e-5 {
        println!("engines DISAGREE");
        std::process::exit(1);
    }
    println!("all engines agree with the plain-Rust SMO");
}
