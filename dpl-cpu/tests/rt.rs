//! Every run-time helper of `dpl_cpu::rt` against an independent plain sequential Rust
//! computation, at the sizes where the helpers change strategy (empty, one element, small
//! odd sizes, around [`rt::GRAIN`], several blocks of the blocked pipelines, >= 2^20), with
//! 1, 2, 3 and 5 rayon threads (5 takes the paths meant for many threads), plus proptest inputs and the error cases.

use dpl_core::run::{Error, Location};
use dpl_cpu::rt;
use dpl_testkit::order::{scanned, scanned_exclusive};
use dpl_testkit::{in_pools, mix};
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

const AT: &Location = &Location {
    file: "tests/rt.rs",
    line: 1,
    column: 1,
};

/// The sizes every helper is checked at.
fn sizes() -> Vec<usize> {
    let g = rt::GRAIN;
    vec![
        0,
        1,
        2,
        3,
        17,
        31,
        33,
        1000,
        1001,
        g - 1,
        g,
        g + 1,
        3 * g + 17,
        (1 << 20) + 5,
    ]
}

fn data_u32(n: usize, seed: u64) -> Vec<u32> {
    (0..n as u64)
        .map(|i| mix(i ^ seed.rotate_left(32)) as u32)
        .collect()
}

fn data_f32(n: usize) -> Vec<f32> {
    (0..n as u64)
        .map(|i| (mix(i) % 2001) as f32 / 1000.0 - 1.0)
        .collect()
}

/// A random permutation of `0..n` (Fisher-Yates driven by `mix`).
fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n as u32).collect();
    for i in (1..n).rev() {
        let j = (mix(i as u64 ^ seed) % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

#[test]
fn map_matches_sequential() {
    in_pools(|| {
        for n in sizes() {
            let x = data_u32(n, 1);
            // SAFETY: i < n == x.len().
            let got = rt::map(
                n,
                |i| unsafe { rt::read(&x, i) }.wrapping_mul(3) ^ i as u32,
                "map",
                AT,
            );
            let mut want = Vec::new();
            for (i, v) in x.iter().enumerate() {
                want.push(v.wrapping_mul(3) ^ i as u32);
            }
            assert_eq!(got, want, "n = {n}");
        }
    });
}

/// `map_canon`, `map_split_canon` and `update_canon` (and their `seq` forms) give the values
/// of the element function with every NaN canonical: NaNs of other signs and payloads (as
/// x86 arithmetic makes them) in one chunk of many, or in none, at every size, in every
/// pool. The loops of tuples (`map_unzip2_canon`, `map_unzip3_split_canon`,
/// `update_unzip2_canon`, ... and their `seq` forms) do so for the components marked
/// `Canon` only: a float component marked `Keep` keeps its NaNs' bits, an integer one its
/// values.
#[test]
fn canonical_maps_make_every_nan_canonical() {
    const CANON32: u32 = dpl_core::nan::F32_BITS;
    const CANON64: u64 = dpl_core::nan::F64_BITS;
    // Element i: a number, or a NaN with one of several bit patterns where `i % k == 0`.
    let value32 = |i: usize, k: usize| -> f32 {
        match (i.is_multiple_of(k), i % 3) {
            (true, 0) => f32::from_bits(0xffc0_0000),
            (true, 1) => f32::from_bits(0x7fc0_1234),
            (true, _) => f32::from_bits(0xff80_0001),
            (false, _) => i as f32 * 0.5 - 7.0,
        }
    };
    let canon32 = |v: f32| if v.is_nan() { CANON32 } else { v.to_bits() };
    in_pools(|| {
        for n in sizes() {
            // No NaN at all, NaNs in one place (the last chunk), NaNs everywhere.
            for k in [usize::MAX, n.max(1) - 1, 5] {
                let k = k.max(1);
                let want: Vec<u32> = (0..n).map(|i| canon32(value32(i, k))).collect();
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                let got = rt::map_canon(n, |i| value32(i, k), "map", AT);
                assert_eq!(bits(&got), want, "map_canon n = {n} k = {k}");
                let got = rt::map_split_canon(
                    n,
                    n / 4,
                    n / 2,
                    |i| value32(i, k),
                    |i| value32(i, k),
                    "map",
                    AT,
                );
                assert_eq!(bits(&got), want, "map_split_canon n = {n} k = {k}");
                let got = dpl_cpu::seq::map_canon(n, |i| value32(i, k), "map", AT);
                assert_eq!(bits(&got), want, "seq::map_canon n = {n} k = {k}");
                let mut y: Vec<f32> = (0..n).map(|i| i as f32).collect();
                rt::update_canon(&mut y, |i, old| value32(i, k) + (old - i as f32));
                assert_eq!(bits(&y), want, "update_canon n = {n} k = {k}");
                let mut y: Vec<f32> = (0..n).map(|i| i as f32).collect();
                dpl_cpu::seq::update_canon(&mut y, |i, old| value32(i, k) + (old - i as f32));
                assert_eq!(bits(&y), want, "seq::update_canon n = {n} k = {k}");
                unzips(n, &|i| value32(i, k), &want, &format!("n = {n} k = {k}"));
                let got = rt::map_canon(
                    n,
                    |i| {
                        if i.is_multiple_of(k) {
                            f64::from_bits(0xfff8_0000_0000_0000)
                        } else {
                            i as f64
                        }
                    },
                    "map",
                    AT,
                );
                assert!(
                    got.iter().enumerate().all(|(i, v)| if i.is_multiple_of(k) {
                        v.to_bits() == CANON64
                    } else {
                        *v == i as f64
                    }),
                    "map_canon f64 n = {n} k = {k}"
                );
            }
        }
    });
}

/// The loops of tuples of [`canonical_maps_make_every_nan_canonical`]: `value(i)` in
/// components marked `Canon` (whose bits must be `want[i]`) and `Keep` (its own bits), next
/// to an integer component.
fn unzips(n: usize, value: &(dyn Fn(usize) -> f32 + Sync), want: &[u32], at: &str) {
    use dpl_cpu::seq;
    use rt::{Canon, Keep};
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
    let raw: Vec<u32> = (0..n).map(|i| value(i).to_bits()).collect();
    let int = |i: usize| i as u32 ^ 0x5555;
    let ints: Vec<u32> = (0..n).map(int).collect();
    let pair = |i: usize| (int(i), value(i));
    let triple = |i: usize| (value(i), value(i), int(i));
    let check2 = |(a, b): (Vec<u32>, Vec<f32>), what: &str| {
        assert!(a == ints && bits(&b) == want, "{what} {at}");
    };
    let check3 = |(a, b, c): (Vec<f32>, Vec<f32>, Vec<u32>), what: &str| {
        assert!(
            bits(&a) == want && bits(&b) == raw && c == ints,
            "{what} {at}"
        );
    };
    let (lo, hi) = (n / 4, n / 2);
    let nans2 = (Keep, Canon);
    let nans3 = (Canon, Keep, Keep);
    check2(
        rt::map_unzip2_canon(n, pair, nans2, "map", AT),
        "map_unzip2_canon",
    );
    let got = rt::map_unzip2_split_canon(n, lo, hi, pair, pair, nans2, "map", AT);
    check2(got, "map_unzip2_split_canon");
    check2(
        seq::map_unzip2_canon(n, pair, nans2, "map", AT),
        "seq::map_unzip2_canon",
    );
    check3(
        rt::map_unzip3_canon(n, triple, nans3, "map", AT),
        "map_unzip3_canon",
    );
    let got = rt::map_unzip3_split_canon(n, lo, hi, triple, triple, nans3, "map", AT);
    check3(got, "map_unzip3_split_canon");
    check3(
        seq::map_unzip3_canon(n, triple, nans3, "map", AT),
        "seq::map_unzip3_canon",
    );
    // In place: the new values computed from the old ones.
    let old2 = || -> (Vec<u32>, Vec<f32>) {
        ((0..n as u32).collect(), (0..n).map(|i| i as f32).collect())
    };
    let step2 = |i: usize, a: u32, b: f32| (a ^ 0x5555, value(i) + (b - i as f32));
    let (mut a, mut b) = old2();
    rt::update_unzip2_canon(&mut a, &mut b, step2, nans2);
    check2((a, b), "update_unzip2_canon");
    let (mut a, mut b) = old2();
    seq::update_unzip2_canon(&mut a, &mut b, step2, nans2);
    check2((a, b), "seq::update_unzip2_canon");
    let old3 = || -> (Vec<f32>, Vec<f32>, Vec<u32>) {
        let (c, a) = old2();
        (a.clone(), a, c)
    };
    let step3 =
        |i: usize, a: f32, _: f32, c: u32| (value(i) + (a - i as f32), value(i), c ^ 0x5555);
    let (mut a, mut b, mut c) = old3();
    rt::update_unzip3_canon(&mut a, &mut b, &mut c, step3, nans3);
    check3((a, b, c), "update_unzip3_canon");
    let (mut a, mut b, mut c) = old3();
    seq::update_unzip3_canon(&mut a, &mut b, &mut c, step3, nans3);
    check3((a, b, c), "seq::update_unzip3_canon");
    // Every component kept: the loops without `_canon`, NaNs as made.
    let (a, b) = rt::map_unzip2(n, pair, "map", AT);
    assert!(a == ints && bits(&b) == raw, "map_unzip2 {at}");
}

#[test]
fn map_of_owned_values() {
    for n in [0, 5, rt::GRAIN + 3] {
        let got = rt::map(n, |i| format!("{i}"), "map", AT);
        assert_eq!(got.len(), n);
        assert!(got.iter().enumerate().all(|(i, s)| *s == i.to_string()));
    }
}

#[test]
fn reduce_integers_exactly() {
    in_pools(|| {
        for n in sizes() {
            let x = data_u32(n, 2);
            let xi: Vec<i32> = x.iter().map(|&v| v as i32).collect();
            let at = |i| x[i];
            let sum = rt::reduce(n, Some(7u32), at, u32::wrapping_add, "sum", AT);
            let mut want = 7u32;
            for v in &x {
                want = want.wrapping_add(*v);
            }
            assert_eq!(sum, want, "sum n = {n}");
            let sum64 = rt::reduce(n, Some(0u64), |i| x[i] as u64 * 3, |a, b| a + b, "sum", AT);
            assert_eq!(sum64, x.iter().map(|&v| v as u64 * 3).sum::<u64>());
            let count = rt::reduce(
                n,
                Some(0usize),
                |i| x[i].is_multiple_of(3) as usize,
                |a, b| a + b,
                "count",
                AT,
            );
            assert_eq!(
                count,
                x.iter().filter(|&&v| v % 3 == 0).count(),
                "count n = {n}"
            );
            if n > 0 {
                let min = rt::reduce(
                    n,
                    None,
                    |i| xi[i],
                    |a, b| if a < b { a } else { b },
                    "min",
                    AT,
                );
                assert_eq!(min, *xi.iter().min().unwrap(), "min n = {n}");
                let max = rt::reduce(
                    n,
                    None,
                    |i| xi[i],
                    |a, b| if a > b { a } else { b },
                    "max",
                    AT,
                );
                assert_eq!(max, *xi.iter().max().unwrap(), "max n = {n}");
                // A 16-byte element: (value, index) argmin with ties to the smaller index.
                let arg = rt::reduce(n, None, |i| (xi[i] as i64, i), |a, b| a.min(b), "min", AT);
                let want = xi
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (v as i64, i))
                    .min()
                    .unwrap();
                assert_eq!(arg, want, "argmin n = {n}");
            }
        }
    });
}

#[test]
fn reduce_floats_up_to_reassociation() {
    in_pools(|| {
        for n in sizes() {
            let x = data_f32(n);
            let y: Vec<f32> = x.iter().rev().copied().collect();
            // SAFETY: i < n for both slices.
            let dot = rt::reduce(
                n,
                Some(0.0f32),
                |i| unsafe { rt::read(&x, i) * rt::read(&y, i) },
                |a, b| a + b,
                "sum",
                AT,
            );
            let want: f64 = x.iter().zip(&y).map(|(a, b)| *a as f64 * *b as f64).sum();
            let scale: f64 = x
                .iter()
                .zip(&y)
                .map(|(a, b)| (*a as f64 * *b as f64).abs())
                .sum();
            assert!(
                (dot as f64 - want).abs() <= 1e-5 * scale + 1e-6,
                "dot n = {n}: {dot} vs {want}"
            );
            if n > 0 {
                let max = rt::reduce(
                    n,
                    None,
                    |i| x[i],
                    |a, b| if a > b { a } else { b },
                    "max",
                    AT,
                );
                assert_eq!(max, x.iter().copied().fold(f32::NEG_INFINITY, f32::max));
                let sum64 = rt::reduce(n, None, |i| x[i] as f64, |a, b| a + b, "sum", AT);
                let want: f64 = x.iter().map(|&v| v as f64).sum();
                assert!((sum64 - want).abs() <= 1e-9 * n as f64, "sum f64 n = {n}");
            }
        }
    });
}

#[test]
fn reduce_empty() {
    assert_eq!(rt::reduce(0, Some(5i32), |_| 1, |a, b| a + b, "sum", AT), 5);
    let e = rt::run(|| rt::reduce(0, None, |_| 1i32, |a, b| a.max(b), "max", AT)).unwrap_err();
    assert_eq!(
        e,
        Error::Empty {
            prim: "max",
            at: *AT
        }
    );
}

/// Affine maps `x -> a * x + b` (wrapping), composed left to right: associative, not
/// commutative, so a scan that reorders operands gives a different answer.
fn compose(p: (u32, u32), q: (u32, u32)) -> (u32, u32) {
    (
        p.0.wrapping_mul(q.0),
        p.1.wrapping_mul(q.0).wrapping_add(q.1),
    )
}

fn compose64(p: (u64, u64), q: (u64, u64)) -> (u64, u64) {
    (
        p.0.wrapping_mul(q.0),
        p.1.wrapping_mul(q.0).wrapping_add(q.1),
    )
}

fn seq_inclusive<T: Copy>(x: &[T], op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for &v in x {
        let next = match out.last() {
            Some(&p) => op(p, v),
            None => v,
        };
        out.push(next);
    }
    out
}

fn seq_exclusive<T: Copy>(x: &[T], init: T, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = Vec::new();
    let mut acc = init;
    for &v in x {
        out.push(acc);
        acc = op(acc, v);
    }
    out
}

/// Associative integer scans give the sequential result in either pipeline: the one in
/// dpl's order (`ordered`, which keeps every operand pair in index order) and the faster
/// one for types without floats.
#[test]
fn scans_match_sequential() {
    in_pools(|| {
        for n in sizes() {
            for ordered in [false, true] {
                let x = data_u32(n, 3);
                let what = format!("n = {n}, ordered: {ordered}");
                assert_eq!(
                    rt::scan(n, |i| x[i], u32::wrapping_add, ordered, "scan", AT),
                    seq_inclusive(&x, u32::wrapping_add),
                    "{what}"
                );
                assert_eq!(
                    rt::exclusive_scan(
                        n,
                        11,
                        |i| x[i],
                        u32::wrapping_add,
                        ordered,
                        "exclusive_scan",
                        AT
                    ),
                    seq_exclusive(&x, 11, u32::wrapping_add),
                    "{what}"
                );
                let xi: Vec<i64> = x.iter().map(|&v| v as i32 as i64).collect();
                assert_eq!(
                    rt::scan(n, |i| xi[i], i64::max, ordered, "scan", AT),
                    seq_inclusive(&xi, i64::max),
                    "{what}"
                );
                // 8-byte non-commutative elements (blocks of 8) and 16-byte ones (serial).
                let pairs: Vec<(u32, u32)> = x.iter().map(|&v| (v | 1, v >> 3)).collect();
                assert_eq!(
                    rt::scan(n, |i| pairs[i], compose, ordered, "scan", AT),
                    seq_inclusive(&pairs, compose),
                    "{what}"
                );
                assert_eq!(
                    rt::exclusive_scan(
                        n,
                        (3, 4),
                        |i| pairs[i],
                        compose,
                        ordered,
                        "exclusive_scan",
                        AT
                    ),
                    seq_exclusive(&pairs, (3, 4), compose),
                    "{what}"
                );
                let wide: Vec<(u64, u64)> =
                    pairs.iter().map(|&(a, b)| (a as u64, b as u64)).collect();
                assert_eq!(
                    rt::scan(n, |i| wide[i], compose64, ordered, "scan", AT),
                    seq_inclusive(&wide, compose64),
                    "{what}"
                );
            }
        }
    });
}

/// Float scans give the bits of dpl's order (the oracle of `dpl_testkit::order`) in pools
/// of every size, the sequential run time's too.
#[test]
fn float_scans_follow_the_order() {
    for n in sizes() {
        let x = data_f32(n);
        let add = |a: f32, b: f32| a + b;
        let want: Vec<u32> = scanned(&x, None, add).iter().map(|v| v.to_bits()).collect();
        let want_ex: Vec<u32> = scanned_exclusive(&x, 0.5, add)
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let bits = |v: Vec<f32>| -> Vec<u32> { v.iter().map(|v| v.to_bits()).collect() };
        let seq = dpl_cpu::seq::scan(n, |i| x[i], add, true, "scan", AT);
        assert!(bits(seq) == want, "seq, n = {n}");
        in_pools(|| {
            let got = rt::scan(n, |i| x[i], add, true, "scan", AT);
            assert!(bits(got) == want, "n = {n}");
            let got = rt::exclusive_scan(n, 0.5, |i| x[i], add, true, "exclusive_scan", AT);
            assert!(bits(got) == want_ex, "exclusive, n = {n}");
        });
    }
}

#[test]
fn filter_matches_sequential() {
    in_pools(|| {
        for n in sizes() {
            let x = data_u32(n, 4);
            let got = rt::filter(n, |i| x[i] ^ i as u32, |v| v % 3 == 0, "filter", AT);
            let want: Vec<u32> = (0..n)
                .map(|i| x[i] ^ i as u32)
                .filter(|v| v % 3 == 0)
                .collect();
            assert_eq!(got, want, "n = {n}");
            assert_eq!(rt::filter(n, |i| x[i], |_| true, "filter", AT), x);
            assert!(rt::filter(n, |i| x[i], |_| false, "filter", AT).is_empty());
        }
    });
}

#[test]
fn filter_of_owned_values() {
    in_pools(|| {
        for n in [0, 7, rt::GRAIN + 9, 5 * rt::GRAIN] {
            let got = rt::filter(n, |i| i.to_string(), |s| s.ends_with('7'), "filter", AT);
            let want: Vec<String> = (0..n)
                .map(|i| i.to_string())
                .filter(|s| s.ends_with('7'))
                .collect();
            assert_eq!(got, want);
        }
    });
}

#[test]
fn scatter_with_distinct_indices() {
    in_pools(|| {
        for n in sizes() {
            let dst = data_u32(2 * n + 3, 5);
            let idx = permutation(2 * n + 3, 6);
            let src = data_u32(n, 7);
            let got = rt::scatter(n, |i| (idx[i], src[i]), &dst, "scatter", AT);
            let mut want = dst.clone();
            for i in 0..n {
                want[idx[i] as usize] = src[i];
            }
            assert_eq!(got, want, "n = {n}");
        }
    });
}

#[test]
fn scatter_with_repeated_indices_writes_one_of_the_values() {
    in_pools(|| {
        for n in sizes() {
            let m = n / 4 + 1;
            let dst = vec![u64::MAX; m];
            let idx: Vec<usize> = (0..n)
                .map(|i| (mix(i as u64) % m as u64) as usize)
                .collect();
            let got = rt::scatter(n, |i| (idx[i], i as u64), &dst, "scatter", AT);
            let mut written = vec![Vec::new(); m];
            for i in 0..n {
                written[idx[i]].push(i as u64);
            }
            for k in 0..m {
                if written[k].is_empty() {
                    assert_eq!(got[k], u64::MAX);
                } else {
                    assert!(written[k].contains(&got[k]), "n = {n}, slot {k}");
                }
            }
        }
    });
}

#[test]
fn scatter_reduce_matches_sequential() {
    in_pools(|| {
        for n in sizes() {
            // A histogram (small destination: private copies) and a large destination
            // (partitioned), with wrapping sums and a max.
            for m in [1, 256, 2 * n + 1] {
                let dst = data_u32(m, 8);
                let idx: Vec<i64> = (0..n)
                    .map(|i| (mix(i as u64 + 99) % m as u64) as i64)
                    .collect();
                let src = data_u32(n, 9);
                let f = |i: usize| (idx[i], src[i]);
                let got = rt::scatter_reduce(n, f, &dst, u32::wrapping_add, "scatter_reduce", AT);
                let mut want = dst.clone();
                for i in 0..n {
                    let k = idx[i] as usize;
                    want[k] = want[k].wrapping_add(src[i]);
                }
                assert_eq!(got, want, "n = {n}, m = {m}");
                let got = rt::scatter_reduce(n, f, &dst, u32::max, "scatter_reduce", AT);
                let mut want = dst.clone();
                for i in 0..n {
                    let k = idx[i] as usize;
                    want[k] = want[k].max(src[i]);
                }
                assert_eq!(got, want, "max n = {n}, m = {m}");
            }
        }
    });
}

#[test]
fn permute_matches_sequential() {
    in_pools(|| {
        for n in sizes() {
            let idx = permutation(n, 10);
            let x = data_u32(n, 11);
            let got = rt::permute(n, |i| (idx[i], x[i]), "permute", AT);
            let mut want = vec![0u32; n];
            for i in 0..n {
                want[idx[i] as usize] = x[i];
            }
            assert_eq!(got, want, "n = {n}");
        }
    });
}

#[test]
fn index_errors_name_the_first_offending_element() {
    in_pools(|| {
        for n in [5, rt::GRAIN + 5, 1 << 20] {
            let dst = vec![0u32; n];
            // Two bad indices: the first one (in index order) is reported.
            let idx = |i: usize| {
                if i == n - 3 {
                    -1i64
                } else if i == n - 2 {
                    n as i64
                } else {
                    i as i64
                }
            };
            let e =
                rt::run(|| rt::scatter(n, |i| (idx(i), 1u32), &dst, "scatter", AT)).unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "scatter",
                    index: -1,
                    len: n,
                    at: *AT
                }
            );
            let e = rt::run(|| {
                rt::scatter_reduce(
                    n,
                    |i| (idx(i), 1u32),
                    &dst,
                    |a, b| a + b,
                    "scatter_reduce",
                    AT,
                )
            })
            .unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "scatter_reduce",
                    index: -1,
                    len: n,
                    at: *AT
                }
            );
            let small = [0u32; 3];
            let e = rt::run(|| {
                rt::scatter_reduce(
                    n,
                    |i| ((i % 4) as u32, 1u32),
                    &small,
                    |a, b| a + b,
                    "histogram",
                    AT,
                )
            })
            .unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "histogram",
                    index: 3,
                    len: 3,
                    at: *AT
                }
            );
            let e = rt::run(|| rt::permute(n, |i| (idx(i), i), "permute", AT)).unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "permute",
                    index: -1,
                    len: n,
                    at: *AT
                }
            );
            let ids: Vec<i64> = (0..n as i64)
                .map(|i| if i == n as i64 / 2 { -7 } else { i })
                .collect();
            let e = rt::run(|| rt::check_indices(&ids, n, "gather", AT)).unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "gather",
                    index: -7,
                    len: n,
                    at: *AT
                }
            );
            let ids: Vec<u32> = (0..n as u32).collect();
            rt::check_indices(&ids, n, "gather", AT);
            let e = rt::run(|| rt::check_indices(&ids, n - 1, "gather", AT)).unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "gather",
                    index: n as i128 - 1,
                    len: n - 1,
                    at: *AT
                }
            );
            // An error raised inside the element function of a parallel helper.
            let x = vec![1.0f32; n];
            let e = rt::run(|| rt::map(n, |i| rt::index(&x, i + 1, "index", AT), "map", AT))
                .unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    prim: "index",
                    index: n as i128,
                    len: n,
                    at: *AT
                }
            );
        }
    });
}

#[test]
fn permute_rejects_duplicates() {
    in_pools(|| {
        for n in [10, rt::GRAIN + 5, 1 << 20] {
            // Indices 0..n with n/3 replaced by n/2 and 2n/3 replaced by 1: the first
            // repeat in index order is n/2.
            let idx = |i: usize| {
                if i == n / 3 {
                    n / 2
                } else if i == 2 * n / 3 {
                    1
                } else {
                    i
                }
            };
            let e = rt::run(|| rt::permute(n, |i| (idx(i), i as f64), "permute", AT)).unwrap_err();
            let k = n / 2;
            assert_eq!(
                e,
                Error::NotAPermutation {
                    prim: "permute",
                    detail: format!("index {k} appears twice"),
                    at: *AT
                }
            );
        }
    });
}

/// Counts live values, to check that failing helpers drop what they built.
static LIVE: AtomicUsize = AtomicUsize::new(0);

struct Counted(usize);

impl Counted {
    fn new(v: usize) -> Counted {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Counted(v)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn prop_reduce_scan_filter(x in prop::collection::vec(any::<i32>(), 0..3000), big in 0usize..3) {
        // Repeat the input to cross the grain on some cases.
        let x: Vec<i32> = x.iter().copied().cycle().take(x.len() * (1 + big * 40)).collect();
        let n = x.len();
        let sum = rt::reduce(n, Some(0i32), |i| x[i], i32::wrapping_add, "sum", AT);
        prop_assert_eq!(sum, x.iter().fold(0i32, |a, &b| a.wrapping_add(b)));
        let incl = rt::scan(n, |i| x[i], i32::wrapping_add, big == 1, "scan", AT);
        prop_assert_eq!(incl, seq_inclusive(&x, i32::wrapping_add));
        let excl = rt::exclusive_scan(n, -5, |i| x[i], i32::max, big != 1, "exclusive_scan", AT);
        prop_assert_eq!(excl, seq_exclusive(&x, -5, i32::max));
        let kept = rt::filter(n, |i| x[i], |v| *v > 0, "filter", AT);
        prop_assert_eq!(kept, x.iter().copied().filter(|v| *v > 0).collect::<Vec<_>>());
        let doubled = rt::map(n, |i| x[i].wrapping_mul(2), "map", AT);
        prop_assert_eq!(doubled, x.iter().map(|v| v.wrapping_mul(2)).collect::<Vec<_>>());
    }

    #[test]
    fn prop_scatters(pairs in prop::collection::vec((0u32..500, any::<u16>()), 0..3000), m in 1usize..600) {
        let n = pairs.len();
        let dst: Vec<u64> = (0..m as u64).collect();
        let r = rt::run(|| rt::scatter_reduce(n, |i| (pairs[i].0, pairs[i].1 as u64), &dst, |a, b| a + b, "sr", AT));
        let mut want = dst.clone();
        let mut first_bad = None;
        for &(k, v) in &pairs {
            if (k as usize) < m {
                want[k as usize] += v as u64;
            } else {
                first_bad = Some(k);
                break;
            }
        }
        match first_bad {
            None => prop_assert_eq!(r.unwrap(), want),
            Some(k) => prop_assert_eq!(r.unwrap_err(), Error::IndexOutOfRange { prim: "sr", index: k as i128, len: m, at: *AT }),
        }
        let perm = permutation(n, m as u64);
        let got = rt::permute(n, |i| (perm[i], pairs[i].1), "permute", AT);
        let mut want = vec![0u16; n];
        for i in 0..n {
            want[perm[i] as usize] = pairs[i].1;
        }
        prop_assert_eq!(got, want);
    }
}

#[test]
fn sorts_match_the_standard_library() {
    let g = rt::SORT_GRAIN;
    let mut ns = sizes();
    ns.extend([g - 1, g, g + 1]);
    in_pools(|| {
        for &n in &ns {
            // Few distinct keys (stability visible), and floats with the special values.
            let keys: Vec<u32> = data_u32(n, 7).into_iter().map(|k| k % 50).collect();
            let special = [
                0.0,
                -0.0,
                f64::NAN,
                -f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
            ];
            let x: Vec<f64> = (0..n as u64)
                .map(|i| match mix(i) % 16 {
                    k @ 0..6 => special[k as usize],
                    k => (mix(i + 1) % 1000) as f64 / 8.0 - (k as f64),
                })
                .collect();
            let mut want = x.clone();
            want.sort_by(f64::total_cmp);
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&rt::sort(n, |i| x[i], "sort", AT)),
                bits(&want),
                "rt::sort, n = {n}"
            );
            assert_eq!(
                bits(&dpl_cpu::seq::sort(n, |i| x[i], "sort", AT)),
                bits(&want),
                "seq::sort, n = {n}"
            );

            let mut want: Vec<usize> = (0..n).collect();
            want.sort_by_key(|&i| keys[i]);
            assert_eq!(
                rt::sort_by_key(n, |i| (keys[i], i), "sort_by_key", AT),
                want,
                "rt, n = {n}"
            );
            assert_eq!(
                dpl_cpu::seq::sort_by_key(n, |i| (keys[i], i), "sort_by_key", AT),
                want,
                "seq, n = {n}"
            );

            // Tuple keys: lexicographic.
            let pairs: Vec<(bool, i64)> = (0..n)
                .map(|i| (keys[i].is_multiple_of(2), keys[i] as i64 - 25))
                .collect();
            let mut want = pairs.clone();
            want.sort();
            assert_eq!(
                rt::sort(n, |i| pairs[i], "sort", AT),
                want,
                "tuples, n = {n}"
            );
        }
    });
}

/// `sort` and `sort_by_key` of scalar keys at the sizes where the radix sort changes its
/// method (parallel passes, most significant byte first), against the standard library.
#[test]
fn radix_sorts_at_their_method_sizes() {
    in_pools(|| {
        for n in [
            rt::RADIX_PAR_MIN - 1,
            rt::RADIX_PAR_MIN,
            rt::RADIX_MSD_MIN + 3,
        ] {
            let x: Vec<f32> = (0..n as u64)
                .map(|i| f32::from_bits(mix(i) as u32 & 0xc07f_ffff))
                .collect();
            let mut want = x.clone();
            want.sort_by(f32::total_cmp);
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&rt::sort(n, |i| x[i], "sort", AT)),
                bits(&want),
                "f32, n = {n}"
            );

            // Few distinct keys with the high bytes varying: stability across the parts.
            let keys: Vec<u32> = (0..n as u64)
                .map(|i| (mix(i) % 250) as u32 * 0x0101_0101)
                .collect();
            let mut want: Vec<usize> = (0..n).collect();
            want.sort_by_key(|&i| keys[i]);
            assert_eq!(
                rt::sort_by_key(n, |i| (keys[i], i), "sort_by_key", AT),
                want,
                "by key, n = {n}"
            );
        }
    });
}

/// Destination lengths around the strategy changes of `scatter_reduce` for a source of
/// `n` elements: one slot, a histogram, the largest destination with private copies
/// (`2^16` slots, from `2^19` elements on), one slot more (owners), and as long as the
/// source.
fn reduce_destinations(n: usize) -> Vec<usize> {
    // The longest source reaches every method with a hot slot, the largest destination
    // that takes private copies and the next one (a destination as long as itself, or
    // `n / 8`, past the private copies' limit, adds no method).
    if n > 8 << 16 {
        return vec![1, 1 << 16, (1 << 16) + 1];
    }
    let mut ms = vec![1, 256, 1 << 16, (1 << 16) + 1, n.max(1)];
    // The shortest source that still takes private copies (8 elements per slot).
    if n >= 8 {
        ms.push(n / 8);
        ms.push(n / 8 + 1);
    }
    ms
}

/// `scatter_reduce_identity` with the identities the code generator passes, against a
/// sequential loop: exactly for integer operators, `min`/`max` and tuples of them.
#[test]
fn scatter_reduce_identity_matches_sequential() {
    fn check<T: Copy + Send + Sync + PartialEq + std::fmt::Debug>(
        n: usize,
        m: usize,
        x: impl Fn(usize) -> T + Sync,
        op: impl Fn(T, T) -> T + Sync + Copy,
        identity: T,
        what: &str,
    ) {
        let idx: Vec<u32> = (0..n)
            .map(|i| (mix(i as u64 + 5) % m as u64) as u32)
            .collect();
        let dst: Vec<T> = (0..m).map(|j| x(j + 7 * n)).collect();
        let got = rt::scatter_reduce_identity(n, |i| (idx[i], x(i)), &dst, op, identity, "sr", AT);
        let mut want = dst.clone();
        for (i, &k) in idx.iter().enumerate() {
            let k = k as usize;
            want[k] = op(want[k], x(i));
        }
        assert!(got == want, "{what}: n = {n}, m = {m}");
    }
    in_pools(|| {
        for n in sizes() {
            for m in reduce_destinations(n) {
                let u = |i: usize| mix(i as u64) as u32;
                check(n, m, u, u32::wrapping_add, 0, "wrapping +");
                let f = |i: usize| (mix(i as u64) % 2001) as f32 / 1000.0 - 1.0;
                check(n, m, f, f32::min, f32::INFINITY, "f32 min");
                // Sources of GRAIN and GRAIN + 1 elements already reach every method (a
                // hot slot, private copies, owners and ranges): the longer ones check one
                // operator of each type, to keep the debug build's time in bounds.
                if n <= rt::GRAIN + 1 {
                    check(n, m, u, u32::wrapping_mul, 1, "wrapping *");
                    check(n, m, u, u32::min, u32::MAX, "min");
                    check(n, m, u, u32::max, 0, "max");
                    check(n, m, u, |a, b| a & b, u32::MAX, "&");
                    check(n, m, u, |a, b| a | b, 0, "|");
                    check(n, m, u, |a, b| a ^ b, 0, "^");
                    check(n, m, f, f32::max, f32::NEG_INFINITY, "f32 max");
                }
                let t = |i: usize| (mix(i as u64) as i64 % 1000, i.is_multiple_of(3));
                let op = |a: (i64, bool), b: (i64, bool)| (a.0.wrapping_add(b.0), a.1 | b.1);
                check(n, m, t, op, (0, false), "(+, |)");
            }
        }
    });
}

/// A destination slot holding a NaN that nothing combines into keeps it, through private
/// copies too (there `min`'s identity `+inf` is not one: `min(NaN, +inf)` is `+inf`).
#[test]
fn scatter_reduce_keeps_a_nan_slot_nothing_reaches() {
    in_pools(|| {
        let (n, m) = (1 << 18, 64);
        let idx: Vec<u32> = (0..n)
            .map(|i| 1 + (mix(i as u64) % (m - 1)) as u32)
            .collect();
        let x = |i: usize| (mix(i as u64 + 3) % 2001) as f32 / 1000.0 - 1.0;
        let mut dst = vec![0.5f32; m as usize];
        dst[0] = f32::NAN;
        for (op, id) in [
            (f32::min as fn(f32, f32) -> f32, f32::INFINITY),
            (f32::max, f32::NEG_INFINITY),
        ] {
            let got = rt::scatter_reduce_identity(n, |i| (idx[i], x(i)), &dst, op, id, "sr", AT);
            let mut want = dst.clone();
            for (i, &k) in idx.iter().enumerate() {
                want[k as usize] = op(want[k as usize], x(i));
            }
            assert!(got[0].is_nan(), "slot 0: {}", got[0]);
            assert_eq!(got[1..], want[1..]);
        }
    });
}

/// Floating-point `+` through private copies: the sums are reassociated (range by range),
/// so they match the in-order sums up to rounding; with integral values they are exact,
/// and `-0.0`, the identity, keeps the sign of slots that receive only `-0.0`s.
#[test]
fn float_scatter_reduce_up_to_reassociation() {
    in_pools(|| {
        for n in [rt::GRAIN, 1 << 20] {
            for m in [1, 256] {
                let idx: Vec<u32> = (0..n).map(|i| (mix(i as u64) % m as u64) as u32).collect();
                let x: Vec<f64> = (0..n).map(|i| (mix(i as u64 + 1) % 1000) as f64).collect();
                let dst = vec![-0.0f64; m];
                let op = |a: f64, b: f64| a + b;
                let got =
                    rt::scatter_reduce_identity(n, |i| (idx[i], x[i]), &dst, op, -0.0, "s", AT);
                let mut want = dst.clone();
                for i in 0..n {
                    want[idx[i] as usize] += x[i];
                }
                assert_eq!(got, want, "integral values, n = {n}, m = {m}");
                let signs =
                    rt::scatter_reduce_identity(n, |i| (idx[i], -0.0), &dst, op, -0.0, "s", AT);
                assert!(signs.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()));
                let y: Vec<f64> = x.iter().map(|v| v / 7.0).collect();
                let got =
                    rt::scatter_reduce_identity(n, |i| (idx[i], y[i]), &dst, op, -0.0, "s", AT);
                let mut want = dst.clone();
                for i in 0..n {
                    want[idx[i] as usize] += y[i];
                }
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() <= 1e-9 * w.abs(), "{g} vs {w}");
                }
            }
        }
    });
}

/// `scatter_reduce` without an identity (empty slots) at the same sizes, with an operator
/// that does not commute (so a result that applied the values out of index order shows).
#[test]
fn scatter_reduce_without_identity_at_every_destination_size() {
    in_pools(|| {
        for n in [rt::GRAIN - 1, rt::GRAIN, 3 * rt::GRAIN + 17, (1 << 20) + 5] {
            for m in reduce_destinations(n) {
                let idx: Vec<u64> = (0..n).map(|i| mix(i as u64 + 3) % m as u64).collect();
                let x: Vec<(u32, u32)> = (0..n as u64)
                    .map(|i| (mix(i) as u32 | 1, mix(i + n as u64) as u32))
                    .collect();
                let dst: Vec<(u32, u32)> = (0..m as u32).map(|j| (j | 1, j)).collect();
                let got = rt::scatter_reduce(n, |i| (idx[i], x[i]), &dst, compose, "sr", AT);
                let mut want = dst.clone();
                for i in 0..n {
                    let k = idx[i] as usize;
                    want[k] = compose(want[k], x[i]);
                }
                assert_eq!(got, want, "n = {n}, m = {m}");
                // The same operator with its identity (`x -> x`).
                let got = rt::scatter_reduce_identity(
                    n,
                    |i| (idx[i], x[i]),
                    &dst,
                    compose,
                    (1, 0),
                    "sr",
                    AT,
                );
                assert_eq!(got, want, "identity, n = {n}, m = {m}");
            }
        }
    });
}

/// The first index out of range in index order is reported by every path of
/// `scatter_reduce`, also when it lies in a late source range.
#[test]
fn scatter_reduce_errors_name_the_first_offending_element() {
    in_pools(|| {
        for n in [100, rt::GRAIN + 5, 1 << 20] {
            for m in reduce_destinations(n) {
                // Bad indices near the end (the last ranges), the first one is `m + 1`.
                let idx = |i: usize| {
                    if i == n - 7 {
                        (m + 1) as i64
                    } else if i == n - 3 {
                        -2
                    } else {
                        (i % m) as i64
                    }
                };
                let dst = vec![0u32; m];
                let want = Error::IndexOutOfRange {
                    prim: "scatter_reduce",
                    index: (m + 1) as i128,
                    len: m,
                    at: *AT,
                };
                let add = |a: u32, b: u32| a.wrapping_add(b);
                let e = rt::run(|| {
                    rt::scatter_reduce_identity(
                        n,
                        |i| (idx(i), 1u32),
                        &dst,
                        add,
                        0,
                        "scatter_reduce",
                        AT,
                    )
                });
                assert_eq!(e.unwrap_err(), want, "identity, n = {n}, m = {m}");
                let e = rt::run(|| {
                    rt::scatter_reduce(n, |i| (idx(i), 1u32), &dst, add, "scatter_reduce", AT)
                });
                assert_eq!(e.unwrap_err(), want, "no identity, n = {n}, m = {m}");
            }
        }
    });
}

/// `count` against a filter's count, with few, half and almost all elements counted.
#[test]
fn count_matches_sequential() {
    in_pools(|| {
        for n in sizes() {
            let x = data_u32(n, 12);
            for limit in [u32::MAX / 100, u32::MAX / 2, u32::MAX - 5] {
                let want = x.iter().filter(|&&v| v < limit).count();
                assert_eq!(rt::count(n, |i| x[i] < limit), want, "n = {n}");
                assert_eq!(
                    dpl_cpu::seq::count(n, |i| x[i] < limit),
                    want,
                    "seq, n = {n}"
                );
            }
            assert_eq!(rt::count(n, |_| true), n);
            assert_eq!(rt::count(n, |_| false), 0);
        }
    });
}

/// `permute`'s error for indices that are not a permutation is the sequential reference's
/// (the first offending element in index order: a repeated index or one out of range),
/// whichever part of the destination the offending indices fall in.
#[test]
fn permute_errors_are_the_sequential_ones() {
    in_pools(|| {
        // A byte per slot up to 4,096 slots, a bit beyond; owners (2-4 threads) from
        // `GRAIN` on; the shared bitmap with 5 threads.
        for n in [
            10,
            200,
            4096,
            4097,
            rt::GRAIN - 1,
            rt::GRAIN + 5,
            3 * rt::GRAIN + 17,
        ] {
            let base = permutation(n, 13);
            // (position, new index) changes; each set is applied to a fresh permutation.
            let cases: Vec<Vec<(usize, i64)>> = vec![
                vec![(n - 1, base[0] as i64)],
                vec![(1, base[n - 1] as i64)],
                vec![(n / 2, n as i64)],
                vec![(n / 3, base[n / 2] as i64), (n / 2 + 1, -1)],
                vec![(n / 3, -1), (n / 2, base[0] as i64)],
                vec![(2, base[3] as i64), (5, base[6] as i64)],
            ];
            for changes in cases {
                let mut idx: Vec<i64> = base.iter().map(|&k| k as i64).collect();
                for &(p, k) in &changes {
                    idx[p] = k;
                }
                let want =
                    rt::run(|| dpl_cpu::seq::permute(n, |i| (idx[i], i as u32), "permute", AT));
                let got = rt::run(|| rt::permute(n, |i| (idx[i], i as u32), "permute", AT));
                assert!(want.is_err(), "{changes:?}");
                assert_eq!(got.unwrap_err(), want.unwrap_err(), "n = {n}, {changes:?}");
            }
        }
    });
}

/// A failing `permute` drops the values it placed, on every path (one part, owners, the
/// shared bitmap of many threads).
#[test]
fn failing_permute_drops_the_values_it_placed() {
    in_pools(|| {
        for n in [10, rt::GRAIN + 1, 3 * rt::GRAIN] {
            let before = LIVE.load(Ordering::SeqCst);
            for bad in [0, n / 2, n - 1] {
                let r = rt::run(|| {
                    rt::permute(
                        n,
                        |i| (if i == bad { (bad + 1) % n } else { i }, Counted::new(i)),
                        "permute",
                        AT,
                    )
                });
                assert!(matches!(r, Err(Error::NotAPermutation { .. })));
            }
            let r = rt::run(|| {
                rt::permute(
                    n,
                    |i| (i + usize::from(i == n - 1), Counted::new(i)),
                    "permute",
                    AT,
                )
            });
            assert!(matches!(r, Err(Error::IndexOutOfRange { .. })));
            let ok = rt::permute(n, |i| ((i + 1) % n, Counted::new(i)), "permute", AT);
            assert!(ok.iter().enumerate().all(|(k, v)| v.0 == (k + n - 1) % n));
            drop(ok);
            assert_eq!(LIVE.load(Ordering::SeqCst), before);
        }
    });
}

/// An exclusive scan's last input element is in no output, but its error is the call's
/// (found by the random programs, program 1282: `exclusive_scan` of a map of `max(row)`
/// returned a result on `Place::Cpu` where a last row was empty; every other place fails).
#[test]
fn exclusive_scan_reports_the_error_of_its_last_element() {
    let fail = |_| {
        rt::raise(Error::Empty {
            prim: "max",
            at: *AT,
        })
    };
    for n in sizes() {
        in_pools(|| {
            let last = |i: usize| if i + 1 == n { fail(i) } else { i as i64 };
            let e = rt::run(|| {
                rt::exclusive_scan(n, 0, last, i64::wrapping_add, false, "exclusive_scan", AT)
            });
            let mut out = vec![std::mem::MaybeUninit::uninit(); n];
            let into =
                rt::run(|| rt::exclusive_scan_into(&mut out, n, 0, last, i64::wrapping_add, true));
            for r in [e.map(|_| ()), into] {
                match n {
                    0 => assert_eq!(r, Ok(()), "n = 0"),
                    _ => assert_eq!(
                        r,
                        Err(Error::Empty {
                            prim: "max",
                            at: *AT
                        }),
                        "n = {n}"
                    ),
                }
            }
        });
    }
}
