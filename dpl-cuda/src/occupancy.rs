//! Block sizes from register counts: theoretical occupancy per architecture.
//!
//! A multiprocessor keeps as many blocks resident as its registers, its thread (warp)
//! slots, its block slots and its shared memory allow. Registers are allocated per warp in
//! units of 256 (a thread's count rounded up to a multiple of 8, times 32), so a kernel
//! needing many registers fits fewer warps, and a large block wastes more of what is left
//! (a block is resident whole or not at all). The *occupancy* of a block size is the
//! number of warps resident per multiprocessor, over the most it can hold.
//!
//! The rule dpl uses (see the crate README, "Block and grid sizes"):
//!
//! * `#[parallel(block = N)]` ([`crate::Options::block`]) fixes the size of every kernel.
//! * Otherwise, when `ptxas` is available at build time (the cubin configuration,
//!   [`crate::cubin::configured`]), [`crate::compile_tuned`] assembles the kernels at their
//!   default size with `ptxas -v`, and each combinator's kernels (which share a size: tiles
//!   and temporaries are sized from it) get the candidate of [`CANDIDATES`] with the best
//!   occupancy for the most register-hungry of them, on the worst of the target
//!   architectures ([`choose`]); ties keep the default, then go to the larger size.
//! * Otherwise the default: 256 threads per block (full occupancy up to 32 registers per
//!   thread on every architecture, and with 64 registers still 4 blocks per multiprocessor,
//!   half occupancy); 128 for a `map` with a block per element, whose blocks mostly wait
//!   on their one row.
//!
//! The limits are those of NVIDIA's CUDA C++ Programming Guide ("Technical Specifications
//! per Compute Capability").

use crate::arch::Arch;

/// Block sizes considered by [`choose`].
pub const CANDIDATES: [u32; 3] = [128, 256, 512];

/// What one multiprocessor of an architecture holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// 32-bit registers per multiprocessor (and per block).
    pub regs: u32,
    /// Resident warps per multiprocessor.
    pub warps: u32,
    /// Resident blocks per multiprocessor.
    pub blocks: u32,
    /// Shared memory per multiprocessor, in bytes.
    pub shared: u32,
}

/// Registers are allocated to a warp in units of this many.
pub const REG_UNIT: u32 = 256;
/// Most registers a thread can have.
pub const MAX_REGS_PER_THREAD: u32 = 255;

/// The limits of a multiprocessor of `arch` (sm_70 and newer; unknown newer minor
/// versions get their major version's first member's limits).
pub fn limits(arch: Arch) -> Limits {
    let (warps, blocks, kib) = match (arch.major, arch.minor) {
        (7, 5) => (32, 16, 64),
        (7, _) => (64, 32, 96),
        (8, 0) => (64, 32, 164),
        (8, 7) => (48, 16, 164),
        (8, 9) => (48, 24, 100),
        (8, _) => (48, 16, 100),
        (9, _) => (64, 32, 228),
        (10, _) => (64, 32, 228),
        (_, _) => (48, 32, 100),
    };
    Limits {
        regs: 64 * 1024,
        warps,
        blocks,
        shared: kib * 1024,
    }
}

/// Blocks of `block` threads resident on one multiprocessor when each thread uses `regs`
/// registers and each block `shared` bytes of shared memory (0 when the block cannot run
/// at all: too many registers per block, or too large).
pub fn resident_blocks(l: &Limits, block: u32, regs: u32, shared: u32) -> u32 {
    let wpb = block.div_ceil(32).max(1);
    if regs > MAX_REGS_PER_THREAD || wpb > l.warps {
        return 0;
    }
    let per_warp = (regs.max(1) * 32).div_ceil(REG_UNIT) * REG_UNIT;
    if per_warp * wpb > l.regs {
        return 0;
    }
    let by_regs = (l.regs / per_warp) / wpb;
    let by_warps = l.warps / wpb;
    let by_shared = l.shared.checked_div(shared).unwrap_or(u32::MAX);
    by_regs.min(by_warps).min(l.blocks).min(by_shared)
}

/// Resident warps over the most a multiprocessor holds, for blocks of `block` threads of
/// `regs` registers each (shared memory as in [`resident_blocks`]).
pub fn occupancy(l: &Limits, block: u32, regs: u32, shared: u32) -> f64 {
    let warps = resident_blocks(l, block, regs, shared) * block.div_ceil(32);
    f64::from(warps) / f64::from(l.warps)
}

/// The block size chosen for kernels with the given register and shared-memory needs:
/// `(architecture, registers per thread, shared bytes per block)` per target. Among
/// [`CANDIDATES`], the one whose worst occupancy over the targets is highest; ties keep
/// `default`, else the larger candidate. Returns the size and a sentence saying why.
pub fn choose(needs: &[(Arch, u32, u32)], default: u32) -> (u32, String) {
    if needs.is_empty() {
        return (default, "no register counts".into());
    }
    let worst = |b: u32| {
        needs
            .iter()
            .map(|(a, r, s)| occupancy(&limits(*a), b, *r, *s))
            .fold(f64::INFINITY, f64::min)
    };
    let mut best = default;
    let mut best_occ = worst(default);
    for &b in CANDIDATES.iter().rev() {
        let o = worst(b);
        if o > best_occ + 1e-9 {
            best = b;
            best_occ = o;
        }
    }
    let regs = needs
        .iter()
        .map(|(a, r, _)| format!("{r} on {a}"))
        .collect::<Vec<_>>()
        .join(", ");
    let table = CANDIDATES
        .iter()
        .map(|&b| format!("{b}: {:.0}%", 100.0 * worst(b)))
        .collect::<Vec<_>>()
        .join(", ");
    let verdict = if best == default {
        "the default is as good as any"
    } else {
        "better than the default"
    };
    (
        best,
        format!("registers per thread {regs}; worst occupancy {table}; {verdict}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arch(s: &str) -> Arch {
        Arch::parse(s).expect("a valid arch")
    }

    #[test]
    fn few_registers_give_full_occupancy_at_every_size() {
        for a in ["sm_70", "sm_80", "sm_90"] {
            let l = limits(arch(a));
            for b in CANDIDATES {
                assert_eq!(occupancy(&l, b, 32, 0), 1.0, "{a} {b}");
            }
        }
        assert_eq!(choose(&[(arch("sm_80"), 24, 64)], 256).0, 256);
    }

    #[test]
    fn register_allocation_is_per_warp_in_units_of_256() {
        let l = limits(arch("sm_80"));
        // 33 registers round up to 40: 1280 per warp, 51 warps fit; 256-thread blocks
        // (8 warps) -> 6 blocks.
        assert_eq!(resident_blocks(&l, 256, 33, 0), 6);
        assert_eq!(resident_blocks(&l, 256, 40, 0), 6);
        // 72 registers: 2304 per warp, 28 warps: 7 blocks of 128, 3 of 256, 1 of 512.
        assert_eq!(resident_blocks(&l, 128, 72, 0), 7);
        assert_eq!(resident_blocks(&l, 256, 72, 0), 3);
        assert_eq!(resident_blocks(&l, 512, 72, 0), 1);
        // 255 registers fit one 256-thread block (65280 registers); 512 threads do not.
        assert_eq!(resident_blocks(&l, 256, 255, 0), 1);
        assert_eq!(resident_blocks(&l, 512, 255, 0), 0);
        assert_eq!(resident_blocks(&l, 256, 256, 0), 0);
    }

    #[test]
    fn block_and_shared_memory_limits() {
        let l = limits(arch("sm_70"));
        // 32 block slots: 32-thread blocks reach half occupancy only.
        assert_eq!(resident_blocks(&l, 32, 16, 0), 32);
        assert_eq!(occupancy(&l, 32, 16, 0), 0.5);
        // 40 KiB of shared memory per block: 2 blocks in 96 KiB.
        assert_eq!(resident_blocks(&l, 256, 16, 40 * 1024), 2);
        // sm_75 holds 32 warps: a 1024-thread block fits, nothing more.
        let t = limits(arch("sm_75"));
        assert_eq!(resident_blocks(&t, 1024, 32, 0), 1);
        assert_eq!(occupancy(&t, 1024, 32, 0), 1.0);
    }

    #[test]
    fn register_heavy_kernels_get_smaller_blocks() {
        // 72 registers: 128 -> 28/64 warps, 256 -> 24/64, 512 -> 16/64.
        let (b, why) = choose(&[(arch("sm_70"), 72, 0), (arch("sm_90"), 72, 0)], 256);
        assert_eq!(b, 128, "{why}");
        assert!(
            why.contains("128: 44%") && why.contains("256: 38%"),
            "{why}"
        );
        // 40 registers: 48 warps at every size: the default stays.
        let (b, why) = choose(&[(arch("sm_80"), 40, 0)], 256);
        assert_eq!(b, 256, "{why}");
        // The block-per-element default (128) stays when 256 is no better.
        assert_eq!(choose(&[(arch("sm_80"), 40, 0)], 128).0, 128);
        // The worst architecture decides: sm_86 holds 48 warps.
        let (b, _) = choose(&[(arch("sm_86"), 64, 0), (arch("sm_80"), 64, 0)], 256);
        assert_eq!(b, 256);
    }
}
