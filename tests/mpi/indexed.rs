//! Reads and writes at computed global indices: gather, permute, scatter, scatter_reduce
//! (dense and sparse), stencil halos (constant and scalar offsets, clamped neighbours),
//! reads that force an all-gather, and replicated parameters.

use crate::harness::*;

pub const CASES: &[Case] = &[
    ("gathers", gathers),
    ("permutes_and_scatters", permutes_and_scatters),
    ("scatter_reduces", scatter_reduces),
    ("halos", halos),
    ("all_gathered_reads", all_gathered_reads),
    ("replicated_parameters", replicated_parameters),
    ("randomised_indexed", randomised),
];

mod progs {
    pub use crate::shared_indexed::*;
    pub use crate::shared_stencil::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn gather_twice(x: &[i64], idx: &[i64], idx2: &[usize]) -> Vec<i64> {
        map(|j| x[idx[j]] * 2, idx2)
    }

    /// An operator without a known identity (`a + b + 1` is associative and commutative;
    /// its identity, -1, is not one dpl knows): the reduce-scatter's optional slots.
    #[parallel]
    pub fn bucket_sum_plus_one(vals: &[i64], keys: &[u32], bins: usize) -> Vec<i64> {
        scatter_reduce(|a, b| a + b + 1, vals, keys, replicate(0i64, bins))
    }

    #[parallel]
    pub fn add_into(src: &[i64], idx: &[u64], dst: &[i64]) -> Vec<i64> {
        scatter_reduce(|a, b| a + b, src, idx, dst)
    }

    #[parallel]
    pub fn clamped(x: &[f64]) -> Vec<f64> {
        let n = len(x);
        map(
            |i| x[i.max(1) - 1] + 2.0 * x[i] + x[(i + 1).min(n - 1)],
            indices(x),
        )
    }

    /// The clamped 4-neighbour form of a 2-D grid stored by rows, `width` a scalar.
    #[parallel]
    pub fn neighbours(y: &[f64], width: usize) -> Vec<f64> {
        let n = len(y);
        map(
            |i| {
                let last = n - 1;
                (y[i.max(1) - 1] + y[(i + 1).min(last)])
                    + (y[i.max(width) - width] + y[(i + width).min(last)])
            },
            indices(y),
        )
    }

    #[parallel]
    pub fn shifted(x: &[u64], d: usize) -> Vec<u64> {
        map(|i| if i >= d { x[i - d] } else { 0 }, indices(x))
    }

    #[parallel]
    pub fn ranks_in(x: &[i32], y: &[i32]) -> Vec<usize> {
        map(|a| count(|b| b < a, y), x)
    }

    #[parallel]
    pub fn conditional_read(x: &[i64], idx: &[usize]) -> Vec<i64> {
        map(|j| if j % 2 == 0 { x[j / 2] } else { -1 }, idx)
    }

    #[parallel(replicated(table))]
    pub fn lookup(keys: &[u32], table: &[f32]) -> Vec<f32> {
        map(|k| table[k] * 2.0, keys)
    }

    #[parallel(replicated(t))]
    pub fn bumped(t: &[i32]) -> (Vec<i32>, i32) {
        (map(|v| v + 1, t), sum(t))
    }
}

fn gathers(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 10);
        let x: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let m = n + n / 3;
        let idx: Vec<u32> = rng.vec(if n == 0 { 0 } else { m }, |r| r.below(n) as u32);
        let xi: Vec<i64> = (0..n as i64).map(|v| v * 7 - 3).collect();
        let idx_i: Vec<i64> = idx.iter().map(|&v| v as i64).collect();
        let idx2: Vec<usize> = rng.vec(if n == 0 { 0 } else { m / 2 }, |r| {
            r.below(idx.len().max(1))
        });
        let xr: Vec<i32> = (0..n as i32).collect();
        let ls = layouts(n, env.size);
        let lm = layouts(idx.len(), env.size);
        let l2 = layouts(idx2.len(), env.size);
        for k in 0..ls.len() {
            let (lx, li, l2) = (&ls[k], &lm[(k + 1) % lm.len()], &l2[(k + 2) % l2.len()]);
            let got = progs::gather_f32(&block_of(&x, lx, env), &block_of(&idx, li, env));
            let want: Vec<f32> = idx.iter().map(|&j| x[j as usize]).collect();
            check_block("gather_f32", &got, &want, li, env);
            let got = progs::gather_twice(
                &block_of(&xi, lx, env),
                &block_of(&idx_i, li, env),
                &block_of(&idx2, l2, env),
            );
            let want: Vec<i64> = idx2.iter().map(|&j| xi[idx_i[j] as usize] * 2).collect();
            check_block("gather_twice", &got, &want, l2, env);
            let want: Vec<i32> = xr.iter().rev().copied().collect();
            check_block(
                "reverse",
                &progs::reverse(&block_of(&xr, lx, env)),
                &want,
                lx,
                env,
            );
        }
    }
}

fn permutes_and_scatters(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 11);
        let x: Vec<i32> = rng.vec(n, |r| r.u64() as i32);
        let p: Vec<u32> = rng.permutation(n).into_iter().map(|j| j as u32).collect();
        let m = 2 * n + 1;
        let dst: Vec<f64> = rng.vec(m, |r| r.f64_in(-1.0, 1.0));
        let src: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
        // Repeated indices: the last write in source order wins.
        let sidx: Vec<usize> = rng.vec(n, |r| r.below(n.max(1) / 2 + 1));
        let ls = layouts(n, env.size);
        let lm = layouts(m, env.size);
        for k in 0..ls.len() {
            let (lx, lp, ld) = (&ls[k], &ls[(k + 1) % ls.len()], &lm[(k + 2) % lm.len()]);
            let got = progs::permute_i32(&block_of(&x, lx, env), &block_of(&p, lp, env));
            let mut want = vec![0i32; n];
            for (v, &j) in x.iter().zip(&p) {
                want[j as usize] = *v;
            }
            check_block("permute", &got, &want, lx, env);
            let got = progs::scatter_f64(
                &block_of(&src, lx, env),
                &block_of(&sidx, lx, env),
                &block_of(&dst, ld, env),
            );
            let mut want = dst.clone();
            for (v, &j) in src.iter().zip(&sidx) {
                want[j] = *v;
            }
            check_block("scatter", &got, &want, ld, env);
        }
    }
}

fn scatter_reduces(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 12);
        for bins in [1usize, 7, 256] {
            let keys: Vec<u32> = rng.vec(n, |r| r.below(bins) as u32);
            let vals: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
            let bal: Vec<usize> = (0..env.size)
                .map(|r| dpl::mpi::block(bins, r, env.size).len())
                .collect();
            for lens in layouts(n, env.size) {
                let got = progs::histogram(&block_of(&keys, &lens, env), bins);
                let mut want = vec![0u32; bins];
                for &k in &keys {
                    want[k as usize] += 1;
                }
                check_block("histogram", &got, &want, &bal, env);
                let ki: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
                let got = progs::bucket_max(
                    &block_of(&vals, &lens, env),
                    &block_of(&ki, &lens, env),
                    bins,
                );
                let mut want = vec![f32::MIN; bins];
                for (v, &k) in vals.iter().zip(&keys) {
                    want[k as usize] = want[k as usize].max(*v);
                }
                check_block("bucket_max", &got, &want, &bal, env);
                let iv: Vec<i64> = vals.iter().map(|&v| (v * 1000.0) as i64).collect();
                let got = progs::bucket_sum_plus_one(
                    &block_of(&iv, &lens, env),
                    &block_of(&keys, &lens, env),
                    bins,
                );
                let mut want = vec![0i64; bins];
                for (v, &k) in iv.iter().zip(&keys) {
                    want[k as usize] += v + 1;
                }
                check_block("bucket_sum_plus_one", &got, &want, &bal, env);
            }
        }
        // A destination larger than the source: pairs go to their owners.
        let m = 3 * n + 5;
        let dst: Vec<i64> = rng.vec(m, |r| r.below(100) as i64);
        let src: Vec<i64> = rng.vec(n, |r| r.below(100) as i64 - 50);
        let idx: Vec<u64> = rng.vec(n, |r| r.below(m) as u64);
        let ls = layouts(n, env.size);
        let lm = layouts(m, env.size);
        for k in 0..ls.len() {
            let (ls, ld) = (&ls[k], &lm[(k + 3) % lm.len()]);
            let got = progs::add_into(
                &block_of(&src, ls, env),
                &block_of(&idx, ls, env),
                &block_of(&dst, ld, env),
            );
            let mut want = dst.clone();
            for (v, &j) in src.iter().zip(&idx) {
                want[j as usize] += v;
            }
            check_block("add_into", &got, &want, ld, env);
        }
    }
}

fn halos(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 13);
        let x: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let xi: Vec<i64> = rng.vec(n, |r| r.below(1000) as i64);
        let xd: Vec<f64> = rng.vec(n, |r| r.f64_in(-1.0, 1.0));
        let xu: Vec<u64> = rng.vec(n, |r| r.u64() >> 1);
        for lens in layouts(n, env.size) {
            let at = |v: &[f32], j: isize| {
                if j < 0 || j >= n as isize {
                    0.0
                } else {
                    v[j as usize]
                }
            };
            let want: Vec<f32> = (0..n as isize)
                .map(|i| (at(&x, i - 1) + at(&x, i) + at(&x, i + 1)) / 3.0)
                .collect();
            check_block(
                "blur3",
                &progs::blur3(&block_of(&x, &lens, env)),
                &want,
                &lens,
                env,
            );
            let ati = |j: isize| {
                if j < 0 || j >= n as isize {
                    -9
                } else {
                    xi[j as usize]
                }
            };
            let want: Vec<i64> = (0..n as isize)
                .map(|i| ati(i - 3) * 1000 + ati(i + 2) * 10 - ati(i + 5))
                .collect();
            check_block(
                "wide",
                &progs::wide(&block_of(&xi, &lens, env), -9),
                &want,
                &lens,
                env,
            );
            let want: Vec<f64> = (0..n)
                .map(|i| xd[i.max(1) - 1] + 2.0 * xd[i] + xd[(i + 1).min(n - 1)])
                .collect();
            check_block(
                "clamped",
                &progs::clamped(&block_of(&xd, &lens, env)),
                &want,
                &lens,
                env,
            );
            for w in [1usize, 3, 40] {
                let last = n.saturating_sub(1);
                let want: Vec<f64> = (0..n)
                    .map(|i| {
                        (xd[i.max(1) - 1] + xd[(i + 1).min(last)])
                            + (xd[i.max(w) - w] + xd[(i + w).min(last)])
                    })
                    .collect();
                check_block(
                    "neighbours",
                    &progs::neighbours(&block_of(&xd, &lens, env), w),
                    &want,
                    &lens,
                    env,
                );
            }
            for d in [0usize, 1, 2, 5, 700] {
                let want: Vec<u64> = (0..n).map(|i| if i >= d { xu[i - d] } else { 0 }).collect();
                check_block(
                    "shifted",
                    &progs::shifted(&block_of(&xu, &lens, env), d),
                    &want,
                    &lens,
                    env,
                );
            }
        }
    }
}

fn all_gathered_reads(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 14);
        let x: Vec<i32> = rng.vec(n, |r| r.below(100) as i32);
        let y: Vec<i32> = rng.vec(n.min(40), |r| r.below(100) as i32);
        let idx: Vec<usize> = rng.vec(n, |r| r.below(2 * n.max(1)));
        let xi: Vec<i64> = rng.vec(n, |r| r.below(1000) as i64);
        let ly = layouts(y.len(), env.size);
        for (k, lens) in layouts(n, env.size).iter().enumerate() {
            let got = progs::ranks_in(
                &block_of(&x, lens, env),
                &block_of(&y, &ly[k % ly.len()], env),
            );
            let want: Vec<usize> = x
                .iter()
                .map(|a| y.iter().filter(|b| *b < a).count())
                .collect();
            check_block("ranks_in", &got, &want, lens, env);
            let got =
                progs::conditional_read(&block_of(&xi, lens, env), &block_of(&idx, lens, env));
            let want: Vec<i64> = idx
                .iter()
                .map(|&j| if j % 2 == 0 { xi[j / 2] } else { -1 })
                .collect();
            check_block("conditional_read", &got, &want, lens, env);
        }
    }
}

fn replicated_parameters(env: Env) {
    let table: Vec<f32> = (0..300).map(|v| v as f32 * 0.5).collect();
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 15);
        let keys: Vec<u32> = rng.vec(n, |r| r.below(300) as u32);
        for lens in layouts(n, env.size) {
            let got = progs::lookup(&block_of(&keys, &lens, env), &table);
            let want: Vec<f32> = keys.iter().map(|&k| table[k as usize] * 2.0).collect();
            check_block("lookup", &got, &want, &lens, env);
        }
        // A replicated input is whole on every rank; a sequence computed from it alone is
        // returned as the rank's balanced block.
        let t: Vec<i32> = (0..n as i32).map(|v| v * 3).collect();
        let (b, s) = progs::bumped(&t);
        let bal: Vec<usize> = (0..env.size)
            .map(|r| dpl::mpi::block(n, r, env.size).len())
            .collect();
        let want: Vec<i32> = t.iter().map(|v| v + 1).collect();
        check_block("bumped", &b, &want, &bal, env);
        assert_eq!(
            s,
            t.iter().fold(0i32, |a, v| a.wrapping_add(*v)),
            "bumped sum"
        );
    }
}

/// Random sizes and blocks for gathers, scatters, histograms and sorts.
fn randomised(env: Env) {
    let mut rng = SplitMix64::new(0xfeed);
    for round in 0..30 {
        let n = if round % 3 == 0 {
            rng.below(8)
        } else {
            rng.below(4000)
        };
        let lens = |rng: &mut SplitMix64, n: usize| {
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
        let (lx, li) = (lens(&mut rng, n), lens(&mut rng, n));
        let x: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let idx: Vec<u32> = rng.vec(n, |r| r.below(n) as u32);
        let got = progs::gather_f32(&block_of(&x, &lx, env), &block_of(&idx, &li, env));
        let want: Vec<f32> = idx.iter().map(|&j| x[j as usize]).collect();
        check_block("random gather", &got, &want, &li, env);
        let bins = 1 + rng.below(300);
        let bal: Vec<usize> = (0..env.size)
            .map(|r| dpl::mpi::block(bins, r, env.size).len())
            .collect();
        let keys: Vec<u32> = rng.vec(n, |r| r.below(bins) as u32);
        let mut want = vec![0u32; bins];
        for &k in &keys {
            want[k as usize] += 1;
        }
        check_block(
            "random histogram",
            &progs::histogram(&block_of(&keys, &lx, env), bins),
            &want,
            &bal,
            env,
        );
        let src: Vec<i64> = rng.vec(n, |r| r.below(100) as i64);
        let dst: Vec<i64> = rng.vec(n, |r| r.below(100) as i64);
        let sidx: Vec<u64> = rng.vec(n, |r| r.below(n) as u64);
        let got = progs::add_into(
            &block_of(&src, &lx, env),
            &block_of(&sidx, &li, env),
            &block_of(&dst, &li, env),
        );
        let mut want = dst.clone();
        for (v, &j) in src.iter().zip(&sidx) {
            want[j as usize] += v;
        }
        check_block("random add_into", &got, &want, &li, env);
    }
}
