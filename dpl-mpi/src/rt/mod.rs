//! The run time of `Place::Mpi`: what the code generated for it calls.
//!
//! * [`init`] starts MPI once (the guard [`Mpi`] finalises it when dropped) and installs
//!   the panic hook that aborts the job when a rank panics outside dpl's agreed errors.
//! * [`call`] / [`call_or_panic`] run one `#[parallel]` call with a [`Call`] context: the
//!   communicator, this rank, the number of ranks, and the error agreement that every
//!   communication point starts with (see the crate's README, "Errors").
//! * One function per communication pattern: layouts ([`layout`], [`balanced`]),
//!   reductions ([`reduce`]), scans ([`scan`], [`exclusive_scan`]), windows for halos and
//!   realignments ([`window`], [`window_rows`]), whole copies ([`all_gather`],
//!   [`all_gather_rows`]), single elements ([`element`]), gathers ([`gather`]), scatters
//!   ([`scatter`], [`scatter_reduce`], [`permute`]), elements named by index rows
//!   ([`fetch_indexed`]), sample sorts ([`sort`], [`sort_by_key`]) and replicated
//!   results ([`block_of`]). Local work is always done by dpl-cpu's helpers; MPI's
//!   collectives (through rsmpi) do all the moving.
//! * Helpers for programs: [`block`], [`scatter_from_root`], [`gather_to_root`],
//!   [`gather_to_all`], and the traffic counters ([`traffic`]).
//!
//! With one rank every function takes a path without any MPI call.

mod call;
mod env;
mod fetch;
mod gather;
mod io;
mod layout;
mod reduce;
mod scatter;
mod sort;
mod wire;

pub use call::{Call, Plan, Traffic, call, call_or_panic, reset_traffic, traffic};
pub use env::{Mpi, init, is_running, rank, size};
pub use fetch::{
    FromRows, Rows, all_gather, all_gather_rows, block_of, block_of_rows, element, window,
    window_rows,
};
pub use gather::{fetch_indexed, gather};
pub use io::{gather_to_all, gather_to_root, scatter_from_root};
pub use layout::{balanced, block, layout, offset, owner, param_layouts};
pub use reduce::{exclusive_scan, reduce, scan};
pub use scatter::{permute, scatter, scatter_reduce};
pub use sort::{sort, sort_by_key};
pub use wire::Wire;
