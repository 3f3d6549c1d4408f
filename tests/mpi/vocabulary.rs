//! The everyday vocabulary on `Place::Mpi`: `reverse`, `concat`, slices, `range(a, b)`,
//! `argmin`/`argmax`, `flatten`, `zip` of three, `match`, `const` and `powi`, read
//! through scalar results (the same on every rank) and checked against plain Rust on the
//! global data, on blocks of every layout.

use crate::harness::*;
use dpl::Error;

pub const CASES: &[Case] = &[
    ("vocabulary_index_forms", index_forms),
    ("vocabulary_arg_extremes", arg_extremes),
    ("vocabulary_scalar_forms", scalar_forms),
    ("vocabulary_flatten", flatten),
    ("vocabulary_generic", generic),
    ("vocabulary_in_place", in_place),
];

mod progs {
    use dpl::prelude::*;

    /// Reverse and a slice, each weighted by position (so order matters).
    #[parallel]
    pub fn weighted(x: &[i64], a: usize, b: usize) -> (i64, i64, usize) {
        let r = reverse(x);
        let s = x[a..b];
        (
            sum(map(|v, i| v * (i as i64 + 1), r, indices(r))),
            sum(map(|v, i| v * (i as i64 + 1), s, indices(s))),
            sum(range(a, b)),
        )
    }

    #[parallel]
    pub fn concat_weighted(x: &[i64], y: &[i64]) -> i64 {
        let c = concat(x, y);
        sum(map(|v, i| v * (i as i64 + 1), c, indices(c)))
    }

    #[parallel]
    pub fn slice_checked(x: &[i64], a: usize, b: usize) -> Result<i64, Error> {
        sum(x[a..b])
    }

    #[parallel]
    pub fn extremes(x: &[f32]) -> Result<(usize, usize), Error> {
        (argmin(x), argmax(x))
    }

    #[parallel]
    pub fn scalar_forms(x: &[f64], k: &[i32], c: &[u32]) -> (f64, usize) {
        const HALF: f64 = 0.5;
        let z = zip(x, k, c);
        (
            sum(map(|t| t.0.powi(t.1) * HALF, z)),
            count(
                |t| match t.2 % 10 {
                    0 | 1 => true,
                    5..=7 => t.1 > 0,
                    _ => false,
                },
                z,
            ),
        )
    }

    /// A generic function: each instantiation is distributed like a written one.
    #[parallel]
    pub fn generic_dot<T: Num>(x: &[T], y: &[T]) -> (T, Vec<T>) {
        (sum(map(|a, b| a * b + 1, x, y)), map(|a| a - T::ONE, x))
    }

    /// Generic functions called from `#[parallel]` code, inlined at the callers' types.
    #[parallel]
    pub mod calls {
        use dpl::prelude::*;

        pub fn dot<T: Num>(x: &[T], y: &[T]) -> T {
            sum(map(|a, b| a * b + 1, x, y))
        }

        pub fn both(x: &[i32], p: &[f64]) -> (i32, f64) {
            (dot(x, x), dot(p, p))
        }
    }

    /// `*y = e` on a rank's block, and a declared result read from the new value.
    #[parallel]
    pub fn axpy_sum(a: i64, x: &[i64], y: &mut [i64]) -> i64 {
        *y = map(|xi, yi| a * xi + yi, x, y);
        sum(y)
    }

    #[parallel]
    pub fn flattened_sum(x: &[i64]) -> i64 {
        let rows = map(|v| range(0, (v % 5) as usize), x);
        let f = flatten(rows);
        sum(map(|w, i| (w as i64) * (i as i64 % 7), f, indices(f)))
    }
}

fn weight(v: impl Iterator<Item = i64>) -> i64 {
    v.enumerate().map(|(i, v)| v * (i as i64 + 1)).sum()
}

fn index_forms(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 40);
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(-1000..1000));
        let (a, b) = (n / 3, n - n / 4);
        let want = (
            weight(x.iter().rev().copied()),
            weight(x[a..b].iter().copied()),
            (a..b).sum::<usize>(),
        );
        let y: Vec<i64> = rng.vec(n / 2 + 1, |r| r.int_in(-1000..1000));
        let want_concat = weight(x.iter().chain(&y).copied());
        let ly = layouts(y.len(), env.size);
        for (k, lens) in layouts(n, env.size).iter().enumerate() {
            let xb = block_of(&x, lens, env);
            assert_eq!(progs::weighted(&xb, a, b), want, "n = {n}");
            let yb = block_of(&y, &ly[(k + 1) % ly.len()], env);
            assert_eq!(
                progs::concat_weighted(&xb, &yb),
                want_concat,
                "concat, n = {n}"
            );
            match progs::slice_checked(&xb, 1, n + 1) {
                Err(Error::IndexOutOfRange {
                    prim: "slice",
                    index,
                    len,
                    ..
                }) => {
                    assert_eq!((index, len), ((n + 1) as i128, n));
                }
                other => panic!("x[1..{}] of {n}: {other:?}", n + 1),
            }
        }
    }
}

fn arg_extremes(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 41);
        // Few distinct values: ties across blocks, where the first index must win.
        let x: Vec<f32> = rng.vec(n, |r| r.int_in(-20..20) as f32);
        let first = |better: fn(f32, f32) -> bool| {
            (0..n).fold(0, |best, i| if better(x[i], x[best]) { i } else { best })
        };
        for lens in layouts(n, env.size) {
            let got = progs::extremes(&block_of(&x, &lens, env));
            if n == 0 {
                assert!(
                    matches!(got, Err(Error::Empty { prim: "argmin", .. })),
                    "{got:?}"
                );
            } else {
                assert_eq!(
                    got,
                    Ok((first(|a, b| a < b), first(|a, b| a > b))),
                    "n = {n}"
                );
            }
        }
    }
}

fn scalar_forms(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 42);
        let x: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.5, 1.5));
        let k: Vec<i32> = rng.vec(n, |r| r.int_in(-4..6) as i32);
        let c: Vec<u32> = rng.vec(n, |r| r.below(1000) as u32);
        let want_sum: f64 = (0..n).map(|i| x[i].powi(k[i]) * 0.5).sum();
        let want_count = (0..n)
            .filter(|&i| match c[i] % 10 {
                0 | 1 => true,
                5..=7 => k[i] > 0,
                _ => false,
            })
            .count();
        for lens in layouts(n, env.size) {
            let (s, cnt) = progs::scalar_forms(
                &block_of(&x, &lens, env),
                &block_of(&k, &lens, env),
                &block_of(&c, &lens, env),
            );
            close("powi sum", s, want_sum, 1e-9);
            same_everywhere("powi sum", s.to_bits());
            assert_eq!(cnt, want_count, "match count, n = {n}");
        }
    }
}

fn flatten(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 43);
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(0..100));
        let flat: Vec<usize> = x.iter().flat_map(|&v| 0..(v % 5) as usize).collect();
        let want: i64 = flat
            .iter()
            .enumerate()
            .map(|(i, &w)| w as i64 * (i as i64 % 7))
            .sum();
        for lens in layouts(n, env.size) {
            assert_eq!(
                progs::flattened_sum(&block_of(&x, &lens, env)),
                want,
                "n = {n}"
            );
        }
    }
}

fn generic(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 44);
        let x: Vec<i32> = rng.vec(n, |r| r.int_in(-100_000..100_000) as i32);
        let y: Vec<i32> = rng.vec(n, |r| r.int_in(-100_000..100_000) as i32);
        let want = (0..n).fold(0i32, |s, i| {
            s.wrapping_add(x[i].wrapping_mul(y[i]).wrapping_add(1))
        });
        let minus: Vec<i32> = x.iter().map(|v| v - 1).collect();
        let p: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
        let want_f: f64 = p.iter().map(|v| v * v + 1.0).sum();
        for lens in layouts(n, env.size) {
            let (got, got_minus) =
                progs::generic_dot(&block_of(&x, &lens, env), &block_of(&y, &lens, env));
            assert_eq!(got, want, "generic_dot::<i32>, n = {n}");
            check_block("generic_dot::<i32> map", &got_minus, &minus, &lens, env);
            let pb = block_of(&p, &lens, env);
            let (s, _) = progs::generic_dot(&pb, &pb);
            close("generic_dot::<f64>", s, want_f, 1e-9);
            same_everywhere("generic_dot::<f64>", s.to_bits());
            let xb = block_of(&x, &lens, env);
            let (i, f) = progs::calls::both(&xb, &pb);
            let want_i = (0..n).fold(0i32, |s, k| {
                s.wrapping_add(x[k].wrapping_mul(x[k]).wrapping_add(1))
            });
            assert_eq!(i, want_i, "dot::<i32> called from both, n = {n}");
            assert_eq!(
                f.to_bits(),
                s.to_bits(),
                "dot::<f64> called from both, n = {n}"
            );
        }
    }
}

fn in_place(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 45);
        let x: Vec<i64> = rng.vec(n, |r| r.int_in(-1000..1000));
        let y: Vec<i64> = rng.vec(n, |r| r.int_in(-1000..1000));
        let want: Vec<i64> = x.iter().zip(&y).map(|(a, b)| 3 * a + b).collect();
        let total: i64 = want.iter().sum();
        for lens in layouts(n, env.size) {
            let mut yb = block_of(&y, &lens, env);
            let got = progs::axpy_sum(3, &block_of(&x, &lens, env), &mut yb);
            assert_eq!(got, total, "axpy_sum, n = {n}");
            check_block("axpy_sum: y", &yb, &want, &lens, env);
        }
    }
}
