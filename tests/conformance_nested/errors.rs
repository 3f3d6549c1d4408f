//! Errors raised inside rows (`-> Result<_, dpl::Error>`): the same error on every place.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn try_filter_by_lookup(idx: &Nested<u32>, x: &[i32]) -> Result<Nested<u32>, Error> {
        map(|r| filter(|j| x[j] > 0, r), idx)
    }

    #[parallel]
    pub fn try_divide_rows(x: &Nested<i32>) -> Result<(Nested<i32>, Vec<i32>), Error> {
        (map(|r| map(|v| 100 / v, r), x), map(|r| max(r), x))
    }

    #[parallel]
    pub fn try_row_index(x: &Nested<i32>, k: usize) -> Result<Vec<i32>, Error> {
        map(|r| r[k], x)
    }

    #[parallel]
    pub fn try_row_min(x: &Nested<i64>) -> Result<Vec<i64>, Error> {
        map(|r| min(r), x)
    }
}

fn try_row_index(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i32);
        for k in [0usize, 3] {
            let short = lens.iter().position(|&n| n <= k);
            match (prog::try_row_index(&x, k), short) {
                (Ok(got), None) => assert_same(&got, &per_row(&rows, |r| r[k]), "r[k]"),
                (
                    Err(Error::IndexOutOfRange {
                        prim: "index",
                        index,
                        len,
                        ..
                    }),
                    Some(_),
                ) => {
                    assert_eq!(index, k as i128, "the index reported");
                    assert!(len <= k, "the reported row has {len} elements, index {k}");
                }
                (got, short) => panic!("k = {k}, first short row {short:?}: got {got:?}"),
            }
        }
    });
}

fn try_row_min(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, Rng::i64);
        match prog::try_row_min(&x) {
            Ok(got) => {
                assert!(lens.iter().all(|&n| n > 0), "Ok despite an empty row");
                assert_same(&got, &per_row(&rows, |r| *r.iter().min().unwrap()), "min");
            }
            Err(Error::Empty { prim: "min", .. }) => {
                assert!(lens.contains(&0), "Empty without an empty row")
            }
            Err(e) => panic!("{e}"),
        }
    });
}

fn try_filter_by_lookup(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.i32s(777);
        let (idx, ir) = nested_of(lens, rng, |r| r.below(777) as u32);
        let want: Vec<Vec<u32>> = per_row(&ir, |r| {
            r.iter().copied().filter(|&j| x[j as usize] > 0).collect()
        });
        assert_rows(
            &prog::try_filter_by_lookup(&idx, &x).expect("in range"),
            &want,
            "filter",
        );
        if let Some(i) = lens.iter().rposition(|&n| n > 0) {
            let mut bad = ir.clone();
            bad[i][0] = 777;
            match prog::try_filter_by_lookup(&Nested::from(bad), &x) {
                Err(Error::IndexOutOfRange {
                    prim: "index",
                    index: 777,
                    len: 777,
                    ..
                }) => {}
                other => panic!("row {i}: want Err(IndexOutOfRange(index)), got {other:?}"),
            }
        }
    });
}

fn try_divide_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let (x, rows) = nested_of(lens, rng, |r| {
            let v = r.int_in(-1000..=1000) as i32;
            if v == 0 { 1 } else { v }
        });
        let got = prog::try_divide_rows(&x);
        if lens.contains(&0) {
            assert!(
                matches!(got, Err(Error::Empty { prim: "max", .. })),
                "empty row: {got:?}"
            );
        } else {
            let (q, m) = got.expect("no zero, no empty row");
            assert_rows(
                &q,
                &per_row(&rows, |r| r.iter().map(|v| 100 / v).collect()),
                "100 / v",
            );
            assert_same(&m, &per_row(&rows, |r| *r.iter().max().unwrap()), "max");
        }
        if let Some(i) = lens.iter().position(|&n| n > 1) {
            let mut zero = rows.clone();
            zero[i][1] = 0;
            let got = prog::try_divide_rows(&Nested::from(zero));
            // Both a division by zero and (if a row is empty) an empty max are errors of
            // this call; which one is reported is unspecified.
            match got {
                Err(Error::DivideByZero { .. }) => {}
                Err(Error::Empty { prim: "max", .. }) if lens.contains(&0) => {}
                other => panic!("a zero in row {i}: want Err(DivideByZero), got {other:?}"),
            }
        }
    });
}

on_every_place!(
    try_row_index,
    try_row_min,
    try_filter_by_lookup,
    try_divide_rows,
);
