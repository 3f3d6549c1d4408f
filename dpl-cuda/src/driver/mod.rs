//! The devices programs run on: the [`Driver`] trait the executor calls, the simulator
//! driver (`sim`, feature `sim`) and the CUDA driver (`cuda`, feature `cuda`). `README.md`
//! in this folder describes them.

use crate::GpuProgram;

/// A scalar kernel argument.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LaunchArg {
    /// A `.u32` (also `.s32` and `bool`) parameter.
    U32(u32),
    /// A `.u64` (also `.s64`, lengths and device addresses) parameter.
    U64(u64),
    /// A `.f32` parameter.
    F32(f32),
    /// A `.f64` parameter.
    F64(f64),
}

/// What the executor needs from a device. Memory is untyped and addressed by 64-bit device
/// addresses; errors are messages (they become [`dpl_core::run::Error::Device`]).
pub trait Driver {
    /// A loaded PTX module.
    type Module;
    /// Loads (or finds in a cache) the module of a PTX text.
    fn load(&self, ptx: &str) -> Result<Self::Module, String>;
    /// Loads (or finds in a cache) the module of a compiled program. The default loads
    /// its PTX text with [`Driver::load`]; a driver that can use the program's cubins
    /// ([`GpuProgram::cubins`]) overrides it.
    fn load_program(&self, program: &GpuProgram) -> Result<Self::Module, String> {
        self.load(&program.ptx)
    }
    /// Allocates `bytes` zeroed bytes (at least 1).
    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String>;
    /// Allocates `bytes` bytes (at least 1) whose contents are unspecified, for a buffer
    /// the kernels write whole before anything reads it. The default zeroes them.
    fn alloc(&self, bytes: usize) -> Result<u64, String> {
        self.alloc_zeroed(bytes)
    }
    /// Allocates `bytes` zeroed bytes (at least 1) that the caller promises to give back
    /// zeroed, with [`Driver::free_kept_zero`] (a count the kernels set back to zero when
    /// they are done with it; an error record no check wrote). A driver may keep them and
    /// hand them out again without zeroing: the default is [`Driver::alloc_zeroed`].
    fn alloc_kept_zero(&self, bytes: usize) -> Result<u64, String> {
        self.alloc_zeroed(bytes)
    }
    /// Gives back an allocation of [`Driver::alloc_kept_zero`] whose bytes are all zero
    /// once the work queued before this call has run. The default is [`Driver::free`].
    fn free_kept_zero(&self, addr: u64) -> Result<(), String> {
        self.free(addr)
    }
    /// Copies host bytes to device address `dst`.
    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String>;
    /// Copies device bytes at `src` to the host.
    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String>;
    /// Copies the device ranges `parts` (address, length) to the host, one after the other
    /// into `out` (as long as their lengths together). A driver may queue them all and wait
    /// once (one round trip); the default reads them one by one.
    fn read_parts(&self, parts: &[(u64, usize)], out: &mut [u8]) -> Result<(), String> {
        read_one_by_one(self, parts, out)
    }
    /// Copies `bytes` bytes between device addresses.
    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String>;
    /// Launches `kernel` over `grid` blocks of `block` threads (one dimension). It may
    /// return before the kernel has run: the driver's operations take effect in the order
    /// they are called (a launch sees what the calls before it wrote), and [`Driver::read`]
    /// waits for everything before it, reporting a fault of a kernel it waited for.
    fn launch(
        &self,
        module: &Self::Module,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String>;
    /// Frees an allocation.
    fn free(&self, addr: u64) -> Result<(), String>;
    /// How many blocks of `block` threads of `kernel` the device runs at once: resident
    /// blocks per multiprocessor (from the kernel's registers and shared memory) times the
    /// number of multiprocessors. Grid-stride kernels are launched with at most this many
    /// blocks ([`crate::plan::Count::Resident`]). The default is the model of
    /// [`crate::plan::model_resident_blocks`] (what the simulator uses); the CUDA driver
    /// asks the device. Must give the same answer for the same arguments during a run.
    fn resident_blocks(
        &self,
        module: &Self::Module,
        kernel: &str,
        block: u32,
    ) -> Result<u32, String> {
        let _ = (module, kernel);
        Ok(crate::plan::model_resident_blocks(block))
    }
}

/// [`Driver::read_parts`] by one [`Driver::read`] per part (the default, and a driver's
/// fallback).
pub(crate) fn read_one_by_one<D: Driver + ?Sized>(
    driver: &D,
    parts: &[(u64, usize)],
    out: &mut [u8],
) -> Result<(), String> {
    let total: usize = parts.iter().map(|p| p.1).sum();
    if total != out.len() {
        return Err(format!(
            "a read of parts of {total} byte(s) in all into {} byte(s)",
            out.len()
        ));
    }
    let mut at = 0;
    for &(src, len) in parts {
        driver.read(src, &mut out[at..at + len])?;
        at += len;
    }
    Ok(())
}

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "sim")]
pub mod sim;
