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
//! [`primitives`] documents each primitive (its form, meaning, errors and an example);
//! the repository's README describes the language, the places and the data types, and
//! `ARCHITECTURE.md` how the compiler is built.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod data;
pub use data::{Matrix, MatrixRows, Nested, RowView, RowViewIter, Rows, Seq};
#[cfg(any(feature = "cuda", feature = "sim"))]
#[doc(hidden)]
pub mod gpu;
#[cfg(feature = "mm")]
#[cfg_attr(docsrs, doc(cfg(feature = "mm")))]
pub mod mm;
#[cfg(feature = "mpi")]
#[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
pub mod mpi;
#[cfg(not(any(feature = "cuda", feature = "sim")))]
mod no_gpu;
mod place;
pub mod primitives;
#[cfg(any(feature = "sprs", feature = "nalgebra-sparse", feature = "faer"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "sprs", feature = "nalgebra-sparse", feature = "faer")))
)]
pub mod sparse;

pub use dpl_core::run::Transfers;
pub use dpl_core::run::{Error, Location, Place};
pub use dpl_macros::{inspect, parallel};
#[cfg(feature = "sim")]
#[cfg_attr(docsrs, doc(cfg(feature = "sim")))]
pub use gpu::{KernelProfile, sim_profile};
pub use place::{available_places, current_place, default_place, with_place};

/// Everything a `#[parallel]` user needs: `use dpl::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "mm")]
    pub use crate::mm::CsrExt as _;
    pub use crate::{Error, Matrix, Nested, Place, Seq, parallel, with_place};
}

/// Items used by generated code. Not a public API: names and signatures change without
/// notice.
#[doc(hidden)]
pub mod __private {
    #[cfg(any(feature = "cuda", feature = "sim"))]
    pub use crate::gpu;
    pub use crate::place::{dispatch_place as place, unavailable};
    pub use dpl_core::run::{Error, Location, Place};
    pub use dpl_cpu::{heavy, rt, seq};
    #[cfg(feature = "mpi")]
    pub use dpl_mpi::rt as mpi;
}

/// The transfers between the host and `place` so far (zero for places without a device,
/// for a device that was never used, and in a build without the `cuda` and `sim`
/// features). Take two readings and subtract to measure a stretch of code:
///
/// ```
/// let before = dpl::transfers(dpl::Place::Sim);
/// // ... calls on Place::Sim ...
/// let moved = dpl::transfers(dpl::Place::Sim).to_device_bytes - before.to_device_bytes;
/// assert_eq!(moved, 0);
/// ```
pub fn transfers(place: Place) -> Transfers {
    #[cfg(any(feature = "cuda", feature = "sim"))]
    return gpu::transfers(place);
    #[cfg(not(any(feature = "cuda", feature = "sim")))]
    {
        let _ = place;
        Transfers::default()
    }
}

/// Whether `Place::Mpi` can run calls now (feature `mpi`, between `dpl::mpi::init` and the
/// drop of its guard).
fn mpi_running() -> bool {
    #[cfg(feature = "mpi")]
    return dpl_mpi::rt::is_running();
    #[cfg(not(feature = "mpi"))]
    false
}

/// What the compiler made of one `#[parallel]` function: the IR after each pass, the
/// generated CPU code and loop counts. Read it with [`inspect!`].
#[derive(Clone, Copy, Debug)]
pub struct Inspect {
    /// The function's name.
    pub name: &'static str,
    /// The IR after type inference (primitives as written).
    pub typed_ir: &'static str,
    /// The IR after normalization (combinators over index spaces, shape checks explicit).
    pub normalized_ir: &'static str,
    /// The IR after fusion (what the parallel backends compile).
    pub fused_ir: &'static str,
    /// The generated Rust for `Place::Cpu`.
    pub cpu_rust: &'static str,
    /// Loops (combinators) before fusion.
    pub loops_before_fusion: usize,
    /// Loops after fusion.
    pub loops: usize,
    /// Materialized intermediate sequences before fusion.
    pub temporaries_before_fusion: usize,
    /// Materialized intermediate sequences after fusion.
    pub temporaries: usize,
    /// Phases after fusion: groups of loops separated by global synchronization points.
    pub phases: usize,
    /// The PTX module generated for the GPU places (empty without the `sim`/`cuda`
    /// features, or when the GPU backend does not compile the function).
    pub ptx: &'static str,
    /// Why the GPU backend did not compile the function (empty when it did, or without
    /// the `sim`/`cuda` features).
    pub gpu_not_compiled: &'static str,
    /// Compute capabilities (`10 * major + minor`) of the cubins embedded next to the PTX
    /// (see the `dpl-build` crate); empty when only PTX is embedded.
    pub cubins: &'static [u32],
    /// The program each rank runs on `Place::Mpi`: the local IR (the fused loops over the
    /// rank's blocks) followed by its communication points, one per line (empty without
    /// the `mpi` feature, or when the function is not distributed).
    pub mpi_ir: &'static str,
    /// The generated Rust for `Place::Mpi` (empty without the `mpi` feature, or when the
    /// function is not distributed).
    pub mpi_rust: &'static str,
    /// Why the function does not run on `Place::Mpi` (empty when it does, or without the
    /// `mpi` feature).
    pub mpi_not_compiled: &'static str,
}
