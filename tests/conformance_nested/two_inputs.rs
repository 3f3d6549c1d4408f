//! Two nested inputs zipped row by row, and outer reductions over the rows.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn row_dots(x: &Nested<f64>, y: &Nested<f64>) -> Result<Vec<f64>, Error> {
        map(|a, b| sum(map(|p, q| p * q, a, b)), x, y)
    }

    #[parallel]
    pub fn row_differences(x: &Nested<i32>, y: &Nested<i32>) -> Result<Nested<i32>, Error> {
        map(|a, b| map(|p, q| p - q, a, b), x, y)
    }

    #[parallel]
    pub fn total(x: &Nested<i64>) -> (i64, usize) {
        (sum(map(|r| sum(r), x)), sum(map(|r| len(r), x)))
    }

    #[parallel]
    pub fn max_row_sum(x: &Nested<i32>) -> Result<i32, Error> {
        max(map(|r| sum(r), x))
    }
}

fn row_dots(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, xr) = nested_of(lens, rng, |r| r.f64_in(-1.0, 1.0));
        let (y, yr) = nested_of(lens, rng, |r| r.f64_in(-1.0, 1.0));
        let terms: Vec<Vec<f64>> = xr
            .iter()
            .zip(&yr)
            .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p * q).collect())
            .collect();
        assert_row_sums(
            &prog::row_dots(&x, &y).expect("same shapes"),
            &terms,
            "row_dots",
        );
        // A row of another length is a length mismatch of the inner map.
        if let Some(i) = lens.iter().position(|&n| n > 0) {
            let mut short = yr.clone();
            short[i].pop();
            match prog::row_dots(&x, &Nested::from(short)) {
                Err(Error::LengthMismatch { prim: "map", .. }) => {}
                other => {
                    panic!("row {i} one shorter: want Err(LengthMismatch(map)), got {other:?}")
                }
            }
        }
        // A different number of rows is a length mismatch of the outer map.
        let more: Vec<Vec<f64>> = yr.iter().cloned().chain([vec![1.0]]).collect();
        match prog::row_dots(&x, &Nested::from(more)) {
            Err(Error::LengthMismatch {
                prim: "map",
                left,
                right,
                ..
            }) => {
                assert_eq!(
                    (left.min(right), left.max(right)),
                    (lens.len(), lens.len() + 1)
                );
            }
            other => panic!("one row more: want Err(LengthMismatch(map)), got {other:?}"),
        }
    });
}

fn row_differences(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, xr) = nested_of(lens, rng, Rng::i32);
        let (y, yr) = nested_of(lens, rng, Rng::i32);
        let want: Vec<Vec<i32>> = xr
            .iter()
            .zip(&yr)
            .map(|(a, b)| a.iter().zip(b).map(|(p, q)| p.wrapping_sub(*q)).collect())
            .collect();
        assert_rows(
            &prog::row_differences(&x, &y).expect("same shapes"),
            &want,
            "row_differences",
        );
        if let Some(i) = lens.iter().rposition(|&n| n > 0) {
            let mut short = yr.clone();
            short[i].pop();
            assert!(
                matches!(
                    prog::row_differences(&x, &Nested::from(short)),
                    Err(Error::LengthMismatch { prim: "map", .. })
                ),
                "row {i} one shorter"
            );
        }
    });
}

fn total(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        let want = rows.iter().flatten().fold(0i64, |a, &b| a.wrapping_add(b));
        assert_eq!(prog::total(&x), (want, lens.iter().sum::<usize>()), "total");
    });
}

fn max_row_sum(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        let want = slices(&rows).map(wrapping_sum_i32).max();
        match (prog::max_row_sum(&x), want) {
            (Ok(g), Some(w)) => assert_eq!(g, w, "max_row_sum"),
            (Err(Error::Empty { prim: "max", .. }), None) => {}
            (got, want) => panic!("max_row_sum: got {got:?}, want {want:?}"),
        }
    });
}

on_every_place!(row_dots, row_differences, total, max_row_sum,);
