//! Warp and block collectives over optional values: shuffles, reductions (down trees,
//! butterflies) and scans (up sweeps) of a warp, block reductions and scans through
//! per-warp shared arrays, and the group counts of filters.

use super::*;

impl<'f> Gen<'f> {
    /// Counts the threads of a group where `keep` holds: returns (with `before`) how many
    /// of the threads before this one, and how many in all (`u64`s). A warp: `vote.ballot`
    /// and `popc` (with `%lanemask_lt`); a block: a block scan of the flags
    /// ([`Gen::block_scan`]).
    pub(super) fn group_count(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        grp: &Group,
        keep: &Reg,
        before: bool,
    ) -> R<(Reg, Reg)> {
        let (b, t) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        if grp.block {
            let f = k.reg(Scalar::U64);
            k.ins(format!("selp.u64 {f}, 1, 0, {keep}"));
            let has = self.pconst(k, true);
            let x = Opt { has, v: vec![f] };
            let (_, ex, total) =
                self.block_scan(k, c, env, Comb::AddU64, &x, &Self::no_fail(grp))?;
            k.ins(format!("selp.u64 {b}, {}, 0, {}", ex.v[0], ex.has));
            Self::mov(k, &t, &total.v[0]);
        } else {
            let m = k.reg(Scalar::U32);
            k.ins(format!("vote.sync.ballot.b32 {m}, {keep}, 0xffffffff"));
            let n = k.reg(Scalar::U32);
            k.ins(format!("popc.b32 {n}, {m}"));
            k.ins(format!("cvt.u64.u32 {t}, {n}"));
            if before {
                let lt = k.reg(Scalar::U32);
                k.ins(format!("mov.u32 {lt}, %lanemask_lt"));
                k.ins(format!("and.b32 {lt}, {lt}, {m}"));
                let nb = k.reg(Scalar::U32);
                k.ins(format!("popc.b32 {nb}, {lt}"));
                k.ins(format!("cvt.u64.u32 {b}, {nb}"));
            }
        }
        Ok((b, t))
    }

    /// An ordered scan of one optional value per thread over a group: this thread's
    /// inclusive and exclusive prefixes and the group's total (every thread gets it). A
    /// block: [`Gen::block_scan`]; a warp: [`Gen::warp_scan`], the total from lane 31.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn group_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        grp: &Group,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<(Opt, Opt, Opt)> {
        if grp.block {
            return self.block_scan(k, c, env, comb, x, ctx);
        }
        let (incl, excl) = self.warp_scan(k, c, env, comb, x, ctx)?;
        let total = Self::shfl_opt(k, &incl, "idx", 31);
        Ok((incl, excl, total))
    }

    /// Combines two elements.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        a: &[Reg],
        b: &[Reg],
        ctx: &Ctx,
    ) -> R<Vec<Reg>> {
        match comb {
            Comb::AddU64 => {
                let r = k.reg(Scalar::U64);
                k.ins(format!("add.s64 {r}, {}, {}", a[0], b[0]));
                Ok(vec![r])
            }
            Comb::Op(op, ty) => {
                env.insert(op.params[0], unflatten(ty, &mut a.iter().cloned())?);
                env.insert(op.params[1], unflatten(ty, &mut b.iter().cloned())?);
                self.block(k, c, env, &op.body, ctx)?.flatten()
            }
        }
    }

    /// `a ⊕ b` where a missing operand is the identity.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn opt_combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        a: &Opt,
        b: &Opt,
        ctx: &Ctx,
    ) -> R<Opt> {
        let v: Vec<Reg> = a.v.iter().map(|r| k.reg(r.ty)).collect();
        for ((d, x), y) in v.iter().zip(&a.v).zip(&b.v) {
            Self::select(k, d, &a.has, x, y);
        }
        let both = k.reg(Scalar::Bool);
        k.ins(format!("and.pred {both}, {}, {}", a.has, b.has));
        let skip = k.label();
        k.ins(format!("@!{both} bra {skip}"));
        let r = self.combine(k, c, env, comb, &a.v, &b.v, ctx)?;
        for (d, s) in v.iter().zip(&r) {
            Self::mov(k, d, s);
        }
        k.place(&skip);
        let has = k.reg(Scalar::Bool);
        k.ins(format!("or.pred {has}, {}, {}", a.has, b.has));
        Ok(Opt { has, v })
    }

    /// `shfl.sync.up` of one register by `d` lanes.
    fn shfl_up(k: &mut Kernel, r: &Reg, d: u32) -> Reg {
        Self::shfl(k, r, "up", d, 0)
    }

    /// `shfl.sync.<mode>` of one register (`bool`s through a 32-bit word, 64-bit values
    /// as two halves); `cl` is the clamp operand.
    pub(super) fn shfl(
        k: &mut Kernel,
        r: &Reg,
        mode: &str,
        d: impl std::fmt::Display,
        cl: u32,
    ) -> Reg {
        let out = k.reg(r.ty);
        match width(r.ty) {
            1 => {
                let (a, b) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.ins(format!("selp.u32 {a}, 1, 0, {r}"));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {b}, {a}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!("setp.ne.u32 {out}, {b}, 0"));
            }
            32 => {
                let (a, b) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.ins(format!("mov.b32 {a}, {r}"));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {b}, {a}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!("mov.b32 {out}, {b}"));
            }
            _ => {
                let (lo, hi, lo2, hi2) = (
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                    k.reg(Scalar::U32),
                );
                k.ins(format!("mov.b64 {{{lo}, {hi}}}, {r}"));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {lo2}, {lo}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!(
                    "shfl.sync.{mode}.b32 {hi2}, {hi}, {d}, {cl}, 0xffffffff"
                ));
                k.ins(format!("mov.b64 {out}, {{{lo2}, {hi2}}}"));
            }
        }
        out
    }

    pub(super) fn shfl_opt(k: &mut Kernel, x: &Opt, mode: &str, d: u32) -> Opt {
        Opt {
            has: Self::shfl(k, &x.has, mode, d, 31),
            v: x.v.iter().map(|r| Self::shfl(k, r, mode, d, 31)).collect(),
        }
    }

    /// Combines one optional value per lane over the group of a split inner reduction:
    /// a butterfly over the warp, then lane 0's result to every lane (so all lanes go on
    /// with the same value whatever the operator), or the block's total.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn group_combine(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        block: bool,
        ctx: &Ctx,
    ) -> R<Opt> {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        for d in [16, 8, 4, 2, 1] {
            let y = Self::shfl_opt(k, &cur, "bfly", d);
            let n = self.opt_combine(k, c, env, comb, &cur, &y, ctx)?;
            Self::mov_opt(k, &cur, &n);
        }
        let warp_total = Self::shfl_opt(k, &cur, "idx", 0);
        if !block {
            return Ok(warp_total);
        }
        // The block: lane 0 of each warp puts its total in shared memory; every thread
        // combines the totals of the block's warps (%ntid.x / 32 of them) in order.
        let arrays = self.warp_values_to_shared(k, c, &warp_total, 0);
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let total = self.none(k, &ls);
        let nw = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {nw}, %ntid.x"));
        k.ins(format!("shr.u32 {nw}, {nw}, 5"));
        let w = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {w}, 0"));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let done = k.reg(Scalar::Bool);
        k.ins(format!("setp.ge.u32 {done}, {w}, {nw}"));
        k.ins(format!("@{done} bra.uni {end}"));
        let t = Self::warp_partial(k, &arrays, &ls, &w);
        let nt = self.opt_combine(k, c, env, comb, &total, &t, ctx)?;
        Self::mov_opt(k, &total, &nt);
        k.ins(format!("add.s32 {w}, {w}, 1"));
        k.ins(format!("bra.uni {top}"));
        k.place(&end);
        k.ins("bar.sync 0");
        Ok(total)
    }

    /// Reduces the optional values `v` of a warp's lanes towards lane 0 in place (a
    /// `shfl.sync.down` tree): lane 0 ends with the combination of all 32 in lane order
    /// (`reversed`: higher lanes first). The other lanes hold partial combinations.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn warp_reduce_down(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        v: &Opt,
        reversed: bool,
        ctx: &Ctx,
    ) -> R<()> {
        for d in [1u32, 2, 4, 8, 16] {
            let y = Self::shfl_opt(k, v, "down", d);
            let inside = k.reg(Scalar::Bool);
            k.ins(format!("setp.lt.u32 {inside}, {}, {}", c.lane, 32 - d));
            k.ins(format!("and.pred {}, {}, {inside}", y.has, y.has));
            let n = if reversed {
                self.opt_combine(k, c, env, comb, &y, v, ctx)?
            } else {
                self.opt_combine(k, c, env, comb, v, &y, ctx)?
            };
            Self::mov_opt(k, v, &n);
        }
        Ok(())
    }

    /// The combination, in thread order, of one optional value per thread of the block,
    /// valid in thread 0 (the other threads hold partial values): each warp reduces
    /// towards its lane 0 ([`Gen::warp_reduce_down`]), the warp totals go through shared
    /// memory, and warp 0 reduces them the same way. Every thread of the block must call
    /// it (it has a barrier).
    pub(super) fn block_reduce(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<Opt> {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        self.warp_reduce_down(k, c, env, comb, &cur, false, ctx)?;
        if self.warps() == 1 {
            return Ok(cur);
        }
        let arrays = self.warp_values_to_shared(k, c, &cur, 0);
        let skip = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {w0}, {}, 0", c.warp));
        k.ins(format!("@!{w0} bra.uni {skip}"));
        // Warp 0: lane l takes warp l's total (none past the block's warps).
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let mine = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u32 {mine}, {}, {}", c.lane, self.warps()));
        let t = self.none(k, &ls);
        let none_here = k.label();
        k.ins(format!("@!{mine} bra {none_here}"));
        let got = Self::warp_partial(k, &arrays, &ls, &c.lane);
        Self::mov_opt(k, &t, &got);
        k.place(&none_here);
        self.warp_reduce_down(k, c, env, comb, &t, false, ctx)?;
        Self::mov_opt(k, &cur, &t);
        k.place(&skip);
        Ok(cur)
    }

    /// An inclusive scan in lane order of the optional values `v` of a warp's lanes, in
    /// place (`shfl.sync.up` steps of 1, 2, 4, 8 and 16 lanes).
    fn warp_scan_up(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        v: &Opt,
        ctx: &Ctx,
    ) -> R<()> {
        let mut d = 1;
        while d < 32 {
            let y = Opt {
                has: Self::shfl_up(k, &v.has, d),
                v: v.v.iter().map(|r| Self::shfl_up(k, r, d)).collect(),
            };
            let p = k.reg(Scalar::Bool);
            k.ins(format!("setp.lt.u32 {p}, {}, {d}", c.lane));
            let skip = k.label();
            k.ins(format!("@{p} bra {skip}"));
            let n = self.opt_combine(k, c, env, comb, &y, v, ctx)?;
            Self::mov_opt(k, v, &n);
            k.place(&skip);
            d *= 2;
        }
        Ok(())
    }

    /// An ordered scan of one value per lane over the warp (`shfl.sync.up`): returns this
    /// lane's inclusive and exclusive prefixes within the warp. Every lane of the warp must
    /// call it.
    fn warp_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<(Opt, Opt)> {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        self.warp_scan_up(k, c, env, comb, &cur, ctx)?;
        // Exclusive within the warp.
        let ex = Opt {
            has: Self::shfl_up(k, &cur.has, 1),
            v: cur.v.iter().map(|r| Self::shfl_up(k, r, 1)).collect(),
        };
        let nz = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u32 {nz}, {}, 0", c.lane));
        k.ins(format!("and.pred {}, {}, {nz}", ex.has, ex.has));
        Ok((cur, ex))
    }

    /// An ordered scan of one value per thread over the block: returns the inclusive and
    /// exclusive prefixes of this thread and the block's total (every thread gets it).
    /// Warp scans with shuffles; the warp totals go through shared memory, where warp 0
    /// scans them the same way; each thread then reads the prefix of the warps before its
    /// own and the total. Every thread of the block must call it (it has barriers).
    pub(super) fn block_scan(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        env: &mut Env,
        comb: Comb<'_>,
        x: &Opt,
        ctx: &Ctx,
    ) -> R<(Opt, Opt, Opt)> {
        let (cur, ex) = self.warp_scan(k, c, env, comb, x, ctx)?;
        let ls: Vec<Scalar> = cur.v.iter().map(|r| r.ty).collect();
        let warps = self.warps();
        if warps == 1 {
            let total = Opt {
                has: k.reg(Scalar::Bool),
                v: ls.iter().map(|&s| k.reg(s)).collect(),
            };
            let t = Self::shfl_opt(k, &cur, "idx", 31);
            Self::mov_opt(k, &total, &t);
            return Ok((cur, ex, total));
        }
        // Warp totals (the last lane's inclusive values) to shared memory; warp 0 scans
        // them in place (lane l: warp l).
        let arrays = self.warp_values_to_shared(k, c, &cur, 31);
        let skip = k.label();
        let w0 = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {w0}, {}, 0", c.warp));
        k.ins(format!("@!{w0} bra.uni {skip}"));
        let mine = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u32 {mine}, {}, {warps}", c.lane));
        let t = self.none(k, &ls);
        let none_here = k.label();
        k.ins(format!("@!{mine} bra {none_here}"));
        let got = Self::warp_partial(k, &arrays, &ls, &c.lane);
        Self::mov_opt(k, &t, &got);
        k.place(&none_here);
        self.warp_scan_up(k, c, env, comb, &t, ctx)?;
        let no_write = k.label();
        k.ins(format!("@!{mine} bra {no_write}"));
        let off = k.reg(Scalar::U32);
        k.ins(format!("shl.b32 {off}, {}, 3", c.lane));
        for (r, a) in std::iter::once(&t.has).chain(&t.v).zip(&arrays) {
            let addr = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {addr}, {a}"));
            k.ins(format!("add.s32 {addr}, {addr}, {off}"));
            Self::st(k, "shared", &addr.name, r);
        }
        k.place(&no_write);
        k.place(&skip);
        k.ins("bar.sync 0");
        // The warps before this one (none for warp 0), and all of them.
        let prefix = self.none(k, &ls);
        let first = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {first}, {}, 0", c.warp));
        let no_prefix = k.label();
        k.ins(format!("@{first} bra {no_prefix}"));
        let wp = k.reg(Scalar::U32);
        k.ins(format!("sub.s32 {wp}, {}, 1", c.warp));
        let p = Self::warp_partial(k, &arrays, &ls, &wp);
        Self::mov_opt(k, &prefix, &p);
        k.place(&no_prefix);
        let last = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {last}, {}", warps - 1));
        let total = Self::warp_partial(k, &arrays, &ls, &last);
        // The arrays are written again if this code runs again (a loop).
        k.ins("bar.sync 0");
        let incl = self.opt_combine(k, c, env, comb, &prefix, &cur, ctx)?;
        let excl = self.opt_combine(k, c, env, comb, &prefix, &ex, ctx)?;
        Ok((incl, excl, total))
    }

    /// Thread 0 stores `v` at `idx` of the leaf buffers `ptrs` (and its flag in `has`
    /// unless `has` has an empty name).
    pub(super) fn store_if_thread0(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        ptrs: &[Reg],
        has: &Reg,
        idx: &Reg,
        v: &Opt,
    ) {
        let p = k.reg(Scalar::Bool);
        k.ins(format!("setp.ne.u32 {p}, {}, 0", c.tid));
        let skip = k.label();
        k.ins(format!("@{p} bra {skip}"));
        for (r, ptr) in v.v.iter().zip(ptrs) {
            self.store(k, ptr, idx, r);
        }
        if !has.name.is_empty() {
            self.store(k, has, idx, &v.has);
        }
        k.place(&skip);
    }

    /// Lane `lane` of every warp stores its optional value `v` (the flag, then each leaf)
    /// into the warp's 8-byte slot of fresh per-warp shared arrays, then the block waits
    /// (`bar.sync`); returns the arrays (read back with [`Gen::warp_partial`]). The
    /// block-level step shared by the block reduce ([`Gen::group_combine`]) and the block
    /// scan ([`Gen::block_scan`]).
    fn warp_values_to_shared(
        &mut self,
        k: &mut Kernel,
        c: &Common,
        v: &Opt,
        lane: u32,
    ) -> Vec<String> {
        let arrays: Vec<String> = (0..=v.v.len())
            .map(|_| k.shared(self.warps() * 8))
            .collect();
        let off = k.reg(Scalar::U32);
        k.ins(format!("shl.b32 {off}, {}, 3", c.warp));
        let writer = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {writer}, {}, {lane}", c.lane));
        let skip = k.label();
        k.ins(format!("@!{writer} bra {skip}"));
        for (r, a) in std::iter::once(&v.has).chain(&v.v).zip(&arrays) {
            let addr = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {addr}, {a}"));
            k.ins(format!("add.s32 {addr}, {addr}, {off}"));
            Self::st(k, "shared", &addr.name, r);
        }
        k.place(&skip);
        k.ins("bar.sync 0");
        arrays
    }

    /// Loads warp `w`'s optional partial (the "has value" flag and one value per leaf of
    /// types `ls`) from the per-warp shared arrays `arrays` (8-byte slots).
    pub(super) fn warp_partial<A: std::fmt::Display>(
        k: &mut Kernel,
        arrays: &[A],
        ls: &[Scalar],
        w: &Reg,
    ) -> Opt {
        let woff = k.reg(Scalar::U32);
        k.ins(format!("shl.b32 {woff}, {w}, 3"));
        let mut got = Vec::new();
        for (ty, a) in std::iter::once(Scalar::Bool)
            .chain(ls.iter().copied())
            .zip(arrays)
        {
            let addr = k.reg(Scalar::U32);
            k.ins(format!("mov.u32 {addr}, {a}"));
            k.ins(format!("add.s32 {addr}, {addr}, {woff}"));
            got.push(Self::ld(k, "shared", &addr.name, ty));
        }
        Opt {
            has: got[0].clone(),
            v: got[1..].to_vec(),
        }
    }
}
