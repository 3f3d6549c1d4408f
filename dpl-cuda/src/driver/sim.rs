//! The simulator driver: runs the generated PTX on [`dpl_sim`] (feature `sim`).
//!
//! Modules are cached by their PTX text, so running a program repeatedly parses it once.
//! Every launch's counters ([`dpl_sim::Report`]) are kept, named by kernel, for tests and
//! performance reports ([`SimDriver::take_reports`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use dpl_sim::{Arg, Device, Module, Report};

use super::{Driver, LaunchArg};

/// The byte [`SimDriver`] fills an allocation with when its contents are unspecified
/// ([`Driver::alloc`]): all ones, so an unwritten `f32`/`f64` reads as a NaN, an integer as
/// -1 (its maximum), a `bool` as an invalid byte.
pub const UNWRITTEN: u8 = 0xff;

/// A [`Driver`] backed by a simulated GPU.
pub struct SimDriver {
    dev: Device,
    modules: Mutex<HashMap<String, Arc<Module>>>,
    reports: Mutex<Vec<(String, Report)>>,
    /// The sizes of the live allocations of [`Driver::alloc_kept_zero`], by address.
    kept_zero: Mutex<HashMap<u64, usize>>,
}

impl Default for SimDriver {
    fn default() -> Self {
        SimDriver::new(Device::new())
    }
}

impl SimDriver {
    /// A driver for `dev`.
    pub fn new(dev: Device) -> SimDriver {
        SimDriver {
            dev,
            modules: Mutex::new(HashMap::new()),
            reports: Mutex::new(Vec::new()),
            kept_zero: Mutex::new(HashMap::new()),
        }
    }

    /// The simulated device.
    pub fn device(&self) -> &Device {
        &self.dev
    }

    /// The counters of every launch since the last call, with the kernel's name.
    pub fn take_reports(&self) -> Vec<(String, Report)> {
        std::mem::take(&mut *self.reports.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Driver for SimDriver {
    type Module = Arc<Module>;

    fn load(&self, ptx: &str) -> Result<Arc<Module>, String> {
        let mut cache = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = cache.get(ptx) {
            return Ok(m.clone());
        }
        let m = Arc::new(self.dev.load_ptx(ptx).map_err(|e| e.to_string())?);
        cache.insert(ptx.to_string(), m.clone());
        Ok(m)
    }

    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
        self.dev
            .alloc_bytes(bytes.max(1))
            .map_err(|e| e.to_string())
    }

    /// Filled with [`UNWRITTEN`] bytes, so that a kernel that leaves an element of such
    /// a buffer unwritten gives a visibly wrong result (NaN, -1, true) rather than a zero
    /// that may happen to be right.
    fn alloc(&self, bytes: usize) -> Result<u64, String> {
        let a = self.alloc_zeroed(bytes)?;
        self.dev
            .write_bytes(a, &vec![UNWRITTEN; bytes.max(1)])
            .map_err(|e| e.to_string())?;
        Ok(a)
    }

    fn alloc_kept_zero(&self, bytes: usize) -> Result<u64, String> {
        let a = self.alloc_zeroed(bytes)?;
        self.kept_zero
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(a, bytes.max(1));
        Ok(a)
    }

    /// Checks the promise (every byte zero again), then frees: the simulator keeps no
    /// buffers between calls (its memory in use is what tests compare), but every run on
    /// it checks that the kernels set such buffers back to zero, as a driver that reuses
    /// them without zeroing ([`crate::cuda::CudaDriver`]) relies on.
    fn free_kept_zero(&self, addr: u64) -> Result<(), String> {
        let bytes = self
            .kept_zero
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&addr);
        let Some(bytes) = bytes else {
            return Err(format!("{addr:#x} was not allocated to be kept zeroed"));
        };
        let mut now = vec![0u8; bytes];
        self.read(addr, &mut now)?;
        self.free(addr)?;
        match now.iter().position(|&b| b != 0) {
            None => Ok(()),
            Some(i) => Err(format!(
                "a buffer of {bytes} byte(s) given back as zeroed holds {:#04x} at byte {i}",
                now[i]
            )),
        }
    }

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String> {
        self.dev.write_bytes(dst, data).map_err(|e| e.to_string())
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String> {
        self.dev.read_bytes(src, out).map_err(|e| e.to_string())
    }

    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String> {
        self.dev
            .copy_bytes(src, dst, bytes)
            .map_err(|e| e.to_string())
    }

    fn launch(
        &self,
        module: &Arc<Module>,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String> {
        let args: Vec<Arg<'static>> = args
            .iter()
            .map(|a| match *a {
                LaunchArg::U32(x) => Arg::U32(x),
                LaunchArg::U64(x) => Arg::U64(x),
                LaunchArg::F32(x) => Arg::F32(x),
                LaunchArg::F64(x) => Arg::F64(x),
            })
            .collect();
        let report = self
            .dev
            .launch(module, kernel, [grid, 1, 1], [block, 1, 1], 0, &args)
            .map_err(|e| e.to_string())?;
        self.reports
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((kernel.to_string(), report));
        Ok(())
    }

    fn free(&self, addr: u64) -> Result<(), String> {
        self.dev.free_bytes(addr).map_err(|e| e.to_string())
    }
}
