//! `sort(x)` and `sort_by_key(keys, vals)` on every place, against the standard library's
//! sorts: every scalar type (signed extremes, `bool`s, floats with `-0.0`, `+0.0`, NaNs and
//! infinities, ordered by `total_cmp`), inputs that are empty, one element, all equal,
//! already sorted, reversed, full of duplicates and large; stability through
//! `sort_by_key` with distinct values; tuple keys (lexicographic); sorts fed into and fed by
//! other primitives; sorts of the rows of a `Nested` and a `Matrix` inside element
//! functions (empty rows included); and the length-mismatch error of `sort_by_key`.
//!
//! On `Place::Sim` the top-level sorts run the GPU backend's radix sort and sorts inside
//! element functions (per row) a merge sort by the row's thread, or by its warp or block
//! under `inner = "warp"` / `"block"` (the last test checks that all are compiled for
//! the GPU, with the schedule asked for).

mod common;

use common::*;
use dpl::{Error, Matrix, Nested, Place};

mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn sort_i32(x: &[i32]) -> Vec<i32> {
        sort(x)
    }

    #[parallel]
    pub fn sort_u32(x: &[u32]) -> Vec<u32> {
        sort(x)
    }

    #[parallel]
    pub fn sort_i64(x: &[i64]) -> Vec<i64> {
        sort(x)
    }

    #[parallel]
    pub fn sort_u64(x: &[u64]) -> Vec<u64> {
        sort(x)
    }

    #[parallel]
    pub fn sort_usize(x: &[usize]) -> Vec<usize> {
        sort(x)
    }

    #[parallel]
    pub fn sort_bool(x: &[bool]) -> Vec<bool> {
        sort(x)
    }

    #[parallel]
    pub fn sort_f32(x: &[f32]) -> Vec<f32> {
        sort(x)
    }

    #[parallel]
    pub fn sort_f64(x: &[f64]) -> Vec<f64> {
        sort(x)
    }

    /// Each value with its position: stability is visible in the positions.
    #[parallel]
    pub fn sort_by_key_i64(k: &[i64], v: &[i32]) -> Vec<(i32, usize)> {
        sort_by_key(k, zip(v, indices(v)))
    }

    #[parallel]
    pub fn sort_by_key_f32(k: &[f32], v: &[u64]) -> Vec<u64> {
        sort_by_key(k, v)
    }

    #[parallel]
    pub fn sort_by_key_bool(k: &[bool], v: &[f64]) -> Vec<f64> {
        sort_by_key(k, v)
    }

    #[parallel]
    pub fn argsort_u32(k: &[u32]) -> Vec<usize> {
        sort_by_key(k, indices(k))
    }

    /// Tuple keys: lexicographic.
    #[parallel]
    pub fn sort_by_pair_key(a: &[bool], b: &[f64], v: &[u32]) -> Vec<u32> {
        sort_by_key(zip(a, b), v)
    }

    #[parallel]
    pub fn sort_pairs(a: &[u32], b: &[i32]) -> Vec<(u32, i32)> {
        sort(zip(a, b))
    }

    #[parallel]
    pub fn try_sort_by_key(k: &[u32], v: &[f32]) -> Result<Vec<f32>, dpl::Error> {
        sort_by_key(k, v)
    }

    #[parallel]
    pub fn gather_sorted(x: &[f32], idx: &[u32]) -> Vec<f32> {
        gather(x, sort(idx))
    }

    #[parallel]
    pub fn map_of_sort_of_map(x: &[i64]) -> Vec<i64> {
        map(|v| v * 2 + 1, sort(map(|v| v % 1000, x)))
    }

    /// `sum(s[i] * i)` depends on the order; the last element is the largest.
    #[parallel]
    pub fn weighted_sum_of_sort(x: &[u64]) -> (u64, u64) {
        let s = sort(x);
        (sum(map(|i| s[i] * (i as u64), indices(s))), s[len(s) - 1])
    }

    #[parallel]
    pub fn sorted_positives(x: &[i32]) -> Vec<i32> {
        sort(filter(|v| v > 0, x))
    }

    /// Sorting is idempotent, and `sort` of an argsort gives back the indices.
    #[parallel]
    pub fn sort_twice(x: &[f32]) -> (Vec<f32>, Vec<usize>) {
        (sort(sort(x)), sort(sort_by_key(x, indices(x))))
    }

    /// The number of distinct values: adjacent differences of the sorted sequence.
    #[parallel]
    pub fn distinct(x: &[u32]) -> usize {
        let s = sort(x);
        count(|i| i == 0 || s[i] != s[i - 1], indices(s))
    }

    #[parallel]
    pub fn sort_rows(x: &Nested<i32>) -> Nested<i32> {
        map(|r| sort(r), x)
    }

    #[parallel(inner = "warp")]
    pub fn sort_rows_warp(x: &Nested<i32>) -> Nested<i32> {
        map(|r| sort(r), x)
    }

    #[parallel(inner = "block")]
    pub fn row_argsort_block(x: &Nested<u32>) -> Nested<usize> {
        map(|r| sort_by_key(r, indices(r)), x)
    }

    #[parallel(inner = "warp")]
    pub fn row_median_warp(m: &Matrix<f32>) -> Vec<f32> {
        map(|r| sort(r)[len(r) / 2], m)
    }

    #[parallel]
    pub fn row_smallest(x: &Nested<f64>) -> Vec<f64> {
        map(|r| if len(r) > 0 { sort(r)[0] } else { -1.0 }, x)
    }

    #[parallel]
    pub fn row_argsort(x: &Nested<u32>) -> Nested<usize> {
        map(|r| sort_by_key(r, indices(r)), x)
    }

    #[parallel]
    pub fn row_median(m: &Matrix<f32>) -> Vec<f32> {
        map(|r| sort(r)[len(r) / 2], m)
    }

    #[parallel]
    pub fn row_sorted_sum_of_top3(x: &Nested<i64>) -> Vec<i64> {
        map(
            |r| {
                let s = sort(r);
                sum(map(|i| s[i], filter(|i| i + 3 >= len(s), indices(s))))
            },
            x,
        )
    }
}

const SIZES: [usize; 4] = [0, 1, 1001, BIG];

/// The inputs a sort is checked on, from `random` values of size `n`: the random ones,
/// already sorted, reversed, all equal, and few distinct values (many duplicates).
fn shapes<T: Copy>(random: Vec<T>, sort: impl Fn(&mut Vec<T>)) -> Vec<(&'static str, Vec<T>)> {
    // Large inputs (slow to sort in a debug build): the random shape only.
    if random.len() > 100_000 {
        return vec![("random", random)];
    }
    let mut sorted = random.clone();
    sort(&mut sorted);
    let reversed: Vec<T> = sorted.iter().rev().copied().collect();
    let equal: Vec<T> = random
        .first()
        .map(|&v| vec![v; random.len()])
        .unwrap_or_default();
    let few: Vec<T> = (0..random.len())
        .map(|i| random[(i * 7919) % random.len().min(5)])
        .collect();
    vec![
        ("random", random),
        ("sorted", sorted),
        ("reversed", reversed),
        ("all equal", equal),
        ("few distinct", few),
    ]
}

/// Checks `got` against `want` bit for bit (so `-0.0` and `+0.0`, and NaNs, must match).
#[track_caller]
fn assert_bits<T: Copy + std::fmt::Debug, B: PartialEq + std::fmt::Debug>(
    got: &[T],
    want: &[T],
    bits: impl Fn(T) -> B,
    what: &str,
) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| bits(got[i]) != bits(want[i])) {
        panic!("{what}: element {i}: got {:?}, want {:?}", got[i], want[i]);
    }
}

macro_rules! check_int_sort {
    ($name:ident, $f:path, $gen:expr) => {
        fn $name(place: Place) {
            each_size(place, &SIZES, |n, rng| {
                for (shape, x) in shapes($gen(rng, n), |v| v.sort()) {
                    let mut want = x.clone();
                    want.sort();
                    assert_eq!($f(&x), want, "{shape}");
                }
            });
        }
    };
}

check_int_sort!(ints_i32, prog::sort_i32, |r: &mut Rng, n| r.i32s(n));
check_int_sort!(ints_u32, prog::sort_u32, |r: &mut Rng, n| r.u32s(n));
check_int_sort!(ints_i64, prog::sort_i64, |r: &mut Rng, n| r.i64s(n));
check_int_sort!(ints_u64, prog::sort_u64, |r: &mut Rng, n| r.u64s(n));
check_int_sort!(ints_usize, prog::sort_usize, |r: &mut Rng, n| r
    .u64s(n)
    .into_iter()
    .map(|v| v as usize)
    .collect::<Vec<_>>());
check_int_sort!(bools, prog::sort_bool, |r: &mut Rng, n| r.bools(n));

/// Floats with the special values mixed in: signed zeros, infinities, NaNs of both signs
/// (and another payload), subnormals, the extremes.
fn edgy_f64s(rng: &mut Rng, n: usize) -> Vec<f64> {
    let special = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::from_bits(0x7ff0_0000_0000_0abc),
        f64::MIN_POSITIVE / 4.0,
        -f64::MIN_POSITIVE / 4.0,
        f64::MAX,
        f64::MIN,
        1.0,
        -1.0,
    ];
    rng.vec(n, |r| r.edgy(&special, |r| r.f64_in(-1e6, 1e6)))
}

fn floats_f64(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        for (shape, x) in shapes(edgy_f64s(rng, n), |v| v.sort_by(f64::total_cmp)) {
            let mut want = x.clone();
            want.sort_by(f64::total_cmp);
            assert_bits(&prog::sort_f64(&x), &want, f64::to_bits, shape);
        }
    });
}

fn floats_f32(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x: Vec<f32> = edgy_f64s(rng, n).into_iter().map(|v| v as f32).collect();
        for (shape, x) in shapes(x, |v| v.sort_by(f32::total_cmp)) {
            let mut want = x.clone();
            want.sort_by(f32::total_cmp);
            assert_bits(&prog::sort_f32(&x), &want, f32::to_bits, shape);
        }
    });
}

/// The order of the special values, spelled out once (not through `total_cmp`).
fn float_order_is_total_order(place: Place) {
    dpl::with_place(place, || {
        let x = [
            1.0f32,
            f32::NAN,
            -0.0,
            f32::NEG_INFINITY,
            0.0,
            -f32::NAN,
            f32::INFINITY,
            -2.5,
        ];
        let got: Vec<u32> = prog::sort_f32(&x).into_iter().map(f32::to_bits).collect();
        let want: Vec<u32> = [
            -f32::NAN,
            f32::NEG_INFINITY,
            -2.5,
            -0.0,
            0.0,
            1.0,
            f32::INFINITY,
            f32::NAN,
        ]
        .into_iter()
        .map(f32::to_bits)
        .collect();
        assert_eq!(got, want);
    });
}

/// Stability: keys with many duplicates, values carrying their positions.
fn stable_by_key(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let distincts: &[usize] = if n > 100_000 {
            &[3, usize::MAX]
        } else {
            &[1, 3, 1000, usize::MAX]
        };
        for &distinct in distincts {
            let k: Vec<i64> = rng
                .i64s(n)
                .into_iter()
                .map(|v| {
                    if distinct == usize::MAX {
                        v
                    } else {
                        v.rem_euclid(distinct as i64) - 1
                    }
                })
                .collect();
            let v = rng.i32s(n);
            let mut pairs: Vec<(i64, (i32, usize))> =
                k.iter().copied().zip(v.iter().copied().zip(0..)).collect();
            pairs.sort_by_key(|p| p.0);
            let want: Vec<(i32, usize)> = pairs.into_iter().map(|p| p.1).collect();
            assert_eq!(prog::sort_by_key_i64(&k, &v), want, "{distinct} keys");
            let ku: Vec<u32> = k.iter().map(|&x| x as u32).collect();
            let mut want: Vec<usize> = (0..n).collect();
            want.sort_by_key(|&i| ku[i]);
            assert_eq!(prog::argsort_u32(&ku), want, "argsort, {distinct} keys");
        }
    });
}

fn by_float_and_bool_keys(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let k: Vec<f32> = edgy_f64s(rng, n)
            .into_iter()
            .map(|v| (v as f32 * 4.0).round() / 4.0)
            .collect();
        let v = rng.u64s(n);
        let mut pairs: Vec<(f32, u64)> = k.iter().copied().zip(v.iter().copied()).collect();
        pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let want: Vec<u64> = pairs.into_iter().map(|p| p.1).collect();
        assert_eq!(prog::sort_by_key_f32(&k, &v), want);

        let b = rng.bools(n);
        let w = rng.f64s(n, -1.0, 1.0);
        let mut pairs: Vec<(bool, f64)> = b.iter().copied().zip(w.iter().copied()).collect();
        pairs.sort_by_key(|p| p.0);
        let want: Vec<f64> = pairs.into_iter().map(|p| p.1).collect();
        assert_bits(
            &prog::sort_by_key_bool(&b, &w),
            &want,
            f64::to_bits,
            "bool keys",
        );
    });
}

fn tuple_keys(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let a = rng.bools(n);
        let b: Vec<f64> = (0..n).map(|_| rng.int_in(-3..=3) as f64 * 0.5).collect();
        let v: Vec<u32> = (0..n as u32).collect();
        let mut want = v.clone();
        want.sort_by(|&i, &j| {
            let (i, j) = (i as usize, j as usize);
            a[i].cmp(&a[j]).then(b[i].total_cmp(&b[j]))
        });
        assert_eq!(prog::sort_by_pair_key(&a, &b, &v), want);

        let p: Vec<u32> = rng.u32s(n).into_iter().map(|x| x % 4).collect();
        let q = rng.i32s(n);
        let mut want: Vec<(u32, i32)> = p.iter().copied().zip(q.iter().copied()).collect();
        want.sort();
        assert_eq!(prog::sort_pairs(&p, &q), want);
    });
}

fn compositions(place: Place) {
    each_size(place, &SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let idx: Vec<u32> = rng
            .indices(n, n.max(1))
            .into_iter()
            .map(|i| i as u32)
            .collect();
        let mut sidx = idx.clone();
        sidx.sort();
        let want: Vec<f32> = sidx.iter().map(|&i| x[i as usize]).collect();
        assert_eq!(prog::gather_sorted(&x, &idx), want, "gather of a sort");

        let y = rng.i64s(n);
        let mut m: Vec<i64> = y.iter().map(|v| v % 1000).collect();
        m.sort();
        let want: Vec<i64> = m.iter().map(|v| v * 2 + 1).collect();
        assert_eq!(prog::map_of_sort_of_map(&y), want, "map of sort of map");

        let z = rng.u32s(n);
        let mut pos: Vec<i32> = z.iter().map(|&v| v as i32).filter(|&v| v > 0).collect();
        pos.sort();
        let zi: Vec<i32> = z.iter().map(|&v| v as i32).collect();
        assert_eq!(prog::sorted_positives(&zi), pos, "sort of filter");

        let mut d = z.clone();
        d.sort();
        d.dedup();
        assert_eq!(prog::distinct(&z), d.len(), "distinct");

        let mut sx = x.clone();
        sx.sort_by(f32::total_cmp);
        let (twice, arg) = prog::sort_twice(&x);
        assert_bits(&twice, &sx, f32::to_bits, "sort of sort");
        assert_eq!(arg, (0..n).collect::<Vec<_>>(), "sort of argsort");

        if n > 0 {
            let w = rng.u64s(n);
            let mut s = w.clone();
            s.sort();
            let weighted = s
                .iter()
                .enumerate()
                .fold(0u64, |a, (i, &b)| a.wrapping_add(b.wrapping_mul(i as u64)));
            assert_eq!(
                prog::weighted_sum_of_sort(&w),
                (weighted, s[n - 1]),
                "sum of a sort"
            );
        }
    });
}

/// Ragged rows, empty ones included, some long.
fn ragged<T>(rng: &mut Rng, n: usize, mut value: impl FnMut(&mut Rng) -> T) -> Vec<Vec<T>> {
    (0..n)
        .map(|i| {
            let len = match i % 5 {
                0 => 0,
                4 => rng.below(300),
                _ => rng.below(12),
            };
            rng.vec(len, &mut value)
        })
        .collect()
}

fn rows_of_nested(place: Place) {
    each_size(place, &[0, 1, 1001, 20_000], |n, rng| {
        let x = ragged(rng, n, |r| r.int_in(-20..=20) as i32);
        let want: Vec<Vec<i32>> = x
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.sort();
                r
            })
            .collect();
        let got = prog::sort_rows(&Nested::from_rows(x.clone()));
        let want = Nested::from_rows(want);
        assert_eq!(got, want, "sorted rows");
        let got = prog::sort_rows_warp(&Nested::from_rows(x.clone()));
        assert_eq!(got, want, "sorted rows, a warp per row");

        let top3: Vec<i64> = x
            .iter()
            .map(|r| {
                let mut r: Vec<i64> = r.iter().map(|&v| i64::from(v)).collect();
                r.sort();
                r.iter().rev().take(3).sum()
            })
            .collect();
        let xi: Vec<Vec<i64>> = x
            .iter()
            .map(|r| r.iter().map(|&v| v.into()).collect())
            .collect();
        assert_eq!(
            prog::row_sorted_sum_of_top3(&Nested::from_rows(xi)),
            top3,
            "top 3"
        );

        let f = ragged(rng, n, |r| r.f64_in(-1.0, 1.0));
        let want: Vec<f64> = f
            .iter()
            .map(|r| r.iter().copied().min_by(f64::total_cmp).unwrap_or(-1.0))
            .collect();
        assert_eq!(
            prog::row_smallest(&Nested::from_rows(f)),
            want,
            "smallest per row"
        );

        let u = ragged(rng, n, |r| r.u32() % 4);
        let want: Vec<Vec<usize>> = u
            .iter()
            .map(|r| {
                let mut ix: Vec<usize> = (0..r.len()).collect();
                ix.sort_by_key(|&i| r[i]);
                ix
            })
            .collect();
        let (u, want) = (Nested::from_rows(u), Nested::from_rows(want));
        assert_eq!(prog::row_argsort(&u), want, "argsort per row");
        assert_eq!(
            prog::row_argsort_block(&u),
            want,
            "argsort per row, a block per row"
        );
    });
}

fn rows_of_matrix(place: Place) {
    each_size(place, &[1, 7, 1001], |n, rng| {
        for cols in [1, 2, 9] {
            let data = rng.f32s(n * cols, -5.0, 5.0);
            let want: Vec<f32> = data
                .chunks(cols)
                .map(|r| {
                    let mut r = r.to_vec();
                    r.sort_by(f32::total_cmp);
                    r[cols / 2]
                })
                .collect();
            let m = Matrix::row_major(n, cols, data.clone()).expect("a valid matrix");
            assert_eq!(prog::row_median(&m), want, "row-major, {cols} columns");
            assert_eq!(
                prog::row_median_warp(&m),
                want,
                "row-major, {cols} columns, a warp per row"
            );
            // The same values stored column-major: rows are strided views.
            let t: Vec<f32> = (0..n * cols)
                .map(|k| data[(k % n) * cols + k / n])
                .collect();
            let m = Matrix::col_major(n, cols, t).expect("a valid matrix");
            assert_eq!(prog::row_median(&m), want, "column-major, {cols} columns");
        }
    });
}

fn length_mismatch(place: Place) {
    each_size(place, &[5, BIG], |n, rng| {
        let (k, v) = (rng.u32s(n), rng.f32s(n + 1, 0.0, 1.0));
        let e = prog::try_sort_by_key(&k, &v).expect_err("lengths differ");
        assert!(
            matches!(e, Error::LengthMismatch { prim: "sort_by_key", left, right, .. }
                if (left, right) == (n, n + 1) || (left, right) == (n + 1, n)),
            "{e:?}"
        );
        assert!(e.to_string().contains("sort.rs"), "{e}");
    });
}

on_every_place!(
    ints_i32,
    ints_u32,
    ints_i64,
    ints_u64,
    ints_usize,
    bools,
    floats_f64,
    floats_f32,
    float_order_is_total_order,
    stable_by_key,
    by_float_and_bool_keys,
    tuple_keys,
    compositions,
    rows_of_nested,
    rows_of_matrix,
    length_mismatch,
);

/// The inspected IR shows the sort; top-level sorts are compiled for the GPU as a radix
/// sort, sorts inside element functions as merge sorts, by a warp or a block per row when
/// that schedule is asked for (its kernels say so, and they hold the group's barriers).
#[test]
fn inspect_shows_the_sort() {
    let i = dpl::inspect!(prog::sort_by_key_i64);
    assert!(i.typed_ir.contains("sort_by_key("), "{}", i.typed_ir);
    assert!(i.fused_ir.contains("soac sort_by_key("), "{}", i.fused_ir);
    if cfg!(any(feature = "sim", feature = "cuda")) {
        assert!(i.gpu_not_compiled.is_empty(), "{}", i.gpu_not_compiled);
        assert!(i.ptx.contains("_sort_pass"), "{}", i.ptx);
        let r = dpl::inspect!(prog::sort_rows);
        assert!(r.gpu_not_compiled.is_empty(), "{}", r.gpu_not_compiled);
        assert!(!r.ptx.contains("_sort_pass"), "{}", r.ptx);
        let w = dpl::inspect!(prog::sort_rows_warp);
        assert!(w.gpu_not_compiled.is_empty(), "{}", w.gpu_not_compiled);
        assert!(w.ptx.contains("row_fill_warp"), "{}", w.ptx);
        assert!(w.ptx.contains("bar.warp.sync"), "{}", w.ptx);
        let b = dpl::inspect!(prog::row_argsort_block);
        assert!(b.gpu_not_compiled.is_empty(), "{}", b.gpu_not_compiled);
        assert!(b.ptx.contains("row_fill_block"), "{}", b.ptx);
        assert!(b.ptx.contains("bar.sync"), "{}", b.ptx);
    }
}
