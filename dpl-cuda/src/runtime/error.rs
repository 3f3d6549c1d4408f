//! What can go wrong in a run besides the program's own errors (an index out of range, a
//! division by zero, ... : the [`Error`]s the interpreter reports too): the device, the
//! arguments, sizes, and internal errors. Each is reported as [`Error::Device`] with its
//! message.

use dpl_core::ir::{Origin, Type};
use dpl_core::run::{Error, Location};

use crate::plan::PlanError;

/// A failure of a run that is not the program's own error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The driver failed; its message.
    #[error("{0}")]
    Driver(String),
    /// A call with the wrong number of arguments.
    #[error("`{name}` takes {params} argument(s), {given} given")]
    ArgumentCount {
        /// The function.
        name: String,
        /// Its parameters.
        params: usize,
        /// The arguments given.
        given: usize,
    },
    /// An argument that failed as `message` says (a nested sequence's parts).
    #[error("argument %{var}: {message}")]
    Argument {
        /// The parameter.
        var: u32,
        /// What is wrong.
        message: String,
    },
    /// A host value that is not of its parameter's type.
    #[error("argument %{var} must be {ty}")]
    ArgumentType {
        /// The parameter.
        var: u32,
        /// Its type.
        ty: Type,
    },
    /// A device sequence given for a parameter of another type.
    #[error("argument %{var} must be {ty}, a device sequence of [{elem}] was given")]
    DeviceArgument {
        /// The parameter.
        var: u32,
        /// Its type.
        ty: Type,
        /// The sequence's element type.
        elem: Type,
    },
    /// A matrix given for a parameter that is not `[[T]]`.
    #[error("argument %{var}: a matrix was given for a parameter of type {ty}")]
    MatrixParameter {
        /// The parameter.
        var: u32,
        /// Its type.
        ty: Type,
    },
    /// A matrix whose storage is not a sequence of the rows' element type.
    #[error("argument %{var}: the matrix storage must be {flat}")]
    MatrixStorage {
        /// The parameter.
        var: u32,
        /// The storage's type.
        flat: Type,
    },
    /// A matrix whose shape and strides reach past its storage.
    #[error(
        "argument %{var}: a {rows} x {cols} matrix with strides ({row_stride}, \
         {col_stride}) spans {extent} elements, its storage holds {stored}"
    )]
    MatrixExtent {
        /// The parameter.
        var: u32,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// Elements between rows.
        row_stride: usize,
        /// Elements between a row's elements.
        col_stride: usize,
        /// Elements spanned.
        extent: u128,
        /// Elements stored.
        stored: usize,
    },
    /// A nested sequence given for a parameter that is not `[[T]]`.
    #[error("a nested sequence was given for a parameter of type {0}")]
    NestedParameter(Type),
    /// Nested values of the wrong element type.
    #[error("the values of a nested sequence must be {expected}, {given} was given")]
    NestedValues {
        /// The rows' element type.
        expected: Type,
        /// The values' type.
        given: Type,
    },
    /// Nested offsets that are not `usize`.
    #[error("the offsets of a nested sequence must be usize, {0} was given")]
    NestedOffsetType(Type),
    /// No offsets at all.
    #[error("a nested sequence needs rows + 1 offsets, none was given")]
    NoOffsets,
    /// Host offsets that do not describe the values.
    #[error("malformed nested sequence: {0}")]
    Malformed(Malformed),
    /// Device offsets whose ends do not describe the values.
    #[error(
        "device offsets run from {first} to {last}, expected 0 to {total} (the number of \
         values)"
    )]
    DeviceOffsets {
        /// The first offset.
        first: u64,
        /// The last offset.
        last: u64,
        /// The number of values.
        total: usize,
    },
    /// Host columns whose sizes do not match their element type and length.
    #[error("{cols} host column(s) of {bytes} bytes do not hold {len} element(s) of {elem}")]
    Columns {
        /// Columns given.
        cols: usize,
        /// Their bytes in all.
        bytes: usize,
        /// Elements claimed.
        len: usize,
        /// Their type.
        elem: Type,
    },
    /// Host offsets given as columns of another type.
    #[error("offsets must be usize, {0} was given")]
    OffsetColumns(Type),
    /// A sequence longer than a primitive's kernels can index.
    #[error("{}: {len} elements at {at}; its GPU kernels take at most {max}", .origin.name())]
    TooLong {
        /// The primitive.
        origin: Origin,
        /// The length.
        len: u64,
        /// Where.
        at: Location,
        /// The most its kernels take.
        max: u64,
    },
    /// Per-thread temporaries whose size overflows.
    #[error("per-thread temporary too large")]
    ScratchTooLarge,
    /// A count that overflows.
    #[error("count overflow")]
    CountOverflow,
    /// A grid of more blocks than a launch takes.
    #[error("grid of {0} blocks")]
    Grid(u64),
    /// An embedded program that does not decode (written by another version of dpl).
    #[error("`{name}`: {error}")]
    Decode {
        /// The function.
        name: String,
        /// Why.
        error: String,
    },
    /// A plan that does not fit its program ([`crate::plan::Plan::verify`]).
    #[error("internal error of the GPU executor: invalid plan: {0}")]
    Plan(#[from] PlanError),
    /// A bug in dpl: what the executor found that cannot happen.
    #[error("internal error of the GPU executor: {0}")]
    Internal(String),
}

/// How host row offsets fail to describe the values of a nested sequence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// `offsets[0]` is not 0 (`None`: there is none).
    #[error("offsets[0] is {0:?}, expected 0")]
    First(Option<u64>),
    /// The last offset is not the number of values.
    #[error("the last offset is {last}, there are {total} values")]
    Last {
        /// The last offset.
        last: u64,
        /// The number of values.
        total: usize,
    },
    /// Offsets that decrease.
    #[error("offsets decrease at row {row}: {from} > {to}")]
    Decrease {
        /// The row.
        row: usize,
        /// Its start.
        from: u64,
        /// Its end.
        to: u64,
    },
}

impl From<RunError> for Error {
    fn from(e: RunError) -> Error {
        Error::Device(e.to_string())
    }
}

/// An internal error (a bug in dpl) saying what was found.
pub(super) fn internal(msg: impl Into<String>) -> Error {
    RunError::Internal(msg.into()).into()
}

/// Whether a driver failure of an allocation says that the device memory is exhausted
/// (`CUDA_ERROR_OUT_OF_MEMORY` from CUDA, "out of device memory" from the simulator).
pub(super) fn is_out_of_memory(e: &str) -> bool {
    let e = e.to_ascii_lowercase();
    e.contains("out of memory") || e.contains("out_of_memory") || e.contains("out of device memory")
}

/// A driver failure.
pub(super) fn dev(e: String) -> Error {
    RunError::Driver(e).into()
}
