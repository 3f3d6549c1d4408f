//! Execution of one instruction over the active lanes of a warp.

use super::access::{Loc, bank_conflicts, generic_space, locate, read_bytes, window, write_bytes};
use super::alu::{bool_op, compare, convert, fast_int, float_op, int_op};
use super::*;
use crate::fpu;

impl Worker {
    #[inline]
    pub(super) fn fault(&self, kind: FaultKind, m: u32, pc: u32, detail: String) -> Fault {
        Fault {
            kind,
            lane: m.trailing_zeros() as usize,
            pc,
            detail,
        }
    }

    #[inline(always)]
    pub(super) fn read_s(regs: &[u64], s: Src, lane: usize) -> u64 {
        match s {
            Src::Reg(r) => regs[idx(r, lane)],
            Src::Imm(v) => v,
            Src::Clock | Src::Clock64 => 0,
        }
    }

    #[inline(always)]
    pub(super) fn read(&self, w: &Warp, s: Src, lane: usize) -> u64 {
        match s {
            Src::Reg(r) => w.regs[idx(r, lane)],
            Src::Imm(v) => v,
            Src::Clock => self.report.instructions & 0xffff_ffff,
            Src::Clock64 => self.report.instructions,
        }
    }

    /// Executes a non-control instruction over the lanes of `m` (`group` is the converged
    /// group, for warp collectives).
    #[inline]
    pub(super) fn exec(
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
                let base = window(space);
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
}
