//! # dpl — a data-parallel language embedded in Rust
//!
//! Mark a function `#[parallel]` and write its body with data-parallel primitives (`map`,
//! `gather`, `reduce`, `scan`, `filter`, `sort`, `stencil`, ...). At build time the macro
//! lowers the body into dpl's IR, type-checks it, fuses chains of primitives into single
//! loops and generates the code of every *place* it can run on; at run time the call runs
//! on the current [`Place`], with the same results everywhere.
//!
//! ```
//! use dpl::prelude::*;
//!
//! #[parallel]
//! fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
//!     map(|xi, yi| a * xi + yi, x, y)
//! }
//!
//! /// One fused loop: no temporary for the gather or the map.
//! #[parallel]
//! fn gathered_energy(x: &[f32], idx: &[u32]) -> f64 {
//!     sum(map(|v| (v * v) as f64, gather(x, idx)))
//! }
//!
//! assert_eq!(saxpy(2.0, &[1.0, 2.0], &[10.0, 20.0]), vec![12.0, 24.0]);
//! let on_one_thread = with_place(Place::Seq, || gathered_energy(&[1.0, 2.0], &[1, 1, 0]));
//! assert_eq!(on_one_thread, 9.0);
//! ```
//!
//! ## The language
//!
//! A body is an expression over the parameters: `let` bindings (with tuple patterns),
//! closures (inline or bound with `let`, capturing what they use), `if`/`else`
//! expressions, arithmetic, comparison, logical and bitwise operators (integer arithmetic
//! wraps), `as` casts, indexing `x[i]`, tuples, scalar math (`v.sqrt()`, `f64::exp(v)`, ...)
//! and constants (`f32::MAX`, `std::f64::consts::PI`). The primitives are documented one
//! per page in [`primitives`], each with its form, meaning, errors and an example. Anything
//! outside the language is a compile error that points at it and says what to write
//! instead; every error of a body is reported at once.
//!
//! ## Places
//!
//! | place | runs on | feature |
//! |---|---|---|
//! | [`Place::Cpu`] | every core, through rayon (the default) | `cpu` (default) |
//! | [`Place::Seq`] | one thread: the sequential reference | always |
//! | [`Place::Gpu`] | an NVIDIA GPU, through the CUDA driver loaded at run time | `cuda` |
//! | [`Place::Sim`] | the generated GPU code on dpl's PTX simulator (no GPU needed) | `sim` |
//! | [`Place::Mpi`] | every rank of an MPI job, each on its block of the data | `mpi` |
//!
//! [`with_place`] sets the place for a scope of the calling thread, `DPL_PLACE` (`cpu`,
//! `seq`, `gpu`, `gpu:N`, `sim`, `mpi`) for the process; [`current_place`] and
//! [`available_places`] tell what is in force and what is built. Asking for a place whose
//! backend is not built is a clear error. dpl reports through the `log` crate and never
//! prints.
//!
//! ## Data
//!
//! Parameters are scalars, slices and `&Vec`s, [`Nested`] (ragged rows: flat values and
//! row offsets), [`Matrix`] (uniform rows with any strides; [`MatrixView`] is one over a
//! buffer the caller keeps), [`Seq`] (a sequence that knows where it is: a result left on
//! a GPU stays there for the next call), `ndarray` arrays and views (feature `ndarray`)
//! and tuples of them; results are scalars, `Vec`s, `Nested`, `Matrix`, `Seq`, `ndarray`'s
//! `Array1`/`Array2` and tuples. Element types are the scalar types and tuples of them.
//! Every constructor validates its invariants and reports a violation as
//! [`Error::Malformed`].
//!
//! ## Errors
//!
//! A contract violation at run time (sequences of different lengths, an index out of
//! range, `min` of an empty sequence, a `permute` that is not a permutation, integer `/`
//! or `%` by zero) panics with a message naming the primitive and the source location —
//! or, when the function is declared `-> Result<T, dpl::Error>`, is returned as `Err`
//! (the body is written exactly as for `T`). See [`Error`].
//!
//! ## Features
//!
//! | feature | adds |
//! |---|---|
//! | `cpu`, `mm` (default) | the CPU backend; `dpl::mm`, the Matrix Market reader |
//! | `cuda`, `sim` | the GPU code generator and [`Place::Gpu`] / [`Place::Sim`] |
//! | `mpi` | [`Place::Mpi`] and `dpl::mpi` (needs an MPI library) |
//! | `serde` | `Serialize`/`Deserialize` for [`Nested`], [`Matrix`], [`Seq`] |
//! | `sprs`, `nalgebra-sparse`, `faer` | `dpl::sparse::SparseRows`: those crates' sparse matrices as [`Nested`] rows |
//! | `ndarray` | `ArrayView1`/`&Array1` and `ArrayView2`/`&Array2` parameters (read in place with their strides) and `Array1`/`Array2` results; `dpl::ndarray` |
//!
//! With the default features no GPU code generator, simulator, CUDA, MPI or serde crate is
//! compiled. The repository's README describes the places, the schedules of nested code
//! and the measurements; `ARCHITECTURE.md` says how the compiler is built.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod data;
pub use data::{Matrix, MatrixRows, MatrixView, Nested, RowView, RowViewIter, Rows, Seq};
#[cfg(any(feature = "cuda", feature = "sim"))]
#[doc(hidden)]
pub mod gpu;
#[cfg(feature = "mm")]
#[cfg_attr(docsrs, doc(cfg(feature = "mm")))]
pub mod mm;
#[cfg(feature = "mpi")]
#[cfg_attr(docsrs, doc(cfg(feature = "mpi")))]
pub mod mpi;
#[doc(hidden)]
pub mod nd;
#[cfg(not(any(feature = "cuda", feature = "sim")))]
mod no_gpu;
mod place;
pub mod primitives;
pub mod scalar;
#[cfg(any(feature = "sprs", feature = "nalgebra-sparse", feature = "faer"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "sprs", feature = "nalgebra-sparse", feature = "faer")))
)]
pub mod sparse;

/// The 16-bit float types, scalar types of `#[parallel]` code like `f32` (the `half`
/// crate's): operations on them compute in `f32` and round once, on every place.
pub use dpl_core::float16::{bf16, f16};
pub use dpl_core::run::Transfers;
pub use dpl_core::run::{Error, Location, Place};
pub use dpl_macros::{inspect, parallel};
#[cfg(feature = "sim")]
#[cfg_attr(docsrs, doc(cfg(feature = "sim")))]
pub use gpu::{KernelProfile, sim_profile};
/// The `ndarray` crate dpl reads and returns (feature `ndarray`): `#[parallel]` functions
/// take `ArrayView1<T>` / `&Array1<T>` and `ArrayView2<T>` / `&Array2<T>` parameters and
/// return `Array1<T>` and `Array2<T>`.
#[cfg(feature = "ndarray")]
#[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
pub use ndarray;
pub use place::{available_places, current_place, default_place, with_place};
pub use scalar::{Float, Int, Num, Scalar};

/// Everything a `#[parallel]` user needs: `use dpl::prelude::*;`.
pub mod prelude {
    #[cfg(feature = "mm")]
    pub use crate::mm::CsrExt as _;
    pub use crate::{
        Error, Float, Int, Matrix, Nested, Num, Place, Scalar, Seq, bf16, f16, parallel, with_place,
    };
}

/// Items used by generated code. Not a public API: names and signatures change without
/// notice.
#[doc(hidden)]
pub mod __private {
    #[cfg(any(feature = "cuda", feature = "sim"))]
    pub use crate::gpu;
    pub use crate::nd;
    pub use crate::place::{dispatch_place as place, gpu_dispatch, unavailable};
    pub use crate::scalar::{retype, same};
    pub use dpl_core::run::{Error, Location, Place};
    pub use dpl_core::{float16, nan};
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

/// Waits until the work queued on `place`'s device has finished. A call on `Place::Gpu`
/// queues its kernels and returns without waiting when its result stays on the device (a
/// [`Seq`]); reading that result back, or any call that needs a value from the device,
/// waits by itself. This is for timing such calls, or for handing their device buffers
/// (`dpl::gpu::device_buffers`) to code that does not queue behind them. Nothing to wait for
/// on the other places (`Place::Sim` runs its kernels during the call). An error when a
/// queued kernel failed on the device.
///
/// ```
/// dpl::synchronize(dpl::Place::Cpu).unwrap();
/// ```
pub fn synchronize(place: Place) -> Result<(), Error> {
    #[cfg(any(feature = "cuda", feature = "sim"))]
    return gpu::synchronize(place);
    #[cfg(not(any(feature = "cuda", feature = "sim")))]
    {
        let _ = place;
        Ok(())
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
    /// Whether the function does much work per element of its data (costly elements, a
    /// sort, a loop at the top level): on a GPU found by default rather than asked for, its
    /// calls run there even on host data; other functions' calls run there only with data
    /// already on the device (see [`Place`], "Placement by default").
    pub compute_bound: bool,
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
