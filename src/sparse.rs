//! Sparse matrices of the Rust ecosystem as dpl data (features `sprs`, `nalgebra-sparse`,
//! `faer`): [`SparseRows::to_nested_rows`] turns a matrix into the two [`Nested`]
//! sequences an SpMV written with `map` over rows takes, one row of values and one row of
//! column indices per matrix row.
//!
//! The two results share one offsets array ([`Nested::same_offsets`] holds), so generated
//! code that zips their rows reads one offsets array and compares no row lengths. Column
//! indices are `u32` (half the bytes of `usize` on every read of an SpMV); a matrix with
//! more than `u32::MAX + 1` columns is an [`Error::Malformed`]. Values keep their type.
//!
//! | crate (feature) | types |
//! |---|---|
//! | `sprs` | `CsMatBase` (`CsMat`, `CsMatView`, ...), CSR or CSC |
//! | `nalgebra-sparse` | `CsrMatrix`, `CscMatrix` |
//! | `faer` | `SparseRowMat`, `SparseRowMatRef`, `SparseColMat`, `SparseColMatRef` (index types `u32`, `u64`, `usize`) |
//!
//! A row-major (CSR) matrix is copied once, row by row; a column-major (CSC) one is
//! transposed on the way (a counting pass, then one placement pass), so each row lists its
//! entries in increasing column order either way.
//!
//! ```
//! # #[cfg(feature = "nalgebra-sparse")] {
//! use dpl::prelude::*;
//! use dpl::sparse::SparseRows;
//! use nalgebra_sparse::{CooMatrix, CsrMatrix};
//!
//! #[parallel]
//! fn spmv(vals: &Nested<f64>, cols: &Nested<u32>, x: &[f64]) -> Vec<f64> {
//!     map(|a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))), vals, cols)
//! }
//!
//! let mut coo = CooMatrix::new(2, 3);
//! coo.push(0, 0, 1.0);
//! coo.push(0, 2, 2.0);
//! coo.push(1, 1, 3.0);
//! let (vals, cols) = CsrMatrix::from(&coo).to_nested_rows().unwrap();
//! assert_eq!(spmv(&vals, &cols, &[1.0, 10.0, 100.0]), vec![201.0, 30.0]);
//! # }
//! ```

use crate::{Error, Nested};

/// A sparse matrix that dpl can read as rows.
pub trait SparseRows<T> {
    /// `(values, columns)`: one row of each per matrix row, the entries of a row in
    /// increasing column order; the two share one offsets array.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] if the matrix has more than `u32::MAX + 1` columns (the
    /// column indices would not fit `u32`).
    fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error>;
}

/// The error of a matrix whose column indices do not fit `u32`.
fn too_wide(cols: usize) -> Error {
    Error::Malformed {
        what: "sparse matrix",
        detail: format!(
            "{cols} columns: column indices must fit u32 (at most {} columns)",
            u64::from(u32::MAX) + 1
        ),
    }
}

/// A compressed sparse matrix: the entries of outer line `k` (a row of CSR, a column of
/// CSC) are at the positions `range(k)` of `inner` (their column, or row, indices) and of
/// `values`.
struct Compressed<'a, T, R, I> {
    outer: usize,
    range: R,
    inner: I,
    values: &'a [T],
}

impl<T: Clone, R: Fn(usize) -> std::ops::Range<usize>, I: Fn(usize) -> usize>
    Compressed<'_, T, R, I>
{
    /// The rows of a CSR matrix with `cols` columns.
    fn by_rows(&self, cols: usize) -> Result<(Nested<T>, Nested<u32>), Error> {
        check_width(cols)?;
        let mut offsets = Vec::with_capacity(self.outer + 1);
        let mut values = Vec::new();
        let mut columns = Vec::new();
        offsets.push(0);
        for i in 0..self.outer {
            let r = (self.range)(i);
            values.extend_from_slice(&self.values[r.clone()]);
            // Every column index is below `cols`, checked to fit u32.
            columns.extend(r.map(|k| (self.inner)(k) as u32));
            offsets.push(values.len());
        }
        shared(values, offsets, columns)
    }

    /// The rows of a CSC matrix with `rows` rows: counts the entries of each row, then
    /// places each entry at its row's next free slot, column by column, so each row's
    /// entries come out in increasing column order.
    fn by_columns(&self, rows: usize) -> Result<(Nested<T>, Nested<u32>), Error> {
        check_width(self.outer)?;
        let mut offsets = vec![0usize; rows + 1];
        for j in 0..self.outer {
            for k in (self.range)(j) {
                offsets[(self.inner)(k) + 1] += 1;
            }
        }
        for i in 0..rows {
            offsets[i + 1] += offsets[i];
        }
        let mut next = offsets[..rows].to_vec();
        let mut slots: Vec<Option<(u32, T)>> = vec![None; offsets[rows]];
        for j in 0..self.outer {
            for k in (self.range)(j) {
                let r = (self.inner)(k);
                // `j` is below the number of columns, checked to fit u32.
                slots[next[r]] = Some((j as u32, self.values[k].clone()));
                next[r] += 1;
            }
        }
        let (columns, values) = slots
            .into_iter()
            .map(|s| s.expect("every slot is filled: counting and placing see the same entries"))
            .unzip();
        shared(values, offsets, columns)
    }
}

/// An error unless every column index of a matrix with `cols` columns fits `u32`.
fn check_width(cols: usize) -> Result<(), Error> {
    match u32::try_from(cols.saturating_sub(1)) {
        Ok(_) => Ok(()),
        Err(_) => Err(too_wide(cols)),
    }
}

/// `values` and `columns` split by one shared `offsets` array.
fn shared<T>(
    values: Vec<T>,
    offsets: Vec<usize>,
    columns: Vec<u32>,
) -> Result<(Nested<T>, Nested<u32>), Error> {
    let values = Nested::from_parts(values, offsets)?;
    let columns = Nested::with_offsets_of(&values, columns)?;
    Ok((values, columns))
}

#[cfg(feature = "sprs")]
mod with_sprs {
    use super::*;
    use sprs::{CsMatBase, SpIndex};
    use std::ops::Deref;

    #[cfg_attr(docsrs, doc(cfg(feature = "sprs")))]
    impl<T, I, Iptr, IptrS, IndS, DataS> SparseRows<T> for CsMatBase<T, I, IptrS, IndS, DataS, Iptr>
    where
        T: Clone,
        I: SpIndex,
        Iptr: SpIndex,
        IptrS: Deref<Target = [Iptr]>,
        IndS: Deref<Target = [I]>,
        DataS: Deref<Target = [T]>,
    {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            let (rows, cols) = self.shape();
            let (indptr, indices) = (self.indptr(), self.indices());
            let m = Compressed {
                outer: self.outer_dims(),
                range: |k: usize| indptr.outer_inds_sz(k),
                inner: |k: usize| indices[k].index(),
                values: self.data(),
            };
            if self.is_csr() {
                m.by_rows(cols)
            } else {
                m.by_columns(rows)
            }
        }
    }
}

#[cfg(feature = "nalgebra-sparse")]
mod with_nalgebra {
    use super::*;
    use nalgebra_sparse::{CscMatrix, CsrMatrix};

    /// The positions of line `k` in a compressed matrix with offsets `offsets`.
    fn line(offsets: &[usize]) -> impl Fn(usize) -> std::ops::Range<usize> + '_ {
        |k| offsets[k]..offsets[k + 1]
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "nalgebra-sparse")))]
    impl<T: Clone> SparseRows<T> for CsrMatrix<T> {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            let cols = self.col_indices();
            Compressed {
                outer: self.nrows(),
                range: line(self.row_offsets()),
                inner: |k: usize| cols[k],
                values: self.values(),
            }
            .by_rows(self.ncols())
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "nalgebra-sparse")))]
    impl<T: Clone> SparseRows<T> for CscMatrix<T> {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            let rows = self.row_indices();
            Compressed {
                outer: self.ncols(),
                range: line(self.col_offsets()),
                inner: |k: usize| rows[k],
                values: self.values(),
            }
            .by_columns(self.nrows())
        }
    }
}

#[cfg(feature = "faer")]
mod with_faer {
    use super::*;
    use faer::Index;
    use faer::sparse::{SparseColMat, SparseColMatRef, SparseRowMat, SparseRowMatRef};

    #[cfg_attr(docsrs, doc(cfg(feature = "faer")))]
    impl<I: Index, T: Clone> SparseRows<T> for SparseRowMatRef<'_, I, T> {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            let s = self.symbolic();
            let cols = s.col_idx();
            Compressed {
                outer: s.nrows(),
                range: |i: usize| s.row_range(i),
                inner: |k: usize| cols[k].zx(),
                values: self.val(),
            }
            .by_rows(s.ncols())
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "faer")))]
    impl<I: Index, T: Clone> SparseRows<T> for SparseRowMat<I, T> {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            self.as_ref().to_nested_rows()
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "faer")))]
    impl<I: Index, T: Clone> SparseRows<T> for SparseColMatRef<'_, I, T> {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            let s = self.symbolic();
            let rows = s.row_idx();
            Compressed {
                outer: s.ncols(),
                range: |j: usize| s.col_range(j),
                inner: |k: usize| rows[k].zx(),
                values: self.val(),
            }
            .by_columns(s.nrows())
        }
    }

    #[cfg_attr(docsrs, doc(cfg(feature = "faer")))]
    impl<I: Index, T: Clone> SparseRows<T> for SparseColMat<I, T> {
        fn to_nested_rows(&self) -> Result<(Nested<T>, Nested<u32>), Error> {
            self.as_ref().to_nested_rows()
        }
    }
}
