//! Loops inside element functions across ranks: a per-element recurrence (Collatz steps,
//! local), and loops that read a whole distributed sequence captured by the element
//! function (all-gathered once; the loop's index must stay inside the loop).

use crate::harness::*;

pub const CASES: &[Case] = &[("loops_per_element", per_element)];

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
