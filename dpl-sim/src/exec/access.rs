//! Memory accesses of a warp: locating each lane's address in its state space (global
//! allocations, the block's shared memory, the thread's local frame, kernel parameters,
//! generic addresses through their windows) with alignment and bounds checks; loads,
//! stores and atomics with fast paths for coalesced and uniform accesses; and the memory
//! counters (32-byte sectors touched against the ideal, shared-memory bank conflicts).

use super::alu::atom_apply;
use super::*;
use crate::decode::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};

impl Worker {
    #[inline]
    pub(super) fn count_global_load(&mut self, addrs: &[u64; 32], m: u32, size: u32) {
        let (s, i) = sectors(addrs, m, size);
        let r = &mut self.report;
        r.global_load_requests += 1;
        r.global_load_sectors += s;
        r.global_load_sectors_ideal += i;
        r.sectors_moved += s;
        r.sectors_ideal += i;
    }

    fn count_global_store(&mut self, addrs: &[u64; 32], m: u32, size: u32) {
        let (s, i) = sectors(addrs, m, size);
        let r = &mut self.report;
        r.global_store_requests += 1;
        r.global_store_sectors += s;
        r.global_store_sectors_ideal += i;
        r.sectors_moved += s;
        r.sectors_ideal += i;
    }
}

/// Resolves one lane's access to a location, checking alignment and bounds.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(super) fn locate(
    l: &Launch<'_>,
    shared_len: usize,
    w: &mut Warp,
    space: MemSpace,
    addr: u64,
    size: u32,
    lane: usize,
    write: bool,
) -> FResult<Loc> {
    if !addr.is_multiple_of(size as u64) {
        return Err(Fault {
            kind: FaultKind::Misaligned,
            lane,
            pc: 0,
            detail: format!("address {addr:#x} is not aligned to {size} bytes"),
        });
    }
    let (sp, a) = match space {
        MemSpace::Generic => {
            let s = generic_space(addr);
            (s, addr - window(s))
        }
        s => (s, addr),
    };
    let oob = |what: &str, len: u64| Fault {
        kind: FaultKind::OutOfBounds,
        lane,
        pc: 0,
        detail: format!(
            "{size}-byte {} at {what} offset {a:#x}, outside its {len} bytes",
            if write { "store" } else { "load" }
        ),
    };
    match sp {
        MemSpace::Global | MemSpace::Const | MemSpace::Generic => {
            match l.global.find(a, size, &mut w.alloc_hint) {
                Some((i, off)) => Ok(Loc::Global(i, off)),
                None => Err(Fault {
                    kind: FaultKind::OutOfBounds,
                    lane,
                    pc: 0,
                    detail: format!(
                        "{size}-byte {} at address {a:#x} is outside every allocation{}",
                        if write { "store" } else { "load" },
                        if space == MemSpace::Generic {
                            " (generic address)"
                        } else {
                            ""
                        }
                    ),
                }),
            }
        }
        MemSpace::Shared => {
            if a.saturating_add(size as u64) <= shared_len as u64 {
                Ok(Loc::Shared(a as usize))
            } else {
                Err(oob("shared-memory", shared_len as u64))
            }
        }
        MemSpace::Local => {
            let frame = l.kernel.local_bytes as u64;
            if a.saturating_add(size as u64) <= frame {
                Ok(Loc::Local(lane * frame as usize + a as usize))
            } else {
                Err(oob("local-memory", frame))
            }
        }
        MemSpace::Param => {
            if write {
                return Err(Fault {
                    kind: FaultKind::OutOfBounds,
                    lane,
                    pc: 0,
                    detail: "store to kernel parameter space".into(),
                });
            }
            if a.saturating_add(size as u64) <= l.params.len() as u64 {
                Ok(Loc::Param(a as usize))
            } else {
                Err(oob("kernel-parameter", l.params.len() as u64))
            }
        }
    }
}

impl Worker {
    /// Offsets of a warp access to shared memory (`.shared` space) when every active
    /// lane's access is aligned and in bounds.
    #[inline]
    fn fast_shared(
        w: &Warp,
        shared_len: usize,
        space: MemSpace,
        base: Src,
        off: i64,
        m: u32,
        size: u32,
    ) -> Option<[u64; 32]> {
        if space != MemSpace::Shared {
            return None;
        }
        let mut offs = [0u64; 32];
        let (mut mx, mut or) = (0u64, 0u64);
        lanes(m, |lane| {
            let a = Self::read_s(&w.regs, base, lane).wrapping_add(off as u64);
            offs[lane] = a;
            mx = mx.max(a);
            or |= a;
        });
        (or & (size as u64 - 1) == 0 && mx.checked_add(size as u64)? <= shared_len as u64)
            .then_some(offs)
    }

    /// Addresses of a warp access to global memory when every active lane's access is
    /// aligned and inside one allocation (the common, coalesced case): (allocation, addresses).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn fast_global(
        l: &Launch<'_>,
        w: &mut Warp,
        space: MemSpace,
        base: Src,
        off: i64,
        m: u32,
        size: u32,
    ) -> Option<(usize, [u64; 32])> {
        if !matches!(
            space,
            MemSpace::Global | MemSpace::Const | MemSpace::Generic
        ) {
            return None;
        }
        let mut addrs = [0u64; 32];
        let (mut mn, mut mx, mut or) = (u64::MAX, 0u64, 0u64);
        lanes(m, |lane| {
            let a = Self::read_s(&w.regs, base, lane).wrapping_add(off as u64);
            addrs[lane] = a;
            mn = mn.min(a);
            mx = mx.max(a);
            or |= a;
        });
        if or & (size as u64 - 1) != 0 || mn < crate::memory::GLOBAL_BASE {
            return None;
        }
        let mut hint = w.alloc_hint;
        let (i, _) = l.global.find(mn, size, &mut hint)?;
        let a = &l.global.allocs[i];
        if mx.checked_add(size as u64)? <= a.base + a.len {
            w.alloc_hint = i;
            Some((i, addrs))
        } else {
            None
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn load(
        &mut self,
        l: &Launch<'_>,
        w: &mut Warp,
        space: MemSpace,
        ty: Ty,
        n: u8,
        ds: &[Slot; 4],
        base: Src,
        off: i64,
        m: u32,
    ) -> FResult<()> {
        let esize = ty.bytes();
        let total = esize * n as u32;
        let signed = ty.signed();
        if let (MemSpace::Param, Src::Imm(b)) = (space, base) {
            // A kernel parameter: one address for every lane.
            let a = b.wrapping_add(off as u64);
            let lane = m.trailing_zeros() as usize;
            let Loc::Param(at) = locate(l, 0, w, space, a, total, lane, false)? else {
                unreachable!("parameter space")
            };
            for (e, d) in ds.iter().enumerate().take(n as usize) {
                let raw = read_bytes(l.params, at + (e as u32 * esize) as usize, esize);
                let v = if signed { canon(ty, raw) } else { raw };
                lanes(m, |lane| w.regs[idx(*d, lane)] = v);
            }
            return Ok(());
        }
        if let Some(offs) = Self::fast_shared(w, self.shared.len(), space, base, off, m, total) {
            self.report.shared_load_requests += 1;
            self.report.bank_conflicts += bank_conflicts_at(&offs, m, total);
            let shared = &self.shared;
            lanes(m, |lane| {
                let at = offs[lane] as usize;
                for (e, d) in ds.iter().enumerate().take(n as usize) {
                    let raw = read_bytes(shared, at + (e as u32 * esize) as usize, esize);
                    w.regs[idx(*d, lane)] = if signed { canon(ty, raw) } else { raw };
                }
            });
            return Ok(());
        }
        if let Some((ai, addrs)) = Self::fast_global(l, w, space, base, off, m, total) {
            if space != MemSpace::Const {
                self.count_global_load(&addrs, m, total);
            }
            let a = &l.global.allocs[ai];
            lanes(m, |lane| {
                let at = addrs[lane] - a.base;
                for (e, d) in ds.iter().enumerate().take(n as usize) {
                    let raw = a.load(at + (e as u32 * esize) as u64, esize);
                    w.regs[idx(*d, lane)] = if signed { canon(ty, raw) } else { raw };
                }
            });
            return Ok(());
        }
        let located = self.locate_lanes(l, w, space, base, off, m, total, false)?;
        // `ld.const` is not counted.
        if located.global != 0 && space != MemSpace::Const {
            self.count_global_load(&located.addrs, located.global, total);
        }
        if located.shared != 0 {
            self.report.shared_load_requests += 1;
            self.report.bank_conflicts += bank_conflicts(&located.locs, located.shared, total);
        }
        lanes(m, |lane| {
            for (e, d) in ds.iter().enumerate().take(n as usize) {
                let at = e as u64 * esize as u64;
                let raw = match located.locs[lane] {
                    Loc::Global(i, o) => l.global.allocs[i].load(o + at, esize.min(8)),
                    Loc::Shared(o) => read_bytes(&self.shared, o + at as usize, esize),
                    Loc::Local(o) => read_bytes(&w.local, o + at as usize, esize),
                    Loc::Param(o) => read_bytes(l.params, o + at as usize, esize),
                };
                let v = if signed { canon(ty, raw) } else { raw };
                w.regs[idx(*d, lane)] = v;
            }
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn store(
        &mut self,
        l: &Launch<'_>,
        w: &mut Warp,
        space: MemSpace,
        ty: Ty,
        n: u8,
        srcs: &[Src; 4],
        base: Src,
        off: i64,
        m: u32,
    ) -> FResult<()> {
        let esize = ty.bytes();
        let total = esize * n as u32;
        if let Some(offs) = Self::fast_shared(w, self.shared.len(), space, base, off, m, total) {
            self.report.shared_store_requests += 1;
            self.report.bank_conflicts += bank_conflicts_at(&offs, m, total);
            let shared = &mut self.shared;
            lanes(m, |lane| {
                let at = offs[lane] as usize;
                for (e, src) in srcs.iter().enumerate().take(n as usize) {
                    write_bytes(
                        shared,
                        at + (e as u32 * esize) as usize,
                        esize,
                        Self::read_s(&w.regs, *src, lane),
                    );
                }
            });
            return Ok(());
        }
        if space != MemSpace::Const
            && let Some((ai, addrs)) = Self::fast_global(l, w, space, base, off, m, total)
        {
            self.count_global_store(&addrs, m, total);
            let a = &l.global.allocs[ai];
            lanes(m, |lane| {
                let at = addrs[lane] - a.base;
                for (e, src) in srcs.iter().enumerate().take(n as usize) {
                    a.store(
                        at + (e as u32 * esize) as u64,
                        esize,
                        Self::read_s(&w.regs, *src, lane),
                    );
                }
            });
            return Ok(());
        }
        let located = self.locate_lanes(l, w, space, base, off, m, total, true)?;
        if located.global != 0 {
            self.count_global_store(&located.addrs, located.global, total);
        }
        if located.shared != 0 {
            self.report.shared_store_requests += 1;
            self.report.bank_conflicts += bank_conflicts(&located.locs, located.shared, total);
        }
        lanes(m, |lane| {
            for (e, src) in srcs.iter().enumerate().take(n as usize) {
                let at = e as u64 * esize as u64;
                let v = Self::read_s(&w.regs, *src, lane);
                match located.locs[lane] {
                    Loc::Global(i, o) => l.global.allocs[i].store(o + at, esize, v),
                    Loc::Shared(o) => write_bytes(&mut self.shared, o + at as usize, esize, v),
                    Loc::Local(o) => write_bytes(&mut w.local, o + at as usize, esize, v),
                    Loc::Param(_) => {}
                }
            }
        });
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn atomic(
        &mut self,
        l: &Launch<'_>,
        w: &mut Warp,
        space: MemSpace,
        op: AtomOp,
        ty: Ty,
        d: Option<Slot>,
        base: Src,
        off: i64,
        b: Src,
        c: Src,
        m: u32,
    ) -> FResult<()> {
        let size = ty.bytes();
        let shared_len = self.shared.len();
        let mut any_global = false;
        let mut any_shared = false;
        let mut res = Ok(());
        // Lanes perform their atomics one after another, in lane order.
        lanes(m, |lane| {
            if res.is_err() {
                return;
            }
            let a = Self::read_s(&w.regs, base, lane).wrapping_add(off as u64);
            let loc = match locate(l, shared_len, w, space, a, size, lane, true) {
                Ok(loc) => loc,
                Err(f) => {
                    res = Err(f);
                    return;
                }
            };
            let bv = canon(ty, Self::read_s(&w.regs, b, lane));
            let cv = canon(ty, Self::read_s(&w.regs, c, lane));
            let f = |old: u64| atom_apply(op, ty, old, bv, cv);
            let old = match loc {
                Loc::Global(i, o) => {
                    any_global = true;
                    let alloc = &l.global.allocs[i];
                    if size == 4 {
                        alloc.rmw32(o, |x| f(x as u64) as u32) as u64
                    } else {
                        l.global.rmw64(i, o, f)
                    }
                }
                Loc::Shared(o) => {
                    any_shared = true;
                    let old = read_bytes(&self.shared, o, size);
                    write_bytes(&mut self.shared, o, size, f(old));
                    old
                }
                Loc::Local(o) => {
                    let old = read_bytes(&w.local, o, size);
                    write_bytes(&mut w.local, o, size, f(old));
                    old
                }
                Loc::Param(_) => 0,
            };
            if let Some(d) = d {
                w.regs[idx(d, lane)] = canon(ty, old);
            }
        });
        res?;
        if any_global {
            self.report.global_atomic_requests += 1;
        }
        if any_shared {
            self.report.shared_load_requests += 1;
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
pub(super) enum Loc {
    Global(usize, u64),
    Shared(usize),
    Local(usize),
    Param(usize),
}

/// Where the active lanes of a warp access go (the general path of loads and stores).
struct Located {
    /// Each lane's address.
    addrs: [u64; 32],
    /// Each lane's location.
    locs: [Loc; 32],
    /// The lanes in global (or `.const`) memory.
    global: u32,
    /// The lanes in shared memory.
    shared: u32,
}

impl Worker {
    /// Locates each active lane's access of `size` bytes at `base + off`; faults at the
    /// first lane (in lane order) whose access is misaligned or out of bounds.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn locate_lanes(
        &self,
        l: &Launch<'_>,
        w: &mut Warp,
        space: MemSpace,
        base: Src,
        off: i64,
        m: u32,
        size: u32,
        write: bool,
    ) -> FResult<Located> {
        let shared_len = self.shared.len();
        let mut at = Located {
            addrs: [0; 32],
            locs: [Loc::Shared(0); 32],
            global: 0,
            shared: 0,
        };
        let mut res = Ok(());
        lanes(m, |lane| {
            if res.is_err() {
                return;
            }
            let a = Self::read_s(&w.regs, base, lane).wrapping_add(off as u64);
            at.addrs[lane] = a;
            match locate(l, shared_len, w, space, a, size, lane, write) {
                Ok(loc) => {
                    match loc {
                        Loc::Global(..) => at.global |= 1 << lane,
                        Loc::Shared(_) => at.shared |= 1 << lane,
                        _ => {}
                    }
                    at.locs[lane] = loc;
                }
                Err(f) => res = Err(f),
            }
        });
        res.map(|()| at)
    }
}

/// The base of a state space's window of generic addresses (0 for global memory, whose
/// generic addresses are its own).
#[inline]
pub(super) fn window(space: MemSpace) -> u64 {
    match space {
        MemSpace::Shared => SHARED_WINDOW,
        MemSpace::Local => LOCAL_WINDOW,
        MemSpace::Param => PARAM_WINDOW,
        _ => 0,
    }
}

/// The state space of a generic address.
#[inline]
pub(super) fn generic_space(a: u64) -> MemSpace {
    [MemSpace::Shared, MemSpace::Local, MemSpace::Param]
        .into_iter()
        .find(|&s| (window(s)..window(s) + WINDOW_SIZE).contains(&a))
        .unwrap_or(MemSpace::Global)
}

#[inline]
pub(super) fn read_bytes(buf: &[u8], at: usize, size: u32) -> u64 {
    let mut b = [0u8; 8];
    let n = size.min(8) as usize;
    b[..n].copy_from_slice(&buf[at..at + n]);
    u64::from_le_bytes(b)
}

#[inline]
pub(super) fn write_bytes(buf: &mut [u8], at: usize, size: u32, v: u64) {
    let n = size.min(8) as usize;
    buf[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// (sectors touched, ideal sectors) of one warp access of `size` bytes per lane.
fn sectors(addrs: &[u64; 32], m: u32, size: u32) -> (u64, u64) {
    let mut a = [0u64; 32];
    let mut n = 0;
    lanes(m, |lane| {
        a[n] = addrs[lane];
        n += 1;
    });
    let a = &mut a[..n];
    // Fast path: consecutive lanes at consecutive addresses.
    let contiguous = a.windows(2).all(|p| p[1] == p[0] + size as u64);
    if contiguous {
        let first = a[0] >> 5;
        let last = (a[n - 1] + size as u64 - 1) >> 5;
        let bytes = n as u64 * size as u64;
        return (last - first + 1, bytes.div_ceil(32));
    }
    a.sort_unstable();
    let mut distinct = 0u64;
    let mut sectors = 0u64;
    let mut last_addr = u64::MAX;
    let mut last_sector = u64::MAX;
    for &x in a.iter() {
        if x != last_addr {
            distinct += 1;
            last_addr = x;
        }
        // An aligned access of at most 16 bytes stays within one sector; wider vectors
        // (not produced here) would span two.
        let (s0, s1) = (x >> 5, (x + size as u64 - 1) >> 5);
        for s in s0..=s1 {
            if s != last_sector {
                sectors += 1;
                last_sector = s;
            }
        }
    }
    (sectors, (distinct * size as u64).div_ceil(32))
}

/// Extra wavefronts of one shared-memory warp access.
#[inline]
pub(super) fn bank_conflicts(locs: &[Loc; 32], m: u32, size: u32) -> u64 {
    let mut offs = [0u64; 32];
    let mut sm = 0u32;
    lanes(m, |lane| {
        if let Loc::Shared(o) = locs[lane] {
            offs[lane] = o as u64;
            sm |= 1 << lane;
        }
    });
    bank_conflicts_at(&offs, sm, size)
}

/// Extra wavefronts of a shared-memory warp access at byte offsets `offs`.
fn bank_conflicts_at(offs: &[u64; 32], m: u32, size: u32) -> u64 {
    // Fast cases: one word for everybody (broadcast), or consecutive lanes at consecutive
    // addresses (every bank serves at most ceil(words / 32) words, which is the ideal).
    let mut prev: Option<u64> = None;
    let (mut same, mut contiguous) = (true, true);
    lanes(m, |lane| {
        let o = offs[lane];
        if let Some(p) = prev {
            same &= o / 4 == p / 4 && size <= 4;
            contiguous &= o == p + size as u64;
        }
        prev = Some(o);
    });
    if same || (contiguous && size.is_multiple_of(4)) {
        return 0;
    }
    // At most 32 lanes x 4 words (16-byte accesses).
    let mut buf = [0u32; 128];
    let mut n = 0;
    lanes(m, |lane| {
        let o = offs[lane];
        let first = (o / 4) as u32;
        let last = ((o + size.max(1) as u64 - 1) / 4) as u32;
        for wd in first..=last.min(first + 3) {
            buf[n] = wd;
            n += 1;
        }
    });
    let words = &mut buf[..n];
    words.sort_unstable();
    let mut per_bank = [0u32; 32];
    let mut distinct = 0u64;
    let mut last = None;
    for &wd in words.iter() {
        if last != Some(wd) {
            per_bank[(wd % 32) as usize] += 1;
            distinct += 1;
            last = Some(wd);
        }
    }
    let worst = *per_bank.iter().max().unwrap_or(&0) as u64;
    let ideal = distinct.div_ceil(32);
    worst.max(ideal) - ideal
}
