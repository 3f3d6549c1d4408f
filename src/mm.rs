//! Sparse matrices in dpl (feature `mm`, on by default): the Matrix Market reader and the
//! [`CooMatrix`]/[`Csr`] types of the [`dpl_mm`] crate, re-exported, and [`CsrExt`], the
//! conversions of a [`Csr`] to dpl's data types: rows as [`Nested`] sequences (the inputs of
//! an SpMV written with `map` over rows) and ELLPACK as column-major [`Matrix`]es.
//!
//! # Reading
//!
//! [`read`] (a file) and [`parse`] (text) accept the Matrix Market exchange format
//! (<https://math.nist.gov/MatrixMarket/formats.html>): format `coordinate` or `array`;
//! field `real`, `integer` or `pattern`; symmetry `general`, `symmetric` or
//! `skew-symmetric` (mirrored on reading). See [`dpl_mm`] for the details and the errors.
//!
//! # Using a matrix in dpl
//!
//! ```
//! use dpl::mm::{self, CsrExt};
//!
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n\
//!             3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n";
//! let csr = mm::parse(text).unwrap().to_csr();
//! assert_eq!((csr.rows(), csr.cols(), csr.nnz()), (3, 3, 5)); // (2,1) mirrored to (1,2)
//! assert_eq!(csr.spmv(&[1.0, 1.0, 1.0]), vec![3.0, 3.0, 4.0]);
//!
//! // The SpMV inputs of a `#[parallel]` function: one row of values and columns per row.
//! let (vals, cols) = csr.to_nested();
//! assert_eq!(vals.row(1), &[-1.0f32, 4.0]);
//! assert_eq!(cols.row(1), &[0u32, 1]);
//! ```
//!
//! [`CsrExt`] is in the [prelude](crate::prelude) too.

pub use dpl_mm::{CooMatrix, Csr, Field, Format, MmError, Symmetry, parse, read};

use crate::data::{Matrix, Nested};

/// The conversions of a [`Csr`] to dpl's data types (a trait because [`Csr`] is defined in
/// the `dpl-mm` crate, which knows nothing of them).
pub trait CsrExt {
    /// The rows as dpl data, values rounded to `f32`: `(values, columns)`, one row of each
    /// per matrix row, the inputs of an SpMV written with `map` over rows. The two share
    /// one offsets array ([`Nested::same_offsets`] holds), so generated code that zips
    /// their rows reads one offsets array and compares no row lengths.
    fn to_nested(&self) -> (Nested<f32>, Nested<u32>);

    /// As [`CsrExt::to_nested`], keeping `f64` values.
    fn to_nested_f64(&self) -> (Nested<f64>, Nested<u32>);

    /// ELLPACK form, values rounded to `f32`: `rows() x width` matrices of values and of
    /// columns, `width` the longest row, stored **column-major** so that entry `k` of
    /// consecutive rows is adjacent in memory (coalesced on a GPU). Short rows are padded
    /// with value 0 and a valid column (the row's last column, or 0 for an empty row), so
    /// a padded product adds `0 * x[valid]`.
    ///
    /// ELL stores `rows() * width` entries: one very long row makes it large (use
    /// [`CsrExt::to_nested`] for skewed matrices).
    ///
    /// # Panics
    ///
    /// If `rows() * width` overflows `usize`.
    ///
    /// ```
    /// use dpl::mm::{CooMatrix, CsrExt};
    ///
    /// let a = CooMatrix::from_triplets(2, 3, vec![(0, 0, 1.0), (0, 2, 2.0), (1, 1, 3.0)])
    ///     .unwrap()
    ///     .to_csr();
    /// let (vals, cols) = a.to_ell();
    /// assert_eq!(vals.to_row_vecs(), vec![vec![1.0f32, 2.0], vec![3.0, 0.0]]);
    /// assert_eq!(cols.to_row_vecs(), vec![vec![0u32, 2], vec![1, 1]]);
    /// assert_eq!(vals.strides(), (1, 2)); // column-major
    /// ```
    fn to_ell(&self) -> (Matrix<f32>, Matrix<u32>);

    /// As [`CsrExt::to_ell`], keeping `f64` values.
    fn to_ell_f64(&self) -> (Matrix<f64>, Matrix<u32>);
}

impl CsrExt for Csr {
    fn to_nested(&self) -> (Nested<f32>, Nested<u32>) {
        nested_with(self, |v| v as f32)
    }

    fn to_nested_f64(&self) -> (Nested<f64>, Nested<u32>) {
        nested_with(self, |v| v)
    }

    fn to_ell(&self) -> (Matrix<f32>, Matrix<u32>) {
        ell_with(self, |v| v as f32, 0.0)
    }

    fn to_ell_f64(&self) -> (Matrix<f64>, Matrix<u32>) {
        ell_with(self, |v| v, 0.0)
    }
}

/// The rows of `a` as `(values, columns)` sharing one offsets array.
fn nested_with<V>(a: &Csr, convert: impl Fn(f64) -> V) -> (Nested<V>, Nested<u32>) {
    const INVARIANT: &str = "the Csr invariant implies the Nested one";
    let cols = Nested::from_parts(a.col_indices().to_vec(), a.row_offsets().to_vec())
        .unwrap_or_else(|e| unreachable!("{INVARIANT}: {e}"));
    let values = a.values().iter().map(|&v| convert(v)).collect();
    let vals =
        Nested::with_offsets_of(&cols, values).unwrap_or_else(|e| unreachable!("{INVARIANT}: {e}"));
    (vals, cols)
}

/// The ELLPACK form of `a`, padded with `zero`.
fn ell_with<V: Copy>(a: &Csr, convert: impl Fn(f64) -> V, zero: V) -> (Matrix<V>, Matrix<u32>) {
    let rows = a.rows();
    let width = a.row_lengths().into_iter().max().unwrap_or(0);
    let size = rows.checked_mul(width).unwrap_or_else(|| {
        panic!("Csr::to_ell: {rows} rows x {width} (longest row) overflows usize")
    });
    let mut vals = vec![zero; size];
    let mut cols = vec![0u32; size];
    for r in 0..rows {
        let (cs, vs) = a.row(r);
        let pad = cs.last().copied().unwrap_or(0);
        for k in 0..width {
            let at = k * rows + r;
            if k < cs.len() {
                vals[at] = convert(vs[k]);
                cols[at] = cs[k];
            } else {
                cols[at] = pad;
            }
        }
    }
    fn build<X>(rows: usize, width: usize, data: Vec<X>) -> Matrix<X> {
        Matrix::col_major(rows, width, data)
            .unwrap_or_else(|e| unreachable!("ELL data is rows * width long: {e}"))
    }
    (build(rows, width, vals), build(rows, width, cols))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dpl_testkit::sparse;

    #[test]
    fn ell_and_nested_agree_with_csr() {
        for a in [
            sparse::random(30, 20, 5, 1),
            sparse::power_law(50, 40, 1, 1.1, 2),
            sparse::laplacian_2d(4, 3),
        ] {
            let x = sparse::random_vector(a.cols(), 9);
            let want = a.spmv(&x);
            let (vals, cols) = a.to_ell_f64();
            assert_eq!(vals.strides(), (1, a.rows()));
            let ell: Vec<f64> = (0..a.rows())
                .map(|r| {
                    vals.row(r)
                        .iter()
                        .zip(cols.row(r).iter())
                        .map(|(v, &c)| v * x[c as usize])
                        .sum()
                })
                .collect();
            let (nv, nc) = a.to_nested_f64();
            let nested: Vec<f64> = (0..a.rows())
                .map(|r| {
                    nv.row(r)
                        .iter()
                        .zip(nc.row(r))
                        .map(|(v, &c)| v * x[c as usize])
                        .sum()
                })
                .collect();
            for r in 0..a.rows() {
                assert!(
                    (ell[r] - want[r]).abs() <= 1e-12,
                    "row {r}: {} vs {}",
                    ell[r],
                    want[r]
                );
                assert_eq!(nested[r], want[r]);
            }
            let (v32, c32) = a.to_nested();
            assert_eq!(c32, nc);
            assert_eq!(
                v32.values(),
                a.values().iter().map(|&v| v as f32).collect::<Vec<_>>()
            );
            let (e32, ec) = a.to_ell();
            assert_eq!(ec, cols);
            assert_eq!(e32.to_row_vecs().concat().len(), a.rows() * vals.cols());
        }
        // No columns: no entries, width 0.
        let empty = sparse::random(3, 0, 4, 1);
        let (v, c) = empty.to_ell();
        assert_eq!((v.shape(), c.shape()), ((3, 0), (3, 0)));
    }
}
