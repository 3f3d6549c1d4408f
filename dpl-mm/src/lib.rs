//! A Matrix Market reader and the sparse matrices it gives: [`CooMatrix`] (triplets) and
//! [`Csr`] (compressed sparse rows, with a sequential SpMV reference). The `dpl` crate
//! re-exports it as `dpl::mm` (feature `mm`, on by default) and adds the conversions of a
//! [`Csr`] to its data types.
//!
//! # Reading
//!
//! [`read`] (a file) and [`parse`] (text) accept the Matrix Market exchange format
//! (<https://math.nist.gov/MatrixMarket/formats.html>):
//!
//! ```text
//! %%MatrixMarket matrix coordinate real general
//! % comment lines start with '%'
//! 3 3 4            <- rows cols stored-entries   (array format: rows cols)
//! 1 1 2.0          <- row col value, 1-based      (pattern: row col)
//! 2 1 -1.5
//! 3 3 1e-3
//! 1 3 7
//! ```
//!
//! * format `coordinate` or `array` (dense, column-major, one or more values per line);
//! * field `real` (also `double`; Fortran exponents like `1.5D+02` are accepted), `integer`
//!   or `pattern` (every stored entry is 1.0; coordinate only);
//! * symmetry `general`, `symmetric` or `skew-symmetric`. Symmetric files store the lower
//!   triangle (row >= column) and every off-diagonal entry is mirrored on reading (negated
//!   for skew-symmetric, whose files store the strict lower triangle). An entry above the
//!   diagonal in such a file is an error rather than silently doubled.
//!
//! `complex`, `hermitian` and `vector` are rejected with [`MmError::Unsupported`]. Any other
//! malformed input gives [`MmError::Parse`] with the 1-based line number; a file with fewer
//! or more entries than its size line announces is an error too.
//!
//! The result is a [`CooMatrix`] (0-based triplets, after symmetric expansion, in file
//! order, duplicates kept); [`CooMatrix::to_csr`] sorts it into a [`Csr`] (duplicates summed).
//!
//! ```
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n\
//!             3 3 4\n1 1 4\n2 1 -1\n2 2 4\n3 3 4\n";
//! let csr = dpl_mm::parse(text).unwrap().to_csr();
//! assert_eq!((csr.rows(), csr.cols(), csr.nnz()), (3, 3, 5)); // (2,1) mirrored to (1,2)
//! assert_eq!(csr.row(1), (&[0u32, 1][..], &[-1.0, 4.0][..]));
//! assert_eq!(csr.spmv(&[1.0, 1.0, 1.0]), vec![3.0, 3.0, 4.0]);
//! ```
#![deny(missing_docs)]

mod error;
mod read;
mod sparse;

pub use error::MmError;
pub use read::{Field, Format, Symmetry, parse, read};
pub use sparse::{CooMatrix, Csr};

/// The most columns a [`Csr`] can have: column indices are `u32`.
const MAX_COLS: usize = u32::MAX as usize;
