//! Loops at the top level of a body, iterating whole parallel steps: the SPEC's power
//! iteration over a `Matrix`, Jacobi sweeps until convergence (a `while` whose condition
//! reads a reduction of the body), a sequence that shrinks each round (`loop` with
//! `break`, a data-dependent length per iteration), scalars over the elements of a sequence
//! (`for v in xs` with `continue` and `break`), loops nested in loops and in an `if`, a
//! `break value`, and an index out of range in a later iteration, reported as everywhere.
//! Each against the same computation written in plain Rust, on every place (that the
//! carried sequences stay on the simulated GPU's device is `tests/gpu_residency.rs`'s).

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    /// The SPEC's example.
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

    /// Jacobi sweeps for `-x'' = b` (zero boundaries) until no element changes by more
    /// than `tol`, at most `max_sweeps` times.
    #[parallel]
    pub fn jacobi(b: &[f64], tol: f64, max_sweeps: u32) -> (Vec<f64>, u32) {
        let n = len(b);
        let mut x = map(|_| 0.0, b);
        let mut change = tol + 1.0;
        let mut sweeps = 0u32;
        while sweeps < max_sweeps && change > tol {
            let next = map(
                |i| {
                    let l = if i > 0 { x[i - 1] } else { 0.0 };
                    let r = if i + 1 < n { x[i + 1] } else { 0.0 };
                    (b[i] + l + r) * 0.5
                },
                indices(b),
            );
            change = reduce(|p, q| p.max(q), map(|p, q| (p - q).abs(), next, x), 0.0);
            x = next;
            sweeps += 1;
        }
        (x, sweeps)
    }

    /// Keeps the elements at most `k` above the mean until none is removed.
    #[parallel]
    pub fn trim(x: &[i64], k: i64) -> (Vec<i64>, u32) {
        let mut v = x.to_vec();
        let mut rounds = 0u32;
        loop {
            if len(v) == 0 {
                break;
            }
            let mean = sum(v) / (len(v) as i64);
            let kept = filter(|e| e <= mean + k, v);
            if len(kept) == len(v) {
                break;
            }
            v = kept;
            rounds += 1;
        }
        (v, rounds)
    }

    /// How many times the running maximum rises before it reaches `limit`, and its value.
    #[parallel]
    pub fn records(xs: &[i32], limit: i32) -> (u32, i32) {
        let mut best = i32::MIN;
        let mut count = 0u32;
        for v in xs {
            if v <= best {
                continue;
            }
            best = v;
            count += 1;
            if best >= limit {
                break;
            }
        }
        (count, best)
    }

    /// Loops nested in a loop inside an `if`, then a `loop` left with `break value`.
    #[parallel]
    pub fn halvings(x: &[u32], rounds: u32, twice: bool) -> (Vec<u32>, u32, u64) {
        let mut y = x.to_vec();
        let mut passes = 0u32;
        if twice {
            for _ in 0..rounds {
                for _ in 0..2 {
                    y = map(|v| v / 2 + 1, y);
                    passes += 1;
                }
            }
        }
        let total = loop {
            if sum(map(|v| v as u64, y)) <= 3 * len(y) as u64 {
                break sum(map(|v| 2 * v as u64, y));
            }
            y = map(|v| v / 2, y);
            passes += 1;
        };
        (y, passes, total)
    }

    /// Follows `next` from each start `steps` times.
    #[parallel]
    pub fn follow(next: &[u32], start: &[u32], steps: u32) -> Result<Vec<u32>, Error> {
        let mut at = start.to_vec();
        for _ in 0..steps {
            at = gather(next, at);
        }
        at
    }
}

fn power_iteration_ref(a: &[f64], n: usize, iters: usize) -> (Vec<f64>, f64) {
    let (mut v, mut lambda) = (vec![1.0f64; n], 0.0f64);
    for _ in 0..iters {
        let w: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|j| a[i * n + j] * v[j]).sum())
            .collect();
        lambda = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        v = w.iter().map(|x| x / lambda).collect();
    }
    (v, lambda)
}

fn power_iteration(place: Place) {
    for n in [0usize, 1, 2, 37, 300] {
        eprintln!("place {place:?}, n = {n}");
        let a = dpl_testkit::sparse::tridiagonal(n);
        let m = dpl::Matrix::row_major(n, n, a.clone()).expect("a matrix");
        let (v, lambda) = dpl::with_place(place, || prog::power_iteration(&m, &vec![1.0; n], 20));
        let (want_v, want_lambda) = power_iteration_ref(&a, n, 20);
        // Sums may be reassociated: equal to rounding.
        let close = |g: f64, w: f64| (g - w).abs() <= 1e-12 * (1.0 + w.abs());
        assert!(close(lambda, want_lambda), "{lambda} vs {want_lambda}");
        assert_eq!(v.len(), n);
        for (i, (g, w)) in v.iter().zip(&want_v).enumerate() {
            assert!(close(*g, *w), "v[{i}]: {g} vs {w}");
        }
    }
    // No iterations: the start vector and 0.
    let m = dpl::Matrix::row_major(2, 2, vec![1.0, 0.0, 0.0, 1.0]).expect("a matrix");
    let got = dpl::with_place(place, || prog::power_iteration(&m, &[3.0, 4.0], 0));
    assert_eq!(got, (vec![3.0, 4.0], 0.0));
}

fn jacobi_ref(b: &[f64], tol: f64, max_sweeps: u32) -> (Vec<f64>, u32) {
    let n = b.len();
    let (mut x, mut change, mut sweeps) = (vec![0.0f64; n], tol + 1.0, 0u32);
    while sweeps < max_sweeps && change > tol {
        let next: Vec<f64> = (0..n)
            .map(|i| {
                let l = if i > 0 { x[i - 1] } else { 0.0 };
                let r = if i + 1 < n { x[i + 1] } else { 0.0 };
                (b[i] + l + r) * 0.5
            })
            .collect();
        change = next
            .iter()
            .zip(&x)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        x = next;
        sweeps += 1;
    }
    (x, sweeps)
}

fn jacobi(place: Place) {
    each_size(place, &[0, 1, 2, 10, 1001, 70_001], |n, rng| {
        let b = rng.f64s(n, -1.0, 1.0);
        // Small systems converge; the others stop at the sweep limit.
        let cases: &[(f64, u32)] = if n <= 10 {
            &[(1e-9, 4000), (0.0, 7)]
        } else {
            &[(0.0, 7), (1e-2, 40)]
        };
        for &(tol, max) in cases {
            let got = prog::jacobi(&b, tol, max);
            let want = jacobi_ref(&b, tol, max);
            // Every element is computed by the same operations everywhere: exact.
            assert_eq!(got.1, want.1, "sweeps");
            assert_same(&got.0, &want.0, "x");
        }
    });
}

fn trim_ref(x: &[i64], k: i64) -> (Vec<i64>, u32) {
    let (mut v, mut rounds) = (x.to_vec(), 0u32);
    while !v.is_empty() {
        let mean = v.iter().sum::<i64>() / v.len() as i64;
        let kept: Vec<i64> = v.iter().copied().filter(|&e| e <= mean + k).collect();
        if kept.len() == v.len() {
            break;
        }
        v = kept;
        rounds += 1;
    }
    (v, rounds)
}

fn trim(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(-1000..1000));
        for k in [0i64, 5, 400] {
            assert_eq!(prog::trim(&x, k), trim_ref(&x, k), "k = {k}");
        }
    });
}

fn records_ref(xs: &[i32], limit: i32) -> (u32, i32) {
    let (mut best, mut count) = (i32::MIN, 0u32);
    for &v in xs {
        if v <= best {
            continue;
        }
        best = v;
        count += 1;
        if best >= limit {
            break;
        }
    }
    (count, best)
}

fn records(place: Place) {
    // One element read per iteration (on a GPU place, one read from the device each).
    each_size(place, &[0, 1, 1001], |n, rng| {
        let xs: Vec<i32> = rng.vec(n, |r| r.int_in(-1_000_000..1_000_000) as i32);
        for limit in [i32::MIN, 0, 990_000, i32::MAX] {
            assert_eq!(
                prog::records(&xs, limit),
                records_ref(&xs, limit),
                "limit {limit}"
            );
        }
    });
}

fn halvings_ref(x: &[u32], rounds: u32, twice: bool) -> (Vec<u32>, u32, u64) {
    let (mut y, mut passes) = (x.to_vec(), 0u32);
    if twice {
        for _ in 0..rounds * 2 {
            y = y.iter().map(|v| v / 2 + 1).collect();
            passes += 1;
        }
    }
    loop {
        let s: u64 = y.iter().map(|&v| v as u64).sum();
        if s <= 3 * y.len() as u64 {
            return (y.clone(), passes, 2 * s);
        }
        y = y.iter().map(|v| v / 2).collect();
        passes += 1;
    }
}

fn halvings(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        // Below 2^12, so the loop ends after about ten halvings (not thirty).
        let x: Vec<u32> = rng.vec(n, |r| r.below(1 << 12) as u32);
        for (rounds, twice) in [(0, true), (3, true), (3, false)] {
            assert_eq!(
                prog::halvings(&x, rounds, twice),
                halvings_ref(&x, rounds, twice),
                "rounds {rounds}, twice {twice}"
            );
        }
    });
}

fn follow(place: Place) {
    each_size(place, &[1, 1001, BIG], |n, rng| {
        let next: Vec<u32> = rng.vec(n, |r| r.int_in(0..n as i64) as u32);
        let start: Vec<u32> = (0..n as u32).collect();
        let mut want = start.clone();
        for _ in 0..5 {
            want = want.iter().map(|&j| next[j as usize]).collect();
        }
        assert_eq!(prog::follow(&next, &start, 5), Ok(want));
        // Element 0 goes to 1, then 2, then to an index out of range, read in step 4.
        if n > 2 {
            let mut bad = next.clone();
            bad[0] = 1;
            bad[1] = 2;
            bad[2] = n as u32 + 7;
            match prog::follow(&bad, &start, 4) {
                Err(dpl::Error::IndexOutOfRange {
                    prim: "gather",
                    index,
                    len,
                    ..
                }) => assert_eq!((index, len), (n as i128 + 7, n)),
                other => panic!("n = {n}: {other:?}"),
            }
        }
    });
}

on_every_place!(power_iteration, jacobi, trim, records, halvings, follow);

/// Every program compiles to PTX (no CPU fallback on the GPU places).
#[cfg(feature = "sim")]
#[test]
fn every_program_compiles_for_the_gpu() {
    for (name, i) in [
        ("power_iteration", dpl::inspect!(prog::power_iteration)),
        ("jacobi", dpl::inspect!(prog::jacobi)),
        ("trim", dpl::inspect!(prog::trim)),
        ("records", dpl::inspect!(prog::records)),
        ("halvings", dpl::inspect!(prog::halvings)),
        ("follow", dpl::inspect!(prog::follow)),
    ] {
        assert_eq!(i.gpu_not_compiled, "", "{name}");
    }
}
