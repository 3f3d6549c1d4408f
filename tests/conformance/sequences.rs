//! Sequence constructors and lengths: `replicate`, `indices`, `range`, `len`.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn fill(v: f64, n: usize) -> Vec<f64> {
        replicate(v, n)
    }

    #[parallel]
    pub fn squares(n: usize) -> Vec<u64> {
        map(|i| (i as u64) * (i as u64), range(n))
    }

    #[parallel]
    pub fn lengths(x: &[f32], y: &Vec<i32>) -> (usize, usize, usize) {
        (len(x), y.len(), len(indices(y)))
    }

    #[parallel]
    pub fn usize_ops(n: usize) -> Vec<usize> {
        map(|i| (i * 3 + 7) % (n + 1) / 2, range(n))
    }

    #[parallel]
    pub fn range_of_len(x: &[u32]) -> Vec<u32> {
        gather(x, map(|i| 2 * i, range(len(x) / 2)))
    }

    #[parallel]
    pub fn replicate_pairs(n: usize) -> (Vec<i32>, Vec<bool>) {
        unzip(replicate((7, true), n))
    }

    #[parallel]
    pub fn len_of_expr(x: &[i32]) -> (usize, usize) {
        (map(|v| v + 1, x).len(), filter(|v| v > 0, x).len())
    }

    #[parallel]
    pub fn replicate_u32_count(v: i64, n: u32) -> Vec<i64> {
        replicate(v, n as usize)
    }

    #[parallel]
    pub fn index_as_float(n: usize) -> Vec<f32> {
        map(|i| i as f32 * 0.5, range(n))
    }
}

fn fill(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        assert_same(&prog::fill(-0.5, n), &vec![-0.5; n], "fill");
    });
}

fn squares(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<u64> = (0..n as u64).map(|i| i * i).collect();
        assert_same(&prog::squares(n), &want, "squares");
    });
}

fn lengths(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, 0.0, 1.0);
        let y = rng.i32s(n / 2 + 3);
        assert_eq!(prog::lengths(&x, &y), (n, n / 2 + 3, n / 2 + 3), "lengths");
    });
}

fn usize_ops(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<usize> = (0..n).map(|i| (i * 3 + 7) % (n + 1) / 2).collect();
        assert_same(&prog::usize_ops(n), &want, "usize_ops");
    });
}

fn range_of_len(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want: Vec<u32> = x.iter().step_by(2).take(n / 2).copied().collect();
        assert_same(&prog::range_of_len(&x), &want, "range_of_len");
    });
}

fn replicate_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        assert_eq!(
            prog::replicate_pairs(n),
            (vec![7; n], vec![true; n]),
            "replicate_pairs"
        );
    });
}

fn len_of_expr(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let want = (n, x.iter().filter(|&&v| v > 0).count());
        assert_eq!(prog::len_of_expr(&x), want, "len_of_expr");
    });
}

fn replicate_u32_count(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        assert_same(
            &prog::replicate_u32_count(-9, n as u32),
            &vec![-9; n],
            "replicate",
        );
    });
}

fn index_as_float(place: Place) {
    each_size(place, &ALL_SIZES, |n, _| {
        let want: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        assert_same(&prog::index_as_float(n), &want, "index_as_float");
    });
}

on_every_place!(
    fill,
    squares,
    lengths,
    usize_ops,
    range_of_len,
    replicate_pairs,
    len_of_expr,
    replicate_u32_count,
    index_as_float,
);
