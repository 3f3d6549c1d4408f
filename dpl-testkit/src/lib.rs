//! Test data for dpl's tests, benches and examples (not published): [`SplitMix64`], the one
//! deterministic random generator they all draw from (and [`mix`], its output function), and [`sparse`], generated sparse
//! matrices and SpMV inputs. Everything here is a function of its seed, so the same data is
//! generated on every run and every machine.
#![deny(missing_docs)]

mod rng;
pub mod sparse;

pub use rng::{SplitMix64, mix};
