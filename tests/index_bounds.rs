//! Reads whose index is a value of a `Nested` or `Matrix` parameter (SpMV's
//! `x[cols[i][k]]`) run without per-read checks when the parameter's cached index bound
//! proves them in range, and with them otherwise. Results and errors must be the same as
//! with checks on every read, on every place; the cache must never outlive a change of the
//! values (a stale bound would read out of bounds).

mod common;

use common::available_places;
use dpl::prelude::*;

#[parallel]
fn csr(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Result<Vec<f32>, dpl::Error> {
    map(
        |a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))),
        vals,
        cols,
    )
}

#[parallel]
fn ell(vals: &Matrix<f32>, cols: &Matrix<u32>, x: &[f32]) -> Result<Vec<f32>, dpl::Error> {
    map(|a, c| sum(map(|aij, k| aij * x[k], a, c)), vals, cols)
}

#[parallel]
fn signed(idx: &Nested<i32>, x: &[i64]) -> Result<Vec<i64>, dpl::Error> {
    map(|r| sum(gather(x, r)), idx)
}

/// `y[i] = sum_k vals[i][k] * x[cols[i][k]]`, in order, or the first column out of range.
fn spmv(vals: &[Vec<f32>], cols: &[Vec<u32>], x: &[f32]) -> Result<Vec<f32>, u32> {
    vals.iter()
        .zip(cols)
        .map(|(a, c)| {
            a.iter().zip(c).try_fold(0.0f32, |s, (&v, &j)| {
                x.get(j as usize).map(|&xj| s + v * xj).ok_or(j)
            })
        })
        .collect()
}

fn rows(n: usize, width: usize, ncols: u32) -> (Vec<Vec<f32>>, Vec<Vec<u32>>) {
    let vals = (0..n)
        .map(|i| (0..width).map(|k| (i * 3 + k) as f32 * 0.5).collect())
        .collect();
    let cols = (0..n)
        .map(|i| {
            (0..width)
                .map(|k| ((i * 7 + k * 13) as u32) % ncols)
                .collect()
        })
        .collect();
    (vals, cols)
}

fn expect_index_error<T: std::fmt::Debug>(r: Result<T, dpl::Error>, index: i128, len: usize) {
    match r {
        Err(dpl::Error::IndexOutOfRange {
            index: i, len: l, ..
        }) => {
            assert_eq!((i, l), (index, len))
        }
        other => panic!("expected index {index} out of range for {len}, got {other:?}"),
    }
}

#[test]
fn csr_results_and_errors_with_the_cached_bound() {
    for place in available_places() {
        let (v, c) = rows(300, 6, 40);
        let vals = Nested::from_rows(v.clone());
        let mut cols = Nested::from_rows(c.clone());
        let x: Vec<f32> = (0..40).map(|j| j as f32 - 7.0).collect();
        let want = spmv(&v, &c, &x).unwrap();
        // Twice: the first call computes the bound, the second uses it.
        for _ in 0..2 {
            assert_eq!(
                with_place(place, || csr(&vals, &cols, &x)).unwrap(),
                want,
                "{place}"
            );
        }
        // A shorter `x`: the cached bound (40) no longer suffices; the checked loop reports
        // the first offending column in row order.
        let short = &x[..25];
        let first_bad = spmv(&v, &c, short).unwrap_err();
        expect_index_error(
            with_place(place, || csr(&vals, &cols, short)),
            i128::from(first_bad),
            25,
        );
        // Changing a value through `values_mut` forgets the bound.
        cols.values_mut()[17] = 40;
        expect_index_error(with_place(place, || csr(&vals, &cols, &x)), 40, 40);
        cols.values_mut()[17] = 39;
        let mut c2 = c.clone();
        c2[17 / 6][17 % 6] = 39;
        assert_eq!(
            with_place(place, || csr(&vals, &cols, &x)).unwrap(),
            spmv(&v, &c2, &x).unwrap(),
            "{place}"
        );
        // And through `row_mut`.
        cols.row_mut(299)[5] = 1000;
        expect_index_error(with_place(place, || csr(&vals, &cols, &x)), 1000, 40);
        // `push_row` too (the rows must match `vals` again for the next call).
        let mut vals2 = vals.clone();
        let mut cols2 = Nested::from_rows(c.clone());
        assert!(with_place(place, || csr(&vals2, &cols2, &x)).is_ok());
        vals2.push_row([1.0]);
        cols2.push_row([40]);
        expect_index_error(with_place(place, || csr(&vals2, &cols2, &x)), 40, 40);
    }
}

#[test]
fn ell_results_and_errors_with_the_cached_bound() {
    for place in available_places() {
        let (n, width) = (300, 5);
        let (v, c) = rows(n, width, 50);
        let flat = |m: &[Vec<f32>]| -> Vec<f32> {
            (0..width)
                .flat_map(|k| m.iter().map(move |r| r[k]))
                .collect()
        };
        let vals = Matrix::col_major(n, width, flat(&v)).unwrap();
        let ccols: Vec<u32> = (0..width)
            .flat_map(|k| c.iter().map(move |r| r[k]))
            .collect();
        let cols = Matrix::col_major(n, width, ccols.clone()).unwrap();
        let x: Vec<f32> = (0..50).map(|j| (j % 9) as f32).collect();
        let want = spmv(&v, &c, &x).unwrap();
        for _ in 0..2 {
            assert_eq!(
                with_place(place, || ell(&vals, &cols, &x)).unwrap(),
                want,
                "{place}"
            );
        }
        let short = &x[..30];
        let first_bad = spmv(&v, &c, short).unwrap_err();
        expect_index_error(
            with_place(place, || ell(&vals, &cols, short)),
            i128::from(first_bad),
            30,
        );
        // Row-major storage (the contiguous-rows variant) gives the same answers.
        let (rv, rc) = (vals.to_row_major(), cols.to_row_major());
        assert_eq!(
            with_place(place, || ell(&rv, &rc, &x)).unwrap(),
            want,
            "{place}"
        );
    }
}

#[test]
fn negative_indices_are_never_in_range() {
    for place in available_places() {
        let x: Vec<i64> = (0..10).map(|j| j * j).collect();
        let ok = Nested::from_rows(vec![vec![0, 9, 3], vec![], vec![5]]);
        assert_eq!(
            with_place(place, || signed(&ok, &x)).unwrap(),
            vec![81 + 9, 0, 25],
            "{place}"
        );
        let bad = Nested::from_rows(vec![vec![0, 9], vec![-1, 2]]);
        for _ in 0..2 {
            expect_index_error(with_place(place, || signed(&bad, &x)), -1, 10);
        }
    }
}
