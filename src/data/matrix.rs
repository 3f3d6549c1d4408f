//! [`Matrix<T>`]: a uniform 2-D sequence over a flat buffer with explicit strides.
//!
//! The representation, its invariants and the design are documented on [`Matrix`] itself
//! (this module is private; the type is re-exported at the crate root).

use std::fmt;

use dpl_core::run::{Error, Location};

use super::IndexBound;
use super::nested::Nested;
use super::view::{MatrixRows, MatrixView, RowView};
use dpl_cpu::rt::Idx;

/// A uniform 2-D sequence with explicit strides (row-major, column-major or custom).
///
/// See *Representation* below.
///
/// ```
/// use dpl::Matrix;
///
/// // 2 x 3, stored column by column.
/// let m = Matrix::col_major(2, 3, vec![1, 4, 2, 5, 3, 6]).unwrap();
/// assert_eq!(m.get(0, 2), Some(&3));
/// assert_eq!(m.row(1).to_vec(), vec![4, 5, 6]);
/// assert_eq!(m.to_row_vecs(), vec![vec![1, 2, 3], vec![4, 5, 6]]);
/// assert_eq!(m, Matrix::row_major(2, 3, vec![1, 2, 3, 4, 5, 6]).unwrap());
///
/// let t = m.transpose(); // no copy
/// assert_eq!(t.to_row_vecs(), vec![vec![1, 4], vec![2, 5], vec![3, 6]]);
/// ```
///
/// # Representation
///
/// A `Matrix<T>` owns a flat `data: Vec<T>` and addresses element `(r, c)` (row `r`,
/// column `c`) at
///
/// ```text
/// data[r * row_stride + c * col_stride]
/// ```
///
/// * row-major: `row_stride = cols`, `col_stride = 1` ([`Matrix::row_major`]);
/// * column-major: `row_stride = 1`, `col_stride = rows` ([`Matrix::col_major`]);
/// * anything else with [`Matrix::with_strides`], e.g. a row-major matrix whose rows are
///   padded to a leading dimension, or a broadcast.
///
/// The invariant, checked on construction: every addressed element lies inside `data`,
/// i.e. when the matrix has at least one element, `(rows - 1) * row_stride + (cols - 1) *
/// col_stride < data.len()` (computed without overflow). `data` may hold more elements than
/// are addressed (padding); they are never read.
///
/// Strides may make several positions address the same element: a stride of 0 repeats
/// (broadcasts) one row or one column, and small strides overlap. This is allowed on
/// purpose, because a `Matrix` is read-only after construction: it has no method that writes
/// an element, so aliasing positions can never disagree.
///
/// In a `#[parallel]` body a `&Matrix<T>` is a `[[T]]` whose elements are its rows; a row is
/// a [`RowView`], a strided view that generated code reads with [`RowView::get`] or
/// indexing. [`Matrix::transpose`] only swaps the shape and the strides, so the rows of the
/// transpose are the columns of the original, without a copy.
///
/// Equality ([`PartialEq`]) compares the logical contents (shape and every element), not
/// the layout: a row-major and a column-major matrix holding the same numbers are equal.
#[derive(Clone)]
pub struct Matrix<T> {
    /// The elements; at least every addressed position is inside (see the module docs).
    data: Vec<T>,
    rows: usize,
    cols: usize,
    /// Distance in `data` between `(r, c)` and `(r + 1, c)`.
    row_stride: usize,
    /// Distance in `data` between `(r, c)` and `(r, c + 1)`.
    col_stride: usize,
    /// For integer elements: the shortest sequence every element of `data` indexes
    /// ([`Matrix::__indices_below`]); `data` never changes after construction.
    bound: IndexBound,
}

fn malformed(detail: String) -> Error {
    Error::Malformed {
        what: "Matrix",
        detail,
    }
}

impl<T> Matrix<T> {
    /// A `rows x cols` matrix from `data` laid out row after row.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] (with `what: "Matrix"`) unless `data.len() == rows * cols`.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// assert_eq!(m.row(1).to_vec(), vec![3, 4]);
    /// assert!(dpl::Matrix::row_major(2, 2, vec![1, 2, 3]).is_err());
    /// ```
    pub fn row_major(rows: usize, cols: usize, data: Vec<T>) -> Result<Self, Error> {
        Self::exact(rows, cols, data, "row-major")?.strided(cols, 1)
    }

    /// A `rows x cols` matrix from `data` laid out column after column.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] unless `data.len() == rows * cols`.
    ///
    /// ```
    /// let m = dpl::Matrix::col_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// assert_eq!(m.row(0).to_vec(), vec![1, 3]);
    /// ```
    pub fn col_major(rows: usize, cols: usize, data: Vec<T>) -> Result<Self, Error> {
        Self::exact(rows, cols, data, "column-major")?.strided(1, rows)
    }

    /// Checks `data.len() == rows * cols` and returns the parts for [`Self::strided`].
    fn exact(rows: usize, cols: usize, data: Vec<T>, layout: &str) -> Result<Parts<T>, Error> {
        match rows.checked_mul(cols) {
            Some(n) if n == data.len() => Ok(Parts { rows, cols, data }),
            Some(n) => Err(malformed(format!(
                "{layout} {rows} x {cols} needs {n} elements, got {}",
                data.len()
            ))),
            None => Err(malformed(format!(
                "{rows} x {cols} elements overflow usize"
            ))),
        }
    }

    /// A `rows x cols` matrix whose element `(r, c)` is `data[r * row_stride + c *
    /// col_stride]`.
    ///
    /// Strides of 0 and overlapping strides are allowed (see [`Matrix`]); `data` may be
    /// longer than needed.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] if some addressed element is outside `data`.
    ///
    /// ```
    /// use dpl::Matrix;
    ///
    /// // Rows of 2 elements padded to a leading dimension of 3.
    /// let m = Matrix::with_strides(2, 2, vec![1, 2, 0, 3, 4, 0], 3, 1).unwrap();
    /// assert_eq!(m.to_row_vecs(), vec![vec![1, 2], vec![3, 4]]);
    ///
    /// // One row broadcast three times.
    /// let b = Matrix::with_strides(3, 2, vec![7, 8], 0, 1).unwrap();
    /// assert_eq!(b.to_row_vecs(), vec![vec![7, 8]; 3]);
    ///
    /// assert!(Matrix::with_strides(2, 2, vec![1, 2, 3], 2, 1).is_err());
    /// ```
    pub fn with_strides(
        rows: usize,
        cols: usize,
        data: Vec<T>,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self, Error> {
        Parts { rows, cols, data }.strided(row_stride, col_stride)
    }

    /// Builds a row-major matrix from rows that must all have the same length.
    ///
    /// With no rows the matrix is `0 x 0`.
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] naming the first row whose length differs from row 0's.
    ///
    /// ```
    /// let m = dpl::Matrix::from_rows(vec![vec![1, 2], vec![3, 4]]).unwrap();
    /// assert_eq!(m.get(1, 0), Some(&3));
    /// assert!(dpl::Matrix::from_rows(vec![vec![1, 2], vec![3]]).is_err());
    /// ```
    pub fn from_rows<R>(rows: R) -> Result<Self, Error>
    where
        R: IntoIterator,
        R::Item: IntoIterator<Item = T>,
    {
        let mut data = Vec::new();
        let mut n_rows = 0;
        let mut cols = 0;
        for (i, row) in rows.into_iter().enumerate() {
            let before = data.len();
            data.extend(row);
            let len = data.len() - before;
            if i == 0 {
                cols = len;
            } else if len != cols {
                return Err(malformed(format!(
                    "row {i} has {len} elements but row 0 has {cols}"
                )));
            }
            n_rows += 1;
        }
        Matrix::row_major(n_rows, cols, data)
    }

    /// The result of a `#[parallel]` function declared `-> Matrix<T>`: the rows of `n`
    /// (row-major), which must all have one length, else [`Error::LengthMismatch`] naming
    /// `Matrix` at `at` (row 0's length, then the first length that differs). Not part of
    /// the API.
    #[doc(hidden)]
    pub fn __from_result_rows(n: Nested<T>, at: Location) -> Result<Self, Error> {
        let cols = n.row_lengths().next().unwrap_or(0);
        if let Some(other) = n.row_lengths().find(|&len| len != cols) {
            return Err(Error::LengthMismatch {
                prim: "Matrix",
                left: cols,
                right: other,
                at,
            });
        }
        let rows = n.len();
        let (values, _) = n.into_parts();
        Matrix::row_major(rows, cols, values)
    }

    /// The number of rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The number of columns (the length of every row).
    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The number of rows: the length of the matrix as a sequence of rows (as in the DSL).
    #[inline]
    pub fn len(&self) -> usize {
        self.rows
    }

    /// `true` if the matrix has no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// `(rows, cols)`.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// `(row_stride, col_stride)`: element `(r, c)` is `data()[r * row_stride + c * col_stride]`.
    #[inline]
    pub fn strides(&self) -> (usize, usize) {
        (self.row_stride, self.col_stride)
    }

    /// The underlying buffer, in storage order (it may contain padding; see
    /// [`Matrix::strides`]).
    #[inline]
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// Takes the matrix apart into `(data, rows, cols, row_stride, col_stride)`;
    /// [`Matrix::with_strides`] puts it back together.
    pub fn into_parts(self) -> (Vec<T>, usize, usize, usize, usize) {
        (
            self.data,
            self.rows,
            self.cols,
            self.row_stride,
            self.col_stride,
        )
    }

    /// Element `(r, c)`, or `None` if `r >= rows()` or `c >= cols()`.
    #[inline]
    pub fn get(&self, r: usize, c: usize) -> Option<&T> {
        self.view().get(r, c)
    }

    /// The whole matrix as a borrowed [`MatrixView`] (what a `#[parallel]` function reads
    /// through; no copy).
    ///
    /// ```
    /// let m = dpl::Matrix::col_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// assert_eq!(m.view().to_row_vecs(), m.to_row_vecs());
    /// ```
    #[inline]
    pub fn view(&self) -> MatrixView<'_, T> {
        // SAFETY: every addressed offset is at most the last one, inside `data` (the
        // construction invariant), so it fits an `isize`; a stride above `isize::MAX` only
        // occurs with one row or column, where it never multiplies a position above 0.
        unsafe {
            MatrixView::from_raw(
                self.data.as_ptr(),
                self.rows,
                self.cols,
                self.row_stride as isize,
                self.col_stride as isize,
            )
        }
    }

    /// Row `r`, a strided view.
    ///
    /// # Panics
    ///
    /// If `r >= rows()`.
    ///
    /// ```
    /// let m = dpl::Matrix::col_major(2, 3, vec![1, 4, 2, 5, 3, 6]).unwrap();
    /// let r = m.row(0);
    /// assert_eq!((r.len(), r[2]), (3, 3));
    /// assert_eq!(r.iter().sum::<i32>(), 6);
    /// ```
    #[inline]
    #[track_caller]
    pub fn row(&self, r: usize) -> RowView<'_, T> {
        self.view().row(r)
    }

    /// Row `r` without the range check: what generated code uses for reads that the
    /// compiler proved in range.
    ///
    /// # Safety
    ///
    /// `r < self.rows()`.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// // SAFETY: 1 < 2 rows.
    /// assert_eq!(unsafe { m.row_unchecked(1) }.to_vec(), vec![3, 4]);
    /// ```
    #[inline]
    pub unsafe fn row_unchecked(&self, r: usize) -> RowView<'_, T> {
        // SAFETY: the caller's promise.
        unsafe { self.view().row_unchecked(r) }
    }

    /// Column `c`, a strided view (the same type as a row: it is a row of the transpose).
    ///
    /// # Panics
    ///
    /// If `c >= cols()`.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// assert_eq!(m.col(1).to_vec(), vec![2, 4]);
    /// ```
    #[inline]
    #[track_caller]
    pub fn col(&self, c: usize) -> RowView<'_, T> {
        self.view().col(c)
    }

    /// Row `r` as a contiguous slice, if the columns are adjacent in memory
    /// (`col_stride == 1`, or a row of at most one element). `None` otherwise or if
    /// `r >= rows()`.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// assert_eq!(m.row_slice(1), Some(&[3, 4][..]));
    /// assert_eq!(m.transpose().row_slice(1), None);
    /// ```
    #[inline]
    pub fn row_slice(&self, r: usize) -> Option<&[T]> {
        self.view().row_slice(r)
    }

    /// `true` if every row is contiguous in memory (`col_stride == 1`, or rows of at most
    /// one element), so [`Matrix::row_slice`] never returns `None` for a row in range.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// assert!(m.rows_are_slices());
    /// assert!(!m.transpose().rows_are_slices());
    /// ```
    #[inline]
    pub fn rows_are_slices(&self) -> bool {
        self.cols <= 1 || self.col_stride == 1
    }

    /// Row `r` as a slice, without checks: what generated code uses for reads that the
    /// compiler proved in range, in the variant it runs after [`Matrix::rows_are_slices`].
    ///
    /// # Safety
    ///
    /// `r < self.rows()` and `self.rows_are_slices()`.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// // SAFETY: 1 < 2 rows, and a row-major matrix has contiguous rows.
    /// assert_eq!(unsafe { m.row_slice_unchecked(1) }, &[3, 4]);
    /// ```
    #[inline]
    pub unsafe fn row_slice_unchecked(&self, r: usize) -> &[T] {
        // SAFETY: the caller's promise.
        unsafe { self.view().row_slice_unchecked(r) }
    }

    /// An iterator over the rows, as [`RowView`]s.
    pub fn iter(&self) -> MatrixRows<'_, T> {
        self.view().iter()
    }

    /// `true` if the layout is exactly row-major without padding (`data().len() ==
    /// rows * cols`, `strides() == (cols, 1)`), so `data()` lists the rows in order.
    pub fn is_row_major(&self) -> bool {
        self.rows.checked_mul(self.cols) == Some(self.data.len())
            && (self.rows <= 1 || self.row_stride == self.cols)
            && (self.cols <= 1 || self.col_stride == 1)
    }

    /// The transpose: `cols x rows`, element `(c, r)` of the result is element `(r, c)` of
    /// `self`. Only the shape and the strides change; the data is not moved.
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(1, 3, vec![1, 2, 3]).unwrap();
    /// let t = m.transpose();
    /// assert_eq!((t.rows(), t.cols(), t.strides()), (3, 1, (1, 3)));
    /// assert_eq!(t.get(2, 0), Some(&3));
    /// ```
    pub fn transpose(self) -> Self {
        Matrix {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            bound: self.bound,
        }
    }
}

impl<T: Idx> Matrix<T> {
    /// Whether every element is a valid index into a sequence of length `len` (in
    /// `0..len`): generated code asks this before a loop whose reads `x[c]` take their index
    /// from this matrix (ELL SpMV's `x[cols[i][k]]`) and skips the per-read checks when it
    /// holds. The answer covers all of the storage (a custom layout's gaps too, so it may
    /// be `false` where the addressed elements alone would pass: the checked loop runs
    /// then). The bound is computed on the first call and kept, so later calls cost one
    /// comparison.
    #[doc(hidden)]
    pub fn __indices_below(&self, len: usize) -> bool {
        self.bound.below(&self.data, len)
    }
}

impl<T: Clone> Matrix<T> {
    /// The rows copied into a `Vec` of `Vec`s.
    pub fn to_row_vecs(&self) -> Vec<Vec<T>> {
        self.iter().map(|r| r.to_vec()).collect()
    }

    /// A compact row-major copy (`strides() == (cols, 1)`, no padding, no aliasing).
    ///
    /// ```
    /// let m = dpl::Matrix::col_major(2, 2, vec![1, 2, 3, 4]).unwrap().to_row_major();
    /// assert_eq!((m.data(), m.strides()), (&[1, 3, 2, 4][..], (2, 1)));
    /// ```
    pub fn to_row_major(&self) -> Self {
        let data = self.iter().flat_map(|r| r.iter().cloned()).collect();
        Matrix {
            data,
            rows: self.rows,
            cols: self.cols,
            row_stride: self.cols,
            col_stride: 1,
            bound: IndexBound::default(),
        }
    }

    /// The rows copied into a [`Nested`] (every row of length `cols()`).
    ///
    /// ```
    /// let m = dpl::Matrix::row_major(2, 1, vec![5, 6]).unwrap();
    /// assert_eq!(m.to_nested().to_vecs(), vec![vec![5], vec![6]]);
    /// ```
    pub fn to_nested(&self) -> Nested<T> {
        Nested::from_rows(self.iter().map(|r| r.iter().cloned()))
    }
}

/// A matrix under construction: shape and data, strides not yet checked.
struct Parts<T> {
    rows: usize,
    cols: usize,
    data: Vec<T>,
}

impl<T> Parts<T> {
    /// Checks that every addressed element is inside `data`.
    fn strided(self, row_stride: usize, col_stride: usize) -> Result<Matrix<T>, Error> {
        let Parts { rows, cols, data } = self;
        check_extent(rows, cols, row_stride, col_stride, data.len())?;
        Ok(Matrix {
            data,
            rows,
            cols,
            row_stride,
            col_stride,
            bound: IndexBound::default(),
        })
    }
}

/// Checks that a `rows x cols` layout with these strides addresses only elements below
/// `len` (the invariant of [`Matrix`] and [`MatrixView`]).
pub(super) fn check_extent(
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
    len: usize,
) -> Result<(), Error> {
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let last = (rows - 1).checked_mul(row_stride).and_then(|a| {
        (cols - 1)
            .checked_mul(col_stride)
            .and_then(|b| a.checked_add(b))
    });
    match last {
        Some(last) if last < len => Ok(()),
        Some(last) => Err(malformed(format!(
            "{rows} x {cols} with strides ({row_stride}, {col_stride}) reads \
             data[{last}] but data has {len} elements"
        ))),
        None => Err(malformed(format!(
            "{rows} x {cols} with strides ({row_stride}, {col_stride}) overflows usize"
        ))),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
pub(super) fn index_out_of_range(what: &str, i: usize, n: usize) -> ! {
    panic!("Matrix: {what} index {i} out of range for {n} {what}s")
}

impl<T: PartialEq> PartialEq for Matrix<T> {
    /// Same shape and the same element at every position, whatever the layouts.
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl<T: Eq> Eq for Matrix<T> {}

impl<T: fmt::Debug> fmt::Debug for Matrix<T> {
    /// Formats the shape and the rows, e.g. `Matrix(2x2)[[1, 2], [3, 4]]` (the layout is not
    /// shown; see [`Matrix::strides`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Matrix({}x{})", self.rows, self.cols)?;
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T> IntoIterator for &'a Matrix<T> {
    type Item = RowView<'a, T>;
    type IntoIter = MatrixRows<'a, T>;

    fn into_iter(self) -> MatrixRows<'a, T> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rows x cols` test values: element (r, c) is `10 * r + c`.
    fn reference(rows: usize, cols: usize) -> Vec<Vec<i64>> {
        (0..rows)
            .map(|r| (0..cols).map(|c| (10 * r + c) as i64).collect())
            .collect()
    }

    fn check(m: &Matrix<i64>, want: &[Vec<i64>]) {
        assert_eq!(m.rows(), want.len());
        assert_eq!(m.len(), want.len());
        for (r, row) in want.iter().enumerate() {
            assert_eq!(m.cols(), row.len());
            assert_eq!(m.row(r).len(), row.len());
            assert_eq!(m.row(r).to_vec(), *row);
            assert_eq!(m.row(r).iter().rev().copied().collect::<Vec<_>>(), {
                let mut v = row.clone();
                v.reverse();
                v
            });
            for (c, v) in row.iter().enumerate() {
                assert_eq!(m.get(r, c), Some(v));
                assert_eq!(m.row(r)[c], *v);
                assert_eq!(m.col(c)[r], *v);
            }
            assert_eq!(m.get(r, row.len()), None);
        }
        assert_eq!(m.get(want.len(), 0), None);
        assert_eq!(m.to_row_vecs(), want);
        assert_eq!(m.to_nested().to_vecs(), want);
    }

    #[test]
    fn layouts_agree() {
        for (rows, cols) in [(0, 0), (0, 3), (3, 0), (1, 1), (1, 4), (4, 1), (3, 5)] {
            let want = reference(rows, cols);
            let rm: Vec<i64> = want.iter().flatten().copied().collect();
            let cm: Vec<i64> = (0..cols)
                .flat_map(|c| want.iter().map(move |r| r[c]))
                .collect();
            let a = Matrix::row_major(rows, cols, rm.clone()).unwrap();
            let b = Matrix::col_major(rows, cols, cm).unwrap();
            // Padded rows: leading dimension cols + 2.
            let ld = cols + 2;
            let padded: Vec<i64> = want
                .iter()
                .flat_map(|r| r.iter().copied().chain([-1, -1]))
                .collect();
            let c = Matrix::with_strides(rows, cols, padded, ld, 1).unwrap();
            let d = Matrix::from_rows(want.clone()).unwrap();
            // With no rows, `from_rows` cannot know the column count: it says 0 x 0.
            assert_eq!(d.shape(), if rows == 0 { (0, 0) } else { (rows, cols) });
            let all = if rows == 0 {
                vec![&a, &b, &c]
            } else {
                vec![&a, &b, &c, &d]
            };
            for m in all {
                check(m, &want);
                assert_eq!(m, &a);
                check(&m.to_row_major(), &want);
            }
            assert!(a.is_row_major());
            assert_eq!(a.to_row_major().data(), rm.as_slice());
            let t = b.clone().transpose();
            let want_t: Vec<Vec<i64>> = (0..cols)
                .map(|c| want.iter().map(|r| r[c]).collect())
                .collect();
            check(&t, &want_t);
            assert_eq!(t.clone().transpose(), b);
        }
    }

    #[test]
    fn rejects_bad_shapes() {
        let err = |r: Result<Matrix<i32>, Error>| match r {
            Err(Error::Malformed {
                what: "Matrix",
                detail,
            }) => detail,
            other => panic!("expected Malformed, got {other:?}"),
        };
        assert!(err(Matrix::row_major(2, 3, vec![0; 5])).contains("needs 6 elements, got 5"));
        assert!(err(Matrix::col_major(2, 3, vec![0; 7])).contains("needs 6 elements, got 7"));
        assert!(err(Matrix::row_major(usize::MAX, 2, vec![])).contains("overflow"));
        assert!(err(Matrix::with_strides(2, 2, vec![0; 4], 3, 1)).contains("reads data[4]"));
        assert!(err(Matrix::with_strides(2, usize::MAX, vec![0; 4], 1, 2)).contains("overflow"));
        assert!(err(Matrix::from_rows(vec![vec![1], vec![2, 3]])).contains("row 1 has 2"));
        // Empty shapes address nothing, so any strides are fine.
        assert!(Matrix::<i32>::with_strides(0, 5, vec![], 7, 9).is_ok());
    }

    #[test]
    fn broadcast_and_overlap() {
        // Column broadcast: every column is the same.
        let m = Matrix::with_strides(3, 4, vec![1, 2, 3], 1, 0).unwrap();
        assert_eq!(m.to_row_vecs(), vec![vec![1; 4], vec![2; 4], vec![3; 4]]);
        // Overlapping: a Hankel matrix, element (r, c) = data[r + c].
        let h = Matrix::with_strides(3, 3, vec![0, 1, 2, 3, 4], 1, 1).unwrap();
        assert_eq!(
            h.to_row_vecs(),
            vec![vec![0, 1, 2], vec![1, 2, 3], vec![2, 3, 4]]
        );
        assert_eq!(h.row_slice(2), Some(&[2, 3, 4][..]));
        assert!(!h.is_row_major());
        // A huge broadcast is fine: nothing is materialised.
        let big = Matrix::with_strides(usize::MAX, 3, vec![1, 2, 3], 0, 1).unwrap();
        assert!(!big.is_row_major());
        assert_eq!(big.row(usize::MAX - 1).to_vec(), vec![1, 2, 3]);
    }

    #[test]
    fn equality_is_by_contents() {
        let a = Matrix::row_major(2, 2, vec![1, 2, 3, 4]).unwrap();
        let b = Matrix::col_major(2, 2, vec![1, 3, 2, 4]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, Matrix::row_major(2, 2, vec![1, 2, 3, 5]).unwrap());
        assert_ne!(a, Matrix::row_major(1, 4, vec![1, 2, 3, 4]).unwrap());
        assert_ne!(a, Matrix::row_major(4, 1, vec![1, 2, 3, 4]).unwrap());
        assert_eq!(
            Matrix::<i32>::row_major(0, 3, vec![]).unwrap(),
            Matrix::col_major(0, 3, vec![]).unwrap()
        );
        assert_ne!(
            Matrix::<i32>::row_major(0, 3, vec![]).unwrap(),
            Matrix::row_major(0, 2, vec![]).unwrap()
        );
    }

    #[test]
    fn row_views() {
        let m = Matrix::col_major(2, 3, vec![1, 4, 2, 5, 3, 6]).unwrap();
        let r = m.row(1);
        assert_eq!(r.stride(), 2);
        assert_eq!(r.as_slice(), None);
        assert_eq!(r, vec![4, 5, 6]);
        assert_ne!(r, vec![4, 5]);
        assert_eq!(r, m.clone().transpose().col(1));
        let mut it = r.iter();
        assert_eq!(it.len(), 3);
        assert_eq!(it.next_back(), Some(&6));
        assert_eq!(it.nth(1), Some(&5));
        assert_eq!(it.next(), None);
        assert_eq!(m.iter().rev().map(|r| r[0]).collect::<Vec<_>>(), vec![4, 1]);
        assert_eq!((&m).into_iter().len(), 2);
        assert_eq!(format!("{m:?}"), "Matrix(2x3)[[1, 2, 3], [4, 5, 6]]");
        assert_eq!(format!("{r:?}"), "[4, 5, 6]");
    }

    #[test]
    #[should_panic(expected = "row index 2 out of range for 2 rows")]
    fn row_out_of_range_panics() {
        let m = Matrix::row_major(2, 1, vec![1, 2]).unwrap();
        let _ = m.row(2);
    }

    #[test]
    #[should_panic(expected = "element index 1 out of range for 1 elements")]
    fn view_index_out_of_range_panics() {
        let m = Matrix::row_major(2, 1, vec![1, 2]).unwrap();
        let _ = m.row(0)[1];
    }
}
