//! `sort` and `sort_by_key` across ranks (sample sort): floats in IEEE total order, many
//! duplicates, all keys equal, stability, tuple keys; results in the input's blocks.

use crate::harness::*;

pub const CASES: &[Case] = &[("sorts", sorts), ("sorts_by_key", sorts_by_key)];

mod progs {
    use dpl::prelude::*;

    #[parallel]
    pub fn sorted_f64(x: &[f64]) -> Vec<f64> {
        sort(x)
    }

    #[parallel]
    pub fn sorted_u32(x: &[u32]) -> Vec<u32> {
        sort(map(|v| v % 5, x))
    }

    #[parallel]
    pub fn sorted_pairs(a: &[i32], b: &[i64]) -> Vec<(i32, i64)> {
        sort(zip(a, b))
    }

    #[parallel]
    pub fn ranked(k: &[i32], v: &[f32]) -> Result<Vec<(f32, usize)>, dpl::Error> {
        sort_by_key(k, zip(v, indices(v)))
    }

    #[parallel]
    pub fn by_float_key(k: &[f64], v: &[u64]) -> Vec<u64> {
        sort_by_key(k, v)
    }
}

fn sorts(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 20);
        let specials = [
            f64::NAN,
            -f64::NAN,
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.0,
        ];
        let x: Vec<f64> = rng.vec(n, |r| {
            if r.below(8) == 0 {
                specials[r.below(specials.len())]
            } else {
                r.f64_in(-1.0, 1.0) * 100.0
            }
        });
        let u: Vec<u32> = rng.vec(n, |r| r.u64() as u32);
        let a: Vec<i32> = rng.vec(n, |r| r.below(4) as i32);
        let b: Vec<i64> = rng.vec(n, |r| r.below(1000) as i64 - 500);
        for lens in layouts(n, env.size) {
            let got = progs::sorted_f64(&block_of(&x, &lens, env));
            let mut want = x.clone();
            want.sort_by(f64::total_cmp);
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<u64>>();
            check_block("sorted_f64", &bits(&got), &bits(&want), &lens, env);
            let mut want: Vec<u32> = u.iter().map(|v| v % 5).collect();
            want.sort();
            check_block(
                "sorted_u32",
                &progs::sorted_u32(&block_of(&u, &lens, env)),
                &want,
                &lens,
                env,
            );
            let mut want: Vec<(i32, i64)> = a.iter().copied().zip(b.iter().copied()).collect();
            want.sort();
            let got = progs::sorted_pairs(&block_of(&a, &lens, env), &block_of(&b, &lens, env));
            check_block("sorted_pairs", &got, &want, &lens, env);
        }
    }
}

fn sorts_by_key(env: Env) {
    for n in SIZES {
        let mut rng = SplitMix64::new(n as u64 + 21);
        let few: Vec<i32> = rng.vec(n, |r| r.below(3) as i32 - 1);
        let same: Vec<i32> = vec![7; n];
        let v: Vec<f32> = rng.vec(n, |r| r.f64_in(-1.0, 1.0) as f32);
        let fk: Vec<f64> = rng.vec(n, |r| (r.below(50) as f64 - 25.0) * 0.5);
        let fv: Vec<u64> = (0..n as u64).collect();
        let ls = layouts(n, env.size);
        for (j, lens) in ls.iter().enumerate() {
            let lv = &ls[(j + 1) % ls.len()];
            for keys in [&few, &same] {
                let got =
                    progs::ranked(&block_of(keys, lens, env), &block_of(&v, lv, env)).unwrap();
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by_key(|&i| keys[i]);
                let want: Vec<(f32, usize)> = order.iter().map(|&i| (v[i], i)).collect();
                check_block("ranked (stable)", &got, &want, lens, env);
            }
            let got = progs::by_float_key(&block_of(&fk, lens, env), &block_of(&fv, lens, env));
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&p, &q| fk[p].total_cmp(&fk[q]));
            let want: Vec<u64> = order.iter().map(|&i| fv[i]).collect();
            check_block("by_float_key", &got, &want, lens, env);
        }
    }
}
