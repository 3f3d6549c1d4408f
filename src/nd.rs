//! How `#[parallel]` functions read `ndarray` arrays and `MatrixView`s and return `ndarray`
//! arrays (the `ndarray` parts need the feature `ndarray`).
//!
//! A parameter of type `ArrayView1<T>` or `&Array1<T>` is a `[T]` in the body. When the
//! body only reads its elements one by one (`x[i]`, and every primitive that reads
//! element `i` of its input: `map`, `zip`, `reduce`, `scan`, `sort`, ... ) it is read in
//! place on the CPU places, with its stride (a column, a reversed view: a [`RowView`]),
//! the body being generated once for a contiguous view and once for a strided one; the
//! GPU places upload the addressed elements, and `Place::Mpi` copies them. A body that
//! passes the sequence on whole (as a `scatter` destination, a result, a loop's initial
//! value) reads it as a slice: in place when contiguous and in order, else copied once. A parameter of type `ArrayView2<T>` or
//! `&Array2<T>` is a `[[T]]` whose elements are the rows, read in place with its strides
//! (any layout: row-major, column-major, a slice of a bigger array, reversed axes) through
//! a [`MatrixView`]: nothing is copied on the CPU places, the GPU places upload the
//! addressed elements, and `Place::Mpi` copies the rank's block into a `Matrix` once per
//! call (its realignments build windows of the parameter's own type). A result of type `Array1<T>` is the `Vec<T>` the function computes
//! (not copied); `Array2<T>` is a result whose rows all have one length (a ragged result is
//! the usual length-mismatch error, as for `Matrix<T>`), row-major, not copied; like a
//! `Matrix<T>` result, one without rows is `0 x 0` (no row gives its width).
//!
//! The items here are used by generated code; the API is the types in the signature.

use std::borrow::Cow;

use crate::Matrix;
use crate::data::{MatrixView, RowView};

/// A parameter read as a slice (an `ndarray` 1-D array or view). Not part of the API.
#[doc(hidden)]
pub trait Flat<T: Clone> {
    /// The elements in order: borrowed when they are contiguous, else copied.
    fn __dpl_flat(&self) -> Cow<'_, [T]>;
}

/// A parameter read in place with its stride (an `ndarray` 1-D array or view). Not part of
/// the API.
#[doc(hidden)]
pub trait Strided<T> {
    /// The elements, in place.
    fn __dpl_strided(&self) -> RowView<'_, T>;
}

impl<T: Clone> Flat<T> for RowView<'_, T> {
    fn __dpl_flat(&self) -> Cow<'_, [T]> {
        match self.as_slice() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(self.to_vec()),
        }
    }
}

/// A parameter read as a [`MatrixView`] (an `ndarray` 2-D array or view, or a
/// `MatrixView`). Not part of the API.
#[doc(hidden)]
pub trait View2<T> {
    /// The matrix, in place.
    fn __dpl_matrix(&self) -> MatrixView<'_, T>;
}

/// A `Matrix` parameter as `Place::Mpi` reads it: a `Matrix` as it is, a [`MatrixView`]
/// copied into one (the rank's block; dpl-mpi builds realigned windows of a parameter's own
/// type, which a view cannot own). Not part of the API.
#[doc(hidden)]
pub trait AsMatrix<T: Clone> {
    /// The matrix, borrowed when it is one.
    fn __dpl_as_matrix(&self) -> Cow<'_, Matrix<T>>;
}

impl<T: Clone> AsMatrix<T> for Matrix<T> {
    fn __dpl_as_matrix(&self) -> Cow<'_, Matrix<T>> {
        Cow::Borrowed(self)
    }
}

impl<T: Clone> AsMatrix<T> for MatrixView<'_, T> {
    fn __dpl_as_matrix(&self) -> Cow<'_, Matrix<T>> {
        Cow::Owned(self.to_matrix())
    }
}

impl<T> View2<T> for MatrixView<'_, T> {
    fn __dpl_matrix(&self) -> MatrixView<'_, T> {
        *self
    }
}

#[cfg(feature = "ndarray")]
mod arrays {
    use std::borrow::Cow;

    use ndarray::{Array1, Array2, ArrayRef, ArrayView2, Ix1, Ix2};

    use super::{Flat, Strided, View2};
    use crate::Matrix;
    use crate::data::MatrixView;

    impl<T: Clone> Flat<T> for ArrayRef<T, Ix1> {
        fn __dpl_flat(&self) -> Cow<'_, [T]> {
            match self.as_slice() {
                Some(s) => Cow::Borrowed(s),
                None => Cow::Owned(self.iter().cloned().collect()),
            }
        }
    }

    impl<T> Strided<T> for ArrayRef<T, Ix1> {
        fn __dpl_strided(&self) -> crate::data::RowView<'_, T> {
            let n = self.len();
            let stride = self.strides()[0];
            // SAFETY: an ndarray array addresses element `j` at `as_ptr() + j * stride`,
            // initialised and readable while it is borrowed: the one row of this 1 x n
            // view is those elements.
            unsafe { MatrixView::from_raw(self.as_ptr(), 1, n, 0, stride).row_unchecked(0) }
        }
    }

    impl<T> View2<T> for ArrayRef<T, Ix2> {
        fn __dpl_matrix(&self) -> MatrixView<'_, T> {
            let (rows, cols) = self.dim();
            let strides = self.strides();
            // SAFETY: an ndarray array addresses element (r, c) at `as_ptr() + r *
            // strides[0] + c * strides[1]`, initialised and readable while it is borrowed.
            unsafe { MatrixView::from_raw(self.as_ptr(), rows, cols, strides[0], strides[1]) }
        }
    }

    impl<'a, T> From<ArrayView2<'a, T>> for MatrixView<'a, T> {
        /// The view's elements in place, with its strides (no copy).
        ///
        /// ```
        /// use dpl::ndarray::{Array2, s};
        /// let a = Array2::from_shape_fn((3, 4), |(r, c)| 10 * r + c);
        /// let m = dpl::MatrixView::from(a.slice(s![.., 1..;2]));
        /// assert_eq!(m.to_row_vecs(), vec![vec![1, 3], vec![11, 13], vec![21, 23]]);
        /// ```
        fn from(a: ArrayView2<'a, T>) -> Self {
            let (rows, cols) = a.dim();
            let (rs, cs) = (a.strides()[0], a.strides()[1]);
            let ptr = a.as_ptr();
            // SAFETY: as in `__dpl_matrix`; the view's data lives for `'a`.
            unsafe { MatrixView::from_raw(ptr, rows, cols, rs, cs) }
        }
    }

    /// An `Array1<T>` result from the computed `Vec<T>` (not copied). Not part of the API.
    #[doc(hidden)]
    pub fn array1<T>(v: Vec<T>) -> Array1<T> {
        Array1::from_vec(v)
    }

    /// An `Array2<T>` result from the computed `Matrix<T>` (row-major: not copied). Not
    /// part of the API.
    #[doc(hidden)]
    pub fn array2<T: Clone>(m: Matrix<T>) -> Array2<T> {
        let m = if m.is_row_major() {
            m
        } else {
            m.to_row_major()
        };
        let (data, rows, cols, _, _) = m.into_parts();
        Array2::from_shape_vec((rows, cols), data)
            .expect("a row-major matrix has rows x cols elements")
    }
}

#[cfg(feature = "ndarray")]
pub use arrays::{array1, array2};
