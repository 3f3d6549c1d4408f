//! `dpl-mpi`: `Place::Mpi`, the distributed backend of dpl.
//!
//! The same `#[parallel]` functions run SPMD over the ranks of an MPI job: every rank holds
//! one block of each global sequence, loops run on the local blocks with the CPU backend's
//! fused code, and communication is inserted where a value or an element of another rank
//! is needed. The design (what each primitive communicates, where errors are agreed, how
//! blocks and global indices are represented at run time) is in this crate's README.
//!
//! * [`lower`] and [`codegen`] (feature `codegen`, linked by the proc macro): the
//!   distributed lowering of a fused function and the Rust it becomes.
//! * [`rt`] (feature `runtime`, linked by the facade's feature `mpi`): MPI set-up, the
//!   per-call context with error agreement, and one function per communication pattern,
//!   all on rsmpi's collectives.
#![deny(missing_docs)]

#[cfg(feature = "codegen")]
pub mod codegen;
#[cfg(feature = "codegen")]
pub mod lower;
#[cfg(feature = "runtime")]
pub mod rt;
