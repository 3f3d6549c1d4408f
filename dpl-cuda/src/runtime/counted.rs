//! Transfer counting: [`Counted`], a driver wrapper that counts the copies and bytes it
//! moves between host and device (what `dpl::transfers` reports).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use dpl_core::run::Transfers;

use crate::GpuProgram;
use crate::driver::{Driver, LaunchArg};

/// A driver that counts the bytes it moves between host and device; every operation is
/// forwarded to the driver inside.
pub struct Counted<D> {
    inner: D,
    /// Host-to-device copies and bytes, device-to-host copies and bytes.
    counts: [AtomicU64; 4],
}

impl<D> Counted<D> {
    /// Counts the transfers of `inner`, from zero.
    pub fn new(inner: D) -> Self {
        Counted {
            inner,
            counts: Default::default(),
        }
    }

    /// The driver inside.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// The transfers so far.
    pub fn transfers(&self) -> Transfers {
        let [a, b, c, d] = &self.counts;
        Transfers {
            to_device: a.load(Relaxed),
            to_device_bytes: b.load(Relaxed),
            to_host: c.load(Relaxed),
            to_host_bytes: d.load(Relaxed),
        }
    }

    /// One copy of `bytes` bytes: to the device (`which` 0) or to the host (2).
    fn add(&self, which: usize, bytes: usize) {
        self.counts[which].fetch_add(1, Relaxed);
        self.counts[which + 1].fetch_add(bytes as u64, Relaxed);
    }
}

impl<D: Driver> Driver for Counted<D> {
    type Module = D::Module;

    fn load(&self, ptx: &str) -> Result<D::Module, String> {
        self.inner.load(ptx)
    }

    fn load_program(&self, p: &GpuProgram) -> Result<D::Module, String> {
        self.inner.load_program(p)
    }

    fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
        self.inner.alloc_zeroed(bytes)
    }

    fn alloc(&self, bytes: usize) -> Result<u64, String> {
        self.inner.alloc(bytes)
    }

    fn alloc_kept_zero(&self, bytes: usize) -> Result<u64, String> {
        self.inner.alloc_kept_zero(bytes)
    }

    fn free_kept_zero(&self, addr: u64) -> Result<(), String> {
        self.inner.free_kept_zero(addr)
    }

    fn write(&self, dst: u64, data: &[u8]) -> Result<(), String> {
        self.add(0, data.len());
        self.inner.write(dst, data)
    }

    fn read(&self, src: u64, out: &mut [u8]) -> Result<(), String> {
        self.add(2, out.len());
        self.inner.read(src, out)
    }

    /// Counted as one copy (one round trip) of all the parts' bytes.
    fn read_parts(&self, parts: &[(u64, usize)], out: &mut [u8]) -> Result<(), String> {
        self.add(2, out.len());
        self.inner.read_parts(parts, out)
    }

    fn copy(&self, src: u64, dst: u64, bytes: usize) -> Result<(), String> {
        self.inner.copy(src, dst, bytes)
    }

    fn launch(
        &self,
        module: &D::Module,
        kernel: &str,
        grid: u32,
        block: u32,
        args: &[LaunchArg],
    ) -> Result<(), String> {
        self.inner.launch(module, kernel, grid, block, args)
    }

    fn free(&self, addr: u64) -> Result<(), String> {
        self.inner.free(addr)
    }

    fn resident_blocks(&self, module: &D::Module, kernel: &str, block: u32) -> Result<u32, String> {
        self.inner.resident_blocks(module, kernel, block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver that answers every query with a recognisable value.
    struct Probe;

    impl Driver for Probe {
        type Module = ();
        fn load(&self, _: &str) -> Result<(), String> {
            Ok(())
        }
        fn alloc_zeroed(&self, bytes: usize) -> Result<u64, String> {
            Ok(bytes as u64 + 1000)
        }
        fn write(&self, _: u64, _: &[u8]) -> Result<(), String> {
            Ok(())
        }
        fn read(&self, _: u64, out: &mut [u8]) -> Result<(), String> {
            out.fill(7);
            Ok(())
        }
        fn copy(&self, _: u64, _: u64, _: usize) -> Result<(), String> {
            Err("copy reached the probe".into())
        }
        fn launch(&self, _: &(), k: &str, _: u32, _: u32, _: &[LaunchArg]) -> Result<(), String> {
            Err(format!("launch of {k} reached the probe"))
        }
        fn free(&self, addr: u64) -> Result<(), String> {
            Err(format!("free of {addr} reached the probe"))
        }
        fn resident_blocks(&self, _: &(), kernel: &str, block: u32) -> Result<u32, String> {
            Ok(kernel.len() as u32 * 1000 + block)
        }
        fn alloc_kept_zero(&self, bytes: usize) -> Result<u64, String> {
            Ok(bytes as u64 + 2000)
        }
        fn free_kept_zero(&self, addr: u64) -> Result<(), String> {
            Err(format!("kept-zero free of {addr} reached the probe"))
        }
        fn read_parts(&self, parts: &[(u64, usize)], out: &mut [u8]) -> Result<(), String> {
            out.fill(parts.len() as u8);
            Ok(())
        }
    }

    /// The counting wrapper forwards every operation, including those with a default in
    /// the trait (a missed one would silently use the default: the occupancy model
    /// instead of the device's answer).
    #[test]
    fn counted_forwards_everything() {
        let c = Counted::new(Probe);
        assert_eq!(c.resident_blocks(&(), "k12", 256), Ok(3256));
        assert_eq!(c.alloc_zeroed(24), Ok(1024));
        assert_eq!(c.copy(1, 2, 3), Err("copy reached the probe".into()));
        assert_eq!(
            c.launch(&(), "k", 1, 1, &[]),
            Err("launch of k reached the probe".into())
        );
        assert_eq!(c.free(9), Err("free of 9 reached the probe".into()));
        c.write(5, &[1, 2, 3]).unwrap();
        let mut out = [0u8; 4];
        c.read(5, &mut out).unwrap();
        assert_eq!(out, [7; 4]);
        let t = c.transfers();
        assert_eq!(
            (t.to_device, t.to_device_bytes, t.to_host, t.to_host_bytes),
            (1, 3, 1, 4)
        );
        assert_eq!(c.alloc_kept_zero(4), Ok(2004));
        assert_eq!(
            c.free_kept_zero(3),
            Err("kept-zero free of 3 reached the probe".into())
        );
        let mut out = [0u8; 6];
        c.read_parts(&[(1, 2), (9, 4)], &mut out).unwrap();
        assert_eq!(out, [2; 6], "the parts reached the probe together");
        let t = c.transfers();
        assert_eq!((t.to_host, t.to_host_bytes), (2, 10), "one round trip");
    }
}
