//! The random programs of `dpl_testkit::programs` compiled as Rust (tests only, not
//! published): the build script runs each program through the pipeline and dpl-cpu's code
//! generator, as `#[parallel]` does, and this crate compiles the result. [`PROGRAMS`] holds,
//! for each seed, the program on `Place::Cpu` (its fused form on the parallel run time) and
//! on `Place::Seq` (its normalized form on the sequential one); [`REJECTED`] the seeds that
//! could not be compiled. `tests/seq_cpu.rs` runs them against the reference interpreter.
//!
//! The seeds are `DPL_RANDOM_RUST_FIRST..DPL_RANDOM_RUST_FIRST + DPL_RANDOM_RUST_PROGRAMS`
//! (0 and 40 unless set, the slice of the normal test command); `cargo xtask fuzz` compiles
//! and runs 10^4 of them in batches.

/// A program's signature on every place: `$a`, `$b`, `$k` and `$rows` of
/// `dpl_testkit::programs::PARAMS`, and its result.
pub type Entry = fn(&[i64], &[i64], i64, &dpl::Nested<i64>) -> Result<(Vec<i64>, i64), dpl::Error>;

/// One random program, compiled for both CPU places.
pub struct Program {
    /// Its seed: `dpl_testkit::programs::program(seed)` is its IR.
    pub seed: u64,
    /// On `Place::Cpu`.
    pub cpu: Entry,
    /// On `Place::Seq`.
    pub seq: Entry,
}

/// The generated functions (`cpu_<seed>`, `seq_<seed>`) and the tables.
#[allow(
    missing_docs,
    unused_variables,
    unused_parens,
    unused_braces,
    unused_unsafe,
    unused_mut,
    non_snake_case,
    clippy::all,
    clippy::undocumented_unsafe_blocks
)]
mod generated {
    use super::Program;
    include!(concat!(env!("OUT_DIR"), "/programs.rs"));
}

pub use generated::{PROGRAMS, REJECTED};
