//! The SpMV kernels of the `spmv` example, written as dpl `#[parallel]` functions: shared by
//! the example (`examples/spmv.rs`), its test (`tests/example_spmv.rs`) and its benchmark
//! (`benches/spmv.rs`), which include this file with `#[path]`.
//!
//! All four compute `y = A x` with `y[i] = sum_k vals[i][k] * x[cols[i][k]]`, Copperhead's
//! `spmv_csr` (its Figure 1): a `map` over the rows whose body is a sparse dot product, a
//! `gather` of `x` at the row's columns, a `map` multiplying, and a `sum`. They differ only
//! in the data layout and in how the two nesting levels are scheduled:
//!
//! * [`spmv_csr`] — CSR (`Nested` rows), the default schedule: rows in parallel, each row's
//!   dot product a sequential loop (Copperhead's "scalar CSR" kernel).
//! * [`spmv_csr_block`] — CSR with the inner level parallel too (`inner = "block"`: nested
//!   rayon tasks within a row above a grain size; Copperhead's "vector CSR").
//! * [`spmv_csr_auto`] — CSR with `inner = "auto"`: both schedules compiled, one chosen per
//!   call from the shape of `vals` (rows, entries, longest row).
//! * [`spmv_ell`] — ELLPACK: `rows x width` matrices of values and columns stored
//!   column-major, short rows padded with zero values; each row is a strided view.

use dpl::prelude::*;

/// `y = A x` for a CSR matrix given as one row of values and one row of column indices per
/// matrix row; rows in parallel, each row's dot product sequential.
#[parallel]
pub fn spmv_csr(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
    map(spvv, vals, cols)
}

/// [`spmv_csr`] with the inner level (each row's dot product) also parallel.
#[parallel(inner = "block")]
pub fn spmv_csr_block(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
    map(spvv, vals, cols)
}

/// [`spmv_csr`] with the inner schedule chosen at run time from the shape of `vals`.
#[parallel(inner = "auto")]
pub fn spmv_csr_auto(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
    let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
    map(spvv, vals, cols)
}

/// `y = A x` for an ELLPACK matrix: `vals` and `cols` are `rows x width` (column-major in
/// [`dpl::mm::CsrExt::to_ell`]; any strides work), padded entries have value 0 and a valid
/// column.
///
/// Written with `x[c]` instead of `gather(x, ci)`: since commit 6f62b6c the compiler
/// validates the indices of a gather over the rows of a parameter once up front with
/// `check_indices(&[I])`, which does not type-check when the parameter is a `Matrix` (no
/// contiguous slice). `x[c]` is the same read, checked per element.
#[parallel]
pub fn spmv_ell(vals: &Matrix<f32>, cols: &Matrix<u32>, x: &[f32]) -> Vec<f32> {
    let spvv = |ai, ci| sum(map(|aij, c| aij * x[c], ai, ci));
    map(spvv, vals, cols)
}
