//! Borrowed 2-D data: [`MatrixView`] (a whole matrix, over a buffer the caller owns) and
//! [`RowView`] (one row or column of one).
//!
//! Both are copyable, read-only and address their elements through a pointer to element
//! `(0, 0)` and signed strides, so they describe every layout a [`Matrix`] has, and every
//! layout of an `ndarray` view (reversed axes included), without copying and without
//! claiming the elements in between: a view reads exactly the positions it addresses, so a
//! column of a buffer whose other columns someone else is writing is safe to read.

use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;

use dpl_core::run::Error;
use dpl_cpu::rt::Idx;

use super::matrix::{Matrix, check_extent, index_out_of_range};
use super::nested::Nested;

/// A read-only `rows x cols` matrix over a buffer borrowed from the caller: a [`Matrix`]
/// that does not own its data.
///
/// A `#[parallel]` function takes one as `MatrixView<T>` (by value: it is `Copy`), exactly
/// like a `&Matrix<T>` (a `[[T]]` whose elements are the rows); with the feature `ndarray`
/// an `ArrayView2<T>` or `&Array2<T>` parameter is read through one, with its strides.
/// Nothing is copied on `Place::Seq` and `Place::Cpu`; the GPU places upload the addressed
/// elements, and `Place::Mpi` copies the rank's block into a `Matrix` once per call.
///
/// ```
/// use dpl::MatrixView;
///
/// // Rows of 2 elements padded to a leading dimension of 3, in the caller's buffer.
/// let buffer = vec![1, 2, 0, 3, 4, 0];
/// let m = MatrixView::new(&buffer, 2, 2, 3, 1).unwrap();
/// assert_eq!(m.to_row_vecs(), vec![vec![1, 2], vec![3, 4]]);
/// assert_eq!(m.col(1).to_vec(), vec![2, 4]);
/// assert!(MatrixView::new(&buffer, 2, 3, 4, 1).is_err()); // would read buffer[6]
/// ```
pub struct MatrixView<'a, T> {
    /// Element `(0, 0)`: for every `r < rows` and `c < cols`, `ptr.offset(r * row_stride +
    /// c * col_stride)` is an initialised `T` that may be read (shared) for `'a`.
    ptr: *const T,
    rows: usize,
    cols: usize,
    row_stride: isize,
    col_stride: isize,
    _data: PhantomData<&'a [T]>,
}

// SAFETY: a view only reads its elements, like a `&'a [T]`, which is `Send` and `Sync`
// when `T: Sync`.
unsafe impl<T: Sync> Send for MatrixView<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for MatrixView<'_, T> {}

// Manual impls: a view is copyable whatever `T` is (derive would require `T: Copy`).
impl<T> Clone for MatrixView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for MatrixView<'_, T> {}

impl<'a, T> MatrixView<'a, T> {
    /// A `rows x cols` view of `data` whose element `(r, c)` is `data[r * row_stride + c *
    /// col_stride]`, checked as [`Matrix::with_strides`] checks (strides of 0 and
    /// overlapping strides are allowed; `data` may be longer than needed).
    ///
    /// # Errors
    ///
    /// [`Error::Malformed`] (with `what: "Matrix"`) if some addressed element is outside
    /// `data`.
    pub fn new(
        data: &'a [T],
        rows: usize,
        cols: usize,
        row_stride: usize,
        col_stride: usize,
    ) -> Result<Self, Error> {
        check_extent(rows, cols, row_stride, col_stride, data.len())?;
        // SAFETY: every addressed offset is at most the last one, which `check_extent`
        // found inside `data` (so it also fits an `isize`: no slice is longer than
        // `isize::MAX` elements); strides above `isize::MAX` only occur with one row or
        // column, where they never multiply a position above 0.
        Ok(unsafe {
            Self::from_raw(
                data.as_ptr(),
                rows,
                cols,
                row_stride as isize,
                col_stride as isize,
            )
        })
    }

    /// A view from its parts.
    ///
    /// # Safety
    ///
    /// For every `r < rows` and `c < cols`, `ptr.offset(r * row_stride + c * col_stride)`
    /// (computed without overflow) points to an initialised `T` that nothing writes during
    /// `'a`.
    pub(crate) unsafe fn from_raw(
        ptr: *const T,
        rows: usize,
        cols: usize,
        row_stride: isize,
        col_stride: isize,
    ) -> Self {
        MatrixView {
            ptr,
            rows,
            cols,
            row_stride,
            col_stride,
            _data: PhantomData,
        }
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

    /// `true` if the view has no rows.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// `(rows, cols)`.
    #[inline]
    pub fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// `(row_stride, col_stride)`, in elements; negative for a reversed axis (an `ndarray`
    /// view may have one).
    #[inline]
    pub fn strides(&self) -> (isize, isize) {
        (self.row_stride, self.col_stride)
    }

    /// The start of row `r` (any `r`; only dereferenced for rows in range).
    #[inline]
    fn row_ptr(&self, r: usize) -> *const T {
        self.ptr
            .wrapping_offset((r as isize).wrapping_mul(self.row_stride))
    }

    /// Element `(r, c)`, or `None` if `r >= rows()` or `c >= cols()`.
    #[inline]
    pub fn get(&self, r: usize, c: usize) -> Option<&'a T> {
        if r < self.rows && c < self.cols {
            // SAFETY: in range, so addressed (the invariant).
            Some(unsafe { self.row_unchecked(r).get_unchecked(c) })
        } else {
            None
        }
    }

    /// Row `r`, a strided view.
    ///
    /// # Panics
    ///
    /// If `r >= rows()`.
    #[inline]
    #[track_caller]
    pub fn row(&self, r: usize) -> RowView<'a, T> {
        if r >= self.rows {
            index_out_of_range("row", r, self.rows);
        }
        // SAFETY: checked just above.
        unsafe { self.row_unchecked(r) }
    }

    /// Row `r` without the range check: what generated code uses for reads that the
    /// compiler proved in range.
    ///
    /// # Safety
    ///
    /// `r < self.rows()`.
    #[inline]
    pub unsafe fn row_unchecked(&self, r: usize) -> RowView<'a, T> {
        debug_assert!(r < self.rows);
        RowView {
            ptr: self.row_ptr(r),
            len: self.cols,
            stride: self.col_stride,
            _data: PhantomData,
        }
    }

    /// Column `c`, a strided view (the same type as a row: it is a row of the transpose).
    ///
    /// # Panics
    ///
    /// If `c >= cols()`.
    #[inline]
    #[track_caller]
    pub fn col(&self, c: usize) -> RowView<'a, T> {
        self.transpose().row(c)
    }

    /// The transpose: `cols x rows`, without a copy.
    #[inline]
    pub fn transpose(&self) -> MatrixView<'a, T> {
        MatrixView {
            ptr: self.ptr,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            _data: PhantomData,
        }
    }

    /// Row `r` as a contiguous slice, if its elements are adjacent in memory in order
    /// (`col_stride == 1`, or a row of at most one element). `None` otherwise or if `r >=
    /// rows()`.
    #[inline]
    pub fn row_slice(&self, r: usize) -> Option<&'a [T]> {
        if r < self.rows {
            self.row(r).as_slice()
        } else {
            None
        }
    }

    /// `true` if every row is contiguous in memory (`col_stride == 1`, or rows of at most
    /// one element), so [`MatrixView::row_slice`] never returns `None` for a row in range.
    #[inline]
    pub fn rows_are_slices(&self) -> bool {
        self.cols <= 1 || self.col_stride == 1
    }

    /// Row `r` as a slice, without checks: what generated code uses for reads that the
    /// compiler proved in range, in the variant it runs after
    /// [`MatrixView::rows_are_slices`].
    ///
    /// # Safety
    ///
    /// `r < self.rows()` and `self.rows_are_slices()`.
    #[inline]
    pub unsafe fn row_slice_unchecked(&self, r: usize) -> &'a [T] {
        debug_assert!(r < self.rows && self.rows_are_slices());
        if self.cols == 0 {
            return &[];
        }
        // SAFETY: row `r` is in range and its `cols` elements are adjacent (stride 1 or one
        // element), all addressed: the invariant makes them one readable run.
        unsafe { std::slice::from_raw_parts(self.row_ptr(r), self.cols) }
    }

    /// An iterator over the rows, as [`RowView`]s.
    pub fn iter(&self) -> MatrixRows<'a, T> {
        MatrixRows::new(*self, self.rows)
    }
}

impl<T: Idx> MatrixView<'_, T> {
    /// Whether every element is known to be a valid index into a sequence of length
    /// `len`: a view keeps no bound (its data may change between calls), so this is always
    /// `false`, and generated code checks each read that takes its index from the view.
    /// Not part of the API.
    #[doc(hidden)]
    pub fn __indices_below(&self, _len: usize) -> bool {
        false
    }
}

impl<T: Clone> MatrixView<'_, T> {
    /// The rows copied into a `Vec` of `Vec`s.
    pub fn to_row_vecs(&self) -> Vec<Vec<T>> {
        self.iter().map(|r| r.to_vec()).collect()
    }

    /// A compact row-major copy, owning its data.
    pub fn to_matrix(&self) -> Matrix<T> {
        let data = self.iter().flat_map(|r| r.iter().cloned()).collect();
        Matrix::row_major(self.rows, self.cols, data).expect("rows x cols elements were collected")
    }

    /// The rows copied into a [`Nested`] (every row of length `cols()`).
    pub fn to_nested(&self) -> Nested<T> {
        Nested::from_rows(self.iter().map(|r| r.iter().cloned()))
    }
}

impl<T: PartialEq> PartialEq for MatrixView<'_, T> {
    /// Same shape and the same element at every position, whatever the layouts.
    fn eq(&self, other: &Self) -> bool {
        self.shape() == other.shape() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl<T: fmt::Debug> fmt::Debug for MatrixView<'_, T> {
    /// Formats the shape and the rows, as a [`Matrix`] does.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Matrix({}x{})", self.rows, self.cols)?;
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T> IntoIterator for MatrixView<'a, T> {
    type Item = RowView<'a, T>;
    type IntoIter = MatrixRows<'a, T>;

    fn into_iter(self) -> MatrixRows<'a, T> {
        self.iter()
    }
}

impl<'a, T> From<&'a Matrix<T>> for MatrixView<'a, T> {
    fn from(m: &'a Matrix<T>) -> Self {
        m.view()
    }
}

/// A strided view of one row (or column) of a [`Matrix`] or [`MatrixView`]: element `j` is
/// `j` strides after element 0.
///
/// Cheap to copy; indexing is one multiply-add and a bounds check.
///
/// ```
/// let m = dpl::Matrix::col_major(3, 2, vec![1, 2, 3, 4, 5, 6]).unwrap();
/// let r = m.row(2);
/// assert_eq!(r.len(), 2);
/// assert_eq!((r[0], r[1]), (3, 6));
/// assert_eq!(r.get(2), None);
/// assert_eq!(r, [3, 6][..]);
/// ```
pub struct RowView<'a, T> {
    /// Element 0: `ptr.offset(j * stride)` is an element of the matrix for `j < len`.
    ptr: *const T,
    len: usize,
    stride: isize,
    _data: PhantomData<&'a [T]>,
}

// SAFETY: as for `MatrixView`: a read-only view.
unsafe impl<T: Sync> Send for RowView<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for RowView<'_, T> {}

impl<T> Clone for RowView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RowView<'_, T> {}

impl<'a, T> RowView<'a, T> {
    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `true` if the view has no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The distance in the matrix buffer between consecutive elements (negative along a
    /// reversed axis of an `ndarray` view).
    #[inline]
    pub fn stride(&self) -> isize {
        self.stride
    }

    /// Element `j`, or `None` if `j >= len()`.
    #[inline]
    pub fn get(&self, j: usize) -> Option<&'a T> {
        if j < self.len {
            // SAFETY: in range.
            Some(unsafe { self.get_unchecked(j) })
        } else {
            None
        }
    }

    /// Element `j` without the range check: what generated code uses for reads that the
    /// compiler proved in range.
    ///
    /// # Safety
    ///
    /// `j < self.len()`, and the view comes from a row or column of a [`Matrix`] or a
    /// [`MatrixView`] in range ([`Matrix::row_unchecked`] with a row in range counts).
    ///
    /// ```
    /// let m = dpl::Matrix::col_major(2, 2, vec![1, 2, 3, 4]).unwrap();
    /// // SAFETY: 1 < 2 elements.
    /// assert_eq!(unsafe { *m.row(0).get_unchecked(1) }, 3);
    /// ```
    #[inline]
    pub unsafe fn get_unchecked(&self, j: usize) -> &'a T {
        debug_assert!(j < self.len);
        // SAFETY: element `j < len` of a row in range is addressed by its matrix, so it is
        // readable for `'a` (the invariant of `MatrixView`).
        unsafe { &*self.ptr.offset((j as isize).wrapping_mul(self.stride)) }
    }

    /// An iterator over the elements, in order.
    pub fn iter(&self) -> RowViewIter<'a, T> {
        RowViewIter::new(*self, self.len)
    }

    /// The elements as a contiguous slice, if they are adjacent in memory in order
    /// (stride 1, or at most one element).
    #[inline]
    pub fn as_slice(&self) -> Option<&'a [T]> {
        if self.len == 0 {
            Some(&[])
        } else if self.stride == 1 || self.len == 1 {
            // SAFETY: `len` adjacent addressed elements.
            Some(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
        } else {
            None
        }
    }

    /// The elements copied into a `Vec`.
    pub fn to_vec(&self) -> Vec<T>
    where
        T: Clone,
    {
        self.iter().cloned().collect()
    }
}

impl<T> Index<usize> for RowView<'_, T> {
    type Output = T;

    #[inline]
    #[track_caller]
    fn index(&self, j: usize) -> &T {
        match self.get(j) {
            Some(v) => v,
            None => index_out_of_range("element", j, self.len),
        }
    }
}

impl<T: PartialEq> PartialEq for RowView<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for RowView<'_, T> {}

impl<T: PartialEq> PartialEq<[T]> for RowView<'_, T> {
    fn eq(&self, other: &[T]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for RowView<'_, T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self == other[..]
    }
}

impl<T: fmt::Debug> fmt::Debug for RowView<'_, T> {
    /// Formats as a list of the elements.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a, T> IntoIterator for RowView<'a, T> {
    type Item = &'a T;
    type IntoIter = RowViewIter<'a, T>;

    fn into_iter(self) -> RowViewIter<'a, T> {
        self.iter()
    }
}

impl<'a, T> IntoIterator for &RowView<'a, T> {
    type Item = &'a T;
    type IntoIter = RowViewIter<'a, T>;

    fn into_iter(self) -> RowViewIter<'a, T> {
        self.iter()
    }
}

position_iterator!(
    /// The iterator over the elements of a [`RowView`].
    RowViewIter<'a>, view: RowView<'a, T>, &'a T,
    // SAFETY: the iterator's positions are below the view's length.
    |v, j| unsafe { v.get_unchecked(j) }
);

position_iterator!(
    /// The iterator over the rows of a [`Matrix`] or [`MatrixView`], from their `iter`.
    MatrixRows<'a>, matrix: MatrixView<'a, T>, RowView<'a, T>,
    // SAFETY: the iterator's positions are below the number of rows.
    |m, r| unsafe { m.row_unchecked(r) }
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_of_a_caller_buffer() {
        // 3 x 2 taken from a 3 x 4 row-major buffer: columns 1 and 3.
        let buffer: Vec<i32> = (0..12).collect();
        let v = MatrixView::new(&buffer[1..], 3, 2, 4, 2).unwrap();
        assert_eq!(v.to_row_vecs(), vec![vec![1, 3], vec![5, 7], vec![9, 11]]);
        assert_eq!(v.col(1).to_vec(), vec![3, 7, 11]);
        assert_eq!(v.transpose().row(0).to_vec(), vec![1, 5, 9]);
        assert_eq!(v.row_slice(0), None);
        assert!(!v.rows_are_slices());
        assert_eq!(v.get(2, 1), Some(&11));
        assert_eq!(v.get(3, 0), None);
        assert_eq!(v.to_matrix(), Matrix::from_rows(v.to_row_vecs()).unwrap());
        assert_eq!(format!("{v:?}"), "Matrix(3x2)[[1, 3], [5, 7], [9, 11]]");
        assert!(matches!(
            MatrixView::new(&buffer, 3, 4, 4, 2),
            Err(Error::Malformed { .. })
        ));
        // Empty shapes address nothing.
        let e = MatrixView::<i32>::new(&[], 4, 0, 9, 9).unwrap();
        assert_eq!(e.row(3).len(), 0);
        assert_eq!(e.row_slice(3), Some(&[][..]));
    }

    #[test]
    fn negative_strides() {
        // The rows of a 2 x 3 row-major buffer in reverse order, each reversed.
        let buffer = [1, 2, 3, 4, 5, 6];
        // SAFETY: the offsets 5 - 3 r - c for r < 2, c < 3 are all inside `buffer`.
        let v = unsafe { MatrixView::from_raw(buffer.as_ptr().add(5), 2, 3, -3, -1) };
        assert_eq!(v.to_row_vecs(), vec![vec![6, 5, 4], vec![3, 2, 1]]);
        assert_eq!(v.row(1).stride(), -1);
        assert_eq!(v.row(0).as_slice(), None);
        assert_eq!(
            v.col(2).iter().rev().copied().collect::<Vec<_>>(),
            vec![1, 4]
        );
    }
}
