//! Transfers between host and device through page-locked staging memory.
//!
//! A copy from pageable memory (a `Vec`) is one the CUDA driver stages itself: a copy to
//! the device first waits for everything queued on the stream, a copy to the host waits
//! for it too and then copies through the driver's own buffers, one thread doing the host
//! side. Here the host side is ours: the bytes go through page-locked buffers of the
//! driver ([`Pinned`]), with the copies between them and the device queued on the default
//! stream (`cuMemcpy*Async`) behind the kernels, each followed by an event.
//!
//! * A transfer of at most [`SMALL`] bytes (a scalar result, an error record, row
//!   offsets, the arguments of small calls) takes the next of [`SMALL_SLOTS`] small
//!   buffers in turn. A write returns as soon as its bytes are in the buffer: no wait for
//!   the kernels before it, which the copy queues behind; the buffer is waited for only
//!   when its turn comes again. A read waits for its own copy (an event), which waits for
//!   the kernels before it.
//! * A larger transfer goes in chunks of [`CHUNK`] bytes through two large buffers in
//!   alternation: the host copies chunk `k + 1` into (or out of) one while the device
//!   copies chunk `k` through the other, and the host side of a chunk is copied by the
//!   rayon pool in pieces of [`PIECE`] bytes (one thread copying pageable memory reaches a
//!   fraction of what the bus carries).
//!
//! The buffers are allocated at their first use and freed with the driver. Where
//! page-locked memory cannot be had (the system's limit), or when staging is switched off
//! ([`Staging::set_enabled`], for measuring), transfers are the driver's own synchronous
//! copies, as before.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rayon::prelude::*;

use super::call::{Context, Pinned};
use super::error::CudaError;

/// The largest transfer that goes through one small buffer (and the size of each).
pub(super) const SMALL: usize = 64 << 10;
/// How many small buffers are used in turn.
pub(super) const SMALL_SLOTS: usize = 8;
/// The chunk of a larger transfer (and the size of each of the two large buffers).
pub(super) const CHUNK: usize = 8 << 20;
/// The piece of a chunk one rayon task copies on the host.
const PIECE: usize = 1 << 20;

type Result<T> = std::result::Result<T, CudaError>;

/// The staging buffers of one driver (see the module documentation).
pub(super) struct Staging {
    small: Vec<Mutex<Option<Pinned>>>,
    /// The next small buffer to take (modulo [`SMALL_SLOTS`]).
    turn: AtomicUsize,
    /// The two large buffers (empty until the first large transfer).
    large: Mutex<Vec<Pinned>>,
    /// Transfers go through the buffers (else through the driver's synchronous copies).
    enabled: AtomicBool,
    /// Page-locked memory could not be allocated: the driver's copies from now on.
    unavailable: AtomicBool,
}

impl Default for Staging {
    fn default() -> Staging {
        Staging {
            small: (0..SMALL_SLOTS).map(|_| Mutex::new(None)).collect(),
            turn: AtomicUsize::new(0),
            large: Mutex::new(Vec::new()),
            enabled: AtomicBool::new(true),
            unavailable: AtomicBool::new(false),
        }
    }
}

/// Copies `src` into `dst` (of the same length), by the rayon pool when it is large.
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    if src.len() <= 2 * PIECE {
        dst.copy_from_slice(src);
    } else {
        dst.par_chunks_mut(PIECE)
            .zip(src.par_chunks(PIECE))
            .for_each(|(d, s)| d.copy_from_slice(s));
    }
}

impl Staging {
    /// Switches staging on or off (the driver's synchronous copies when off).
    pub(super) fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }

    /// Whether transfers go through page-locked buffers now.
    pub(super) fn active(&self) -> bool {
        self.enabled.load(Ordering::Relaxed) && !self.unavailable.load(Ordering::Relaxed)
    }

    /// Allocates page-locked memory, remembering a failure (after which transfers take
    /// the driver's copies: `None`).
    fn pinned(&self, ctx: &Context, bytes: usize) -> Option<Pinned> {
        match ctx.alloc_pinned(bytes) {
            Ok(p) => Some(p),
            Err(_) => {
                self.unavailable.store(true, Ordering::Relaxed);
                None
            }
        }
    }

    /// Copies `data` to the device at `dst` (see the module documentation): returns once
    /// `data` may be reused, the copy queued behind the kernels.
    pub(super) fn write(&self, ctx: &Context, dst: u64, data: &[u8]) -> Result<()> {
        if !self.active() {
            return ctx.write(dst, data);
        }
        if data.len() <= SMALL {
            let mut slot = self.small_slot(ctx);
            let Some(p) = slot.as_mut() else {
                return ctx.write(dst, data);
            };
            ctx.pinned_bytes(p)?[..data.len()].copy_from_slice(data);
            return ctx.write_pinned(dst, p, data.len());
        }
        // The whole range first: a chunk out of range must not follow chunks written.
        ctx.check_range("a write", dst, data.len())?;
        let mut large = self.large.lock().unwrap_or_else(PoisonError::into_inner);
        if !self.large_buffers(ctx, &mut large) {
            return ctx.write(dst, data);
        }
        for (k, chunk) in data.chunks(CHUNK).enumerate() {
            let p = &mut large[k % 2];
            copy_bytes(&mut ctx.pinned_bytes(p)?[..chunk.len()], chunk);
            ctx.write_pinned(dst + (k * CHUNK) as u64, p, chunk.len())?;
        }
        Ok(())
    }

    /// Copies the device's bytes at `src` into `out`, waiting for the kernels queued
    /// before (see the module documentation).
    pub(super) fn read(&self, ctx: &Context, src: u64, out: &mut [u8]) -> Result<()> {
        if !self.active() {
            return ctx.read(src, out);
        }
        if out.len() <= SMALL {
            let mut slot = self.small_slot(ctx);
            let Some(p) = slot.as_mut() else {
                return ctx.read(src, out);
            };
            ctx.read_pinned(src, p, 0, out.len())?;
            out.copy_from_slice(&ctx.pinned_bytes(p)?[..out.len()]);
            return Ok(());
        }
        ctx.check_range("a read", src, out.len())?;
        let mut large = self.large.lock().unwrap_or_else(PoisonError::into_inner);
        if !self.large_buffers(ctx, &mut large) {
            return ctx.read(src, out);
        }
        let total = out.len();
        let chunks = total.div_ceil(CHUNK);
        let len = |k: usize| CHUNK.min(total - k * CHUNK);
        ctx.read_pinned(src, &mut large[0], 0, len(0))?;
        for (k, chunk) in out.chunks_mut(CHUNK).enumerate() {
            // The next chunk's copy runs on the device while this one is copied out.
            if k + 1 < chunks {
                let at = src + ((k + 1) * CHUNK) as u64;
                ctx.read_pinned(at, &mut large[(k + 1) % 2], 0, len(k + 1))?;
            }
            copy_bytes(chunk, &ctx.pinned_bytes(&mut large[k % 2])?[..chunk.len()]);
        }
        Ok(())
    }

    /// The next small buffer in turn, locked; allocated at its first use (`None` inside
    /// when page-locked memory cannot be had).
    fn small_slot(&self, ctx: &Context) -> MutexGuard<'_, Option<Pinned>> {
        let i = self.turn.fetch_add(1, Ordering::Relaxed) % SMALL_SLOTS;
        let mut slot = self.small[i].lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = self.pinned(ctx, SMALL);
        }
        slot
    }

    /// Copies the device ranges `parts` into `out` (as long as they are together), one
    /// after the other, all queued into one small buffer and waited for once (one round
    /// trip). `Ok(false)`, with nothing read, when they do not fit one or staging is off.
    pub(super) fn read_together(
        &self,
        ctx: &Context,
        parts: &[(u64, usize)],
        out: &mut [u8],
    ) -> Result<bool> {
        let total: usize = parts.iter().map(|p| p.1).sum();
        if !self.active() || total != out.len() || total == 0 || total > SMALL {
            return Ok(false);
        }
        let mut slot = self.small_slot(ctx);
        let Some(p) = slot.as_mut() else {
            return Ok(false);
        };
        let mut at = 0;
        for &(src, len) in parts {
            ctx.read_pinned(src, p, at, len)?;
            at += len;
        }
        out.copy_from_slice(&ctx.pinned_bytes(p)?[..total]);
        Ok(true)
    }

    /// Makes sure the two large buffers exist; false when they cannot be allocated.
    fn large_buffers(&self, ctx: &Context, large: &mut Vec<Pinned>) -> bool {
        while large.len() < 2 {
            match self.pinned(ctx, CHUNK) {
                Some(p) => large.push(p),
                None => return false,
            }
        }
        true
    }

    /// Frees the buffers (waiting for the copies that use them).
    pub(super) fn release(&mut self, ctx: &Context) {
        let small = self
            .small
            .iter_mut()
            .filter_map(|s| s.get_mut().unwrap_or_else(PoisonError::into_inner).take());
        let large = std::mem::take(self.large.get_mut().unwrap_or_else(PoisonError::into_inner));
        for p in small.chain(large) {
            ctx.free_pinned(p);
        }
    }
}
