//! `dpl-cpu`: the CPU backend of dpl.
//!
//! * [`rt`] (feature `runtime`) — the run-time helpers that generated code calls: parallel
//!   map, reduce, scan, filter, scatter, ... over an index space, built on rayon, each
//!   taking the fused element function as a closure that LLVM inlines.
//! * `codegen` (feature `codegen`) — turns dpl IR into Rust tokens calling [`rt`].
#![deny(missing_docs)]

#[cfg(feature = "codegen")]
pub mod codegen;
#[cfg(feature = "runtime")]
pub mod heavy;
#[cfg(feature = "runtime")]
pub mod rt;
#[cfg(feature = "runtime")]
pub mod seq;
