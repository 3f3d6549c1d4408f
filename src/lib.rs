//! # dpl — a data-parallel language embedded in Rust
//!
//! Mark a function `#[parallel]` and write its body with data-parallel primitives (`map`,
//! `gather`, `reduce`, `scan`, `filter`, ...). The macro compiles the body at build time;
//! the call runs on the current [`Place`]: all CPU cores (rayon) by default, or the
//! sequential reference implementation.
//!
//! ```
//! use dpl::prelude::*;
//!
//! #[parallel]
//! fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
//!     map(|xi, yi| a * xi + yi, x, y)
//! }
//!
//! assert_eq!(saxpy(2.0, &[1.0, 2.0], &[10.0, 20.0]), vec![12.0, 24.0]);
//! ```
//!
//! See the repository's SPEC.md-derived documentation in the README for the language, the
//! primitives and the places.
#![deny(missing_docs)]

mod data;
pub use data::{Matrix, MatrixRows, Nested, RowView, RowViewIter, Rows, Seq};
pub mod mm;
mod place;

pub use dpl_core::run::{Error, Location, Place};
pub use dpl_macros::parallel;
pub use place::{current_place, default_place, with_place};

/// Everything a `#[parallel]` user needs: `use dpl::prelude::*;`.
pub mod prelude {
    pub use crate::{Error, Place, parallel, with_place};
}

/// Items used by generated code. Not a public API: names and signatures change without
/// notice.
#[doc(hidden)]
pub mod __private {
    pub use crate::place::{current_place as place, unavailable};
    pub use dpl_core::run::{Error, Location, Place};
    pub use dpl_cpu::rt;
}
