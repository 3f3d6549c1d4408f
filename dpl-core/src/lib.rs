//! `dpl-core`: everything in dpl that does not depend on a target.
//!
//! The macro (`dpl-macros`) lowers a `#[parallel]` body into the IR of [`ir`]; the passes of
//! this crate then check and transform it, and the backends generate code from the result.
//!
//! ```text
//! lowered IR (Prim level)  --typeck-->  typed IR  --normalize-->  Soac level  --fuse-->  fused
//! ```
//!
//! * [`ir`] — the IR: arenas and handles, single assignment, explicit lambdas.
//! * [`float16`] — `f16` and `bf16`: how every place rounds to them.
//! * [`nan`] — the canonical NaN every float operation produces, on every place.
//! * [`ops`] — combining functions that apply a known operation to each scalar leaf
//!   (`+`, `min`, `&`, ...), and their identities.
//! * [`order`] — the one order in which reductions and scans combine their elements, on
//!   every place.
//! * [`run`] — the small run-time vocabulary shared by every backend: [`run::Place`],
//!   [`run::Error`].
#![deny(missing_docs)]

pub mod captures;
pub mod diag;
pub mod float16;
pub mod fuse;
pub mod interp;
pub mod ir;
pub mod nan;
pub mod normalize;
pub mod ops;
pub mod order;
pub mod phases;
pub mod pipeline;
pub mod ranges;
pub mod run;
pub mod schedule;
pub mod text;
pub mod typeck;
pub mod verify;
