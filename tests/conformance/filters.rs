//! `filter`: by value, by position, of pairs, a filtered sequence read twice.

use super::*;

/// The programs under test, written in the DSL.
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn positives(x: &[f32]) -> Vec<f32> {
        filter(|v| v > 0.0, x)
    }

    #[parallel]
    pub fn even_triples(x: &[i64]) -> Vec<i64> {
        filter(|v| v % 2 == 0, map(|v| v * 3, x))
    }

    #[parallel]
    pub fn set_positions(flags: &[bool]) -> Vec<usize> {
        filter(|i| flags[i], indices(flags))
    }

    #[parallel]
    pub fn doubled_odds(x: &[u32]) -> Vec<u32> {
        map(|v| v * 2, filter(|v| (v & 1) == 1, x))
    }

    #[parallel]
    pub fn filter_pairs(a: &[f32], b: &[u32]) -> (Vec<f32>, Vec<u32>) {
        unzip(filter(|p| p.1 % 2 == 0, zip(a, b)))
    }

    #[parallel]
    pub fn filter_used_twice(x: &[i32]) -> (Vec<i32>, i32) {
        let kept = filter(|v| v % 2 != 0, x);
        (map(|v| v * 2, kept), sum(kept))
    }
}

fn positives(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.f32s(n, -1.0, 1.0);
        let want: Vec<f32> = x.iter().copied().filter(|&v| v > 0.0).collect();
        assert_same(&prog::positives(&x), &want, "positives");
    });
}

fn even_triples(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i64s(n);
        let want: Vec<i64> = x
            .iter()
            .map(|v| v.wrapping_mul(3))
            .filter(|v| v % 2 == 0)
            .collect();
        assert_same(&prog::even_triples(&x), &want, "even_triples");
    });
}

fn set_positions(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let flags = rng.vec(n, |r| r.below(5) == 0);
        let want: Vec<usize> = (0..n).filter(|&i| flags[i]).collect();
        assert_same(&prog::set_positions(&flags), &want, "set_positions");
    });
}

fn doubled_odds(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.u32s(n);
        let want: Vec<u32> = x
            .iter()
            .filter(|&&v| v & 1 == 1)
            .map(|v| v.wrapping_mul(2))
            .collect();
        assert_same(&prog::doubled_odds(&x), &want, "doubled_odds");
    });
}

fn filter_pairs(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let (a, b) = (rng.f32s(n, -1.0, 1.0), rng.u32s(n));
        let (p, q) = prog::filter_pairs(&a, &b);
        let keep: Vec<usize> = (0..n).filter(|&i| b[i] % 2 == 0).collect();
        assert_same(
            &p,
            &keep.iter().map(|&i| a[i]).collect::<Vec<_>>(),
            "filter_pairs.0",
        );
        assert_same(
            &q,
            &keep.iter().map(|&i| b[i]).collect::<Vec<_>>(),
            "filter_pairs.1",
        );
    });
}

fn filter_used_twice(place: Place) {
    each_size(place, &ALL_SIZES, |n, rng| {
        let x = rng.i32s(n);
        let kept: Vec<i32> = x.iter().copied().filter(|v| v % 2 != 0).collect();
        let (doubled, total) = prog::filter_used_twice(&x);
        assert_same(&doubled, &each(&kept, |v| v.wrapping_mul(2)), "doubled");
        assert_exact(
            total,
            kept.iter().fold(0i32, |a, &b| a.wrapping_add(b)),
            "sum",
        );
    });
}

on_every_place!(
    positives,
    even_triples,
    set_positions,
    doubled_odds,
    filter_pairs,
    filter_used_twice,
);
