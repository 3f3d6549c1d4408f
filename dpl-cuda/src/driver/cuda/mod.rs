//! The real driver: runs programs on an NVIDIA GPU through the CUDA driver API (cudarc's
//! `driver::sys` bindings, feature `cuda`).
//!
//! `libcuda` is loaded at run time, so this module builds without CUDA and a binary using
//! it starts on machines without a GPU. It is built in three layers, as cudarc's are:
//!
//! * **Loading** (`probe`): cudarc's loaders panic when the library or one of its
//!   functions is missing, so [`CudaDriver::new`] and [`device_count`] first *probe*: they
//!   open the driver library with `libloading` themselves (the same file names, in the
//!   same order, that cudarc tries) and check that every function the driver calls is
//!   there, before the first call through cudarc.
//! * **Checked calls** (`call`): every call into the library, its status turned into an
//!   error naming the call and the driver's error name (`cuMemAlloc_v2 failed:
//!   CUDA_ERROR_OUT_OF_MEMORY`), on types that own what they pass (the retained context and
//!   its table of live allocations, loaded modules with their kernels' parameter lists):
//!   reads, writes and copies must lie inside one live allocation, `free` takes only live
//!   allocations, and a launch's arguments are checked against the kernel's parameter list
//!   read from the PTX (count and sizes; the driver copies each parameter's size from the
//!   pointer it is given), so a bad address or argument is an error message, not a write
//!   into someone else's memory. The unsafe code is there and in the loading layer.
//! * **The driver** ([`CudaDriver`]): one per device. It retains the device's primary
//!   context (released on drop), made current on the calling thread by every call, so a
//!   driver can be shared between threads. Modules are cached by PTX text;
//!   [`Driver::load_program`](crate::Driver::load_program) loads the program's cubin for
//!   the device's compute capability when there is one ([`crate::cubin::select`]), else
//!   the PTX, which the driver compiles (JIT, with its error log in the message). A freed
//!   allocation is kept for the next allocation of the same size (up to an eighth of the
//!   device's memory in all, at least 1 GiB; zeroed again when reused unless unzeroed
//!   memory was asked for; given back by [`CudaDriver::release_pool`] or when the device
//!   runs out of memory). Launches are queued on the context's default stream, not waited
//!   for, and so are copies to the device: the host's bytes go through page-locked
//!   staging buffers (`staging`), so a write returns once they are there; a copy to the
//!   host waits for everything before it (and reports a fault of a kernel it waited
//!   for), and [`CudaDriver::synchronize`] waits on request. A device fault
//!   (`CUDA_ERROR_ILLEGAL_ADDRESS`, ...) is sticky in CUDA: every later call on the
//!   context fails with it too.
//!
//! Limitation: cudarc declares the driver's status codes as a Rust enum; the bindings
//! chosen (feature `cuda-13040`, the newest cudarc knows) list every code up to CUDA
//! 13.4. A newer driver returning a code added later is outside what cudarc can represent.

mod call;
mod driver;
mod error;
mod probe;
mod staging;

pub use driver::{CudaDriver, CudaModule, device_count};
