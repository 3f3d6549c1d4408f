//! Test data for dpl's tests, benches and examples (not published): [`SplitMix64`], the one
//! deterministic random generator they all draw from (with [`mix`], its output function),
//! [`sparse`], generated sparse matrices and SpMV inputs, [`programs`], random typed IR
//! programs for differential testing, [`order`], an oracle of dpl's order of reduction,
//! [`in_pools`], which runs a check under several rayon thread counts, and [`fake_cuda`],
//! the stand-in CUDA driver library for tests without a GPU. The data is a function of its
//! seed: the same on every run and every machine.
#![deny(missing_docs)]

pub mod fake_cuda;
pub mod order;
mod pools;
pub mod programs;
mod rng;
pub mod sparse;

pub use pools::in_pools;
pub use rng::{SplitMix64, mix};
