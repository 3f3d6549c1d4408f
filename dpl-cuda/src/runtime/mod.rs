//! The run time: executes a [`GpuProgram`]'s plan through a [`Driver`] ([`run`],
//! [`run_at`], [`run_resident`]), moves sequences between host and device as typed
//! columns ([`HostColumns`], [`upload_columns`], [`read_columns`]), and keeps the devices
//! of the GPU places ([`device`]) with their transfer counts ([`Counted`]) and, on the
//! simulator, profiles. It uses nothing of the code generator: only the program's data,
//! the data layout ([`crate::layout`]) and the drivers. `README.md` in this folder
//! describes it file by file.
//!
//! Arguments arrive as [`Input`]s: host values, or sequences as typed byte columns
//! ([`HostColumns`], one per scalar leaf; nested sequences as offsets plus columns,
//! [`NestedColumns`]) on the host or already on the device. The environment maps each
//! top-level variable to a host value (scalars and tuples, as [`Value`]s), a device
//! sequence (one buffer per scalar leaf of the element type, plus the length, and the row
//! offsets of a nested one), or a tuple of those. Scalar statements are evaluated with the
//! reference interpreter's own semantics (each one is run by [`dpl_core::interp::run`] as a
//! one-statement function), so host arithmetic cannot drift from the CPU backends.
//!
//! Failed checks inside kernels are kept in a 32-byte error record: word 0 holds the
//! bitwise negation of the smallest failing key (0: none), written with an atomic max.
//! After a [`Step::CheckErrors`](crate::plan::Step::CheckErrors) the executor reads it
//! before anything uses the checked launches' results: at once, unless only launches safe
//! on any data ([`Launch::any_data`](crate::plan::Launch::any_data)) come before the next
//! value the host needs (a reduction's scalar, a data-dependent size); then the record and
//! that value come back together ([`Driver::read_parts`]), one
//! round trip (a failed check leaves unspecified values, which only such launches may
//! see); reads of several parts (a flag and a value, a tuple) go the same way. The record
//! is zero until a check fails, so the driver may keep it zeroed between runs
//! ([`Driver::alloc_kept_zero`]). When the
//! record is set, it launches the kernels of
//! the checked group again in *report mode* (the report key parameter is that word), where
//! only the thread with that key writes its site and values (words 1-3), and turns them
//! into the [`Error`] the interpreter gives. Keys are element indices (then `len + i` for
//! the second stage of a combinator), so the reported failure is the one the sequential
//! reference reports first, whatever the schedule.

mod bind;
mod columns;
mod counted;
mod devices;
mod embedded;
mod error;
mod exec;
mod host;
mod io;
#[cfg(feature = "sim")]
mod profile;
#[cfg(all(test, feature = "sim", feature = "codegen"))]
mod tests;

use dpl_core::interp::Value;
use dpl_core::run::{Error, Location};

use crate::GpuProgram;
use crate::driver::Driver;

pub use columns::{HostColumns, download, read_columns, upload, upload_columns};
pub use counted::Counted;
#[cfg(feature = "sim")]
pub use devices::sim_memory_used;
pub use devices::{Device, NoDevice, device};
pub use embedded::Embedded;
pub use error::{Malformed, RunError};
pub use exec::run_resident;
pub use io::{
    Columns, DeviceNested, DeviceSeq, Input, MatrixStorage, NestedColumns, Output, StridedMatrix,
};
#[cfg(feature = "sim")]
pub use profile::{KernelProfile, profile};

/// Where errors are reported when no location table is given.
/// The location of errors when [`run`] is given no location table.
pub const UNKNOWN_LOCATION: Location = Location {
    file: "<dpl>",
    line: 0,
    column: 0,
};

/// Runs `program` on `args` (one [`Value`] per parameter); errors carry an unknown
/// location (see [`run_at`]).
pub fn run<D: Driver>(program: &GpuProgram, driver: &D, args: Vec<Value>) -> Result<Value, Error> {
    run_at(program, driver, args, &|_| UNKNOWN_LOCATION)
}

/// Runs `program` on `args`; `locate` maps a statement's span number to its source
/// location for error messages.
pub fn run_at<D: Driver>(
    program: &GpuProgram,
    driver: &D,
    args: Vec<Value>,
    locate: &dyn Fn(u32) -> Location,
) -> Result<Value, Error> {
    let args = args.into_iter().map(Input::Host).collect();
    match run_resident(program, driver, args, false, locate)? {
        Output::Host(v) => Ok(v),
        _ => Err(error::internal("a device result was not asked for")),
    }
}
