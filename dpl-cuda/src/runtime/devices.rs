//! The devices behind the GPU places: the simulated GPU of `Place::Sim` (feature `sim`)
//! and CUDA device `n` of `Place::Gpu(n)` (feature `cuda`), each opened at its first use
//! and kept for the process (with its module cache, so each program is loaded once), its
//! transfers counted ([`Counted`]). A CUDA device that cannot be opened is remembered too,
//! so the reason is found once.
//!
//! Without either feature there is no device: [`Device`] has no variants, [`device`]
//! says which feature is missing, and the code below is unused.
#![cfg_attr(
    not(any(feature = "sim", feature = "cuda")),
    allow(unused, unreachable_code)
)]

use dpl_core::interp::Value;
use dpl_core::run::{Error, Location, Place, Transfers};

use super::{DeviceSeq, HostColumns, Input, Output, download, read_columns, run_resident};
use super::{counted::Counted, upload_columns};
use crate::GpuProgram;
use crate::driver::Driver;
#[cfg(feature = "cuda")]
use crate::driver::cuda::CudaDriver;
#[cfg(feature = "sim")]
use crate::driver::sim::SimDriver;

/// The device of a GPU place, for the process ([`device`]).
#[derive(Clone, Copy)]
pub enum Device {
    /// The simulated GPU.
    #[cfg(feature = "sim")]
    Sim(&'static Counted<SimDriver>),
    /// A CUDA device.
    #[cfg(feature = "cuda")]
    Cuda(&'static Counted<CudaDriver>),
}

/// Why a place has no device.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoDevice {
    /// `Place::Cpu`, `Place::Seq` or `Place::Mpi`.
    #[error("{0} is not a GPU place")]
    NotGpu(Place),
    /// The place's backend is not built (the feature named is off).
    #[error("built without the `{0}` feature")]
    NotBuilt(&'static str),
    /// The device could not be opened (no driver library, no such device, ...): why.
    #[error("{0}")]
    Unusable(String),
}

/// The device of `place`, opened at the first call.
pub fn device(place: Place) -> Result<Device, NoDevice> {
    match place {
        Place::Sim => sim(),
        Place::Gpu(n) => cuda(n),
        Place::Cpu | Place::Seq | Place::Mpi => Err(NoDevice::NotGpu(place)),
    }
}

/// The simulated GPU shared by every call of the process (modules are cached in it, so
/// each function's PTX is parsed once).
#[cfg(feature = "sim")]
pub(super) fn sim_driver() -> &'static Counted<SimDriver> {
    use std::sync::OnceLock;
    static DRIVER: OnceLock<Counted<SimDriver>> = OnceLock::new();
    DRIVER.get_or_init(|| Counted::new(SimDriver::default()))
}

#[cfg(feature = "sim")]
fn sim() -> Result<Device, NoDevice> {
    Ok(Device::Sim(sim_driver()))
}

#[cfg(not(feature = "sim"))]
fn sim() -> Result<Device, NoDevice> {
    Err(NoDevice::NotBuilt("sim"))
}

#[cfg(feature = "cuda")]
fn cuda(n: usize) -> Result<Device, NoDevice> {
    use std::sync::Mutex;
    type Slot = Result<&'static Counted<CudaDriver>, String>;
    static DRIVERS: Mutex<Vec<(usize, Slot)>> = Mutex::new(Vec::new());
    let mut drivers = DRIVERS.lock().unwrap_or_else(|e| e.into_inner());
    let slot = match drivers.iter().find(|(k, _)| *k == n) {
        Some((_, slot)) => slot.clone(),
        None => {
            let slot: Slot = CudaDriver::new(n).map(|d| &*Box::leak(Box::new(Counted::new(d))));
            drivers.push((n, slot.clone()));
            slot
        }
    };
    slot.map(Device::Cuda).map_err(NoDevice::Unusable)
}

#[cfg(not(feature = "cuda"))]
fn cuda(_: usize) -> Result<Device, NoDevice> {
    Err(NoDevice::NotBuilt("cuda"))
}

/// `$body` with `$d` bound to the device's driver, whichever it is.
macro_rules! on {
    ($device:expr, $d:ident => $body:expr) => {
        match $device {
            #[cfg(feature = "sim")]
            Device::Sim($d) => $body,
            #[cfg(feature = "cuda")]
            Device::Cuda($d) => $body,
        }
    };
}

impl Device {
    /// The place whose device this is.
    pub fn place(self) -> Place {
        on!(self, d => d.place())
    }

    /// [`run_resident`] on this device. Unless a profile is being taken
    /// ([`super::profile`]), the simulator's launch reports are dropped afterwards.
    pub fn run(
        self,
        program: &GpuProgram,
        args: Vec<Input>,
        keep_on_device: bool,
        locate: &dyn Fn(u32) -> Location,
    ) -> Result<Output, Error> {
        match self {
            #[cfg(feature = "sim")]
            Device::Sim(d) => {
                let out = run_resident(program, d, args, keep_on_device, locate);
                super::profile::after_run(d.inner());
                out
            }
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => run_resident(program, d, args, keep_on_device, locate),
        }
    }

    /// [`upload_columns`] to this device.
    pub fn upload(self, cols: &HostColumns) -> Result<DeviceSeq, Error> {
        on!(self, d => upload_columns(d, cols))
    }

    /// [`read_columns`] from this device.
    pub fn read(self, seq: &DeviceSeq) -> Result<Vec<Vec<u8>>, Error> {
        on!(self, d => read_columns(d, seq))
    }

    /// [`download`] from this device.
    pub fn download(self, seq: &DeviceSeq) -> Result<Value, Error> {
        on!(self, d => download(d, seq))
    }

    /// Frees the buffers of `seq` (failures are ignored: this is cleanup).
    pub fn free(self, seq: &DeviceSeq) {
        on!(self, d => {
            for &b in &seq.bufs {
                let _ = d.free(b);
            }
        })
    }

    /// The transfers between the host and this device so far.
    pub fn transfers(self) -> Transfers {
        on!(self, d => d.transfers())
    }

    /// Waits until everything queued on this device has run: a call returns a result it
    /// leaves on the device before its kernels have run (the simulator runs them at once).
    pub fn synchronize(self) -> Result<(), Error> {
        match self {
            #[cfg(feature = "sim")]
            Device::Sim(_) => Ok(()),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => d.inner().synchronize().map_err(Error::Device),
        }
    }
}

/// What names a driver's place.
trait Placed {
    fn place(&self) -> Place;
}

#[cfg(feature = "sim")]
impl Placed for Counted<SimDriver> {
    fn place(&self) -> Place {
        Place::Sim
    }
}

#[cfg(feature = "cuda")]
impl Placed for Counted<CudaDriver> {
    fn place(&self) -> Place {
        Place::Gpu(self.inner().ordinal())
    }
}

/// Bytes of simulated device memory in use by the process's `Place::Sim` calls (buffers
/// of sequences kept there, plus anything leaked): for tests that check device copies are
/// freed.
#[cfg(feature = "sim")]
pub fn sim_memory_used() -> u64 {
    sim_driver().inner().device().memory_used()
}
