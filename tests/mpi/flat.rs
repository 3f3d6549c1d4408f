//! Flat primitives: element-wise chains, reductions, scans, filters, lengths and indices.

use crate::harness::*;
use dpl::prelude::*;

pub const CASES: &[Case] = &[
    ("map_zip_unzip", map_zip_unzip),
    ("misaligned_inputs", misaligned_inputs),
    ("reductions", reductions),
    ("float_sum_determinism", float_sum_determinism),
    ("scans", scans),
    ("filters", filters),
    ("lengths_indices_ranges", lengths_indices_ranges),
    ("scalar_reads", scalar_reads),
    ("randomised", randomised),
];

pub use progs::dot;

mod progs {
    use dpl::prelude::*;

    #[parallel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
        map(|xi, yi| a * xi + yi, x, y)
    }

    #[parallel]
    pub fn split_parts(x: &[f64]) -> (Vec<f64>, Vec<f64>) {
        unzip(map(|v| (v.floor(), v - v.floor()), x))
    }

    #[parallel]
    pub fn zip_dot(a: &[f64], b: &[f64]) -> f64 {
        sum(map(|p| p.0 * p.1, zip(a, b)))
    }

    #[parallel]
    pub fn sums(x: &[i64], y: &[u32]) -> (i64, u32, usize, bool, bool) {
        (
            sum(x),
            sum(y),
            count(|v| v > 0, x),
            any(|v| v == 7, y),
            all(|v| v < 1000, y),
        )
    }

    #[parallel]
    pub fn min_max(x: &[i64]) -> (i64, i64) {
        (min(x), max(x))
    }

    #[parallel]
    pub fn checked_min(x: &[f64]) -> Result<f64, dpl::Error> {
        min(x)
    }

    #[parallel]
    pub fn reduce_pairs(a: &[i64], b: &[i32]) -> (i64, i32) {
        reduce(
            |p, q| (p.0 + q.0, p.1.max(q.1)),
            zip(a, b),
            (0i64, i32::MIN),
        )
    }

    #[parallel]
    pub fn dot(x: &[f64], y: &[f64]) -> f64 {
        sum(map(|a, b| a * b, x, y))
    }

    #[parallel]
    pub fn prefix(x: &[i64]) -> Vec<i64> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn running_max(x: &[i64]) -> Vec<i64> {
        scan(|a, b| a.max(b), x)
    }

    /// A non-commutative operator: composition of affine maps `v -> a v + b`.
    #[parallel]
    pub fn affine(a: &[i64], b: &[i64]) -> (Vec<i64>, Vec<i64>) {
        unzip(scan(|p, q| (p.0 * q.0, p.1 * q.0 + q.1), zip(a, b)))
    }

    #[parallel]
    pub fn offsets(counts: &[u32], start: usize) -> Vec<usize> {
        exclusive_scan(|a, b| a + b, map(|c| c as usize, counts), start)
    }

    #[parallel]
    pub fn positives_tripled(x: &[i64]) -> Vec<i64> {
        map(|v| v * 3, filter(|v| v > 0, x))
    }

    #[parallel]
    pub fn set_positions(flags: &[bool]) -> Vec<usize> {
        filter(|i| flags[i], indices(flags))
    }

    #[parallel]
    pub fn filtered_sum(x: &[i64]) -> (i64, usize) {
        let f = filter(|v| v % 3 == 0, x);
        (sum(f), len(f))
    }

    #[parallel]
    pub fn centred(x: &[f64]) -> Vec<f64> {
        let mean = sum(x) / (len(x) as f64);
        map(|v| v - mean, x)
    }

    #[parallel]
    pub fn indexed(x: &[u64]) -> Vec<u64> {
        map(
            |i, v| (i as u64) * 1000 + v + (len(x) as u64),
            indices(x),
            x,
        )
    }

    #[parallel]
    pub fn squares(n: usize) -> Vec<u64> {
        map(|i| (i as u64) * (i as u64), range(n))
    }

    #[parallel]
    pub fn fill(v: f64, n: usize) -> Vec<f64> {
        replicate(v, n)
    }

    #[parallel]
    pub fn lengths(x: &[f32], y: &[i32]) -> (usize, usize, usize) {
        (len(x), y.len(), len(indices(y)))
    }

    #[parallel]
    pub fn ends(x: &[i32]) -> Result<(i32, i32), dpl::Error> {
        (x[0], x[len(x) - 1])
    }

    #[parallel]
    pub fn shifted_by_first(x: &[i32]) -> Vec<i32> {
        map(|v| v - x[0], x)
    }
}

fn map_zip_unzip(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64);
        let x: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let y: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        for lens in layouts(n, env.size) {
            let got = progs::saxpy(2.5, &block_of(&x, &lens, env), &block_of(&y, &lens, env));
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| 2.5 * a + b).collect();
            check_block("saxpy", &got, &want, &lens, env);
            let xd: Vec<f64> = x.iter().map(|&v| v as f64 * 7.0).collect();
            let (fl, fr) = progs::split_parts(&block_of(&xd, &lens, env));
            let wf: Vec<f64> = xd.iter().map(|v| v.floor()).collect();
            let wr: Vec<f64> = xd.iter().map(|v| v - v.floor()).collect();
            check_block("split_parts.0", &fl, &wf, &lens, env);
            check_block("split_parts.1", &fr, &wr, &lens, env);
        }
    }
}

/// Inputs combined element by element with different blocks: the first one's win.
fn misaligned_inputs(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 1);
        let x: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let y: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let ls = layouts(n, env.size);
        for (k, lx) in ls.iter().enumerate() {
            let ly = &ls[(k + 1) % ls.len()];
            let got = progs::saxpy(-1.0, &block_of(&x, lx, env), &block_of(&y, ly, env));
            let want: Vec<f32> = x.iter().zip(&y).map(|(a, b)| -a + b).collect();
            check_block("saxpy misaligned", &got, &want, lx, env);
            let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            let yd: Vec<f64> = y.iter().map(|&v| v as f64).collect();
            let d = progs::zip_dot(&block_of(&xd, lx, env), &block_of(&yd, ly, env));
            let want: f64 = xd.iter().zip(&yd).map(|(a, b)| a * b).sum();
            close("zip_dot misaligned", d, want, 1e-9);
            same_everywhere("zip_dot", d.to_bits());
        }
    }
}

fn reductions(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 2);
        let x: Vec<i64> = rng.vec(n, |r| r.u64() as i64 >> 8);
        let y: Vec<u32> = rng.vec(n, |r| r.below(1001) as u32);
        let b: Vec<i32> = rng.vec(n, |r| r.u64() as i32);
        for lens in layouts(n, env.size) {
            let (xb, yb) = (block_of(&x, &lens, env), block_of(&y, &lens, env));
            let got = progs::sums(&xb, &yb);
            let want = (
                x.iter().fold(0i64, |a, v| a.wrapping_add(*v)),
                y.iter().fold(0u32, |a, v| a.wrapping_add(*v)),
                x.iter().filter(|v| **v > 0).count(),
                y.contains(&7),
                y.iter().all(|v| *v < 1000),
            );
            assert_eq!(got, want, "sums, n = {n}, lens {lens:?}");
            if n > 0 {
                let want = (*x.iter().min().unwrap(), *x.iter().max().unwrap());
                assert_eq!(progs::min_max(&xb), want, "min_max");
            }
            let got = progs::reduce_pairs(&xb, &block_of(&b, &lens, env));
            let want = x.iter().zip(&b).fold((0i64, i32::MIN), |p, (a, b)| {
                (p.0.wrapping_add(*a), p.1.max(*b))
            });
            assert_eq!(got, want, "reduce_pairs");
        }
        // `min` of an empty sequence is an error on every rank.
        if n == 0 {
            let e = progs::checked_min(&[]).unwrap_err();
            assert!(matches!(e, dpl::Error::Empty { prim: "min", .. }), "{e}");
        }
    }
}

/// A float reduction gives the same bits on every rank, on every run with the same number
/// of ranks, and the value of plain Rust up to rounding; with one rank, the bits of
/// `Place::Cpu`.
fn float_sum_determinism(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 3);
        let x: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) * 1e6);
        let y: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
        for lens in layouts(n, env.size) {
            let (xb, yb) = (block_of(&x, &lens, env), block_of(&y, &lens, env));
            let first = progs::dot(&xb, &yb);
            for _ in 0..3 {
                assert_eq!(
                    progs::dot(&xb, &yb).to_bits(),
                    first.to_bits(),
                    "dot is not repeatable"
                );
            }
            same_everywhere("dot", first.to_bits());
            let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
            close("dot", first, want, 1e-9);
            if env.size == 1 {
                let cpu = dpl::with_place(Place::Cpu, || progs::dot(&xb, &yb));
                assert_eq!(
                    first.to_bits(),
                    cpu.to_bits(),
                    "one rank differs from Place::Cpu"
                );
            }
        }
    }
}

fn scans(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 4);
        let x: Vec<i64> = rng.vec(n, |r| r.u64() as i64 >> 20);
        let a: Vec<i64> = rng.vec(n, |r| r.below(5) as i64 - 2);
        let b: Vec<i64> = rng.vec(n, |r| r.below(100) as i64);
        let c: Vec<u32> = rng.vec(n, |r| r.below(10) as u32);
        for lens in layouts(n, env.size) {
            let xb = block_of(&x, &lens, env);
            let mut acc = 0i64;
            let want: Vec<i64> = x
                .iter()
                .map(|v| {
                    acc = acc.wrapping_add(*v);
                    acc
                })
                .collect();
            check_block("prefix", &progs::prefix(&xb), &want, &lens, env);
            let mut m = i64::MIN;
            let want: Vec<i64> = x
                .iter()
                .map(|v| {
                    m = m.max(*v);
                    m
                })
                .collect();
            check_block("running_max", &progs::running_max(&xb), &want, &lens, env);
            let (pa, pb) = progs::affine(&block_of(&a, &lens, env), &block_of(&b, &lens, env));
            let mut p = (1i64, 0i64);
            let (mut wa, mut wb) = (Vec::new(), Vec::new());
            for (k, (qa, qb)) in a.iter().zip(&b).enumerate() {
                p = if k == 0 {
                    (*qa, *qb)
                } else {
                    (
                        p.0.wrapping_mul(*qa),
                        p.1.wrapping_mul(*qa).wrapping_add(*qb),
                    )
                };
                wa.push(p.0);
                wb.push(p.1);
            }
            check_block("affine.0", &pa, &wa, &lens, env);
            check_block("affine.1", &pb, &wb, &lens, env);
            let mut s = 5usize;
            let want: Vec<usize> = c
                .iter()
                .map(|v| {
                    let o = s;
                    s += *v as usize;
                    o
                })
                .collect();
            check_block(
                "offsets",
                &progs::offsets(&block_of(&c, &lens, env), 5),
                &want,
                &lens,
                env,
            );
        }
    }
}

fn filters(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 5);
        let x: Vec<i64> = rng.vec(n, |r| r.below(21) as i64 - 10);
        let flags: Vec<bool> = rng.vec(n, |r| r.below(3) == 0);
        for lens in layouts(n, env.size) {
            let xb = block_of(&x, &lens, env);
            // Each rank keeps the survivors of its own block, in order.
            let got = progs::positives_tripled(&xb);
            let want_local: Vec<i64> = xb.iter().filter(|v| **v > 0).map(|v| v * 3).collect();
            assert_eq!(got, want_local, "positives_tripled");
            let got = progs::set_positions(&block_of(&flags, &lens, env));
            let r = range_of(&lens, env.rank);
            let want_local: Vec<usize> = r.filter(|&i| flags[i]).collect();
            assert_eq!(got, want_local, "set_positions");
            let (s, c) = progs::filtered_sum(&xb);
            let f: Vec<i64> = x.iter().copied().filter(|v| v % 3 == 0).collect();
            assert_eq!((s, c), (f.iter().sum(), f.len()), "filtered_sum");
            let all = dpl::mpi::gather_to_all(&progs::positives_tripled(&xb));
            let want: Vec<i64> = x.iter().filter(|v| **v > 0).map(|v| v * 3).collect();
            assert_eq!(all, want, "filter keeps the global order");
        }
    }
}

fn lengths_indices_ranges(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 6);
        let x: Vec<u64> = rng.vec(n, |r| r.below(1000) as u64);
        let xf: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
        for lens in layouts(n, env.size) {
            let want: Vec<u64> = x
                .iter()
                .enumerate()
                .map(|(i, v)| i as u64 * 1000 + v + n as u64)
                .collect();
            check_block(
                "indexed",
                &progs::indexed(&block_of(&x, &lens, env)),
                &want,
                &lens,
                env,
            );
            let mean = xf.iter().sum::<f64>() / n as f64;
            let got = progs::centred(&block_of(&xf, &lens, env));
            let r = range_of(&lens, env.rank);
            for (k, g) in got.iter().enumerate() {
                close("centred", *g, xf[r.start + k] - mean, 1e-9);
            }
            let xs: Vec<f32> = vec![0.0; n];
            let ys: Vec<i32> = vec![0; n / 2];
            let ls = layouts(n / 2, env.size);
            let got = progs::lengths(
                &block_of(&xs, &lens, env),
                &block_of(&ys, &ls[ls.len() - 1], env),
            );
            assert_eq!(got, (n, n / 2, n / 2), "lengths");
        }
        // Sequences made from a length: the balanced blocks.
        let bal: Vec<usize> = (0..env.size)
            .map(|r| dpl::mpi::block(n, r, env.size).len())
            .collect();
        let want: Vec<u64> = (0..n as u64).map(|i| i * i).collect();
        check_block("squares", &progs::squares(n), &want, &bal, env);
        check_block("fill", &progs::fill(2.5, n), &vec![2.5; n], &bal, env);
    }
}

fn scalar_reads(env: Env) {
    for n in SIZES {
        let x: Vec<i32> = (0..n as i32).map(|v| v * 3 - 7).collect();
        for lens in layouts(n, env.size) {
            let xb = block_of(&x, &lens, env);
            match progs::ends(&xb) {
                Ok(got) => assert_eq!(got, (x[0], x[n - 1])),
                Err(e) => {
                    assert_eq!(n, 0, "{e}");
                    assert!(
                        matches!(
                            e,
                            dpl::Error::IndexOutOfRange {
                                index: 0,
                                len: 0,
                                ..
                            }
                        ),
                        "{e}"
                    );
                }
            }
            if n > 0 {
                let want: Vec<i32> = x.iter().map(|v| v - x[0]).collect();
                check_block(
                    "shifted_by_first",
                    &progs::shifted_by_first(&xb),
                    &want,
                    &lens,
                    env,
                );
            }
        }
    }
}

/// Random sizes and random blocks (empty ones often) for every input, many times over.
fn randomised(env: Env) {
    let mut rng = SplitMix64::new(0x5eed);
    for round in 0..40 {
        let n = match round % 4 {
            0 => rng.below(4),
            1 => rng.below(64),
            _ => rng.below(5000),
        };
        let lens = |rng: &mut SplitMix64| {
            let mut cuts: Vec<usize> = (0..env.size - 1).map(|_| rng.below(n + 1)).collect();
            cuts.sort_unstable();
            let mut lens = Vec::with_capacity(env.size);
            let mut at = 0;
            for c in cuts {
                lens.push(c - at);
                at = c;
            }
            lens.push(n - at);
            lens
        };
        let (lx, ly) = (lens(&mut rng), lens(&mut rng));
        let x: Vec<i64> = rng.vec(n, |r| r.below(2001) as i64 - 1000);
        let y: Vec<i64> = rng.vec(n, |r| r.below(7) as i64);
        let (xb, yb) = (block_of(&x, &lx, env), block_of(&y, &ly, env));
        let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let yf: Vec<f32> = y.iter().map(|&v| v as f32).collect();
        let got = progs::saxpy(0.5, &block_of(&xf, &lx, env), &block_of(&yf, &ly, env));
        let want: Vec<f32> = xf.iter().zip(&yf).map(|(a, b)| 0.5 * a + b).collect();
        check_block("random saxpy", &got, &want, &lx, env);
        let got = progs::reduce_pairs(&xb, &yb.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let want = x
            .iter()
            .zip(&y)
            .fold((0i64, i32::MIN), |p, (a, b)| (p.0 + a, p.1.max(*b as i32)));
        assert_eq!(got, want, "random reduce_pairs, round {round}");
        let mut acc = 0i64;
        let want: Vec<i64> = x
            .iter()
            .map(|v| {
                acc += v;
                acc
            })
            .collect();
        check_block("random prefix", &progs::prefix(&xb), &want, &lx, env);
        let (s, c) = progs::filtered_sum(&xb);
        let f: Vec<i64> = x.iter().copied().filter(|v| v % 3 == 0).collect();
        assert_eq!(
            (s, c),
            (f.iter().sum(), f.len()),
            "random filtered_sum, round {round}"
        );
    }
}
