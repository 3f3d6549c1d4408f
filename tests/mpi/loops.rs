//! Loops inside element functions across ranks: a per-element recurrence (Collatz steps,
//! local), and loops that read a whole distributed sequence captured by the element
//! function (all-gathered once; the loop's index must stay inside the loop). Loops at the
//! top level of a body, which iterate whole parallel steps: a carried sequence whose
//! condition is a reduction, one whose length changes at every iteration (a filter), one
//! started from a replicated parameter, one that reads its sequence at other positions,
//! a `break` between the updates of two carried sequences, and an error raised on one rank
//! inside an iteration.

use crate::harness::*;

pub const CASES: &[Case] = &[
    ("loops_per_element", per_element),
    ("loops_top_level", top_level),
];

mod progs {
    use dpl::prelude::*;

    #[parallel]
    pub fn collatz_steps(x: &[u32]) -> Vec<u32> {
        map(
            |v| {
                let (mut n, mut k) = (v, 0u32);
                while n > 1 && k < 500 {
                    n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                    k += 1;
                }
                k
            },
            x,
        )
    }

    #[parallel]
    pub fn horner(x: &[u32], w: &[u32]) -> Vec<u32> {
        map(
            |v| {
                let mut s = v;
                for c in w {
                    s = s * 3 + c;
                }
                for i in 0..len(w) {
                    if w[i] % 2 == 0 {
                        continue;
                    }
                    s ^= w[i];
                }
                s
            },
            x,
        )
    }
}

mod top {
    use dpl::prelude::*;

    /// Halves every element until the largest is at most `limit`: the condition is a
    /// reduction (one exchange per iteration), the carried sequence keeps its layout.
    #[parallel]
    pub fn halve_until(x: &[i64], limit: i64) -> (Vec<i64>, u32) {
        let mut v = x.to_vec();
        let mut steps = 0u32;
        while reduce(|a, b| if a > b { a } else { b }, v, i64::MIN) > limit {
            v = map(|e| e / 2, v);
            steps += 1;
        }
        (v, steps)
    }

    /// A sequence whose length changes at every iteration: the blocks become uneven.
    #[parallel]
    pub fn sieve(x: &[i64], rounds: usize) -> (Vec<i64>, usize) {
        let mut v = x.to_vec();
        let mut kept = len(v);
        for r in 0..rounds {
            v = filter(|e| e % (r as i64 + 2) != 0, map(|e| e + 1, v));
            kept += len(v);
        }
        (v, kept)
    }

    /// Started from a replicated parameter (cut to the rank's block), and read at other
    /// positions at every step (a neighbour's element crosses ranks).
    #[parallel(replicated(w))]
    pub fn smooth(w: &[i64], steps: usize) -> Vec<i64> {
        let mut v = w.to_vec();
        let n = len(v);
        for _ in 0..steps {
            v = map(|i| v[i] + v[if i + 1 < n { i + 1 } else { i }], indices(v));
        }
        v
    }

    /// Two carried sequences and a `break` between their updates (the loop's `if` then
    /// carries sequences), one of them filtered (uneven blocks).
    #[parallel]
    pub fn shrink(x: &[i64], limit: i64) -> (Vec<i64>, Vec<i64>, usize) {
        let mut v = x.to_vec();
        let mut w = x.to_vec();
        let mut k = 0usize;
        while k < 40 {
            v = map(|e| e / 3 + e / 5, v);
            k += 1;
            if sum(v) < limit {
                break;
            }
            w = filter(|e| e % 7 != 0, map(|e| e + 1, w));
        }
        (v, w, k)
    }

    /// An index out of range at iteration `bad_step` only (on the rank that owns it).
    #[parallel]
    pub fn walk(x: &[i64], idx: &[usize], steps: usize, bad_step: usize) -> Result<i64, Error> {
        let mut v = x.to_vec();
        for s in 0..steps {
            let shift = if s == bad_step { len(v) } else { 0 };
            v = map(|k| v[k + shift] + 1, idx);
        }
        sum(v)
    }
}

fn top_level(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 91);
        let x: Vec<i64> = rng.vec(n, |r| r.below(1 << 20) as i64);
        let w: Vec<i64> = rng.vec(n, |r| r.below(1000) as i64 - 500);
        // Plain Rust.
        let (mut halved, mut steps) = (x.clone(), 0u32);
        while halved.iter().copied().max().unwrap_or(i64::MIN) > 1000 {
            halved = halved.iter().map(|e| e / 2).collect();
            steps += 1;
        }
        let (mut sieved, mut kept) = (x.clone(), n);
        for r in 0..4i64 {
            sieved = sieved
                .iter()
                .map(|e| e + 1)
                .filter(|e| e % (r + 2) != 0)
                .collect();
            kept += sieved.len();
        }
        let mut smoothed = w.clone();
        for _ in 0..3 {
            smoothed = (0..n)
                .map(|i| smoothed[i] + smoothed[if i + 1 < n { i + 1 } else { i }])
                .collect();
        }
        let (mut sv, mut sw, mut sk) = (x.clone(), x.clone(), 0usize);
        while sk < 40 {
            sv = sv.iter().map(|e| e / 3 + e / 5).collect();
            sk += 1;
            if sv.iter().sum::<i64>() < 5000 {
                break;
            }
            sw = sw.iter().map(|e| e + 1).filter(|e| e % 7 != 0).collect();
        }
        let idx: Vec<usize> = (0..n).map(|i| (i * 7 + 3) % n.max(1)).collect();
        let mut walked = x.clone();
        for _ in 0..3 {
            walked = idx.iter().map(|&k| walked[k] + 1).collect();
        }
        for lens in layouts(n, env.size) {
            let xb = block_of(&x, &lens, env);
            let (v, s) = top::halve_until(&xb, 1000);
            assert_eq!(s, steps, "halve_until: steps");
            check_block("halve_until", &v, &halved, &lens, env);

            let (v, k) = top::sieve(&xb, 4);
            assert_eq!(k, kept, "sieve: kept");
            let all = dpl::mpi::gather_to_all(&v);
            assert_eq!(all, sieved, "sieve: the survivors in the global order");

            let (v, w, k) = top::shrink(&xb, 5000);
            assert_eq!(k, sk, "shrink: iterations");
            check_block("shrink: v", &v, &sv, &lens, env);
            assert_eq!(dpl::mpi::gather_to_all(&w), sw, "shrink: w");

            let ib = block_of(&idx, &lens, env);
            assert_eq!(
                top::walk(&xb, &ib, 3, 99),
                Ok(walked.iter().sum::<i64>()),
                "walk"
            );
            if n > 0 {
                match top::walk(&xb, &ib, 3, 1) {
                    Err(dpl::Error::IndexOutOfRange { .. }) => {}
                    other => panic!("walk out of range at step 1: {other:?}"),
                }
            }
        }
        let balanced: Vec<usize> = (0..env.size)
            .map(|r| dpl::mpi::block(n, r, env.size).len())
            .collect();
        check_block("smooth", &top::smooth(&w, 3), &smoothed, &balanced, env);
    }
}

fn per_element(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 77);
        let x: Vec<u32> = rng.vec(n, |r| (r.u64() % 10_000) as u32);
        let w: Vec<u32> = rng.vec(n.min(50), |r| (r.u64() % 100) as u32);
        let steps: Vec<u32> = x
            .iter()
            .map(|&v| {
                let (mut n, mut k) = (v, 0u32);
                while n > 1 && k < 500 {
                    n = if n % 2 == 0 {
                        n / 2
                    } else {
                        n.wrapping_mul(3).wrapping_add(1)
                    };
                    k += 1;
                }
                k
            })
            .collect();
        let horner: Vec<u32> = x
            .iter()
            .map(|&v| {
                let mut s = v;
                for &c in &w {
                    s = s.wrapping_mul(3).wrapping_add(c);
                }
                for &c in &w {
                    if c % 2 != 0 {
                        s ^= c;
                    }
                }
                s
            })
            .collect();
        for lens in layouts(n, env.size) {
            let xb = block_of(&x, &lens, env);
            check_block("collatz", &progs::collatz_steps(&xb), &steps, &lens, env);
            for wl in layouts(w.len(), env.size) {
                let wb = block_of(&w, &wl, env);
                check_block("horner", &progs::horner(&xb, &wb), &horner, &lens, env);
            }
        }
    }
}
