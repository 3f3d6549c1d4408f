//! The data types of dpl: [`Nested`] (ragged sequences of sequences), [`Matrix`] (uniform
//! 2-D sequences with explicit strides, whose rows are [`RowView`]s), [`MatrixView`] (the
//! same over a buffer the caller keeps) and [`Seq`] (owned sequences that know their
//! place).
//!
//! Together with slices and `Vec`s these are the types a `#[parallel]` function takes and
//! returns. Each validates its invariants on construction and reports a violation as
//! [`Error::Malformed`](crate::Error::Malformed); after that, reading a row or an element is
//! cheap and never fails silently (out-of-range indices panic with the index and the length,
//! or return `None` from the `get` methods).

/// Defines `$name<'a, T>`, the double-ended, exact-size iterator over positions
/// `0..len` of a source (`$field: $source`, a reference or a copyable view), yielding
/// `$get` for position `$i` (with `$s` bound to the source), and its `new(source, len)`.
macro_rules! position_iterator {
    ($(#[$doc:meta])* $name:ident<$a:lifetime>, $field:ident: $source:ty, $item:ty,
     |$s:ident, $i:ident| $get:expr) => {
        $(#[$doc])*
        pub struct $name<$a, T> {
            $field: $source,
            /// Next position from the front; `front <= back` always.
            front: usize,
            /// One past the next position from the back.
            back: usize,
        }

        impl<$a, T> $name<$a, T> {
            /// The iterator over positions `0..len` of `source`.
            fn new($field: $source, len: usize) -> Self {
                $name { $field, front: 0, back: len }
            }

            /// The item at position `i < len`.
            #[inline]
            fn at(&self, $i: usize) -> $item {
                let $s = self.$field;
                $get
            }
        }

        impl<T> Clone for $name<'_, T> {
            fn clone(&self) -> Self {
                $name { $field: self.$field, front: self.front, back: self.back }
            }
        }

        impl<$a, T> Iterator for $name<$a, T> {
            type Item = $item;

            #[inline]
            fn next(&mut self) -> Option<$item> {
                if self.front < self.back {
                    let item = self.at(self.front);
                    self.front += 1;
                    Some(item)
                } else {
                    None
                }
            }

            #[inline]
            fn size_hint(&self) -> (usize, Option<usize>) {
                let n = self.back - self.front;
                (n, Some(n))
            }

            #[inline]
            fn nth(&mut self, n: usize) -> Option<$item> {
                self.front = self.front.saturating_add(n).min(self.back);
                self.next()
            }
        }

        impl<T> DoubleEndedIterator for $name<'_, T> {
            #[inline]
            fn next_back(&mut self) -> Option<Self::Item> {
                if self.front < self.back {
                    self.back -= 1;
                    Some(self.at(self.back))
                } else {
                    None
                }
            }
        }

        impl<T> ExactSizeIterator for $name<'_, T> {}
        impl<T> std::iter::FusedIterator for $name<'_, T> {}

        impl<T: std::fmt::Debug> std::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_list().entries(self.clone()).finish()
            }
        }
    };
}

mod matrix;
mod nested;
mod seq;
#[cfg(feature = "serde")]
mod serde;
mod view;

pub use matrix::Matrix;
pub use nested::{Nested, Rows};
pub use seq::Seq;
pub use view::{MatrixRows, MatrixView, RowView, RowViewIter};

use std::sync::OnceLock;

use dpl_cpu::rt::Idx;

/// The bound behind `Nested::__indices_below` and `Matrix::__indices_below`: the shortest
/// sequence that every value of the data indexes, computed on first use (one pass) and kept
/// with the data; the owner replaces it by a fresh one whenever a value may change. Holds
/// `Some(max + 1)` (0 without values) when no value is negative and `max + 1` fits a
/// `usize`, `None` otherwise. Not part of the owner's value: equal to every other and
/// hashing to nothing, so derived `PartialEq`, `Eq` and `Hash` ignore it.
#[derive(Clone, Default)]
pub(crate) struct IndexBound(OnceLock<Option<usize>>);

impl IndexBound {
    /// Whether every one of `values` (the data this bound belongs to) is in `0..len`.
    pub(crate) fn below<T: Idx>(&self, values: &[T], len: usize) -> bool {
        self.0
            .get_or_init(|| {
                let (lo, hi) = values.iter().fold((0i128, -1i128), |(lo, hi), v| {
                    let v = v.value();
                    (lo.min(v), hi.max(v))
                });
                if lo < 0 {
                    None
                } else {
                    usize::try_from(hi + 1).ok()
                }
            })
            .is_some_and(|b| b <= len)
    }
}

impl PartialEq for IndexBound {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for IndexBound {}

impl std::hash::Hash for IndexBound {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}
