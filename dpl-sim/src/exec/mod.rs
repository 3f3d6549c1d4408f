//! Execution of a decoded kernel: blocks on host threads, warps of 32 lanes, counters.
//!
//! - [`schedule`]: the grid's blocks, the warps of a block, divergence and reconvergence
//!   of a warp's lanes, barriers, calls and returns, warp-synchronous waiting.
//! - [`instr`]: one instruction over a warp's active lanes.
//! - [`access`]: loads, stores and atomics in the state spaces (global, shared, local,
//!   parameter, generic), their bounds and alignment, and the memory counters (32-byte
//!   sectors, shared-memory bank conflicts).
//! - [`alu`]: integer, float, comparison and conversion arithmetic on raw 64-bit values.
//! - [`report`]: the counters ([`Report`]).

mod access;
mod alu;
mod instr;
mod report;
mod schedule;

use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::error::FaultKind;
use crate::ir::*;
use crate::memory::GlobalView;

pub use report::Report;

/// Everything a launch shares between its blocks.
pub(crate) struct Launch<'a> {
    pub kernel: &'a Kernel,
    pub global: &'a GlobalView<'a>,
    pub params: &'a [u8],
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dyn_shared: u32,
    pub limit: u64,
    pub executed: &'a AtomicU64,
    pub abort: &'a AtomicBool,
    pub nsms: u32,
}

impl Launch<'_> {
    /// The fault of a launch that executed more than its limit of warp instructions.
    fn instruction_limit(&self, lane: usize, pc: u32) -> Fault {
        Fault {
            kind: FaultKind::InstructionLimit,
            lane,
            pc,
            detail: format!(
                "more than {} warp instructions executed (Device::set_instruction_limit raises the limit)",
                self.limit
            ),
        }
    }
}

/// A fault inside a warp, before it is given a thread and a line.
pub(crate) struct Fault {
    pub kind: FaultKind,
    pub lane: usize,
    pub pc: u32,
    pub detail: String,
}

pub(crate) type FResult<T> = std::result::Result<T, Fault>;

const FULL: u32 = u32::MAX;

/// How long `nanosleep` puts the host thread running a block to sleep.
pub(crate) const SLEEP: std::time::Duration = std::time::Duration::from_micros(20);

#[derive(Default)]
struct Warp {
    regs: Vec<u64>,
    pc: [u32; 32],
    /// Lanes that exist (threads of the block).
    valid: u32,
    live: u32,
    blocked: u32,
    local: Vec<u8>,
    alloc_hint: usize,
    /// Lanes waiting at a warp-synchronous instruction for other lanes of their mask.
    parked: u32,
    /// Per lane: frames of out-of-line (recursive) calls.
    stacks: Vec<Vec<Frame>>,
}

/// One activation of an out-of-line call.
struct Frame {
    ret_pc: u32,
    call_pc: u32,
    saved_regs: Vec<u64>,
    saved_local: Vec<u8>,
}

/// Deepest recursion allowed per thread.
const MAX_CALL_DEPTH: usize = 4096;

#[derive(Clone, Default)]
struct BarState {
    /// Whether any thread arrived in the current phase.
    active: bool,
    /// Instruction index of the `bar.sync`/`bar.red` the current phase waits at
    /// (`bar.arrive` may be elsewhere).
    pc: Option<u32>,
    arrived: u32,
    expected: Option<u32>,
    /// Per warp: lanes waiting.
    lanes: Vec<u32>,
    /// Per warp: destination of `bar.red`.
    dest: Vec<Option<Slot>>,
    kind: Option<BarKind>,
    popc: u32,
    all: bool,
    any: bool,
    first: Option<(usize, usize)>,
}

/// Per-host-thread state reused across blocks.
#[derive(Default)]
pub(crate) struct Worker {
    warps: Vec<Warp>,
    shared: Vec<u8>,
    bars: Vec<BarState>,
    pub report: Report,
}

#[inline(always)]
fn lanes(m: u32, mut f: impl FnMut(usize)) {
    if m == FULL {
        for l in 0..32 {
            f(l);
        }
    } else {
        let mut x = m;
        while x != 0 {
            f(x.trailing_zeros() as usize);
            x &= x - 1;
        }
    }
}

#[inline(always)]
fn idx(s: Slot, lane: usize) -> usize {
    ((s as usize) << 5) | lane
}

/// The canonical 64-bit value of raw bits read as type `t`: zero-extended for unsigned,
/// bit and float types, sign-extended for signed types.
#[inline(always)]
fn canon(t: Ty, v: u64) -> u64 {
    match t {
        Ty::B64 | Ty::U64 | Ty::S64 | Ty::F64 => v,
        Ty::B32 | Ty::U32 | Ty::F32 | Ty::F16x2 | Ty::Bf16x2 => v & 0xffff_ffff,
        Ty::S32 => v as i32 as i64 as u64,
        Ty::B16 | Ty::U16 | Ty::F16 | Ty::Bf16 => v & 0xffff,
        Ty::S16 => v as i16 as i64 as u64,
        Ty::B8 | Ty::U8 => v & 0xff,
        Ty::S8 => v as i8 as i64 as u64,
        Ty::Pred => v & 1,
    }
}

#[inline]
fn mask_of(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}
