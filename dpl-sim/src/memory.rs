//! Device global memory: bounded allocations of atomic words, shared by all blocks.
//!
//! Every allocation is an array of `AtomicU32` so blocks running on different host threads
//! can read and write it without undefined behaviour; plain loads and stores use relaxed
//! atomic accesses (which compile to ordinary moves), sub-word stores use a compare-and-swap
//! loop on the containing word so neighbouring bytes written by other blocks are never lost,
//! 32-bit atomics use the native atomic instructions, and 64-bit atomics take one of a set
//! of striped locks (all 64-bit read-modify-writes of one address take the same lock, so they
//! are atomic with respect to each other). Addresses are handed out upwards from 4 GiB with
//! a guard gap between allocations and are never reused, so an access just past the end of
//! an allocation or to a freed buffer is caught.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, RwLock};

use crate::error::{Error, Result};

/// The first address of global memory.
pub(crate) const GLOBAL_BASE: u64 = 0x1_0000_0000;
/// Alignment of allocations (as `cudaMalloc`).
const ALLOC_ALIGN: u64 = 256;
/// Unmapped bytes after each allocation.
const GUARD: u64 = 256;

/// One allocation.
pub(crate) struct Alloc {
    pub base: u64,
    pub len: u64,
    words: Box<[AtomicU32]>,
}

impl Alloc {
    fn new(base: u64, len: u64) -> Alloc {
        let n = len.div_ceil(4) as usize;
        let words = (0..n)
            .map(|_| AtomicU32::new(0))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        Alloc { base, len, words }
    }

    /// Loads `size` (1, 2, 4 or 8) bytes at byte offset `off` (aligned to `size`, in bounds).
    #[inline]
    pub fn load(&self, off: u64, size: u32) -> u64 {
        let w = (off >> 2) as usize;
        match size {
            4 => self.words[w].load(Relaxed) as u64,
            8 => {
                self.words[w].load(Relaxed) as u64 | (self.words[w + 1].load(Relaxed) as u64) << 32
            }
            _ => {
                let v = self.words[w].load(Relaxed) >> ((off & 3) * 8);
                (v & if size == 1 { 0xff } else { 0xffff }) as u64
            }
        }
    }

    /// Stores the low `size` bytes of `v` at `off`.
    #[inline]
    pub fn store(&self, off: u64, size: u32, v: u64) {
        let w = (off >> 2) as usize;
        match size {
            4 => self.words[w].store(v as u32, Relaxed),
            8 => {
                self.words[w].store(v as u32, Relaxed);
                self.words[w + 1].store((v >> 32) as u32, Relaxed);
            }
            _ => {
                let shift = (off & 3) * 8;
                let mask: u32 = (if size == 1 { 0xff } else { 0xffff }) << shift;
                let bits = ((v as u32) << shift) & mask;
                let _ =
                    self.words[w].fetch_update(Relaxed, Relaxed, |old| Some((old & !mask) | bits));
            }
        }
    }

    /// A 32-bit read-modify-write; returns the old value.
    #[inline]
    pub fn rmw32(&self, off: u64, f: impl Fn(u32) -> u32) -> u32 {
        let w = &self.words[(off >> 2) as usize];
        match w.fetch_update(Relaxed, Relaxed, |old| Some(f(old))) {
            Ok(v) | Err(v) => v,
        }
    }

    /// Copies bytes out.
    pub fn read_bytes(&self, off: u64, out: &mut [u8]) {
        let mut i = 0usize;
        while i < out.len() {
            let at = off + i as u64;
            if at.is_multiple_of(4) && i + 4 <= out.len() {
                let v = self.words[(at >> 2) as usize].load(Relaxed);
                out[i..i + 4].copy_from_slice(&v.to_le_bytes());
                i += 4;
            } else {
                out[i] = self.load(at, 1) as u8;
                i += 1;
            }
        }
    }

    /// Copies bytes in.
    pub fn write_bytes(&self, off: u64, data: &[u8]) {
        let mut i = 0usize;
        while i < data.len() {
            let at = off + i as u64;
            if at.is_multiple_of(4) && i + 4 <= data.len() {
                let v = u32::from_le_bytes(data[i..i + 4].try_into().expect("4 bytes"));
                self.words[(at >> 2) as usize].store(v, Relaxed);
                i += 4;
            } else {
                self.store(at, 1, data[i] as u64);
                i += 1;
            }
        }
    }
}

/// All allocations of a device.
pub(crate) struct Memory {
    allocs: RwLock<BTreeMap<u64, Arc<Alloc>>>,
    next: Mutex<u64>,
    used: AtomicU64,
    pub limit: AtomicU64,
    locks: Vec<Mutex<()>>,
}

impl Memory {
    pub fn new(limit: u64) -> Memory {
        Memory {
            allocs: RwLock::new(BTreeMap::new()),
            next: Mutex::new(GLOBAL_BASE),
            used: AtomicU64::new(0),
            limit: AtomicU64::new(limit),
            locks: (0..64).map(|_| Mutex::new(())).collect(),
        }
    }

    /// Allocates `len` zeroed bytes; returns the address.
    pub fn alloc(&self, len: u64) -> Result<u64> {
        let limit = self.limit.load(Relaxed);
        // Reserve atomically so concurrent allocations cannot exceed the limit together.
        if let Err(used) = self.used.fetch_update(Relaxed, Relaxed, |u| {
            u.checked_add(len).filter(|&t| t <= limit)
        }) {
            return Err(Error::OutOfMemory {
                requested: len,
                available: limit.saturating_sub(used),
            });
        }
        let base = {
            let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
            let base = *next;
            *next = (base + len.max(1) + GUARD).div_ceil(ALLOC_ALIGN) * ALLOC_ALIGN;
            base
        };
        let a = Arc::new(Alloc::new(base, len));
        self.allocs
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(base, a);
        Ok(base)
    }

    /// Frees the allocation at `base`.
    pub fn free(&self, base: u64) -> Result<()> {
        match self
            .allocs
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&base)
        {
            Some(a) => {
                self.used.fetch_sub(a.len, Relaxed);
                Ok(())
            }
            None => Err(Error::Buffer(format!(
                "no allocation at {base:#x} (already freed?)"
            ))),
        }
    }

    /// The allocation that starts at `base`.
    pub fn get(&self, base: u64) -> Result<Arc<Alloc>> {
        self.allocs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&base)
            .cloned()
            .ok_or_else(|| {
                Error::Buffer(format!(
                    "no allocation at {base:#x} (freed, or of another device)"
                ))
            })
    }

    /// Bytes currently allocated.
    pub fn used(&self) -> u64 {
        self.used.load(Relaxed)
    }

    /// A snapshot for one launch.
    pub fn view(&self) -> GlobalView<'_> {
        let allocs: Vec<Arc<Alloc>> = self
            .allocs
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        let bases = allocs.iter().map(|a| a.base).collect();
        GlobalView {
            allocs,
            bases,
            locks: &self.locks,
        }
    }
}

/// The allocations as they were when a launch started (sorted by address).
pub(crate) struct GlobalView<'a> {
    pub allocs: Vec<Arc<Alloc>>,
    bases: Vec<u64>,
    locks: &'a [Mutex<()>],
}

impl GlobalView<'_> {
    /// The allocation holding `[addr, addr + size)`, as (index, offset).
    #[inline]
    pub fn find(&self, addr: u64, size: u32, hint: &mut usize) -> Option<(usize, u64)> {
        if let Some(a) = self.allocs.get(*hint)
            && addr >= a.base
            && addr.saturating_add(size as u64) <= a.base + a.len
        {
            return Some((*hint, addr - a.base));
        }
        let i = self.bases.partition_point(|&b| b <= addr).checked_sub(1)?;
        let a = &self.allocs[i];
        if addr.saturating_add(size as u64) <= a.base + a.len
            && (size > 0 || addr < a.base + a.len.max(1))
        {
            *hint = i;
            Some((i, addr - a.base))
        } else {
            None
        }
    }

    /// Runs a 64-bit read-modify-write under the address's lock; returns the old value.
    pub fn rmw64(&self, idx: usize, off: u64, f: impl Fn(u64) -> u64) -> u64 {
        let a = &self.allocs[idx];
        let _g = self.locks[((a.base + off) >> 3) as usize % self.locks.len()]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let old = a.load(off, 8);
        a.store(off, 8, f(old));
        old
    }
}
