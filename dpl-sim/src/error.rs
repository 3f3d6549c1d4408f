//! Errors of the simulator: one enum for loading, launching and executing PTX.

use std::fmt;

/// The result type of every fallible operation of the simulator.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong while a kernel was running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// A load, store or atomic touched memory outside every allocation (or outside the
    /// shared/local/param window it addressed).
    OutOfBounds,
    /// An access whose address is not a multiple of its size.
    Misaligned,
    /// Threads of one block wait at different barrier instructions.
    BarrierDivergence,
    /// No thread of a block can make progress (e.g. some warps wait at a barrier while
    /// others have exited).
    Deadlock,
    /// A warp-synchronous instruction (`shfl.sync`, `vote.sync`, ...) named lanes in its
    /// member mask that had not converged with the executing lanes.
    WarpSync,
    /// The kernel executed `trap`.
    Trap,
    /// The launch executed more warp instructions than the device's limit.
    InstructionLimit,
    /// A `call` to a function that cannot be run (or a similar run-time refusal).
    Unsupported,
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            FaultKind::OutOfBounds => "out-of-bounds access",
            FaultKind::Misaligned => "misaligned access",
            FaultKind::BarrierDivergence => "divergence at a barrier",
            FaultKind::Deadlock => "deadlock",
            FaultKind::WarpSync => "warp-synchronous instruction with unconverged lanes",
            FaultKind::Trap => "trap",
            FaultKind::InstructionLimit => "instruction limit exceeded",
            FaultKind::Unsupported => "unsupported operation",
        };
        f.write_str(s)
    }
}

/// Every error the simulator reports.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The PTX text could not be parsed or uses something the simulator does not support.
    #[error("PTX line {line}: {msg}")]
    Parse {
        /// 1-based line of the PTX text.
        line: u32,
        /// What is wrong.
        msg: String,
    },
    /// `launch` named a kernel that the module does not define.
    #[error("unknown kernel `{name}` (the module defines: {available})")]
    UnknownKernel {
        /// The requested name.
        name: String,
        /// The `.entry` names of the module, comma separated.
        available: String,
    },
    /// The arguments of a launch do not match the kernel's parameters.
    #[error("kernel `{kernel}`: {msg}")]
    Arguments {
        /// The kernel.
        kernel: String,
        /// What does not match.
        msg: String,
    },
    /// The grid or block dimensions or the shared memory size are not valid.
    #[error("kernel `{kernel}`: invalid launch configuration: {msg}")]
    LaunchConfig {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        msg: String,
    },
    /// A thread faulted while the kernel ran.
    #[error(
        "kernel `{kernel}`: {kind} in block ({},{},{}) thread ({},{},{}) at PTX line {line} `{inst}`: {detail}",
        block[0], block[1], block[2], thread[0], thread[1], thread[2]
    )]
    Fault {
        /// What kind of fault.
        kind: FaultKind,
        /// The kernel.
        kernel: String,
        /// `%ctaid` of the faulting thread.
        block: [u32; 3],
        /// `%tid` of the faulting thread.
        thread: [u32; 3],
        /// 1-based PTX line of the instruction.
        line: u32,
        /// The instruction (opcode with its modifiers).
        inst: String,
        /// Details (address, sizes, ...).
        detail: String,
    },
    /// A host-side buffer operation was invalid (range outside the buffer, freed buffer,
    /// buffer of another device).
    #[error("buffer operation: {0}")]
    Buffer(String),
    /// The simulator itself failed (a bug); the message says where.
    #[error("internal simulator error (please report): {0}")]
    Internal(String),
    /// The device's memory limit would be exceeded.
    #[error("out of device memory: {requested} bytes requested, {available} available")]
    OutOfMemory {
        /// Bytes requested.
        requested: u64,
        /// Bytes still available under the device's limit.
        available: u64,
    },
}

impl Error {
    /// The fault kind if this is a [`Error::Fault`].
    pub fn fault_kind(&self) -> Option<FaultKind> {
        match self {
            Error::Fault { kind, .. } => Some(*kind),
            _ => None,
        }
    }
}
