//! Gathers per row: rows of indices into a flat sequence, SpMV.

use super::*;

/// The programs under test, written in the DSL (default schedule).
mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn gather_rows(idx: &Nested<u32>, x: &[i64]) -> Nested<i64> {
        map(|r| gather(x, r), idx)
    }

    #[parallel]
    pub fn spmv_tuple_rows(
        vals: &Nested<f32>,
        cols: &Nested<u32>,
        x: &[f32],
    ) -> (Vec<f32>, Vec<usize>) {
        let y = map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols);
        (y, map(|c| len(c), cols))
    }
}

fn gather_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let x = rng.i64s(5_000);
        let (idx, ir) = nested_of(lens, rng, |r| r.below(5_000) as u32);
        let want: Vec<Vec<i64>> = per_row(&ir, |r| r.iter().map(|&j| x[j as usize]).collect());
        assert_rows(&prog::gather_rows(&idx, &x), &want, "gather_rows");
    });
}

fn spmv_tuple_rows(place: Place) {
    each_shape(place, &ALL_SHAPES, |_, lens, rng| {
        let ncols = 1 + lens.len();
        let x = dense(ncols, rng);
        let (vals, cols) = csr(lens, ncols, rng);
        let terms = spmv_oracle(&vals, &cols, &x);
        let (y, nnz) = prog::spmv_tuple_rows(&Nested::from(vals), &Nested::from(cols), &x);
        assert_row_sums(&y, &terms, "y");
        assert_same(&nnz, lens, "nnz per row");
    });
}

on_every_place!(gather_rows, spmv_tuple_rows,);
