//! Tests of the `iterative` example (`examples/iterative.rs`): its four `#[parallel]`
//! functions on every place against computations written here independently of the
//! example (backward induction over the binomial tree and Black-Scholes, bisection,
//! a known eigenpair, Jacobi on a padded 2-D grid and the exact solution of the Poisson
//! problem), and against the example's plain-Rust versions (`iterative/baselines.rs`)
//! to the bit wherever each element is computed alone.
//!
//! On `Place::Sim` the math functions (`exp`, `ln`, `sqrt`) are dpl's own GPU kernels,
//! within 2 ulp of the host's: results that go through them are compared to rounding
//! there, to the bit on `Place::Seq` and `Place::Cpu`. Sizes on the simulator stay small.

#[path = "../examples/iterative/baselines.rs"]
mod baselines;
#[path = "../examples/iterative/programs.rs"]
mod programs;

use dpl::prelude::*;
use dpl_testkit::SplitMix64;

/// Whether results that use `exp`, `ln` or `sqrt` are expected to the bit at `place`.
fn host_math(place: Place) -> bool {
    matches!(place, Place::Seq | Place::Cpu)
}

/// `|got - want| <= rel * (1 + |want|)`.
fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * (1.0 + want.abs())
}

// ---- Binomial option pricing ----

/// A European call on a Cox-Ross-Rubinstein tree by backward induction over the tree's
/// values (the textbook method, an array of `steps + 1` values).
fn call_by_induction(s0: f64, k: f64, sigma: f64, t: f64, r: f64, steps: usize) -> f64 {
    let dt = t / steps as f64;
    let u = (sigma * dt.sqrt()).exp();
    let d = 1.0 / u;
    let p = ((r * dt).exp() - d) / (u - d);
    let disc = (-r * dt).exp();
    let mut values: Vec<f64> = (0..=steps)
        .map(|j| (s0 * u.powi(j as i32) * d.powi((steps - j) as i32) - k).max(0.0))
        .collect();
    for n in (0..steps).rev() {
        for j in 0..=n {
            values[j] = disc * (p * values[j + 1] + (1.0 - p) * values[j]);
        }
    }
    values[0]
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error
/// below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The Black-Scholes price of a European call.
fn black_scholes_call(s0: f64, k: f64, sigma: f64, t: f64, r: f64) -> f64 {
    let cdf = |x: f64| 0.5 * erfc(-x / std::f64::consts::SQRT_2);
    let d1 = ((s0 / k).ln() + (r + 0.5 * sigma * sigma) * t) / (sigma * t.sqrt());
    let d2 = d1 - sigma * t.sqrt();
    s0 * cdf(d1) - k * (-r * t).exp() * cdf(d2)
}

/// `n` options: spots, strikes, volatilities and expiries, deep in and out of the money
/// among them.
fn options(n: usize, seed: u64) -> [Vec<f64>; 4] {
    let mut rng = SplitMix64::new(seed);
    [
        rng.f64s(n, 20.0, 200.0),
        rng.f64s(n, 50.0, 150.0),
        rng.f64s(n, 0.05, 0.6),
        rng.f64s(n, 0.05, 3.0),
    ]
}

#[test]
fn binomial_prices_match_backward_induction_on_every_place() {
    let rate = 0.04;
    for place in dpl::available_places() {
        let sim = place == Place::Sim;
        let sizes: &[(usize, u32)] = if sim {
            &[(0, 10), (1, 1), (3, 2), (40, 150)]
        } else {
            &[(0, 10), (1, 1), (3, 2), (40, 150), (1000, 400)]
        };
        for &(n, steps) in sizes {
            let [s, k, v, t] = options(n, 1 + n as u64);
            let got = with_place(place, || {
                programs::binomial_calls(&s, &k, &v, &t, rate, steps)
            });
            let plain = baselines::binomial_seq(&s, &k, &v, &t, rate, steps);
            assert_eq!(got.len(), n, "{place:?}");
            for i in 0..n {
                let induction = call_by_induction(s[i], k[i], v[i], t[i], rate, steps as usize);
                assert!(
                    close(got[i], induction, 1e-11),
                    "{place:?}, option {i} of {n}, {steps} steps: {} vs induction {induction}",
                    got[i]
                );
                if host_math(place) {
                    assert_eq!(
                        got[i].to_bits(),
                        plain[i].to_bits(),
                        "{place:?}, option {i}"
                    );
                } else {
                    // An ulp of `u` or of `e^(rate dt)` is amplified by the powers of
                    // `u` and of the odds `p / (1 - p)` (and by the cancellation in
                    // `u - d`): hundreds of ulps of the price at 150 steps.
                    assert!(
                        close(got[i], plain[i], 1e-11),
                        "{place:?}, option {i}: {} vs {}",
                        got[i],
                        plain[i]
                    );
                }
            }
        }
    }
}

#[test]
fn binomial_prices_approach_black_scholes() {
    let rate = 0.04;
    let steps = 4000;
    let [s, k, v, t] = options(300, 99);
    let got = with_place(Place::Cpu, || {
        programs::binomial_calls(&s, &k, &v, &t, rate, steps)
    });
    for i in 0..s.len() {
        let bs = black_scholes_call(s[i], k[i], v[i], t[i], rate);
        // The tree converges like 1 / steps (with oscillations); 1e-7 is erfc's accuracy.
        let tol = 1e-7 * s[i] + 2.0 * s[i] / f64::from(steps);
        assert!(
            (got[i] - bs).abs() <= tol,
            "option {i} ({}, {}, {}, {}): tree {} vs Black-Scholes {bs}",
            s[i],
            k[i],
            v[i],
            t[i],
            got[i]
        );
    }
    // Far more steps than the weights' range: no underflow to a wrong price.
    let one = |steps| programs::binomial_calls(&[100.0], &[100.0], &[0.2], &[1.0], 0.05, steps)[0];
    let bs = black_scholes_call(100.0, 100.0, 0.2, 1.0, 0.05);
    assert!((one(100_000) - bs).abs() < 1e-3, "{} vs {bs}", one(100_000));
}

// ---- Newton's method ----

/// The `x >= 0` with `x e^x = y` by bisection, to the last bit.
fn w_by_bisection(y: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, (1.0 + y).ln().max(1.0));
    loop {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return mid;
        }
        if mid * mid.exp() < y {
            lo = mid;
        } else {
            hi = mid;
        }
    }
}

#[test]
fn lambert_w_matches_bisection_on_every_place() {
    let (tol, max_iter) = (1e-14, 60);
    let mut rng = SplitMix64::new(5);
    let mut y: Vec<f64> = vec![0.0, 1e-300, 1e-9, 1.0, std::f64::consts::E, 1e12];
    y.extend((0..1000).map(|_| 10f64.powf(rng.f64_in(-4.0, 10.0))));
    for place in dpl::available_places() {
        let y = if place == Place::Sim {
            &y[..200]
        } else {
            &y[..]
        };
        let (x, steps) = with_place(place, || programs::lambert_w(y, tol, max_iter));
        let (plain_x, plain_steps) = baselines::lambert_seq(y, tol, max_iter);
        assert_eq!((x.len(), steps.len()), (y.len(), y.len()), "{place:?}");
        for i in 0..y.len() {
            let want = w_by_bisection(y[i]);
            assert!(
                (x[i] - want).abs() <= 4e-15 * want,
                "{place:?}: W({}) = {} vs bisection {want}",
                y[i],
                x[i]
            );
            assert!(
                steps[i] < max_iter,
                "{place:?}: W({}) did not converge",
                y[i]
            );
            if host_math(place) {
                assert_eq!(
                    x[i].to_bits(),
                    plain_x[i].to_bits(),
                    "{place:?}: W({})",
                    y[i]
                );
                assert_eq!(steps[i], plain_steps[i], "{place:?}: W({})", y[i]);
            } else {
                assert!(
                    steps[i].abs_diff(plain_steps[i]) <= 1,
                    "{place:?}: W({})",
                    y[i]
                );
            }
        }
        assert_eq!(x[0], 0.0, "W(0)");
        assert!(
            close(x[3], 0.567_143_290_409_783_8, 1e-15),
            "the omega constant"
        );
        assert!(close(x[4], 1.0, 1e-15), "W(e)");
        // No iterations allowed: the starting point ln(1 + y), none taken.
        let (x0, steps0) = with_place(place, || programs::lambert_w(&y[..8], tol, 0));
        assert_eq!(steps0, vec![0; 8]);
        for (x0, y) in x0.iter().zip(&y[..8]) {
            assert!(close(*x0, (1.0 + y).ln(), 1e-15), "{place:?}");
        }
    }
}

// ---- Power iteration ----

/// A symmetric `n x n` matrix `Q diag(10, 5, 4, 3, 2, 1, 1, ...) Q` with `Q` the
/// Householder reflection `I - 2 w w^T / w^T w` for `w = (1, 2, ..., n)`, row-major, and
/// its dominant eigenvector `Q e_0`.
fn known_eigenpair(n: usize) -> (Vec<f64>, Vec<f64>) {
    let w: Vec<f64> = (1..=n).map(|i| i as f64).collect();
    let ww: f64 = w.iter().map(|x| x * x).sum();
    let q = |i: usize, j: usize| f64::from(u8::from(i == j)) - 2.0 * w[i] * w[j] / ww;
    let lambda = |k: usize| [10.0, 5.0, 4.0, 3.0, 2.0].get(k).copied().unwrap_or(1.0);
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|k| q(i, k) * lambda(k) * q(k, j)).sum();
        }
    }
    (a, (0..n).map(|i| q(i, 0)).collect())
}

#[test]
fn power_iteration_finds_a_known_eigenpair_on_every_place() {
    for place in dpl::available_places() {
        for n in [1usize, 2, 7, 40] {
            let (a, e0) = known_eigenpair(n);
            let m = Matrix::row_major(n, n, a.clone()).expect("a matrix");
            let v0 = vec![1.0; n];
            let (v, lambda) = with_place(place, || programs::power_iteration(&m, &v0, 80));
            // The eigenvalue ratio is 1/2: 80 iterations converge to rounding.
            assert!(close(lambda, 10.0, 1e-12), "{place:?}, n = {n}: {lambda}");
            let sign = if v[0] * e0[0] < 0.0 { -1.0 } else { 1.0 };
            for (i, (vi, ei)) in v.iter().zip(&e0).enumerate() {
                assert!(
                    close(*vi, sign * ei, 1e-12),
                    "{place:?}, n = {n}, v[{i}] = {vi} vs {ei}"
                );
            }
            // The example's plain Rust: equal to rounding (sums reassociated).
            let (pv, pl) = baselines::power_seq(&a, &v0, 80);
            assert!(close(lambda, pl, 1e-13), "{place:?}, n = {n}");
            for (g, w) in v.iter().zip(&pv) {
                assert!(close(*g, *w, 1e-13), "{place:?}, n = {n}");
            }
        }
        // No iterations: the start vector and 0; an empty matrix.
        let m = Matrix::row_major(2, 2, vec![1.0, 0.0, 0.0, 1.0]).expect("a matrix");
        let got = with_place(place, || programs::power_iteration(&m, &[3.0, 4.0], 0));
        assert_eq!(got, (vec![3.0, 4.0], 0.0), "{place:?}");
        let empty = Matrix::row_major(0, 0, Vec::new()).expect("a matrix");
        let (v, _) = with_place(place, || programs::power_iteration(&empty, &[], 3));
        assert!(v.is_empty(), "{place:?}");
    }
}

// ---- Jacobi ----

/// Jacobi sweeps on a grid padded with a border of zeros, `(width + 2) x (height + 2)`,
/// until the largest change is at most `tol` or `max_sweeps` sweeps.
fn jacobi_padded(f: &[f64], width: usize, tol: f64, max_sweeps: u32) -> (Vec<f64>, u32) {
    let height = f.len().checked_div(width).unwrap_or(0);
    let pw = width + 2;
    let mut x = vec![0.0; pw * (height + 2)];
    let mut sweeps = 0;
    loop {
        if sweeps == max_sweeps {
            break;
        }
        let mut next = x.clone();
        let mut change = 0.0f64;
        for r in 1..=height {
            for c in 1..=width {
                let at = r * pw + c;
                let fi = f[(r - 1) * width + (c - 1)];
                next[at] = (fi + x[at - 1] + x[at + 1] + x[at - pw] + x[at + pw]) * 0.25;
                change = change.max((next[at] - x[at]).abs());
            }
        }
        x = next;
        sweeps += 1;
        if change <= tol {
            break;
        }
    }
    let inner = (1..=height)
        .flat_map(|r| x[r * pw + 1..r * pw + 1 + width].to_vec())
        .collect();
    (inner, sweeps)
}

#[test]
fn jacobi_matches_a_padded_grid_on_every_place() {
    let mut rng = SplitMix64::new(17);
    for place in dpl::available_places() {
        let sim = place == Place::Sim;
        let grids: &[(usize, usize)] = if sim {
            &[(1, 1), (5, 3), (12, 9)]
        } else {
            &[(1, 1), (5, 3), (12, 9), (40, 23)]
        };
        for &(width, height) in grids {
            let f = rng.f64s(width * height, -1.0, 1.0);
            let cases: &[(f64, u32)] = if sim {
                &[(0.0, 0), (0.0, 7), (1e-6, 400)]
            } else {
                &[(0.0, 0), (0.0, 7), (1e-6, 400), (1e-12, 100_000)]
            };
            for &(tol, max) in cases {
                let got = with_place(place, || programs::jacobi_poisson(&f, width, tol, max));
                // Every value is computed by the same operations everywhere: exact.
                let want = jacobi_padded(&f, width, tol, max);
                assert_eq!(
                    got.1, want.1,
                    "{place:?}, {width} x {height}, {tol} {max}: sweeps"
                );
                assert!(
                    got.0 == want.0,
                    "{place:?}, {width} x {height}, {tol} {max}"
                );
                assert!(
                    got == baselines::jacobi_seq(&f, width, tol, max),
                    "{place:?}"
                );
            }
        }
        // An empty grid: one sweep, nothing changes.
        let got = with_place(place, || programs::jacobi_poisson(&[], 4, 1e-3, 10));
        assert_eq!(got, (vec![], 1), "{place:?}");
    }
}

#[test]
fn jacobi_converges_to_the_poisson_solution() {
    // -Δu = 2π² sin(πx) sin(πy) on the unit square, u = 0 on its border: u = sin(πx) sin(πy)
    // up to the discretization error, about (π h)² / 12 relative.
    let pi = std::f64::consts::PI;
    for (width, height) in [(20, 20), (31, 17)] {
        // The 5-point update assumes one spacing in both directions: the column spacing.
        let h = 1.0 / (width + 1) as f64;
        let exact = |i: usize| {
            let (c, r) = (i % width + 1, i / width + 1);
            (pi * c as f64 * h).sin() * (pi * r as f64 * h).sin()
        };
        let f: Vec<f64> = (0..width * height)
            .map(|i| h * h * 2.0 * pi * pi * exact(i))
            .collect();
        let (x, sweeps) = with_place(Place::Cpu, || {
            programs::jacobi_poisson(&f, width, 1e-13, 1_000_000)
        });
        assert!(sweeps < 1_000_000, "converged");
        if width == height {
            let err = (0..x.len())
                .map(|i| (x[i] - exact(i)).abs())
                .fold(0.0, f64::max);
            assert!(
                err < 0.2 * (pi * h).powi(2),
                "{width} x {height}: error {err:e}"
            );
        } else {
            // Not the same problem on a non-square domain: only the residual is small.
            let w = width;
            let at = |r: isize, c: isize| {
                if r < 0 || c < 0 || r >= height as isize || c >= w as isize {
                    0.0
                } else {
                    x[r as usize * w + c as usize]
                }
            };
            for r in 0..height as isize {
                for c in 0..w as isize {
                    let i = r as usize * w + c as usize;
                    let res = f[i] + at(r, c - 1) + at(r, c + 1) + at(r - 1, c) + at(r + 1, c)
                        - 4.0 * x[i];
                    assert!(res.abs() < 1e-11, "residual {res:e} at ({r}, {c})");
                }
            }
        }
    }
}

/// Every program compiles to PTX (no CPU fallback on the GPU places).
#[cfg(feature = "sim")]
#[test]
fn every_program_compiles_for_the_gpu() {
    for (name, i) in [
        ("binomial_calls", dpl::inspect!(programs::binomial_calls)),
        ("lambert_w", dpl::inspect!(programs::lambert_w)),
        ("power_iteration", dpl::inspect!(programs::power_iteration)),
        ("jacobi_poisson", dpl::inspect!(programs::jacobi_poisson)),
    ] {
        assert_eq!(i.gpu_not_compiled, "", "{name}");
    }
}
