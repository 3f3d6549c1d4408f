//! `ndarray` parameters and results (feature `ndarray`): `ArrayView1`/`&Array1` read in
//! place with their stride when the body reads them element by element (as a slice
//! otherwise), `ArrayView2`/`&Array2` and dpl's `MatrixView` read in place with their strides,
//! `Array1`/`Array2` results, on every place, against plain Rust over the same arrays.
//! Layouts: standard, column-major, transposed, sliced with steps, reversed axes,
//! broadcast (stride 0) and empty; a ragged `Array2` result is the usual length-mismatch
//! error; contiguous inputs are not copied.
#![cfg(feature = "ndarray")]

use std::borrow::Cow;

use dpl::ndarray::{Array1, Array2, ArrayView1, ArrayView2, ShapeBuilder, s};
use dpl::prelude::*;
use dpl::{MatrixView, Place};

#[parallel]
fn dot(x: ArrayView1<'_, f64>, y: &Array1<f64>) -> f64 {
    sum(map(|a, b| a * b, x, y))
}

#[parallel]
fn row_sums(m: ArrayView2<'_, i64>) -> Array1<i64> {
    map(|r| sum(r), m)
}

#[parallel]
fn scaled(m: &Array2<i64>, k: i64) -> Array2<i64> {
    map(|r| map(|v| v * k + 1, r), m)
}

#[parallel]
fn positives(m: ArrayView2<'_, i64>) -> Result<Array2<i64>, dpl::Error> {
    map(|r| filter(|v| v > 0, r), m)
}

#[parallel]
fn matvec(a: ArrayView2<'_, f64>, x: ArrayView1<'_, f64>) -> Array1<f64> {
    map(|r| sum(map(|v, w| v * w, r, x)), a)
}

#[parallel]
fn ell(vals: ArrayView2<'_, f64>, cols: ArrayView2<'_, u32>, x: &[f64]) -> (Array1<f64>, Vec<u32>) {
    let y = map(|a, c| sum(map(|v, xj| v * xj, a, gather(x, c))), vals, cols);
    (y, map(|c| max(c), cols))
}

#[parallel]
fn col_maxes(m: MatrixView<'_, i32>) -> Vec<i32> {
    map(|r| max(r), m)
}

#[parallel]
fn total<T: Num>(x: ArrayView1<'_, T>) -> T {
    sum(x)
}

/// Read element by element: on the CPU places in place with its stride.
#[parallel]
fn vocabulary(
    x: ArrayView1<'_, i64>,
    idx: &[usize],
    k: i64,
) -> (Vec<i64>, i64, Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, usize) {
    (
        map(|v| v * k, x),
        sum(x),
        scan(|a, b| a + b, x),
        sort(x),
        filter(|v| v % 2 == 0, x),
        gather(x, idx),
        len(x),
    )
}

/// Passed on whole (a `scatter` destination): read as a slice, copied when strided.
#[parallel]
fn scattered(x: ArrayView1<'_, i64>, idx: &[usize], v: &[i64]) -> Vec<i64> {
    scatter(v, idx, x)
}

/// 2-D layouts of the same kind of data: `(what, array)`, element `(r, c)` of the logical
/// array is `f(r, c)` for the standard one; the others are derived views.
fn layouts(owned: &Array2<i64>) -> Vec<(&'static str, ArrayView2<'_, i64>)> {
    vec![
        ("standard", owned.view()),
        ("transposed", owned.t()),
        ("sliced with steps", owned.slice(s![1.., ..;2])),
        ("reversed rows", owned.slice(s![..;-1, ..])),
        ("reversed both", owned.slice(s![..;-1, ..;-2])),
        ("one column", owned.slice(s![.., 2..3])),
        ("empty rows", owned.slice(s![0..0, ..])),
        ("empty columns", owned.slice(s![.., 0..0])),
    ]
}

fn sample(rows: usize, cols: usize) -> Array2<i64> {
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        (r as i64 * 7 - c as i64 * 3) * if (r + c) % 3 == 0 { -1 } else { 1 }
    })
}

fn places() -> Vec<Place> {
    dpl::available_places()
}

#[test]
fn two_d_views_in_every_layout() {
    let owned = sample(9, 7);
    let col_major = {
        let v: Vec<i64> = owned.t().iter().copied().collect();
        Array2::from_shape_vec((9, 7).f(), v).unwrap()
    };
    assert_eq!(col_major, owned);
    let row = Array1::from_vec((0..7).map(|c| c * 5 - 11).collect::<Vec<i64>>());
    let broadcast = row.broadcast((4, 7)).unwrap();
    let mut cases = layouts(&owned);
    cases.push(("column-major", col_major.view()));
    cases.push(("broadcast", broadcast));
    for (what, m) in cases {
        let want_sums: Vec<i64> = m.rows().into_iter().map(|r| r.sum()).collect();
        let want_scaled = m.mapv(|v| v * 3 + 1);
        let want_pos: Vec<Vec<i64>> = m
            .rows()
            .into_iter()
            .map(|r| r.iter().copied().filter(|&v| v > 0).collect())
            .collect();
        let owned_m = m.to_owned();
        for place in places() {
            let at = format!("{what} on {place}");
            let sums = with_place(place, || row_sums(m));
            assert_eq!(sums.to_vec(), want_sums, "{at}");
            let got = with_place(place, || scaled(&owned_m, 3));
            if m.nrows() == 0 {
                // A result without rows has no row to take its width from (as `Matrix`).
                assert_eq!(got.shape(), &[0, 0], "{at}");
            } else {
                assert_eq!(got, want_scaled, "{at}");
            }
            assert!(got.is_standard_layout(), "{at}");
            match with_place(place, || positives(m)) {
                Ok(p) => {
                    assert_eq!(p.nrows(), want_pos.len(), "{at}");
                    for (r, w) in p.rows().into_iter().zip(&want_pos) {
                        assert_eq!(r.to_vec(), *w, "{at}");
                    }
                }
                Err(Error::LengthMismatch { prim: "Matrix", .. }) => {
                    let lens: Vec<usize> = want_pos.iter().map(Vec::len).collect();
                    assert!(lens.windows(2).any(|w| w[0] != w[1]), "{at}: {lens:?}");
                }
                Err(e) => panic!("{at}: {e}"),
            }
        }
    }
}

#[test]
fn one_d_views_contiguous_strided_and_reversed() {
    let a = Array2::from_shape_fn((50, 3), |(r, c)| (r * 3 + c) as f64 * 0.25 - 4.0);
    let y = Array1::from_shape_fn(50, |i| 1.0 + i as f64 / 16.0);
    let xs: Vec<(&str, ArrayView1<'_, f64>)> = vec![
        ("a column (stride 3)", a.column(1)),
        ("reversed", a.column(2).slice_move(s![..;-1])),
        ("contiguous", y.view()),
    ];
    for (what, x) in xs {
        let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
        for place in places() {
            let got = with_place(place, || dot(x, &y));
            assert!(
                (got - want).abs() <= 1e-9 * (1.0 + want.abs()),
                "{what} on {place}: {got} vs {want}"
            );
        }
    }
    let empty = Array1::<f64>::zeros(0);
    for place in places() {
        assert_eq!(with_place(place, || dot(empty.view(), &empty)), 0.0);
        assert_eq!(with_place(place, || total(y.view())), y.sum());
        let ints = Array1::from_vec(vec![3u8, 250, 7]);
        // u8 sums wrap.
        assert_eq!(with_place(place, || total(ints.view())), 4);
    }
}

#[test]
fn matrix_times_vector_with_transposed_matrix() {
    let a = Array2::from_shape_fn((40, 30), |(r, c)| ((r * 31 + c * 17) % 23) as f64 - 11.0);
    let x = Array1::from_shape_fn(40, |i| i as f64 * 0.5 - 3.0);
    // A^T x, reading A's columns as rows in place.
    let want: Vec<f64> = (0..30)
        .map(|c| (0..40).map(|r| a[(r, c)] * x[r]).sum())
        .collect();
    for place in places() {
        let got = with_place(place, || matvec(a.t(), x.view()));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-9 * (1.0 + w.abs()), "on {place}");
        }
        assert_eq!(got.len(), 30);
    }
}

#[test]
fn ell_indices_and_tuple_results() {
    // 6 rows of 3 stored entries, column-major as ELL storage usually is.
    let cols = Array2::from_shape_fn((6, 3).f(), |(r, k)| ((r + 2 * k) % 5) as u32);
    let vals = Array2::from_shape_fn((6, 3).f(), |(r, k)| (r * 3 + k) as f64 - 7.5);
    let x: Vec<f64> = (0..5).map(|j| 2.0 - j as f64).collect();
    let want: Vec<f64> = (0..6)
        .map(|r| {
            (0..3)
                .map(|k| vals[(r, k)] * x[cols[(r, k)] as usize])
                .sum()
        })
        .collect();
    let want_max: Vec<u32> = (0..6)
        .map(|r| (0..3).map(|k| cols[(r, k)]).max().unwrap())
        .collect();
    for place in places() {
        let (y, m) = with_place(place, || ell(vals.view(), cols.view(), &x));
        assert_eq!(y.to_vec(), want, "on {place}");
        assert_eq!(m, want_max, "on {place}");
    }
    // An index out of range is the usual error, naming the gather.
    let bad = cols.mapv(|c| c + 3);
    let err = std::panic::catch_unwind(|| ell(vals.view(), bad.view(), &x)).unwrap_err();
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("gather"), "{msg}");
}

#[test]
fn matrix_view_of_a_caller_buffer() {
    let buffer: Vec<i32> = (0..24).map(|v| (v * 37) % 29 - 14).collect();
    // 4 x 3: every other column of a 4 x 6 row-major buffer.
    let m = MatrixView::new(&buffer, 4, 3, 6, 2).unwrap();
    let want: Vec<i32> = (0..4)
        .map(|r| (0..3).map(|c| buffer[r * 6 + 2 * c]).max().unwrap())
        .collect();
    for place in places() {
        assert_eq!(with_place(place, || col_maxes(m)), want, "on {place}");
        assert_eq!(
            with_place(place, || col_maxes(m.transpose())),
            (0..3)
                .map(|c| (0..4).map(|r| buffer[r * 6 + 2 * c]).max().unwrap())
                .collect::<Vec<_>>(),
            "on {place}"
        );
    }
    let owned = Matrix::row_major(2, 2, vec![1, 5, 3, 2]).unwrap();
    assert_eq!(col_maxes(owned.view()), vec![5, 3]);
}

#[test]
fn contiguous_inputs_are_read_in_place() {
    use dpl::__private::nd::{Flat, View2};
    let a = Array2::from_shape_fn((5, 4), |(r, c)| (r * 4 + c) as f32);
    let v = a.__dpl_matrix();
    assert_eq!(v.row_slice(0).unwrap().as_ptr(), a.as_ptr());
    assert_eq!(
        v.transpose().row(1).get(0).unwrap() as *const f32,
        &a[(0, 1)] as *const f32
    );
    let m = MatrixView::from(a.slice(s![1..;2, ..]));
    assert_eq!(m.row_slice(1).unwrap().as_ptr(), &a[(3, 0)] as *const f32);
    let x = Array1::from_vec(vec![1.0f32, 2.0, 3.0]);
    assert!(matches!(x.view().__dpl_flat(), Cow::Borrowed(_)));
    assert!(matches!(a.column(0).__dpl_flat(), Cow::Owned(_)));
}

#[test]
fn one_d_views_read_element_by_element_are_not_copied() {
    let a = Array2::from_shape_fn((301, 3), |(r, c)| ((r * 7 + c * 13) % 41) as i64 - 20);
    let c = Array1::from_shape_fn(301, |i| (i % 17) as i64 - 8);
    let five = Array1::from_vec(vec![5i64]);
    let xs: Vec<(&str, ArrayView1<'_, i64>)> = vec![
        ("a column (stride 3)", a.column(1)),
        ("reversed", a.column(2).slice_move(s![..;-1])),
        ("every other, reversed", c.slice(s![..;-2])),
        ("broadcast (stride 0)", five.broadcast(40).unwrap()),
        ("contiguous", c.view()),
        ("empty", c.slice(s![0..0])),
    ];
    for (what, x) in xs {
        let plain: Vec<i64> = x.iter().copied().collect();
        let n = plain.len();
        let idx: Vec<usize> = (0..n).map(|i| (i * 5 + 3) % n.max(1)).collect();
        let mut sorted = plain.clone();
        sorted.sort();
        let scan: Vec<i64> = plain
            .iter()
            .scan(0i64, |s, v| {
                *s += v;
                Some(*s)
            })
            .collect();
        let want = (
            plain.iter().map(|v| v * 3).collect::<Vec<_>>(),
            plain.iter().sum::<i64>(),
            scan,
            sorted,
            plain
                .iter()
                .copied()
                .filter(|v| v % 2 == 0)
                .collect::<Vec<_>>(),
            idx.iter().map(|&i| plain[i]).collect::<Vec<_>>(),
            n,
        );
        let src: Vec<i64> = (0..n as i64).map(|v| 1000 + v).collect();
        let perm: Vec<usize> = (0..n).rev().collect();
        let mut perm_want = plain.clone();
        for (k, &i) in perm.iter().enumerate() {
            perm_want[i] = src[k];
        }
        for place in places() {
            let got = with_place(place, || vocabulary(x, &idx, 3));
            assert_eq!(got, want, "{what} on {place}");
            let got = with_place(place, || scattered(x, &perm, &src));
            assert_eq!(got, perm_want, "scatter into {what} on {place}");
        }
    }
    // The CPU body reads `x` as a slice when it is one and with its stride otherwise; a
    // destination of `scatter` is not read element by element, so it stays a slice.
    assert!(dpl::inspect!(vocabulary).cpu_rust.contains("as_slice"));
    assert!(!dpl::inspect!(scattered).cpu_rust.contains("as_slice"));
}
