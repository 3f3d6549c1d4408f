//! `Matrix<T>` against plain row vectors: every layout gives the same rows, the transpose
//! is the plain transpose, and `with_strides` accepts exactly the strides whose every
//! addressed element lies inside the data (checked by brute force).

use dpl::{Error, Matrix, Nested};
use proptest::prelude::*;

/// A `rows x cols` matrix of distinct values, as plain rows.
fn plain(rows: usize, cols: usize, seed: i64) -> Vec<Vec<i64>> {
    (0..rows)
        .map(|r| (0..cols).map(|c| seed + (r * 100 + c) as i64).collect())
        .collect()
}

fn transpose(rows: &[Vec<i64>], cols: usize) -> Vec<Vec<i64>> {
    (0..cols)
        .map(|c| rows.iter().map(|r| r[c]).collect())
        .collect()
}

/// Every layout we build from plain rows: row-major, column-major, row-major padded to a
/// leading dimension, column-major padded, and the transpose of a column-major transpose.
fn layouts(want: &[Vec<i64>], rows: usize, cols: usize, pad: usize) -> Vec<Matrix<i64>> {
    let rm: Vec<i64> = want.concat();
    let cm: Vec<i64> = transpose(want, cols).concat();
    let ld = cols + pad;
    let padded_rows: Vec<i64> = want
        .iter()
        .flat_map(|r| r.iter().copied().chain(std::iter::repeat_n(-7, pad)))
        .collect();
    let cld = rows + pad;
    let padded_cols: Vec<i64> = transpose(want, cols)
        .iter()
        .flat_map(|c| c.iter().copied().chain(std::iter::repeat_n(-7, pad)))
        .collect();
    vec![
        Matrix::row_major(rows, cols, rm.clone()).unwrap(),
        Matrix::col_major(rows, cols, cm.clone()).unwrap(),
        Matrix::with_strides(rows, cols, padded_rows, ld, 1).unwrap(),
        Matrix::with_strides(rows, cols, padded_cols, 1, cld).unwrap(),
        Matrix::row_major(cols, rows, cm).unwrap().transpose(),
    ]
}

proptest! {
    #[test]
    fn layouts_give_the_same_rows(rows in 0usize..6, cols in 0usize..6, pad in 0usize..3, seed in -1000i64..1000) {
        let want = plain(rows, cols, seed);
        for m in layouts(&want, rows, cols, pad) {
            prop_assert_eq!(m.shape(), (rows, cols));
            prop_assert_eq!(m.len(), rows);
            prop_assert_eq!(m.to_row_vecs(), want.clone());
            prop_assert_eq!(m.to_nested(), Nested::from_rows(want.clone()));
            for (r, row) in want.iter().enumerate() {
                let view = m.row(r);
                prop_assert_eq!(view.len(), cols);
                prop_assert!(view == *row);
                prop_assert!(view.iter().rev().eq(row.iter().rev()));
                for (c, v) in row.iter().enumerate() {
                    prop_assert_eq!(m.get(r, c), Some(v));
                    prop_assert_eq!(view[c], *v);
                    prop_assert_eq!(view.get(c), Some(v));
                }
                prop_assert_eq!(view.get(cols), None);
                if let Some(s) = m.row_slice(r) {
                    prop_assert_eq!(s, row.as_slice());
                }
            }
            prop_assert_eq!(m.get(rows, 0), None);
            let t = m.clone().transpose();
            prop_assert_eq!(t.to_row_vecs(), transpose(&want, cols));
            prop_assert_eq!(t.transpose(), m.clone());
            let compact = m.to_row_major();
            prop_assert!(compact.is_row_major());
            prop_assert_eq!(compact.data().to_vec(), want.concat());
        }
    }

    #[test]
    fn with_strides_accepts_exactly_in_bounds_strides(
        rows in 0usize..5,
        cols in 0usize..5,
        rs in 0usize..6,
        cs in 0usize..6,
        len in 0usize..20,
    ) {
        let data: Vec<usize> = (0..len).collect();
        let in_bounds = (0..rows).all(|r| (0..cols).all(|c| r * rs + c * cs < len));
        match Matrix::with_strides(rows, cols, data, rs, cs) {
            Ok(m) => {
                prop_assert!(in_bounds);
                prop_assert_eq!(m.strides(), (rs, cs));
                for r in 0..rows {
                    for c in 0..cols {
                        // data[i] == i, so the element is its own address.
                        prop_assert_eq!(m.get(r, c), Some(&(r * rs + c * cs)));
                    }
                }
            }
            Err(Error::Malformed { what, .. }) => {
                prop_assert!(!in_bounds);
                prop_assert_eq!(what, "Matrix");
            }
            Err(other) => prop_assert!(false, "unexpected error {:?}", other),
        }
    }

    #[test]
    fn row_and_col_major_need_exact_lengths(rows in 0usize..5, cols in 0usize..5, len in 0usize..30) {
        let data = vec![0u8; len];
        prop_assert_eq!(Matrix::row_major(rows, cols, data.clone()).is_ok(), len == rows * cols);
        prop_assert_eq!(Matrix::col_major(rows, cols, data).is_ok(), len == rows * cols);
    }
}

#[test]
fn errors_are_clear() {
    let e = Matrix::row_major(2, 3, vec![0.0f32; 5]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed Matrix: row-major 2 x 3 needs 6 elements, got 5"
    );
    let e = Matrix::with_strides(3, 2, vec![0; 6], 2, 2).unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed Matrix: 3 x 2 with strides (2, 2) reads data[6] but data has 6 elements"
    );
}

#[test]
fn row_views_are_copy_and_comparable() {
    #[derive(Debug, PartialEq)]
    struct NotClone(u8);
    let m = Matrix::col_major(
        2,
        2,
        vec![NotClone(1), NotClone(2), NotClone(3), NotClone(4)],
    )
    .unwrap();
    let r = m.row(1);
    let r2 = r; // Copy even though the element type is not Clone.
    assert_eq!(r, r2);
    assert_eq!(r.iter().map(|x| x.0).collect::<Vec<_>>(), vec![2, 4]);
    assert_eq!(m.iter().map(|r| r[0].0).collect::<Vec<_>>(), vec![1, 2]);
}
