//! What can go wrong in the CUDA driver, one variant per failure, with the message each
//! gives (the [`crate::Driver`] trait passes them on as text).

use crate::driver::LaunchArg;
use crate::entry::{EntryError, Param};

/// A failure of the CUDA driver.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CudaError {
    /// No file name of the driver library loads.
    #[error(
        "no CUDA driver library could be loaded (tried {usual} and {others} other names): no \
         NVIDIA driver is installed on this machine"
    )]
    NoLibrary {
        /// The usual name on this platform (`libcuda.so.1`).
        usual: &'static str,
        /// How many other names were tried.
        others: usize,
    },
    /// The library lacks functions the driver calls.
    #[error(
        "the CUDA driver library `{library}` lacks {}: the NVIDIA driver is too old for \
         dpl (CUDA 12 or newer is needed)",
        .missing.join(", ")
    )]
    TooOld {
        /// The library's file name.
        library: String,
        /// The functions it lacks.
        missing: Vec<&'static str>,
    },
    /// A call into the driver library returned an error status.
    #[error("{call} failed: {status}")]
    Call {
        /// The call, with what it was about (`cuMemAlloc_v2(4096 bytes)`).
        call: String,
        /// The driver's name for the status (`CUDA_ERROR_OUT_OF_MEMORY`).
        status: String,
    },
    /// A module failed to load; the JIT compiler's error log follows.
    #[error("{error}\n{log}")]
    Jit {
        /// The failed load.
        error: Box<CudaError>,
        /// The log.
        log: String,
    },
    /// Loading a module's cubin failed, and then compiling its PTX too.
    #[error("{cubin}\nand then {ptx}")]
    CubinThenPtx {
        /// Why the cubin was not loaded.
        cubin: Box<CudaError>,
        /// Why the PTX was not.
        ptx: Box<CudaError>,
    },
    /// The cubin chosen for the device is not an ELF image.
    #[error("the embedded cubin for sm_{0} is not an ELF image")]
    NotElf(u32),
    /// The PTX text of a module has a NUL byte (the driver takes a C string).
    #[error("the PTX text contains a NUL byte")]
    NulInPtx,
    /// A kernel name has a NUL byte.
    #[error("kernel name `{0}` contains a NUL byte")]
    NulInKernel(String),
    /// The PTX's kernel signatures could not be read.
    #[error(transparent)]
    Entry(#[from] EntryError),
    /// An ordinal at or past the number of devices.
    #[error("CUDA device {ordinal} does not exist: the driver reports {count} device(s)")]
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// The number of devices.
        count: usize,
    },
    /// An ordinal the driver API cannot represent.
    #[error("CUDA device {0} does not exist")]
    Ordinal(usize),
    /// A device attribute out of range.
    #[error("the device reports {what} = {value}")]
    Attribute {
        /// The attribute.
        what: &'static str,
        /// Its value.
        value: i32,
    },
    /// A device older than Volta.
    #[error(
        "CUDA device {ordinal} has compute capability {major}.{minor}: dpl's kernels need \
         7.0 (Volta) or newer"
    )]
    OldDevice {
        /// The device.
        ordinal: usize,
        /// Compute capability, major.
        major: u32,
        /// Compute capability, minor.
        minor: u32,
    },
    /// A read, write, copy or zeroing outside the live allocations.
    #[error(
        "{what} of {len} byte(s) at device address {addr:#x} is outside every allocation of \
         this driver"
    )]
    OutOfRange {
        /// What was attempted (`a write`, `a copy's source`, ...).
        what: &'static str,
        /// Its start.
        addr: u64,
        /// Its length in bytes.
        len: usize,
    },
    /// A copy through page-locked staging memory larger than the buffer (an internal
    /// error of the staging).
    #[error("{what}: {len} byte(s) do not fit in a staging buffer of {bytes}")]
    Staging {
        /// What was attempted.
        what: &'static str,
        /// The bytes asked for.
        len: usize,
        /// The buffer's size.
        bytes: usize,
    },
    /// A free of something that is not a live allocation.
    #[error("free of device address {0:#x}, which is not a live allocation of this driver")]
    NotLive(u64),
    /// A module used with a driver that did not load it.
    #[error("kernel `{0}`: the module was loaded by another CUDA driver")]
    ForeignModule(String),
    /// A module used after it was unloaded.
    #[error("kernel `{0}`: the module was unloaded")]
    Unloaded(String),
    /// A launch of a kernel the module does not have.
    #[error("the module has no kernel `{0}`")]
    NoKernel(String),
    /// A launch with the wrong number of arguments.
    #[error("kernel `{kernel}` takes {params} parameter(s), {args} given")]
    ArgCount {
        /// The kernel.
        kernel: String,
        /// Its parameters.
        params: usize,
        /// The arguments given.
        args: usize,
    },
    /// A launch argument of the wrong type.
    #[error("kernel `{kernel}`: parameter {index} is {param:?} in the PTX but {arg:?} was given")]
    ArgType {
        /// The kernel.
        kernel: String,
        /// The parameter's position.
        index: usize,
        /// Its type.
        param: Param,
        /// The argument given.
        arg: LaunchArg,
    },
    /// A block size the driver API cannot represent.
    #[error("block of {0} threads")]
    Block(u32),
}

impl From<CudaError> for String {
    fn from(e: CudaError) -> String {
        e.to_string()
    }
}
