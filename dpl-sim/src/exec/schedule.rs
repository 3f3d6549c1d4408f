//! Scheduling: the blocks of a grid, the warps of a block, the lanes of a warp.
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

use std::sync::atomic::Ordering::Relaxed;

use super::*;
use crate::error::Error;

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
                    return Err(fault_to_error(l.instruction_limit(0, pc), wi));
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
            if steps.is_multiple_of(flush_every) {
                let total = l.executed.fetch_add(flush_every, Relaxed) + flush_every;
                if total > l.limit {
                    break Err(l.instruction_limit(gmask.trailing_zeros() as usize, gpc));
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

    /// Each active lane's member mask; faults if any names a live lane outside the group.
    pub(super) fn member_masks(
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
