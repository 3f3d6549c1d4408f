//! The data types of dpl: [`Nested`] (ragged sequences of sequences), [`Matrix`] (uniform
//! 2-D sequences with explicit strides, whose rows are [`RowView`]s) and [`Seq`] (owned
//! sequences that know their place).
//!
//! Together with slices and `Vec`s these are the types a `#[parallel]` function takes and
//! returns. Each validates its invariants on construction and reports a violation as
//! [`Error::Malformed`](crate::Error::Malformed); after that, reading a row or an element is
//! cheap and never fails silently (out-of-range indices panic with the index and the length,
//! or return `None` from the `get` methods).

mod matrix;
mod nested;
mod seq;

pub use matrix::{Matrix, MatrixRows, RowView, RowViewIter};
pub use nested::{Nested, Rows};
pub use seq::Seq;
