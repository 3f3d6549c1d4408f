//! Execution of a decoded kernel: blocks on host threads, warps of 32 lanes, counters.
//!
//! # Divergence
//!
//! Every lane has its own program counter. A warp always executes the group of lanes that
//! are runnable (neither exited nor waiting at a barrier) and whose program counter is the
//! smallest; that group executes one instruction over its active mask, then the group is
//! re-formed if its program counter passed (or reached) the smallest program counter of the
//! other runnable lanes. Because each lane only ever executes its own instruction stream,
//! every thread's result is that of sequential execution, whatever the control flow; and
//! because the lagging lanes always run first, lanes that split at a branch meet again at
//! the first instruction both paths reach in layout order, which for the forward branches
//! and backward loop edges that compilers emit is the immediate post-dominator. Warp
//! collectives (`shfl`, `vote`, ...) run over the current group.
//!
//! # Barriers
//!
//! Lanes executing `bar.sync` stop and the rest of the block runs until every warp is
//! stopped or finished; then each barrier whose expected thread count has arrived is
//! released. A warp whose remaining lanes all arrived counts its exited lanes as arrived
//! (warp-granular arrival, as on hardware), but a warp that exited entirely never arrives,
//! so a block where some warps wait and others have exited is reported as a deadlock.
//! Threads of one block waiting at two different barrier instructions with the same id are
//! reported as divergence at a barrier.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use crate::decode::{LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use crate::error::{Error, FaultKind};
use crate::fpu;
use crate::ir::*;
use crate::memory::GlobalView;

/// Counters of one launch (the performance proxy). See the crate documentation for how
/// each is counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Warp-level instructions executed (one per warp per instruction issued, whatever the
    /// number of active lanes; guarded-off instructions included).
    pub instructions: u64,
    /// Thread-level instructions: the active lanes of each warp instruction whose guard
    /// predicate was true.
    pub thread_instructions: u64,
    /// Warp-level global load instructions (`ld.global`, `ld.global.nc`, `ldu`, and generic
    /// loads whose lanes hit global memory).
    pub global_load_requests: u64,
    /// Warp-level global store instructions.
    pub global_store_requests: u64,
    /// Warp-level global atomic / reduction instructions.
    pub global_atomic_requests: u64,
    /// Distinct 32-byte sectors touched by global loads, summed over load requests.
    pub global_load_sectors: u64,
    /// Distinct 32-byte sectors touched by global stores, summed over store requests.
    pub global_store_sectors: u64,
    /// The minimum sectors the loads could have moved: per request, the distinct bytes
    /// touched divided by 32, rounded up.
    pub global_load_sectors_ideal: u64,
    /// The minimum sectors for the stores, counted as for loads.
    pub global_store_sectors_ideal: u64,
    /// `global_load_sectors + global_store_sectors`.
    pub sectors_moved: u64,
    /// `global_load_sectors_ideal + global_store_sectors_ideal`.
    pub sectors_ideal: u64,
    /// Warp-level shared-memory load instructions (including atomics on shared memory).
    pub shared_load_requests: u64,
    /// Warp-level shared-memory store instructions.
    pub shared_store_requests: u64,
    /// Extra shared-memory wavefronts caused by bank conflicts (32 banks of 4 bytes).
    pub bank_conflicts: u64,
    /// Block-wide barrier completions (one per barrier per block each time it releases).
    pub barriers: u64,
    /// Lines written by `printf` in the kernel, each prefixed with the block and thread
    /// (blocks run in parallel, so lines of different blocks may interleave in any order;
    /// within a block they are in execution order).
    pub printf: Vec<String>,
    /// Blocks run.
    pub blocks: u64,
    /// Threads run.
    pub threads: u64,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "{} blocks, {} threads", self.blocks, self.threads)?;
        writeln!(
            f,
            "instructions: {} warp, {} thread",
            self.instructions, self.thread_instructions
        )?;
        writeln!(
            f,
            "global: {} load / {} store / {} atomic requests; sectors {} moved, {} ideal (efficiency {:.3})",
            self.global_load_requests,
            self.global_store_requests,
            self.global_atomic_requests,
            self.sectors_moved,
            self.sectors_ideal,
            self.coalescing_efficiency()
        )?;
        writeln!(
            f,
            "shared: {} load / {} store requests, {} bank conflicts",
            self.shared_load_requests, self.shared_store_requests, self.bank_conflicts
        )?;
        write!(f, "barriers: {}", self.barriers)
    }
}

impl Report {
    pub(crate) fn merge(&mut self, o: &Report) {
        self.instructions += o.instructions;
        self.thread_instructions += o.thread_instructions;
        self.global_load_requests += o.global_load_requests;
        self.global_store_requests += o.global_store_requests;
        self.global_atomic_requests += o.global_atomic_requests;
        self.global_load_sectors += o.global_load_sectors;
        self.global_store_sectors += o.global_store_sectors;
        self.global_load_sectors_ideal += o.global_load_sectors_ideal;
        self.global_store_sectors_ideal += o.global_store_sectors_ideal;
        self.shared_load_requests += o.shared_load_requests;
        self.shared_store_requests += o.shared_store_requests;
        self.bank_conflicts += o.bank_conflicts;
        self.barriers += o.barriers;
        self.blocks += o.blocks;
        self.printf.extend(o.printf.iter().cloned());
        self.threads += o.threads;
        self.sectors_moved = self.global_load_sectors + self.global_store_sectors;
        self.sectors_ideal = self.global_load_sectors_ideal + self.global_store_sectors_ideal;
    }

    /// Fraction of moved sectors that were needed (1.0 = perfectly coalesced); 1.0 when no
    /// global memory was touched.
    pub fn coalescing_efficiency(&self) -> f64 {
        if self.sectors_moved == 0 {
            1.0
        } else {
            self.sectors_ideal as f64 / self.sectors_moved as f64
        }
    }
}

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

fn mask_of(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Worker {
    /// Runs one block; `linear` is its linear index in the grid.
    pub(crate) fn run_block(&mut self, l: &Launch<'_>, linear: u64) -> Result<(), Error> {
        let k = l.kernel;
        let [gx, gy, _] = l.grid;
        let ctaid = [
            (linear % gx as u64) as u32,
            ((linear / gx as u64) % gy as u64) as u32,
            (linear / (gx as u64 * gy as u64)) as u32,
        ];
        let [bx, by, bz] = l.block;
        let nthreads = bx * by * bz;
        let nwarps = nthreads.div_ceil(32) as usize;
        let nslots = k.nslots as usize;
        self.warps.resize_with(nwarps, Warp::default);
        let shared_len =
            (k.dyn_shared_offset as usize + l.dyn_shared as usize).max(k.shared_static as usize);
        self.shared.clear();
        self.shared.resize(shared_len, 0);
        self.bars.clear();
        self.bars.resize(16, BarState::default());
        for b in &mut self.bars {
            b.lanes = vec![0; nwarps];
            b.dest = vec![None; nwarps];
        }
        for (wi, w) in self.warps.iter_mut().enumerate().take(nwarps) {
            w.regs.clear();
            w.regs.resize(nslots * 32, 0);
            w.local.clear();
            w.local.resize(k.local_bytes as usize * 32, 0);
            let first = wi as u32 * 32;
            let n = (nthreads - first).min(32);
            w.valid = if n == 32 { FULL } else { (1u32 << n) - 1 };
            w.live = w.valid;
            w.blocked = 0;
            w.parked = 0;
            w.pc = [0; 32];
            w.alloc_hint = 0;
            w.stacks.resize_with(32, Vec::new);
            for st in &mut w.stacks {
                st.clear();
            }
            let uniform = |w: &mut Warp, s: Slot, v: u64| w.regs[idx(s, 0)..idx(s, 0) + 32].fill(v);
            for c in 0..3u32 {
                uniform(w, special::NTID + c, l.block[c as usize] as u64);
                uniform(w, special::CTAID + c, ctaid[c as usize] as u64);
                uniform(w, special::NCTAID + c, l.grid[c as usize] as u64);
            }
            uniform(w, special::WARPID, wi as u64);
            uniform(w, special::NWARPID, nwarps as u64);
            uniform(w, special::SMID, linear % l.nsms as u64);
            uniform(w, special::NSMID, l.nsms as u64);
            uniform(w, special::GRIDID, 1);
            uniform(w, special::DYN_SMEM, l.dyn_shared as u64);
            uniform(w, special::TOTAL_SMEM, shared_len as u64);
            // %tid counts up through x, then y, then z.
            let (mut x, mut y, mut z) = (first % bx, (first / bx) % by, first / (bx * by));
            for lane in 0..32usize {
                let set = |w: &mut Warp, s: Slot, v: u64| w.regs[idx(s, lane)] = v;
                set(w, special::TID, x as u64);
                set(w, special::TID + 1, y as u64);
                set(w, special::TID + 2, z as u64);
                x += 1;
                if x == bx {
                    x = 0;
                    y += 1;
                    if y == by {
                        y = 0;
                        z += 1;
                    }
                }
                set(w, special::LANEID, lane as u64);
                let bit = 1u64 << lane;
                set(w, special::LANEMASK_EQ, bit);
                set(w, special::LANEMASK_LT, bit - 1);
                set(
                    w,
                    special::LANEMASK_LE,
                    (bit << 1).wrapping_sub(1) & 0xffff_ffff,
                );
                set(
                    w,
                    special::LANEMASK_GT,
                    !((bit << 1).wrapping_sub(1)) & 0xffff_ffff,
                );
                set(w, special::LANEMASK_GE, !(bit - 1) & 0xffff_ffff);
            }
        }
        self.report.blocks += 1;
        self.report.threads += nthreads as u64;
        let fault_to_error = |f: Fault, wi: usize| -> Error {
            let t = wi as u32 * 32 + f.lane as u32;
            let inst = k.insts.get(f.pc as usize);
            Error::Fault {
                kind: f.kind,
                kernel: k.name.clone(),
                block: ctaid,
                thread: [t % bx, (t / bx) % by, t / (bx * by)],
                line: inst.map(|i| i.line).unwrap_or(0),
                inst: inst
                    .map(|i| k.texts[i.text as usize].clone())
                    .unwrap_or_default(),
                detail: f.detail,
            }
        };
        loop {
            let mut progressed = false;
            for wi in 0..nwarps {
                let w = &self.warps[wi];
                if w.live & !w.blocked & !w.parked == 0 {
                    continue;
                }
                progressed = true;
                let mut w = std::mem::take(&mut self.warps[wi]);
                let r = self.run_warp(l, &mut w, wi);
                let pc = w.pc[w.valid.trailing_zeros() as usize];
                self.warps[wi] = w;
                if let Err(f) = r {
                    return Err(fault_to_error(f, wi));
                }
                // Warps that stop often (at barriers) are checked here too.
                if l.executed.load(Relaxed) > l.limit {
                    let detail = format!(
                        "more than {} warp instructions executed (Device::set_instruction_limit raises the limit)",
                        l.limit
                    );
                    return Err(fault_to_error(
                        Fault {
                            kind: FaultKind::InstructionLimit,
                            lane: 0,
                            pc,
                            detail,
                        },
                        wi,
                    ));
                }
            }
            let _ = progressed;
            // Every warp is finished or waiting: release what can be released.
            if self.warps[..nwarps].iter().all(|w| w.live == 0) {
                return Ok(());
            }
            let mut released = false;
            for b in 0..self.bars.len() {
                if !self.bars[b].active {
                    continue;
                }
                let bar = &self.bars[b];
                let mut arrived = bar.arrived;
                for (wi, &m) in bar.lanes.iter().enumerate() {
                    if m != 0 {
                        let w = &self.warps[wi];
                        arrived += (w.valid & !w.live).count_ones();
                    }
                }
                let expected = bar.expected.unwrap_or(nthreads);
                if arrived >= expected {
                    let bar = std::mem::take(&mut self.bars[b]);
                    self.bars[b].lanes = vec![0; nwarps];
                    self.bars[b].dest = vec![None; nwarps];
                    let value = match bar.kind {
                        Some(BarKind::RedPopc) => bar.popc as u64,
                        Some(BarKind::RedAnd) => bar.all as u64,
                        Some(BarKind::RedOr) => bar.any as u64,
                        _ => 0,
                    };
                    for (wi, &m) in bar.lanes.iter().enumerate() {
                        let w = &mut self.warps[wi];
                        w.blocked &= !m;
                        if let Some(d) = bar.dest[wi] {
                            lanes(m, |lane| w.regs[idx(d, lane)] = value);
                        }
                    }
                    self.report.barriers += 1;
                    released = true;
                }
            }
            if !released {
                // Deadlock: describe the first waiting thread.
                let (b, bar) = self
                    .bars
                    .iter()
                    .enumerate()
                    .find(|(_, b)| b.active)
                    .map(|(i, b)| (i, b.clone()))
                    .unwrap_or_default();
                let (wi, lane) = bar.first.unwrap_or((0, 0));
                let exited_warps = self.warps[..nwarps].iter().filter(|w| w.live == 0).count();
                let detail = format!(
                    "barrier {b}: {} of {} threads arrived; {} warps of the block have exited and can never arrive",
                    bar.arrived,
                    bar.expected.unwrap_or(nthreads),
                    exited_warps
                );
                return Err(fault_to_error(
                    Fault {
                        kind: FaultKind::Deadlock,
                        lane,
                        pc: bar.pc.unwrap_or(0),
                        detail,
                    },
                    wi,
                ));
            }
        }
    }

    /// Runs one warp until none of its lanes can run.
    fn run_warp(&mut self, l: &Launch<'_>, w: &mut Warp, wi: usize) -> FResult<()> {
        let k = l.kernel;
        let insts = &k.insts[..];
        let mut gpc: u32 = 0;
        let mut gmask: u32 = 0;
        let mut others_min: u32;
        let mut others: u32;
        let mut steps: u64 = 0;
        let flush_every: u64 = 1 << 14;
        // Lanes waiting at a warp-synchronous instruction for lanes of their member mask
        // that are elsewhere; `force` is set when they are released because nothing else
        // can run, so that the next such instruction faults instead of waiting again.
        let mut force = false;
        macro_rules! regroup {
            () => {{
                lanes(gmask, |lane| w.pc[lane] = gpc);
                let run = w.live & !w.blocked & !w.parked;
                let mut min = u32::MAX;
                lanes(run, |lane| min = min.min(w.pc[lane]));
                gmask = 0;
                others_min = u32::MAX;
                lanes(run, |lane| {
                    if w.pc[lane] == min {
                        gmask |= 1 << lane;
                    } else {
                        others_min = others_min.min(w.pc[lane]);
                    }
                });
                gpc = min;
                others = run & !gmask;
            }};
        }
        regroup!();
        let result = loop {
            if gmask == 0 {
                if w.parked != 0 && w.live & w.blocked != 0 {
                    // The awaited lanes may be waiting at a barrier: stop until it opens.
                    break Ok(());
                }
                if w.parked != 0 {
                    w.parked = 0;
                    force = true;
                    regroup!();
                    continue;
                }
                break Ok(());
            }
            let Some(inst) = insts.get(gpc as usize) else {
                // Falling off the end (cannot happen: kernels end with exit).
                w.live &= !gmask;
                gmask = 0;
                regroup!();
                continue;
            };
            steps += 1;
            if steps % flush_every == 0 {
                let total = l.executed.fetch_add(flush_every, Relaxed) + flush_every;
                if total > l.limit {
                    break Err(Fault {
                        kind: FaultKind::InstructionLimit,
                        lane: gmask.trailing_zeros() as usize,
                        pc: gpc,
                        detail: format!(
                            "more than {} warp instructions executed (Device::set_instruction_limit raises the limit)",
                            l.limit
                        ),
                    });
                }
                if l.abort.load(Relaxed) {
                    break Ok(());
                }
            }
            let mut m = gmask;
            if let Some((p, neg)) = inst.guard {
                let base = (p as usize) << 5;
                let mut pm = 0u32;
                lanes(gmask, |lane| {
                    pm |= ((w.regs[base | lane] & 1) as u32) << lane
                });
                m &= if neg { !pm } else { pm };
            }
            self.report.instructions += 1;
            self.report.thread_instructions += m.count_ones() as u64;
            match &inst.op {
                Op::Bra { target } => {
                    let not = gmask & !m;
                    if m == 0 {
                        gpc += 1;
                    } else if not == 0 {
                        gpc = *target;
                    } else {
                        lanes(m, |lane| w.pc[lane] = *target);
                        lanes(not, |lane| w.pc[lane] = gpc + 1);
                        gmask = 0;
                        regroup!();
                        continue;
                    }
                    if others != 0 && gpc >= others_min {
                        regroup!();
                    }
                    continue;
                }
                Op::Call {
                    entry,
                    args,
                    regs,
                    locals,
                    ..
                } => {
                    let frame_bytes = k.local_bytes as usize;
                    let mut overflow = None;
                    lanes(m, |lane| {
                        if w.stacks[lane].len() >= MAX_CALL_DEPTH {
                            overflow = Some(lane);
                            return;
                        }
                        let saved_regs = (regs.0..regs.1).map(|s| w.regs[idx(s, lane)]).collect();
                        let base = lane * frame_bytes;
                        let mut saved_local = Vec::new();
                        for (a, b) in locals {
                            saved_local.extend_from_slice(
                                &w.local[base + *a as usize..base + *b as usize],
                            );
                        }
                        for (from, to, n) in args {
                            let (from, to, n) =
                                (base + *from as usize, base + *to as usize, *n as usize);
                            w.local.copy_within(from..from + n, to);
                        }
                        w.stacks[lane].push(Frame {
                            ret_pc: gpc + 1,
                            call_pc: gpc,
                            saved_regs,
                            saved_local,
                        });
                        w.pc[lane] = *entry;
                    });
                    if let Some(lane) = overflow {
                        break Err(Fault {
                            kind: FaultKind::Unsupported,
                            lane,
                            pc: gpc,
                            detail: format!("call stack deeper than {MAX_CALL_DEPTH} frames"),
                        });
                    }
                    lanes(gmask & !m, |lane| w.pc[lane] = gpc + 1);
                    gmask = 0;
                    regroup!();
                    continue;
                }
                Op::Ret => {
                    let frame_bytes = k.local_bytes as usize;
                    let mut bad = None;
                    lanes(m, |lane| {
                        let Some(f) = w.stacks[lane].pop() else {
                            bad = Some(lane);
                            return;
                        };
                        let Op::Call {
                            rets, regs, locals, ..
                        } = &insts[f.call_pc as usize].op
                        else {
                            unreachable!("frames are pushed by calls")
                        };
                        let base = lane * frame_bytes;
                        // The results are read before the callee's memory is restored (the
                        // caller's destination may lie in that memory when a function calls
                        // itself) and written after.
                        let mut results = Vec::new();
                        for (from, _, n) in rets {
                            let from = base + *from as usize;
                            results.extend_from_slice(&w.local[from..from + *n as usize]);
                        }
                        for (i, s) in (regs.0..regs.1).enumerate() {
                            w.regs[idx(s, lane)] = f.saved_regs[i];
                        }
                        let mut at = 0;
                        for (a, b) in locals {
                            let n = (*b - *a) as usize;
                            w.local[base + *a as usize..base + *b as usize]
                                .copy_from_slice(&f.saved_local[at..at + n]);
                            at += n;
                        }
                        let mut at = 0;
                        for (_, to, n) in rets {
                            let (to, n) = (base + *to as usize, *n as usize);
                            w.local[to..to + n].copy_from_slice(&results[at..at + n]);
                            at += n;
                        }
                        w.pc[lane] = f.ret_pc;
                    });
                    if let Some(lane) = bad {
                        break Err(Fault {
                            kind: FaultKind::Unsupported,
                            lane,
                            pc: gpc,
                            detail: "`ret` without a call".into(),
                        });
                    }
                    lanes(gmask & !m, |lane| w.pc[lane] = gpc + 1);
                    gmask = 0;
                    regroup!();
                    continue;
                }
                Op::Exit => {
                    w.live &= !m;
                    gmask &= !m;
                    gpc += 1;
                    if gmask == 0 || (others != 0 && gpc >= others_min) {
                        regroup!();
                    }
                    continue;
                }
                Op::Bar {
                    kind,
                    id,
                    count,
                    d,
                    pred,
                } => {
                    if m != 0 {
                        let idv = self.read(w, *id, m.trailing_zeros() as usize) as usize;
                        if idv >= 16 {
                            break Err(self.fault(
                                FaultKind::Unsupported,
                                m,
                                gpc,
                                format!("barrier id {idv} (must be < 16)"),
                            ));
                        }
                        let cnt =
                            count.map(|c| self.read(w, c, m.trailing_zeros() as usize) as u32);
                        let bar = &mut self.bars[idv];
                        if *kind != BarKind::Arrive
                            && let Some(p) = bar.pc
                            && p != gpc
                        {
                            let (owi, olane) = bar.first.unwrap_or((0, 0));
                            let t = owi * 32 + olane;
                            break Err(Fault {
                                kind: FaultKind::BarrierDivergence,
                                lane: m.trailing_zeros() as usize,
                                pc: gpc,
                                detail: format!(
                                    "thread with linear index {t} of this block waits at barrier {idv} on PTX line {}",
                                    insts[p as usize].line
                                ),
                            });
                        }
                        if !bar.active {
                            bar.active = true;
                            bar.all = true;
                            bar.any = false;
                            bar.popc = 0;
                        }
                        if *kind != BarKind::Arrive && bar.pc.is_none() {
                            bar.pc = Some(gpc);
                            bar.first = Some((wi, m.trailing_zeros() as usize));
                            bar.kind = Some(*kind);
                        }
                        bar.expected = cnt.or(bar.expected);
                        bar.arrived += m.count_ones();
                        if let Some((p, neg)) = pred {
                            let mut pm = 0u32;
                            lanes(m, |lane| {
                                let v = Self::read_s(&w.regs, *p, lane) & 1 != 0;
                                if v != *neg {
                                    pm |= 1 << lane;
                                }
                            });
                            bar.popc += pm.count_ones();
                            bar.all &= pm == m;
                            bar.any |= pm != 0;
                        }
                        if *kind != BarKind::Arrive {
                            bar.lanes[wi] |= m;
                            bar.dest[wi] = *d;
                            w.blocked |= m;
                            lanes(m, |lane| w.pc[lane] = gpc + 1);
                            gmask &= !m;
                        }
                    }
                    gpc += 1;
                    if gmask == 0 || (others != 0 && gpc >= others_min) {
                        regroup!();
                    }
                    continue;
                }
                _ => {}
            }
            if m != 0
                && !force
                && let Some(mask) = sync_mask(&inst.op)
            {
                // Join lanes already waiting at this instruction.
                let mut here = 0u32;
                lanes(w.parked, |lane| {
                    if w.pc[lane] == gpc {
                        here |= 1 << lane;
                    }
                });
                if here != 0 {
                    self.report.instructions -= 1;
                    self.report.thread_instructions -= m.count_ones() as u64;
                    w.parked &= !here;
                    regroup!();
                    continue;
                }
                // Wait for the lanes of the member mask that are still running elsewhere.
                let mut union = 0u32;
                lanes(m, |lane| union |= Self::read_s(&w.regs, mask, lane) as u32);
                // Lanes waiting at a barrier may come later, once it opens.
                if union & w.live & !w.parked & !gmask != 0 {
                    self.report.instructions -= 1;
                    self.report.thread_instructions -= m.count_ones() as u64;
                    w.parked |= gmask;
                    gmask = 0;
                    regroup!();
                    continue;
                }
            }
            force = false;
            if m != 0
                && let Err(mut f) = self.exec(l, w, inst, m, gmask, steps)
            {
                f.pc = gpc;
                break Err(f);
            }
            gpc += 1;
            if others != 0 && gpc >= others_min {
                regroup!();
            }
        };
        lanes(gmask, |lane| w.pc[lane] = gpc);
        l.executed.fetch_add(steps % flush_every, Relaxed);
        result
    }

    fn fault(&self, kind: FaultKind, m: u32, pc: u32, detail: String) -> Fault {
        Fault {
            kind,
            lane: m.trailing_zeros() as usize,
            pc,
            detail,
        }
    }

    #[inline(always)]
    fn read_s(regs: &[u64], s: Src, lane: usize) -> u64 {
        match s {
            Src::Reg(r) => regs[idx(r, lane)],
            Src::Imm(v) => v,
            Src::Clock | Src::Clock64 => 0,
        }
    }

    #[inline(always)]
    fn read(&self, w: &Warp, s: Src, lane: usize) -> u64 {
        match s {
            Src::Reg(r) => w.regs[idx(r, lane)],
            Src::Imm(v) => v,
            Src::Clock => self.report.instructions & 0xffff_ffff,
            Src::Clock64 => self.report.instructions,
        }
    }

    /// Executes a non-control instruction over the lanes of `m` (`group` is the converged
    /// group, for warp collectives).
    fn exec(
        &mut self,
        l: &Launch<'_>,
        w: &mut Warp,
        inst: &Inst,
        m: u32,
        group: u32,
        steps: u64,
    ) -> FResult<()> {
        let clock = self.report.instructions;
        let _ = steps;
        macro_rules! rd {
            ($s:expr, $lane:expr) => {
                match $s {
                    Src::Reg(r) => w.regs[idx(r, $lane)],
                    Src::Imm(v) => v,
                    Src::Clock => clock & 0xffff_ffff,
                    Src::Clock64 => clock,
                }
            };
        }
        match &inst.op {
            Op::Mov { ty, d, a } => {
                let (ty, d, a) = (*ty, *d, *a);
                lanes(m, |lane| {
                    let v = canon(ty, rd!(a, lane));
                    w.regs[idx(d, lane)] = v;
                });
            }
            Op::Pack { d, parts, bits } => {
                lanes(m, |lane| {
                    let mut v = 0u64;
                    for (i, p) in parts.iter().enumerate() {
                        v |= (rd!(*p, lane) & mask_of(*bits)) << (i as u32 * bits);
                    }
                    w.regs[idx(*d, lane)] = v;
                });
            }
            Op::Unpack { ds, a, bits } => {
                lanes(m, |lane| {
                    let v = rd!(*a, lane);
                    for (i, d) in ds.iter().enumerate() {
                        w.regs[idx(*d, lane)] = (v >> (i as u32 * bits)) & mask_of(*bits);
                    }
                });
            }
            Op::Int { op, ty, d, s }
                if (ty.bits() >= 32 && fast_int(*op))
                    || (*op == IntOp::MulWide && ty.bits() == 32) =>
            {
                // Common 32/64-bit operations: the low bits of wrapping u64 arithmetic on
                // the operands are the result, whatever the signedness.
                let (op, ty, d, s) = (*op, *ty, *d, *s);
                macro_rules! binop {
                    ($f:expr) => {
                        lanes(m, |lane| {
                            let (a, b) = (rd!(s[0], lane), rd!(s[1], lane));
                            w.regs[idx(d, lane)] = canon(ty, $f(a, b, lane));
                        })
                    };
                }
                match op {
                    IntOp::Add => binop!(|a: u64, b: u64, _| a.wrapping_add(b)),
                    IntOp::Sub => binop!(|a: u64, b: u64, _| a.wrapping_sub(b)),
                    IntOp::MulLo => binop!(|a: u64, b: u64, _| a.wrapping_mul(b)),
                    IntOp::And => binop!(|a: u64, b: u64, _| a & b),
                    IntOp::Or => binop!(|a: u64, b: u64, _| a | b),
                    IntOp::Xor => binop!(|a: u64, b: u64, _| a ^ b),
                    IntOp::MadLo => {
                        let c = s[2];
                        lanes(m, |lane| {
                            let (a, b, cv) = (rd!(s[0], lane), rd!(s[1], lane), rd!(c, lane));
                            w.regs[idx(d, lane)] = canon(ty, a.wrapping_mul(b).wrapping_add(cv));
                        })
                    }
                    // The 64-bit products below are already canonical for the wide type.
                    IntOp::MulWide if ty == Ty::S32 => lanes(m, |lane| {
                        let (a, b) = (rd!(s[0], lane), rd!(s[1], lane));
                        w.regs[idx(d, lane)] =
                            (a as i32 as i64).wrapping_mul(b as i32 as i64) as u64;
                    }),
                    _ => lanes(m, |lane| {
                        let (a, b) = (rd!(s[0], lane), rd!(s[1], lane));
                        w.regs[idx(d, lane)] = (a as u32 as u64) * (b as u32 as u64);
                    }),
                }
            }
            Op::Float {
                op,
                ty: Ty::F32,
                rnd: Rnd::Default | Rnd::Rn,
                ftz: false,
                sat: false,
                d,
                s,
            } if matches!(op, FOp::Add | FOp::Sub | FOp::Mul | FOp::Fma) => {
                let (op, d, s) = (*op, *d, *s);
                macro_rules! fop {
                    ($f:expr) => {
                        lanes(m, |lane| {
                            let a = f32::from_bits(rd!(s[0], lane) as u32);
                            let b = f32::from_bits(rd!(s[1], lane) as u32);
                            let r: f32 = $f(a, b, lane);
                            w.regs[idx(d, lane)] = if r.is_nan() {
                                fpu::F32_NAN as u64
                            } else {
                                r.to_bits() as u64
                            };
                        })
                    };
                }
                match op {
                    FOp::Add => fop!(|a: f32, b: f32, _| a + b),
                    FOp::Sub => fop!(|a: f32, b: f32, _| a - b),
                    FOp::Mul => fop!(|a: f32, b: f32, _| a * b),
                    _ => {
                        let c = s[2];
                        lanes(m, |lane| {
                            let a = f32::from_bits(rd!(s[0], lane) as u32);
                            let b = f32::from_bits(rd!(s[1], lane) as u32);
                            let cv = f32::from_bits(rd!(c, lane) as u32);
                            let r = a.mul_add(b, cv);
                            w.regs[idx(d, lane)] = if r.is_nan() {
                                fpu::F32_NAN as u64
                            } else {
                                r.to_bits() as u64
                            };
                        })
                    }
                }
            }
            Op::Int { op, ty, d, s } => {
                let (op, ty, d, s) = (*op, *ty, *d, *s);
                let mut err = None;
                lanes(m, |lane| {
                    let a = canon(ty, rd!(s[0], lane));
                    let b = rd!(s[1], lane);
                    let c = rd!(s[2], lane);
                    let e = rd!(s[3], lane);
                    let carry = w.regs[idx(special::CARRY, lane)];
                    match int_op(op, ty, a, b, c, e, carry) {
                        Ok((v, cout)) => {
                            w.regs[idx(d, lane)] = v;
                            if let Some(co) = cout {
                                w.regs[idx(special::CARRY, lane)] = co;
                            }
                        }
                        Err(msg) => {
                            if err.is_none() {
                                err = Some((lane, msg));
                            }
                        }
                    }
                });
                if let Some((lane, detail)) = err {
                    return Err(Fault {
                        kind: FaultKind::Unsupported,
                        lane,
                        pc: 0,
                        detail,
                    });
                }
            }
            Op::Float {
                op,
                ty,
                rnd,
                ftz,
                sat,
                d,
                s,
            } => {
                let (op, ty, rnd, ftz, sat, d, s) = (*op, *ty, *rnd, *ftz, *sat, *d, *s);
                lanes(m, |lane| {
                    let a = rd!(s[0], lane);
                    let b = rd!(s[1], lane);
                    let c = rd!(s[2], lane);
                    w.regs[idx(d, lane)] = float_op(op, ty, rnd, ftz, sat, a, b, c);
                });
            }
            Op::Setp {
                cmp,
                ty,
                ftz,
                d,
                d2,
                comb,
                a,
                b,
            } => {
                let (cmp, ty, ftz, d, d2, comb, a, b) = (*cmp, *ty, *ftz, *d, *d2, *comb, *a, *b);
                lanes(m, |lane| {
                    let r = compare(cmp, ty, ftz, rd!(a, lane), rd!(b, lane));
                    let (p, q) = match comb {
                        None => (r, !r),
                        Some((op, c, neg)) => {
                            let cv = (rd!(c, lane) & 1 != 0) != neg;
                            (bool_op(op, r, cv), bool_op(op, !r, cv))
                        }
                    };
                    w.regs[idx(d, lane)] = p as u64;
                    if let Some(d2) = d2 {
                        w.regs[idx(d2, lane)] = q as u64;
                    }
                });
            }
            Op::Set {
                cmp,
                dty,
                sty,
                ftz,
                d,
                comb,
                a,
                b,
            } => {
                let (cmp, dty, sty, ftz, d, comb, a, b) =
                    (*cmp, *dty, *sty, *ftz, *d, *comb, *a, *b);
                lanes(m, |lane| {
                    let mut r = compare(cmp, sty, ftz, rd!(a, lane), rd!(b, lane));
                    if let Some((op, c, neg)) = comb {
                        r = bool_op(op, r, (rd!(c, lane) & 1 != 0) != neg);
                    }
                    w.regs[idx(d, lane)] = match dty {
                        Ty::F32 => {
                            if r {
                                1f32.to_bits() as u64
                            } else {
                                0
                            }
                        }
                        _ => {
                            if r {
                                0xffff_ffff
                            } else {
                                0
                            }
                        }
                    };
                });
            }
            Op::Selp { ty, d, a, b, c } => {
                let (ty, d, a, b, c) = (*ty, *d, *a, *b, *c);
                lanes(m, |lane| {
                    let v = if rd!(c, lane) & 1 != 0 {
                        rd!(a, lane)
                    } else {
                        rd!(b, lane)
                    };
                    w.regs[idx(d, lane)] = canon(ty, v);
                });
            }
            Op::Slct {
                ty,
                cty,
                ftz,
                d,
                a,
                b,
                c,
            } => {
                let (ty, cty, ftz, d, a, b, c) = (*ty, *cty, *ftz, *d, *a, *b, *c);
                lanes(m, |lane| {
                    let cv = rd!(c, lane);
                    let ge = if cty == Ty::F32 {
                        let f = f32::from_bits(cv as u32);
                        let f = if ftz { fpu::ftz32(f) } else { f };
                        f >= 0.0
                    } else {
                        (cv as u32 as i32) >= 0
                    };
                    let v = if ge { rd!(a, lane) } else { rd!(b, lane) };
                    w.regs[idx(d, lane)] = canon(ty, v);
                });
            }
            Op::Cvt {
                dty,
                sty,
                rnd,
                sat,
                ftz,
                d,
                a,
            } => {
                let (dty, sty, rnd, sat, ftz, d, a) = (*dty, *sty, *rnd, *sat, *ftz, *d, *a);
                lanes(m, |lane| {
                    w.regs[idx(d, lane)] = convert(dty, sty, rnd, sat, ftz, rd!(a, lane));
                });
            }
            Op::Cvta { to, space, d, a } => {
                let (to, space, d, a) = (*to, *space, *d, *a);
                let base = match space {
                    MemSpace::Shared => SHARED_WINDOW,
                    MemSpace::Local => LOCAL_WINDOW,
                    MemSpace::Param => PARAM_WINDOW,
                    _ => 0,
                };
                lanes(m, |lane| {
                    let v = rd!(a, lane);
                    w.regs[idx(d, lane)] = if base == 0 {
                        v
                    } else if to {
                        v.wrapping_sub(base)
                    } else {
                        v.wrapping_add(base)
                    };
                });
            }
            Op::Isspacep { space, d, a } => {
                let (space, d, a) = (*space, *d, *a);
                lanes(m, |lane| {
                    let v = rd!(a, lane);
                    let s = generic_space(v);
                    let r = match space {
                        MemSpace::Global | MemSpace::Const => s == MemSpace::Global,
                        other => s == other,
                    };
                    w.regs[idx(d, lane)] = r as u64;
                });
            }
            Op::Ld {
                space,
                ty,
                n,
                ds,
                base,
                off,
            } => {
                self.load(l, w, *space, *ty, *n, ds, *base, *off, m)?;
            }
            Op::St {
                space,
                ty,
                n,
                srcs,
                base,
                off,
            } => {
                self.store(l, w, *space, *ty, *n, srcs, *base, *off, m)?;
            }
            Op::Atom {
                space,
                op,
                ty,
                d,
                base,
                off,
                b,
                c,
            } => {
                self.atomic(l, w, *space, *op, *ty, *d, *base, *off, *b, *c, m)?;
            }
            Op::WarpSync { mask } => {
                self.member_masks(w, *mask, m, group, "bar.warp.sync")?;
            }
            Op::Shfl {
                mode,
                d,
                p,
                a,
                b,
                c,
                mask,
            } => {
                self.member_masks(w, *mask, m, group, "shfl.sync")?;
                let mut src = [0u64; 32];
                for (lane, s) in src.iter_mut().enumerate() {
                    *s = rd!(*a, lane) & 0xffff_ffff;
                }
                let (mode, d, p, b, c) = (*mode, *d, *p, *b, *c);
                lanes(m, |lane| {
                    let bval = (rd!(b, lane) & 0x1f) as i32;
                    let cv = rd!(c, lane) as u32;
                    let segmask = ((cv >> 8) & 0x1f) as i32;
                    let clamp = (cv & 0x1f) as i32;
                    let li = lane as i32;
                    let max_lane = (li & segmask) | (clamp & !segmask);
                    let min_lane = li & segmask;
                    let (j, pval) = match mode {
                        ShflMode::Up => {
                            let j = li - bval;
                            (j, j >= max_lane)
                        }
                        ShflMode::Down => {
                            let j = li + bval;
                            (j, j <= max_lane)
                        }
                        ShflMode::Bfly => {
                            let j = li ^ bval;
                            (j, j <= max_lane)
                        }
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !segmask);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval && (0..32).contains(&j) {
                        j as usize
                    } else {
                        lane
                    };
                    w.regs[idx(d, lane)] = src[j];
                    if let Some(p) = p {
                        w.regs[idx(p, lane)] = pval as u64;
                    }
                });
            }
            Op::Vote {
                mode,
                d,
                a,
                neg,
                mask,
            } => {
                // Each lane's member mask may differ (tiles of a warp): results per lane.
                let masks = self.member_masks(w, *mask, m, group, "vote.sync")?;
                let mut ballot = 0u32;
                let (a, neg) = (*a, *neg);
                lanes(m, |lane| {
                    if (rd!(a, lane) & 1 != 0) != neg {
                        ballot |= 1 << lane;
                    }
                });
                let (mode, d) = (*mode, *d);
                lanes(m, |lane| {
                    let members = m & masks[lane];
                    let b = ballot & members;
                    w.regs[idx(d, lane)] = match mode {
                        VoteMode::Ballot => b as u64,
                        VoteMode::All => (b == members) as u64,
                        VoteMode::Any => (b != 0) as u64,
                        VoteMode::Uni => (b == members || b == 0) as u64,
                    };
                });
            }
            Op::Activemask { d } => {
                let d = *d;
                lanes(m, |lane| w.regs[idx(d, lane)] = group as u64);
            }
            Op::Match {
                all,
                ty,
                d,
                p,
                a,
                mask,
            } => {
                let masks = self.member_masks(w, *mask, m, group, "match.sync")?;
                let mut vals = [0u64; 32];
                lanes(m, |lane| vals[lane] = canon(*ty, rd!(*a, lane)));
                let (all, d, p) = (*all, *d, *p);
                lanes(m, |lane| {
                    let members = m & masks[lane];
                    let mut same = 0u32;
                    lanes(members, |o| {
                        if vals[o] == vals[lane] {
                            same |= 1 << o;
                        }
                    });
                    if all {
                        let ok = same == members;
                        w.regs[idx(d, lane)] = if ok { members as u64 } else { 0 };
                        if let Some(p) = p {
                            w.regs[idx(p, lane)] = ok as u64;
                        }
                    } else {
                        w.regs[idx(d, lane)] = same as u64;
                    }
                });
            }
            Op::Redux { op, ty, d, a, mask } => {
                let masks = self.member_masks(w, *mask, m, group, "redux.sync")?;
                let signed = ty.signed();
                let mut vals = [0u64; 32];
                lanes(m, |lane| vals[lane] = rd!(*a, lane) & 0xffff_ffff);
                let (op, d) = (*op, *d);
                lanes(m, |lane| {
                    let mut acc: Option<u64> = None;
                    lanes(m & masks[lane], |o| {
                        let v = vals[o];
                        acc = Some(match acc {
                            None => v,
                            Some(x) => match op {
                                ReduxOp::Add => (x + v) & 0xffff_ffff,
                                ReduxOp::And => x & v,
                                ReduxOp::Or => x | v,
                                ReduxOp::Xor => x ^ v,
                                ReduxOp::Min if signed => {
                                    (x as u32 as i32).min(v as u32 as i32) as u32 as u64
                                }
                                ReduxOp::Max if signed => {
                                    (x as u32 as i32).max(v as u32 as i32) as u32 as u64
                                }
                                ReduxOp::Min => x.min(v),
                                ReduxOp::Max => x.max(v),
                            },
                        });
                    });
                    w.regs[idx(d, lane)] = acc.unwrap_or(0);
                });
            }
            Op::Testp { what, ty, d, a } => {
                let (what, ty, d, a) = (*what, *ty, *d, *a);
                lanes(m, |lane| {
                    let v = rd!(a, lane);
                    let x = if ty == Ty::F32 {
                        f32::from_bits(v as u32) as f64
                    } else {
                        f64::from_bits(v)
                    };
                    let sub = if ty == Ty::F32 {
                        f32::from_bits(v as u32).is_subnormal()
                    } else {
                        x.is_subnormal()
                    };
                    let r = match what {
                        TestP::Finite => x.is_finite(),
                        TestP::Infinite => x.is_infinite(),
                        TestP::Number => !x.is_nan(),
                        TestP::NotANumber => x.is_nan(),
                        TestP::Normal => x.is_finite() && x != 0.0 && !sub,
                        TestP::Subnormal => sub,
                    };
                    w.regs[idx(d, lane)] = r as u64;
                });
            }
            Op::CpAsync {
                dst,
                dst_off,
                src,
                src_off,
                size,
                src_size,
            } => {
                self.cp_async(l, w, *dst, *dst_off, *src, *src_off, *size, *src_size, m)?;
            }
            Op::Printf { fmt, args, ret } => {
                let frame = l.kernel.local_bytes as usize;
                let ctaid = [
                    w.regs[idx(special::CTAID, 0)],
                    w.regs[idx(special::CTAID + 1, 0)],
                    w.regs[idx(special::CTAID + 2, 0)],
                ];
                let mut err = None;
                lanes(m, |lane| {
                    if err.is_some() {
                        return;
                    }
                    let base = lane * frame;
                    let f = read_bytes(&w.local, base + *fmt as usize, 8);
                    let a = read_bytes(&w.local, base + *args as usize, 8);
                    let tid = [
                        w.regs[idx(special::TID, lane)],
                        w.regs[idx(special::TID + 1, lane)],
                        w.regs[idx(special::TID + 2, lane)],
                    ];
                    let mut read = |addr: u64, size: u32| -> FResult<u64> {
                        let shared_len = self.shared.len();
                        match locate(l, shared_len, w, MemSpace::Generic, addr, size, lane, false)?
                        {
                            Loc::Global(i, o) => Ok(l.global.allocs[i].load(o, size)),
                            Loc::Shared(o) => Ok(read_bytes(&self.shared, o, size)),
                            Loc::Local(o) => Ok(read_bytes(&w.local, o, size)),
                            Loc::Param(o) => Ok(read_bytes(l.params, o, size)),
                        }
                    };
                    match crate::printf::format(f, a, &mut read) {
                        Ok(text) => {
                            let n = text.len();
                            self.report.printf.push(format!(
                                "[block ({},{},{}) thread ({},{},{})] {}",
                                ctaid[0], ctaid[1], ctaid[2], tid[0], tid[1], tid[2], text
                            ));
                            if let Some(r) = ret {
                                write_bytes(&mut w.local, base + *r as usize, 4, n as u64);
                            }
                        }
                        Err(mut e) => {
                            e.lane = lane;
                            err = Some(e);
                        }
                    }
                });
                if let Some(e) = err {
                    return Err(e);
                }
            }
            Op::AssertFail {
                msg,
                file,
                line,
                func,
            } => {
                let lane = m.trailing_zeros() as usize;
                let base = lane * l.kernel.local_bytes as usize;
                let ptr = |o: u32| read_bytes(&w.local, base + o as usize, 8);
                let (pm, pf, pfn) = (ptr(*msg), ptr(*file), ptr(*func));
                let src_line = read_bytes(&w.local, base + *line as usize, 4);
                let mut read = |addr: u64, size: u32| -> FResult<u64> {
                    match locate(
                        l,
                        self.shared.len(),
                        w,
                        MemSpace::Generic,
                        addr,
                        size,
                        lane,
                        false,
                    )? {
                        Loc::Global(i, o) => Ok(l.global.allocs[i].load(o, size)),
                        Loc::Shared(o) => Ok(read_bytes(&self.shared, o, size)),
                        Loc::Local(o) => Ok(read_bytes(&w.local, o, size)),
                        Loc::Param(o) => Ok(read_bytes(l.params, o, size)),
                    }
                };
                let text = |p: u64, read: &mut dyn FnMut(u64, u32) -> FResult<u64>| {
                    crate::printf::c_string(p, &mut |a, s| read(a, s))
                        .unwrap_or_else(|_| "?".into())
                };
                let (tm, tf, tfn) = (
                    text(pm, &mut read),
                    text(pf, &mut read),
                    text(pfn, &mut read),
                );
                return Err(Fault {
                    kind: FaultKind::Trap,
                    lane,
                    pc: 0,
                    detail: format!("assertion `{tm}` failed ({tf}:{src_line}, in {tfn})"),
                });
            }
            Op::Trap => {
                return Err(Fault {
                    kind: FaultKind::Trap,
                    lane: m.trailing_zeros() as usize,
                    pc: 0,
                    detail: "the kernel executed `trap`".into(),
                });
            }
            Op::Unsupported(msg) => {
                return Err(Fault {
                    kind: FaultKind::Unsupported,
                    lane: m.trailing_zeros() as usize,
                    pc: 0,
                    detail: msg.clone(),
                });
            }
            Op::Nop => {}
            Op::Fence => std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst),
            Op::Sleep => std::thread::sleep(SLEEP),
            Op::Bra { .. } | Op::Exit | Op::Bar { .. } | Op::Call { .. } | Op::Ret => {
                unreachable!("control flow is handled by run_warp")
            }
        }
        Ok(())
    }

    /// `cp.async`: copies global to shared memory at once (so waiting is a no-op).
    #[allow(clippy::too_many_arguments)]
    fn cp_async(
        &mut self,
        l: &Launch<'_>,
        w: &mut Warp,
        dst: Src,
        dst_off: i64,
        src: Src,
        src_off: i64,
        size: u32,
        src_size: Option<Src>,
        m: u32,
    ) -> FResult<()> {
        let shared_len = self.shared.len();
        let mut addrs = [0u64; 32];
        let mut locs = [Loc::Shared(0); 32];
        let mut srcs = [Loc::Shared(0); 32];
        let mut res = Ok(());
        lanes(m, |lane| {
            if res.is_err() {
                return;
            }
            let s = Self::read_s(&w.regs, src, lane).wrapping_add(src_off as u64);
            let d = Self::read_s(&w.regs, dst, lane).wrapping_add(dst_off as u64);
            addrs[lane] = s;
            match (
                locate(l, shared_len, w, MemSpace::Global, s, size, lane, false),
                locate(l, shared_len, w, MemSpace::Shared, d, size, lane, true),
            ) {
                (Ok(a), Ok(b)) => {
                    srcs[lane] = a;
                    locs[lane] = b;
                }
                (Err(f), _) | (_, Err(f)) => res = Err(f),
            }
        });
        res?;
        self.count_global_load(&addrs, m, size);
        self.report.shared_store_requests += 1;
        self.report.bank_conflicts += bank_conflicts(&locs, m, size);
        lanes(m, |lane| {
            let n = src_size
                .map(|s| (Self::read_s(&w.regs, s, lane) as u32).min(size))
                .unwrap_or(size);
            let (Loc::Global(i, o), Loc::Shared(d)) = (srcs[lane], locs[lane]) else {
                unreachable!("located above")
            };
            for k in 0..size {
                let v = if k < n {
                    l.global.allocs[i].load(o + k as u64, 1)
                } else {
                    0
                };
                self.shared[d + k as usize] = v as u8;
            }
        });
        Ok(())
    }

    fn count_global_load(&mut self, addrs: &[u64; 32], m: u32, size: u32) {
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

    /// Each active lane's member mask; faults if any names a live lane outside the group.
    fn member_masks(
        &self,
        w: &Warp,
        mask: Src,
        m: u32,
        group: u32,
        what: &str,
    ) -> FResult<[u32; 32]> {
        let mut masks = [0u32; 32];
        let mut union = 0u32;
        lanes(m, |lane| {
            let v = Self::read_s(&w.regs, mask, lane) as u32;
            masks[lane] = v;
            union |= v;
        });
        self.check_converged(w, union, group, what)?;
        Ok(masks)
    }

    /// Faults when lanes named by `mask` are still alive but not part of the executing group.
    fn check_converged(&self, w: &Warp, mask: u32, group: u32, what: &str) -> FResult<()> {
        // Lanes past the end of a partial last warp do not exist and are ignored.
        let missing = mask & w.valid & !group;
        if missing != 0 {
            let lane = missing.trailing_zeros();
            let where_ = if w.live & (1 << lane) == 0 {
                "has exited"
            } else {
                "is at a different instruction"
            };
            return Err(Fault {
                kind: FaultKind::WarpSync,
                lane: group.trailing_zeros() as usize,
                pc: 0,
                detail: format!(
                    "`{what}` member mask {mask:#010x} names lane {lane}, which {where_}"
                ),
            });
        }
        Ok(())
    }
}

/// Resolves one lane's access to a location, checking alignment and bounds.
#[inline]
#[allow(clippy::too_many_arguments)]
fn locate(
    l: &Launch<'_>,
    shared_len: usize,
    w: &mut Warp,
    space: MemSpace,
    addr: u64,
    size: u32,
    lane: usize,
    write: bool,
) -> FResult<Loc> {
    if addr % size as u64 != 0 {
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
            let a = match s {
                MemSpace::Shared => addr - SHARED_WINDOW,
                MemSpace::Local => addr - LOCAL_WINDOW,
                MemSpace::Param => addr - PARAM_WINDOW,
                _ => addr,
            };
            (s, a)
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
    fn load(
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
        let shared_len = self.shared.len();
        let mut addrs = [0u64; 32];
        let mut locs = [Loc::Shared(0); 32];
        let mut gmask = 0u32;
        let mut smask = 0u32;
        let mut res = Ok(());
        lanes(m, |lane| {
            if res.is_err() {
                return;
            }
            let a = Self::read_s(&w.regs, base, lane).wrapping_add(off as u64);
            addrs[lane] = a;
            match locate(l, shared_len, w, space, a, total, lane, false) {
                Ok(loc) => {
                    match loc {
                        Loc::Global(..) if space != MemSpace::Const => gmask |= 1 << lane,
                        Loc::Shared(_) => smask |= 1 << lane,
                        _ => {}
                    }
                    locs[lane] = loc;
                }
                Err(f) => res = Err(f),
            }
        });
        res?;
        if gmask != 0 {
            self.count_global_load(&addrs, gmask, total);
        }
        if smask != 0 {
            self.report.shared_load_requests += 1;
            self.report.bank_conflicts += bank_conflicts(&locs, smask, total);
        }
        lanes(m, |lane| {
            for (e, d) in ds.iter().enumerate().take(n as usize) {
                let at = e as u64 * esize as u64;
                let raw = match locs[lane] {
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
    fn store(
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
        let shared_len = self.shared.len();
        let mut addrs = [0u64; 32];
        let mut locs = [Loc::Shared(0); 32];
        let mut gmask = 0u32;
        let mut smask = 0u32;
        let mut res = Ok(());
        lanes(m, |lane| {
            if res.is_err() {
                return;
            }
            let a = Self::read_s(&w.regs, base, lane).wrapping_add(off as u64);
            addrs[lane] = a;
            match locate(l, shared_len, w, space, a, total, lane, true) {
                Ok(loc) => {
                    match loc {
                        Loc::Global(..) => gmask |= 1 << lane,
                        Loc::Shared(_) => smask |= 1 << lane,
                        _ => {}
                    }
                    locs[lane] = loc;
                }
                Err(f) => res = Err(f),
            }
        });
        res?;
        if gmask != 0 {
            self.count_global_store(&addrs, gmask, total);
        }
        if smask != 0 {
            self.report.shared_store_requests += 1;
            self.report.bank_conflicts += bank_conflicts(&locs, smask, total);
        }
        lanes(m, |lane| {
            for (e, src) in srcs.iter().enumerate().take(n as usize) {
                let at = e as u64 * esize as u64;
                let v = Self::read_s(&w.regs, *src, lane);
                match locs[lane] {
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
    fn atomic(
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
enum Loc {
    Global(usize, u64),
    Shared(usize),
    Local(usize),
    Param(usize),
}

/// The member mask of a warp-synchronous instruction.
fn sync_mask(op: &Op) -> Option<Src> {
    match op {
        Op::Shfl { mask, .. }
        | Op::Vote { mask, .. }
        | Op::Match { mask, .. }
        | Op::Redux { mask, .. }
        | Op::WarpSync { mask } => Some(*mask),
        _ => None,
    }
}

/// Integer operations with a fast path at 32 and 64 bits.
fn fast_int(op: IntOp) -> bool {
    matches!(
        op,
        IntOp::Add | IntOp::Sub | IntOp::MulLo | IntOp::MadLo | IntOp::And | IntOp::Or | IntOp::Xor
    )
}

fn generic_space(a: u64) -> MemSpace {
    if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&a) {
        MemSpace::Shared
    } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&a) {
        MemSpace::Local
    } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&a) {
        MemSpace::Param
    } else {
        MemSpace::Global
    }
}

#[inline]
fn read_bytes(buf: &[u8], at: usize, size: u32) -> u64 {
    let mut b = [0u8; 8];
    let n = size.min(8) as usize;
    b[..n].copy_from_slice(&buf[at..at + n]);
    u64::from_le_bytes(b)
}

#[inline]
fn write_bytes(buf: &mut [u8], at: usize, size: u32, v: u64) {
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
fn bank_conflicts(locs: &[Loc; 32], m: u32, size: u32) -> u64 {
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
    if same || (contiguous && size % 4 == 0) {
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

fn bool_op(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a && b,
        BoolOp::Or => a || b,
        BoolOp::Xor => a != b,
    }
}

fn to_f64(ty: Ty, v: u64, ftz: bool) -> f64 {
    match ty {
        Ty::F32 => {
            let f = f32::from_bits(v as u32);
            (if ftz { fpu::ftz32(f) } else { f }) as f64
        }
        Ty::F16 => fpu::from_small_float(v as u32 & 0xffff, 10, 5),
        Ty::Bf16 => fpu::from_small_float(v as u32 & 0xffff, 7, 8),
        _ => f64::from_bits(v),
    }
}

fn compare(cmp: Cmp, ty: Ty, ftz: bool, a: u64, b: u64) -> bool {
    if ty.float() {
        let (x, y) = (to_f64(ty, a, ftz), to_f64(ty, b, ftz));
        let un = x.is_nan() || y.is_nan();
        return match cmp {
            Cmp::Eq => x == y,
            Cmp::Ne => !un && x != y,
            Cmp::Lt | Cmp::Lo => x < y,
            Cmp::Le | Cmp::Ls => x <= y,
            Cmp::Gt | Cmp::Hi => x > y,
            Cmp::Ge | Cmp::Hs => x >= y,
            Cmp::Equ => un || x == y,
            Cmp::Neu => un || x != y,
            Cmp::Ltu => un || x < y,
            Cmp::Leu => un || x <= y,
            Cmp::Gtu => un || x > y,
            Cmp::Geu => un || x >= y,
            Cmp::Num => !un,
            Cmp::Nan => un,
        };
    }
    let (a, b) = (canon(ty, a), canon(ty, b));
    let signed = ty.signed();
    let lt = if signed {
        (a as i64) < (b as i64)
    } else {
        a < b
    };
    let ult = a < b;
    match cmp {
        Cmp::Eq | Cmp::Equ => a == b,
        Cmp::Ne | Cmp::Neu => a != b,
        Cmp::Lt | Cmp::Ltu => lt,
        Cmp::Le | Cmp::Leu => lt || a == b,
        Cmp::Gt | Cmp::Gtu => !lt && a != b,
        Cmp::Ge | Cmp::Geu => !lt,
        Cmp::Lo => ult,
        Cmp::Ls => ult || a == b,
        Cmp::Hi => !ult && a != b,
        Cmp::Hs => !ult,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// Integer operation on canonical operands; returns (result, carry out).
fn int_op(
    op: IntOp,
    ty: Ty,
    a: u64,
    b: u64,
    c: u64,
    e: u64,
    carry: u64,
) -> Result<(u64, Option<u64>), String> {
    let bits = ty.bits();
    let msk = mask_of(bits);
    let signed = ty.signed();
    let b = canon(ty, b);
    let sx = |v: u64| -> i128 { if signed { v as i64 as i128 } else { v as i128 } };
    let wrap = |v: i128| -> u64 { canon(ty, v as u64 & msk) };
    let r = match op {
        IntOp::Add => wrap(sx(a) + sx(b)),
        IntOp::Sub => wrap(sx(a) - sx(b)),
        IntOp::AddSat => (a as i32).saturating_add(b as i32) as i64 as u64,
        IntOp::SubSat => (a as i32).saturating_sub(b as i32) as i64 as u64,
        IntOp::AddC { cin, cout } => {
            let s =
                (a & msk) as u128 + (b & msk) as u128 + if cin { (carry & 1) as u128 } else { 0 };
            let co = if cout {
                Some(((s >> bits) & 1) as u64)
            } else {
                None
            };
            return Ok((canon(ty, s as u64 & msk), co));
        }
        IntOp::SubC { cin, cout } => {
            let bin = if cin { carry & 1 } else { 0 };
            let s = ((a & msk) as i128) - ((b & msk) as i128) - bin as i128;
            let co = if cout { Some((s < 0) as u64) } else { None };
            return Ok((canon(ty, s as u64 & msk), co));
        }
        IntOp::MadC { hi, cin, cout } => {
            let part = if hi {
                mul_hi(a, b, bits, signed, msk) & msk
            } else {
                sx(a).wrapping_mul(sx(b)) as u64 & msk
            };
            let cc = canon(ty, c) & msk;
            let s = part as u128 + cc as u128 + if cin { (carry & 1) as u128 } else { 0 };
            let co = if cout {
                Some(((s >> bits) & 1) as u64)
            } else {
                None
            };
            return Ok((canon(ty, s as u64 & msk), co));
        }
        IntOp::MulLo => wrap(sx(a).wrapping_mul(sx(b))),
        IntOp::MulHi => mul_hi(a, b, bits, signed, msk),
        IntOp::MulWide => {
            let p = sx(a) * sx(b);
            canon(ty.widened(), p as u64 & mask_of(bits * 2))
        }
        IntOp::Mul24Lo => {
            let x = sx(a & 0xff_ffff)
                - if signed && a & 0x80_0000 != 0 {
                    1 << 24
                } else {
                    0
                };
            let y = sx(b & 0xff_ffff)
                - if signed && b & 0x80_0000 != 0 {
                    1 << 24
                } else {
                    0
                };
            wrap(x * y)
        }
        IntOp::Mul24Hi => {
            let x = (a & 0xff_ffff) as i128
                - if signed && a & 0x80_0000 != 0 {
                    1 << 24
                } else {
                    0
                };
            let y = (b & 0xff_ffff) as i128
                - if signed && b & 0x80_0000 != 0 {
                    1 << 24
                } else {
                    0
                };
            wrap((x * y) >> 16)
        }
        IntOp::MadLo => wrap(sx(a).wrapping_mul(sx(b)).wrapping_add(sx(canon(ty, c)))),
        IntOp::MadHi => wrap(sx(mul_hi(a, b, bits, signed, msk)) + sx(canon(ty, c))),
        IntOp::MadHiSat => {
            let v = ((sx(a) * sx(b)) >> 32) + sx(canon(ty, c));
            v.clamp(i32::MIN as i128, i32::MAX as i128) as i64 as u64
        }
        IntOp::MadWide => {
            let wt = ty.widened();
            let p = sx(a) * sx(b);
            let cc = canon(wt, c);
            let cv = if signed {
                cc as i64 as i128
            } else {
                cc as i128
            };
            canon(wt, (p + cv) as u64 & mask_of(bits * 2))
        }
        IntOp::Mad24Lo => {
            let x = (a & 0xff_ffff) as i128
                - if signed && a & 0x80_0000 != 0 {
                    1 << 24
                } else {
                    0
                };
            let y = (b & 0xff_ffff) as i128
                - if signed && b & 0x80_0000 != 0 {
                    1 << 24
                } else {
                    0
                };
            wrap(x * y + sx(canon(ty, c)))
        }
        IntOp::Div => {
            if b & msk == 0 {
                msk
            } else {
                wrap(sx(a).wrapping_div(sx(b)))
            }
        }
        IntOp::Rem => {
            if b & msk == 0 {
                a
            } else {
                wrap(sx(a).wrapping_rem(sx(b)))
            }
        }
        IntOp::And => (a & b) & msk,
        IntOp::Or => (a | b) & msk,
        IntOp::Xor => (a ^ b) & msk,
        IntOp::Not => !a & msk,
        IntOp::Cnot => (a & msk == 0) as u64,
        IntOp::Shl => {
            let s = b as u32 as u64;
            if s >= bits as u64 {
                0
            } else {
                canon(ty, (a << s) & msk)
            }
        }
        IntOp::Shr => {
            let s = (b as u32 as u64).min(bits as u64 - 1 + u64::from(!signed));
            if signed {
                canon(ty, ((a as i64) >> s.min(63)) as u64 & msk)
            } else if s >= bits as u64 {
                0
            } else {
                (a & msk) >> s
            }
        }
        IntOp::Min => {
            if signed {
                (a as i64).min(b as i64) as u64
            } else {
                a.min(b)
            }
        }
        IntOp::Max => {
            if signed {
                (a as i64).max(b as i64) as u64
            } else {
                a.max(b)
            }
        }
        IntOp::Abs => wrap((a as i64 as i128).abs()),
        IntOp::Neg => wrap(-(sx(a))),
        IntOp::Popc => (a & msk).count_ones() as u64,
        IntOp::Clz => ((a & msk).leading_zeros() - (64 - bits)) as u64,
        IntOp::Brev => ((a & msk).reverse_bits() >> (64 - bits)) & msk,
        IntOp::Bfe => {
            let pos = (b & 0xff) as u32;
            let len = (c & 0xff) as u32;
            let raw = a & msk;
            let sbit = if signed {
                if len == 0 {
                    false
                } else {
                    let top = (pos + len - 1).min(bits - 1);
                    (raw >> top) & 1 == 1
                }
            } else {
                false
            };
            let mut v = 0u64;
            for i in 0..bits {
                // Bits past the source's top (and above the field) take the sign bit.
                let bit = if i < len && pos + i < bits {
                    (raw >> (pos + i)) & 1
                } else {
                    sbit as u64
                };
                v |= bit << i;
            }
            canon(ty, v & msk)
        }
        IntOp::Bfi => {
            // bfi d, a, b, pos, len: insert a's low bits into b.
            let pos = (c & 0xff) as u32;
            let len = (e & 0xff) as u32;
            let mut v = b & msk;
            for i in 0..len {
                if pos + i >= bits {
                    break;
                }
                let bit = (a >> i) & 1;
                v = (v & !(1 << (pos + i))) | (bit << (pos + i));
            }
            v
        }
        IntOp::Bfind { shiftamt } => {
            let x = a & msk;
            let v = if signed && (x >> (bits - 1)) & 1 == 1 {
                !x & msk
            } else {
                x
            };
            if v == 0 {
                0xffff_ffff
            } else {
                let p = 63 - v.leading_zeros();
                (if shiftamt { bits - 1 - p } else { p }) as u64
            }
        }
        IntOp::Prmt(mode) => {
            let bytes = ((b as u32 as u64) << 32) | (a as u32 as u64);
            let byte = |i: u64| (bytes >> (8 * (i & 7))) & 0xff;
            let sel = c as u32;
            let mut r = 0u64;
            match mode {
                0 => {
                    for k in 0..4 {
                        let s = (sel >> (4 * k)) & 0xf;
                        let mut v = byte(s as u64 & 7);
                        if s & 8 != 0 {
                            v = if v & 0x80 != 0 { 0xff } else { 0 };
                        }
                        r |= v << (8 * k);
                    }
                }
                _ => {
                    let s = (sel & 3) as u64;
                    let idxs: [u64; 4] = match mode {
                        1 => [s, s + 1, s + 2, s + 3],
                        2 => [s, (s + 7) % 8, (s + 6) % 8, (s + 5) % 8],
                        3 => [s; 4],
                        4 => match s {
                            0 => [0, 1, 2, 3],
                            1 => [1, 1, 2, 3],
                            2 => [2, 2, 2, 3],
                            _ => [3, 3, 3, 3],
                        },
                        5 => match s {
                            0 => [0, 0, 0, 0],
                            1 => [0, 1, 1, 1],
                            2 => [0, 1, 2, 2],
                            _ => [0, 1, 2, 3],
                        },
                        _ => {
                            let h = s & 1;
                            [2 * h, 2 * h + 1, 2 * h, 2 * h + 1]
                        }
                    };
                    for (k, i) in idxs.iter().enumerate() {
                        r |= byte(*i % 8) << (8 * k);
                    }
                }
            }
            r
        }
        IntOp::ShfL { clamp } | IntOp::ShfR { clamp } => {
            let n = if clamp {
                (c as u32).min(32)
            } else {
                c as u32 & 31
            };
            let pair = ((b as u32 as u64) << 32) | (a as u32 as u64);
            if matches!(op, IntOp::ShfL { .. }) {
                ((pair << n) >> 32) & 0xffff_ffff
            } else {
                (pair >> n) & 0xffff_ffff
            }
        }
        IntOp::Lop3 => {
            let lut = e as u8;
            let mut r = 0u64;
            for i in 0..bits {
                let k = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
                r |= (((lut >> k) & 1) as u64) << i;
            }
            r
        }
        IntOp::Sad => {
            let d = if signed {
                ((a as i64) - (b as i64)).unsigned_abs()
            } else {
                a.abs_diff(b)
            };
            wrap(d as i128 + sx(canon(ty, c)))
        }
        IntOp::Dp4a { a_signed, b_signed } => {
            let mut s = c as u32 as i64;
            for k in 0..4 {
                let x = (a >> (8 * k)) & 0xff;
                let y = (b >> (8 * k)) & 0xff;
                let x = if a_signed {
                    x as u8 as i8 as i64
                } else {
                    x as i64
                };
                let y = if b_signed {
                    y as u8 as i8 as i64
                } else {
                    y as i64
                };
                s += x * y;
            }
            s as u64 & 0xffff_ffff
        }
        IntOp::Dp2a {
            hi,
            a_signed,
            b_signed,
        } => {
            let mut s = c as u32 as i64;
            for k in 0..2 {
                let x = (a >> (16 * k)) & 0xffff;
                let y = (b >> (8 * (k + if hi { 2 } else { 0 }))) & 0xff;
                let x = if a_signed {
                    x as u16 as i16 as i64
                } else {
                    x as i64
                };
                let y = if b_signed {
                    y as u8 as i8 as i64
                } else {
                    y as i64
                };
                s += x * y;
            }
            s as u64 & 0xffff_ffff
        }
        IntOp::Fns => return Err("`fns` is not supported".into()),
    };
    Ok((r, None))
}

/// The high half of the full product (canonical result).
fn mul_hi(a: u64, b: u64, bits: u32, signed: bool, msk: u64) -> u64 {
    let hi = if signed {
        ((a as i64 as i128 * b as i64 as i128) >> bits) as u64
    } else {
        (((a & msk) as u128 * (b & msk) as u128) >> bits) as u64
    };
    let hi = hi & msk;
    if signed && bits < 64 && (hi >> (bits - 1)) & 1 == 1 {
        hi | !msk
    } else {
        hi
    }
}

fn f32_out(x: f32, ftz: bool, sat: bool) -> u64 {
    let mut x = if ftz { fpu::ftz32(x) } else { x };
    if sat {
        x = if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) };
    }
    if x.is_nan() {
        fpu::F32_NAN as u64
    } else {
        x.to_bits() as u64
    }
}

#[allow(clippy::too_many_arguments)]
fn float_op(op: FOp, ty: Ty, rnd: Rnd, ftz: bool, sat: bool, a: u64, b: u64, c: u64) -> u64 {
    match ty {
        Ty::F32 => {
            let g = |v: u64| {
                let f = f32::from_bits(v as u32);
                if ftz { fpu::ftz32(f) } else { f }
            };
            let (x, y, z) = (g(a), g(b), g(c));
            let r = match op {
                FOp::Add => fpu::add32(x, y, rnd),
                FOp::Sub => fpu::add32(x, -y, rnd),
                FOp::Mul => fpu::mul32(x, y, rnd),
                FOp::Fma => fpu::fma32(x, y, z, rnd),
                FOp::Div { .. } => fpu::div32(x, y, rnd),
                FOp::Sqrt => fpu::sqrt32(x, rnd),
                FOp::Rcp => fpu::div32(1.0, x, rnd),
                FOp::Rsqrt => (1.0 / (x as f64).sqrt()) as f32,
                FOp::Ex2 => (x as f64).exp2() as f32,
                FOp::Lg2 => (x as f64).log2() as f32,
                FOp::Sin => (x as f64).sin() as f32,
                FOp::Cos => (x as f64).cos() as f32,
                FOp::Tanh => (x as f64).tanh() as f32,
                FOp::Min => fpu::fmin(
                    x,
                    y,
                    x.is_nan(),
                    y.is_nan(),
                    x.is_sign_negative(),
                    y.is_sign_negative(),
                )
                .unwrap_or(f32::NAN),
                FOp::Max => fpu::fmax(
                    x,
                    y,
                    x.is_nan(),
                    y.is_nan(),
                    x.is_sign_negative(),
                    y.is_sign_negative(),
                )
                .unwrap_or(f32::NAN),
                FOp::Abs => return f32_out(x.abs(), ftz, false),
                FOp::Neg => {
                    return (if ftz { fpu::ftz32(x) } else { x }).to_bits() as u64 ^ 0x8000_0000;
                }
                FOp::Copysign => y.copysign(x),
            };
            if matches!(op, FOp::Copysign) {
                return r.to_bits() as u64;
            }
            f32_out(r, ftz, sat)
        }
        Ty::F64 => {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            let r = match op {
                FOp::Add => fpu::add64(x, y, rnd),
                FOp::Sub => fpu::add64(x, -y, rnd),
                FOp::Mul => fpu::mul64(x, y, rnd),
                FOp::Fma => fpu::fma64(x, y, z, rnd),
                FOp::Div { .. } => fpu::div64(x, y, rnd),
                FOp::Sqrt => fpu::sqrt64(x, rnd),
                FOp::Rcp => fpu::div64(1.0, x, rnd),
                FOp::Rsqrt => 1.0 / x.sqrt(),
                FOp::Ex2 => x.exp2(),
                FOp::Lg2 => x.log2(),
                FOp::Sin => x.sin(),
                FOp::Cos => x.cos(),
                FOp::Tanh => x.tanh(),
                FOp::Min => fpu::fmin(
                    x,
                    y,
                    x.is_nan(),
                    y.is_nan(),
                    x.is_sign_negative(),
                    y.is_sign_negative(),
                )
                .unwrap_or(f64::NAN),
                FOp::Max => fpu::fmax(
                    x,
                    y,
                    x.is_nan(),
                    y.is_nan(),
                    x.is_sign_negative(),
                    y.is_sign_negative(),
                )
                .unwrap_or(f64::NAN),
                FOp::Abs => return a & !(1 << 63),
                FOp::Neg => return a ^ (1 << 63),
                FOp::Copysign => y.copysign(x),
            };
            let r = if sat {
                if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
            } else {
                r
            };
            r.to_bits()
        }
        Ty::F16x2 | Ty::Bf16x2 => {
            let half = if ty == Ty::F16x2 { Ty::F16 } else { Ty::Bf16 };
            let lo = float_op(op, half, rnd, ftz, sat, a & 0xffff, b & 0xffff, c & 0xffff);
            let hi = float_op(
                op,
                half,
                rnd,
                ftz,
                sat,
                (a >> 16) & 0xffff,
                (b >> 16) & 0xffff,
                (c >> 16) & 0xffff,
            );
            lo | (hi << 16)
        }
        _ => {
            // f16/bf16: compute in f64 and round once to the half format. Sums, differences
            // and products of f16 values are exact in f64; quotients and square roots are
            // rounded twice, which is harmless for nearest rounding (53 >= 2 * 11 + 2).
            let bf = ty == Ty::Bf16;
            let (mant, exp) = if bf { (7, 8) } else { (10, 5) };
            let g = |v: u64| fpu::from_small_float(v as u32 & 0xffff, mant, exp);
            let (x, y, z) = (g(a), g(b), g(c));
            let r = match op {
                FOp::Add => x + y,
                FOp::Sub => x - y,
                FOp::Mul => x * y,
                FOp::Fma => x.mul_add(y, z),
                FOp::Div { .. } => x / y,
                FOp::Sqrt => x.sqrt(),
                FOp::Rcp => 1.0 / x,
                FOp::Rsqrt => 1.0 / x.sqrt(),
                FOp::Ex2 => x.exp2(),
                FOp::Lg2 => x.log2(),
                FOp::Sin => x.sin(),
                FOp::Cos => x.cos(),
                FOp::Tanh => x.tanh(),
                FOp::Min => fpu::fmin(
                    x,
                    y,
                    x.is_nan(),
                    y.is_nan(),
                    x.is_sign_negative(),
                    y.is_sign_negative(),
                )
                .unwrap_or(f64::NAN),
                FOp::Max => fpu::fmax(
                    x,
                    y,
                    x.is_nan(),
                    y.is_nan(),
                    x.is_sign_negative(),
                    y.is_sign_negative(),
                )
                .unwrap_or(f64::NAN),
                FOp::Abs => return a & 0x7fff,
                FOp::Neg => return (a ^ 0x8000) & 0xffff,
                FOp::Copysign => y.copysign(x),
            };
            let r = if sat {
                if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) }
            } else {
                r
            };
            let rnd = if rnd == Rnd::Default { Rnd::Rn } else { rnd };
            fpu::to_small_float(r, mant, exp, rnd) as u64
        }
    }
}

fn int_range(t: Ty) -> (i128, i128) {
    let bits = t.bits();
    if t.signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// What a float-to-integer `cvt` gives for a NaN, as measured on an H100 (sm_90) for every
/// rounding mode, with and without `.sat`: 0 from an `f32` to a 32-bit integer, else the
/// top bit alone (`i32::MIN`/`i64::MIN`, or `2^31`/`2^63` for unsigned destinations) —
/// from an `f64`, or to a 64-bit integer. Narrower destinations (not measured) give 0.
fn nan_to_int(dty: Ty, sty: Ty) -> u64 {
    let top = match dty.bits() {
        32 if sty == Ty::F64 => 1 << 31,
        64 => 1 << 63,
        _ => 0,
    };
    canon(dty, top)
}

fn convert(dty: Ty, sty: Ty, rnd: Rnd, sat: bool, ftz: bool, v: u64) -> u64 {
    match (dty.float(), sty.float()) {
        (false, false) => {
            let x = canon(sty, v);
            let xi = if sty.signed() {
                x as i64 as i128
            } else {
                x as i128
            };
            let xi = if sat {
                let (lo, hi) = int_range(dty);
                xi.clamp(lo, hi)
            } else {
                xi
            };
            canon(dty, xi as u64 & mask_of(dty.bits()))
        }
        (false, true) => {
            let x = to_f64(sty, v, ftz);
            if x.is_nan() {
                return nan_to_int(dty, sty);
            }
            let r = fpu::round_int(x, if rnd == Rnd::Default { Rnd::Rzi } else { rnd });
            let (lo, hi) = int_range(dty);
            let i = if r <= lo as f64 {
                lo
            } else if r >= hi as f64 {
                hi
            } else {
                r as i128
            };
            canon(dty, i as u64 & mask_of(dty.bits()))
        }
        (true, false) => {
            let x = canon(sty, v);
            let xi = if sty.signed() {
                x as i64 as i128
            } else {
                x as i128
            };
            match dty {
                Ty::F32 => {
                    let f = fpu::int_to_f32(xi, rnd);
                    f32_out(f, ftz, sat)
                }
                Ty::F64 => fpu::int_to_f64(xi, rnd).to_bits(),
                Ty::F16 => fpu::to_small_float(xi as f64, 10, 5, rnd) as u64,
                _ => fpu::to_small_float(xi as f64, 7, 8, rnd) as u64,
            }
        }
        (true, true) => {
            let x = to_f64(sty, v, ftz);
            let integral = matches!(rnd, Rnd::Rni | Rnd::Rzi | Rnd::Rmi | Rnd::Rpi);
            let x = if integral { fpu::round_int(x, rnd) } else { x };
            let x = if sat {
                if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
            } else {
                x
            };
            let r = if rnd == Rnd::Default || integral {
                Rnd::Rn
            } else {
                rnd
            };
            match dty {
                Ty::F32 => {
                    let f = if sty == Ty::F64 {
                        fpu::f64_to_f32(x, r)
                    } else {
                        x as f32
                    };
                    f32_out(f, ftz, false)
                }
                Ty::F64 => x.to_bits(),
                Ty::F16 => fpu::to_small_float(x, 10, 5, r) as u64,
                _ => fpu::to_small_float(x, 7, 8, r) as u64,
            }
        }
    }
}

fn atom_apply(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let msk = mask_of(ty.bits());
    let o = canon(ty, old);
    let r = match (op, ty) {
        (AtomOp::Add, Ty::F32) => {
            (f32::from_bits(o as u32) + f32::from_bits(b as u32)).to_bits() as u64
        }
        (AtomOp::Add, Ty::F64) => (f64::from_bits(o) + f64::from_bits(b)).to_bits(),
        (AtomOp::Add, _) => o.wrapping_add(b),
        (AtomOp::Min, t) if t.signed() => (o as i64).min(b as i64) as u64,
        (AtomOp::Max, t) if t.signed() => (o as i64).max(b as i64) as u64,
        (AtomOp::Min, Ty::F32) => f32::from_bits(o as u32)
            .min(f32::from_bits(b as u32))
            .to_bits() as u64,
        (AtomOp::Max, Ty::F32) => f32::from_bits(o as u32)
            .max(f32::from_bits(b as u32))
            .to_bits() as u64,
        (AtomOp::Min, _) => o.min(b),
        (AtomOp::Max, _) => o.max(b),
        (AtomOp::Exch, _) => b,
        (AtomOp::Cas, _) => {
            if o == b {
                c
            } else {
                o
            }
        }
        (AtomOp::And, _) => o & b,
        (AtomOp::Or, _) => o | b,
        (AtomOp::Xor, _) => o ^ b,
        (AtomOp::Inc, _) => {
            if (o & msk) >= (b & msk) {
                0
            } else {
                o + 1
            }
        }
        (AtomOp::Dec, _) => {
            if o & msk == 0 || (o & msk) > (b & msk) {
                b
            } else {
                o - 1
            }
        }
    };
    r & msk
}
