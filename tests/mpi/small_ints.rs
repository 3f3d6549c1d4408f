//! The 8- and 16-bit integers across ranks: wrapping maps and reductions, a `u8` image
//! histogram into `u32` bins, a `scatter_reduce` into `u8` slots, a scan, and sorts with
//! negative keys (their values cross ranks on the wire at their own width).

use crate::harness::*;

pub const CASES: &[Case] = &[
    ("small_ints_flat", flat),
    ("small_ints_indexed", indexed),
    ("small_ints_sorts", sorts),
];

mod progs {
    pub use crate::shared_indexed::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn wrap_and_sum(x: &[u8], y: &[i16]) -> (Vec<u8>, u8, i16, (i8, u16)) {
        (
            map(|v| v * 7u8 + 100u8, x),
            sum(x),
            reduce(|a, b| a.max(b), y, i16::MIN),
            reduce(
                |a, b| (a.0 + b.0, a.1 ^ b.1),
                map(|v, w| (v as i8, w as u16), x, y),
                (0i8, 0u16),
            ),
        )
    }

    #[parallel]
    pub fn running(x: &[u16]) -> Vec<u16> {
        scan(|a, b| a + b, x)
    }

    #[parallel]
    pub fn byte_sums(vals: &[u8], keys: &[u8], bins: usize) -> Vec<u8> {
        scatter_reduce(|a, b| a + b, vals, keys, replicate(0u8, bins))
    }

    #[parallel]
    pub fn sorted(a: &[i8], b: &[i16]) -> (Vec<i8>, Vec<i16>) {
        (sort(a), sort(b))
    }

    #[parallel]
    pub fn by_i8_key(k: &[i8], v: &[u16]) -> Vec<u16> {
        sort_by_key(k, v)
    }
}

fn flat(env: Env) {
    // Each program is distributed (none runs whole on every rank).
    for (name, why) in [
        (
            "wrap_and_sum",
            dpl::inspect!(progs::wrap_and_sum).mpi_not_compiled,
        ),
        ("running", dpl::inspect!(progs::running).mpi_not_compiled),
        (
            "histogram",
            dpl::inspect!(progs::histogram_u8).mpi_not_compiled,
        ),
        (
            "byte_sums",
            dpl::inspect!(progs::byte_sums).mpi_not_compiled,
        ),
        ("sorted", dpl::inspect!(progs::sorted).mpi_not_compiled),
        (
            "by_i8_key",
            dpl::inspect!(progs::by_i8_key).mpi_not_compiled,
        ),
    ] {
        assert_eq!(why, "", "{name} is not distributed");
    }
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 40);
        let x: Vec<u8> = rng.vec(n, |r| r.u64() as u8);
        let y: Vec<i16> = rng.vec(n, |r| r.u64() as i16);
        let s: Vec<u16> = rng.vec(n, |r| r.u64() as u16);
        for lens in layouts(n, env.size) {
            let (xb, yb) = (block_of(&x, &lens, env), block_of(&y, &lens, env));
            let (mapped, total, top, pair) = progs::wrap_and_sum(&xb, &yb);
            let want: Vec<u8> = x
                .iter()
                .map(|v| v.wrapping_mul(7).wrapping_add(100))
                .collect();
            check_block("wrap", &mapped, &want, &lens, env);
            let want_pair = x.iter().zip(&y).fold((0i8, 0u16), |p, (&v, &w)| {
                (p.0.wrapping_add(v as i8), p.1 ^ w as u16)
            });
            assert_eq!(
                (total, top, pair),
                (
                    x.iter().fold(0u8, |a, v| a.wrapping_add(*v)),
                    y.iter().copied().fold(i16::MIN, i16::max),
                    want_pair
                ),
                "reductions, n = {n}, lens {lens:?}"
            );
            let mut acc = 0u16;
            let want: Vec<u16> = s
                .iter()
                .map(|v| {
                    acc = acc.wrapping_add(*v);
                    acc
                })
                .collect();
            check_block(
                "running",
                &progs::running(&block_of(&s, &lens, env)),
                &want,
                &lens,
                env,
            );
        }
    }
}

fn indexed(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 41);
        let pixels: Vec<u8> = rng.vec(n, |r| (r.u64() % 200) as u8);
        let bins = 7;
        let keys: Vec<u8> = rng.vec(n, |r| r.below(bins) as u8);
        let per_rank = |m: usize| -> Vec<usize> {
            (0..env.size)
                .map(|r| dpl::mpi::block(m, r, env.size).len())
                .collect()
        };
        for lens in layouts(n, env.size) {
            let mut want = vec![0u32; 256];
            for &p in &pixels {
                want[usize::from(p)] += 1;
            }
            let got = progs::histogram_u8(&block_of(&pixels, &lens, env));
            check_block("histogram", &got, &want, &per_rank(256), env);
            let mut want = vec![0u8; bins];
            for (&v, &k) in pixels.iter().zip(&keys) {
                want[usize::from(k)] = want[usize::from(k)].wrapping_add(v);
            }
            let got = progs::byte_sums(
                &block_of(&pixels, &lens, env),
                &block_of(&keys, &lens, env),
                bins,
            );
            check_block("byte_sums", &got, &want, &per_rank(bins), env);
        }
    }
}

fn sorts(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 42);
        let a: Vec<i8> = rng.vec(n, |r| r.u64() as i8);
        let b: Vec<i16> = rng.vec(n, |r| r.u64() as i16);
        let k: Vec<i8> = rng.vec(n, |r| r.below(5) as i8 - 2);
        let v: Vec<u16> = (0..n).map(|i| i as u16).collect();
        for lens in layouts(n, env.size) {
            let (got_a, got_b) =
                progs::sorted(&block_of(&a, &lens, env), &block_of(&b, &lens, env));
            let (mut want_a, mut want_b) = (a.clone(), b.clone());
            want_a.sort();
            want_b.sort();
            check_block("sorted i8", &got_a, &want_a, &lens, env);
            check_block("sorted i16", &got_b, &want_b, &lens, env);
            let mut pairs: Vec<(i8, u16)> = k.iter().copied().zip(v.iter().copied()).collect();
            pairs.sort_by_key(|p| p.0);
            let want: Vec<u16> = pairs.iter().map(|p| p.1).collect();
            let got = progs::by_i8_key(&block_of(&k, &lens, env), &block_of(&v, &lens, env));
            check_block("by_i8_key", &got, &want, &lens, env);
        }
    }
}
