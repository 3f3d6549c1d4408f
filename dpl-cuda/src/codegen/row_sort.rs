//! `sort` and `sort_by_key` inside element functions (a row's sort): the elements are
//! written to a temporary, as long as the bound on the row's length known before the
//! launch, then sorted there by rounds that merge sorted runs of width 1, 2, 4, ... from
//! it into a second one and back; the result is a view of the sorted values. The sort is
//! stable: of two equal keys, the one from the left run goes first.
//!
//! * **By one thread** (a thread per element): each pair of runs is merged sequentially
//!   (a bottom-up merge sort), in the thread's part of per-thread temporaries
//!   ([`KArg::Scratch`]).
//! * **By a group** (a warp or a block per element, the schedules long rows get): each
//!   thread of the group takes an equal share of every round's output, the consecutive
//!   positions `[lane * s, (lane + 1) * s)` with `s = ceil(m / width)`; it finds where
//!   the merge of its pair of runs stands at its first position by a binary search along
//!   the merge path (how many of the outputs before it come from the left run), then
//!   merges sequentially to the end of its share (into the next pair of runs, where its
//!   share spans several). A round ends at a group barrier. The elements are written
//!   first in chunks of the group's width (a `filter`'s survivors placed by a group
//!   count); the temporary is that of the group's first thread, whose part spans the
//!   group's (each thread's part holds a 32nd of the bound). In report mode (the run
//!   again after a failed check, [`crate::runtime`]) every thread evaluates the elements
//!   alone, in order, so the failure reported first is the first in sequential order,
//!   and the group's first thread writes them.
//!
//! A row of `m` elements takes `ceil(log2 m)` rounds: one thread makes `m` merge steps in
//! each, a thread of a group of `w` about `m / w` and one binary search of at most
//! `log2(2 * width)` steps. (Placing every element by its own binary search over the other
//! run, a first version, executed 6.5 times the instructions of the thread per row.)

use super::sort::SortLeaves;
use super::*;

/// The fewest threads in a group (a warp): the per-thread parts of a group's temporaries
/// hold the bound on the row's length divided by this.
const GROUP_MIN: u64 = 32;

impl<'f> Gen<'f> {
    /// A `sort` / `sort_by_key` inside an element function (see the [module docs](self)):
    /// by the group the element function is split across ([`Gen::split`]), else by the
    /// thread.
    pub(super) fn sort_in_row(
        &mut self,
        k: &mut Kernel,
        s: &Stmt,
        soac: &Soac,
        ctx: &Ctx,
    ) -> R<KVal> {
        let Some(per) = self.host_soac_len(soac) else {
            return unsupported(format!(
                "`{}` inside an element function of a sequence whose length has no bound \
                 known before the launch",
                soac.kind.name()
            ));
        };
        let Some(elem) = self.ty(s.var).elem().cloned() else {
            return unsupported("a sort without a sequence type");
        };
        let sl = self.sort_leaves(soac)?;
        // The element functions below are evaluated position by position, not split.
        let (sorted, len) = match self.split.take() {
            None => self.sort_alone(k, soac, &sl, &per, ctx)?,
            Some(sp) => {
                let r = self.sort_by_group(k, soac, &sl, per, ctx, sp.block);
                self.split = Some(sp);
                r?
            }
        };
        Ok(KVal::Seq {
            ptrs: sorted[sl.values].to_vec(),
            len,
            elem,
            offs: None,
            layout: None,
            step: None,
        })
    }

    /// Two temporaries per leaf of `ls` (`per` elements per thread), from element `base`.
    fn sort_halves(k: &mut Kernel, ls: &[Scalar], per: &Count, base: &Reg) -> [Vec<Reg>; 2] {
        [(); 2].map(|()| {
            ls.iter()
                .map(|&l| {
                    let p = k.pointer(KArg::Scratch {
                        elem: l,
                        per_thread: per.clone(),
                    });
                    Self::addr(k, &p, base, l)
                })
                .collect()
        })
    }

    /// The sort by one thread: returns the sorted leaves and the row's length.
    fn sort_alone(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        sl: &SortLeaves,
        per: &Count,
        ctx: &Ctx,
    ) -> R<(Vec<Reg>, Reg)> {
        let SortLeaves { all: ls, keys, .. } = sl;
        let base = Self::scratch_base(k, per, &k.tid64.clone());
        let halves = Self::sort_halves(k, ls, per, &base);
        // The elements, in order.
        let m = k.reg(Scalar::Usize);
        k.emit(Ins::mov(Ty::U64, &m, 0));
        let dst = halves[0].clone();
        self.for_each(k, soac, Lanes::Thread(ctx), &mut |g, k, _, _, e| {
            for (r, p) in e.flatten()?.iter().zip(&dst) {
                g.store(k, p, &m, r);
            }
            k.emit(Ins::add(Ty::S64, &m, &m, 1));
            Ok(())
        })?;
        // Runs of `width` sorted elements merged in pairs from one half into the other,
        // for width = 1, 2, 4, ...; the halves' pointers are swapped after each round.
        let [src, dst] = &halves;
        let width = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &width, 1));
        let (wtop, wend) = (k.label(), k.label());
        k.place(&wtop);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &width, &m));
        k.emit(Ins::bra(&wend).when(&p));
        let lo = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &lo, 0));
        let (ltop, lend) = (k.label(), k.label());
        k.place(&ltop);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &lo, &m));
        k.emit(Ins::bra(&lend).when(&p));
        let (mid, hi) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::add(Ty::S64, &mid, &lo, &width));
        k.emit(Ins::min(Ty::U64, &mid, &mid, &m));
        k.emit(Ins::add(Ty::S64, &hi, &mid, &width));
        k.emit(Ins::min(Ty::U64, &hi, &hi, &m));
        let (i, j, o) = (k.reg(Scalar::U64), k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::mov(Ty::U64, &i, &lo));
        k.emit(Ins::mov(Ty::U64, &j, &mid));
        k.emit(Ins::mov(Ty::U64, &o, &lo));
        self.merge_steps(k, (src, dst), (ls, *keys), [&i, &j, &o], [&hi, &mid, &hi]);
        k.emit(Ins::mov(Ty::U64, &lo, &hi));
        k.emit(Ins::bra(&ltop));
        k.place(&lend);
        Self::next_round(k, src, dst, &width);
        k.emit(Ins::bra(&wtop));
        k.place(&wend);
        let [src, _] = halves;
        Ok((src, m))
    }

    /// The sort by the group of `block` (a block, else a warp) the element function is
    /// split across: returns the sorted leaves and the row's length, the same in every
    /// thread of the group. Failed checks of the elements leave the element together,
    /// where `ctx` says.
    fn sort_by_group(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        sl: &SortLeaves,
        per: Count,
        ctx: &Ctx,
        block: bool,
    ) -> R<(Vec<Reg>, Reg)> {
        let Some(fail) = ctx.fail.clone() else {
            return unsupported("a sort by a group of threads that cannot leave its element");
        };
        let grp = Group {
            block,
            lane: if block { k.tid.clone() } else { k.lane.clone() },
            width: Self::group_width(k, block),
            key: ctx.key.clone(),
            fail,
        };
        let SortLeaves { all: ls, keys, .. } = sl;
        let keys = *keys;
        // The temporaries of the group's first thread.
        let per = Count::CeilDiv(Box::new(per), GROUP_MIN);
        let (lane, first) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane, &grp.lane));
        k.emit(Ins::sub(Ty::S64, &first, &k.tid64, &lane));
        let base = Self::scratch_base(k, &per, &first);
        let [src, dst] = Self::sort_halves(k, ls, &per, &base);
        let sync = |k: &mut Kernel| {
            k.emit(if block {
                Ins::bar_sync()
            } else {
                Ins::bar_warp_sync()
            })
        };
        // The group has read the temporaries' last row.
        sync(k);
        let m = k.reg(Scalar::Usize);
        k.emit(Ins::mov(Ty::U64, &m, 0));
        let (alone, filled) = (k.label(), k.label());
        let rep = Self::report_mode(k);
        k.emit(Ins::bra_uni(&alone).when(&rep));
        self.for_each(k, soac, Lanes::Group(&grp), &mut |g, k, j, ok, e| {
            let ok = flag(ok)?;
            let (_, n) = g.group_count(k, &grp, ok, false)?;
            k.emit(Ins::add(Ty::S64, &m, &m, &n));
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(ok));
            for (r, p) in e.flatten()?.iter().zip(&src) {
                g.store(k, p, j, r);
            }
            k.place(&skip);
            Ok(())
        })?;
        k.emit(Ins::bra_uni(&filled));
        k.place(&alone);
        let leader = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &leader, &lane, 0));
        self.for_each(k, soac, Lanes::Thread(ctx), &mut |g, k, _, _, e| {
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(&leader));
            for (r, p) in e.flatten()?.iter().zip(&src) {
                g.store(k, p, &m, r);
            }
            k.place(&skip);
            k.emit(Ins::add(Ty::S64, &m, &m, 1));
            Ok(())
        })?;
        k.place(&filled);
        sync(k);
        // This thread's share of each round's output: positions [start, stop).
        let (start, stop, share) = (k.reg(Scalar::U64), k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::add(Ty::S64, &share, &m, &grp.width));
        k.emit(Ins::sub(Ty::S64, &share, &share, 1));
        k.emit(Ins::div(Ty::U64, &share, &share, &grp.width));
        k.emit(Ins::mul_lo(Ty::U64, &start, &lane, &share));
        k.emit(Ins::add(Ty::S64, &stop, &start, &share));
        k.emit(Ins::min(Ty::U64, &stop, &stop, &m));
        // Rounds of merges of runs of `width` elements, the halves swapped after each.
        let width = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &width, 1));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &width, &m));
        k.emit(Ins::bra_uni(&end).when(&p));
        // The share may span several pairs of runs: one merge per pair.
        let o = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &o, &start));
        let (ptop, pend) = (k.label(), k.label());
        k.place(&ptop);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &o, &stop));
        k.emit(Ins::bra(&pend).when(&p));
        let [lo, mid, hi] = Self::pair_at(k, &o, &width, &m);
        let upto = k.reg(Scalar::U64);
        k.emit(Ins::min(Ty::U64, &upto, &stop, &hi));
        let (i, j) = self.merge_path(k, (&src[..keys], &ls[..keys]), &o, [&lo, &mid, &hi]);
        self.merge_steps(
            k,
            (&src, &dst),
            (ls, keys),
            [&i, &j, &o],
            [&upto, &mid, &hi],
        );
        k.emit(Ins::bra(&ptop));
        k.place(&pend);
        sync(k);
        Self::next_round(k, &src, &dst, &width);
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        Ok((src, m))
    }

    /// The end of a round of merges: the halves' pointers swapped (the round's output is
    /// the next one's input), the runs' width doubled.
    fn next_round(k: &mut Kernel, src: &[Reg], dst: &[Reg], width: &Reg) {
        for (a, b) in src.iter().zip(dst) {
            let t = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &t, a));
            k.emit(Ins::mov(Ty::U64, a, b));
            k.emit(Ins::mov(Ty::U64, b, &t));
        }
        k.emit(Ins::shl(Ty::B64, width, width, 1));
    }

    /// The pair of runs of `width` elements (of a row of `m`) that output position `o` of
    /// a round belongs to: `[lo, mid)` and `[mid, hi)`.
    fn pair_at(k: &mut Kernel, o: &Reg, width: &Reg, m: &Reg) -> [Reg; 3] {
        let [lo, mid, hi] = [(); 3].map(|()| k.reg(Scalar::U64));
        k.emit(Ins::shl(Ty::B64, &lo, width, 1));
        k.emit(Ins::sub(Ty::S64, &lo, &lo, 1));
        k.emit(Ins::and(Ty::B64, &lo, o, &lo));
        k.emit(Ins::sub(Ty::S64, &lo, o, &lo));
        k.emit(Ins::add(Ty::S64, &mid, &lo, width));
        k.emit(Ins::min(Ty::U64, &mid, &mid, m));
        k.emit(Ins::add(Ty::S64, &hi, &mid, width));
        k.emit(Ins::min(Ty::U64, &hi, &hi, m));
        [lo, mid, hi]
    }

    /// Where the merge of runs `[lo, mid)` and `[mid, hi)` (keys at `keys`) stands at
    /// output position `o`: the positions `(i, j)` of the next elements of each run. A
    /// binary search along the merge path: of the first `d = o - lo` outputs, `i - lo`
    /// come from the left run, the most for which the left run's element `i - 1` goes
    /// before the right run's element `mid + d - (i - lo)` (its key is not larger).
    fn merge_path(
        &mut self,
        k: &mut Kernel,
        (keys, ls): (&[Reg], &[Scalar]),
        o: &Reg,
        [lo, mid, hi]: [&Reg; 3],
    ) -> (Reg, Reg) {
        // From the left run: between d - min(d, hi - mid) and min(d, mid - lo).
        let [d, s, e, t] = [(); 4].map(|()| k.reg(Scalar::U64));
        k.emit(Ins::sub(Ty::S64, &d, o, lo));
        k.emit(Ins::sub(Ty::S64, &t, hi, mid));
        k.emit(Ins::min(Ty::U64, &t, &t, &d));
        k.emit(Ins::sub(Ty::S64, &s, &d, &t));
        k.emit(Ins::sub(Ty::S64, &t, mid, lo));
        k.emit(Ins::min(Ty::U64, &e, &t, &d));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &s, &e));
        k.emit(Ins::bra(&end).when(&p));
        // h in [s, e): the left run's element lo + h against the right run's mid + d - 1 - h.
        let [h, a, b] = [(); 3].map(|()| k.reg(Scalar::U64));
        k.emit(Ins::add(Ty::S64, &h, &s, &e));
        k.emit(Ins::shr(Ty::U64, &h, &h, 1));
        k.emit(Ins::add(Ty::S64, &a, lo, &h));
        k.emit(Ins::add(Ty::S64, &b, mid, &d));
        k.emit(Ins::sub(Ty::S64, &b, &b, &h));
        k.emit(Ins::sub(Ty::S64, &b, &b, 1));
        let x = self.load_leaves(k, keys, &a, ls);
        let y = self.load_leaves(k, keys, &b, ls);
        let right_first = Self::key_less(k, &y, &x);
        k.emit(Ins::add(Ty::S64, &t, &h, 1));
        k.emit(Ins::selp(Ty::U64, &s, &s, &t, &right_first));
        k.emit(Ins::selp(Ty::U64, &e, &h, &e, &right_first));
        k.emit(Ins::bra(&top));
        k.place(&end);
        let (i, j) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::add(Ty::S64, &i, lo, &s));
        k.emit(Ins::add(Ty::S64, &j, mid, &d));
        k.emit(Ins::sub(Ty::S64, &j, &j, &s));
        (i, j)
    }

    /// Merges runs `[i, mid)` and `[j, hi)` of `src` (the first `keys` leaves the key) into
    /// `dst` from position `o` until `stop`: at each step the left run's element, unless
    /// the right one's key is smaller (so the merge is stable). Advances `i`, `j`, `o`.
    fn merge_steps(
        &mut self,
        k: &mut Kernel,
        (src, dst): (&[Reg], &[Reg]),
        (ls, keys): (&[Scalar], usize),
        [i, j, o]: [&Reg; 3],
        [stop, mid, hi]: [&Reg; 3],
    ) {
        let p = k.reg(Scalar::Bool);
        let (top, end, left, right, next) = (k.label(), k.label(), k.label(), k.label(), k.label());
        k.place(&top);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, o, stop));
        k.emit(Ins::bra(&end).when(&p));
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, i, mid));
        k.emit(Ins::bra(&right).when(&p));
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, j, hi));
        k.emit(Ins::bra(&left).when(&p));
        let a = self.load_leaves(k, &src[..keys], i, &ls[..keys]);
        let b = self.load_leaves(k, &src[..keys], j, &ls[..keys]);
        let smaller = Self::key_less(k, &b, &a);
        k.emit(Ins::bra(&right).when(&smaller));
        for (label, from) in [(&left, i), (&right, j)] {
            k.place(label);
            let v = self.load_leaves(k, src, from, ls);
            for (r, ptr) in v.iter().zip(dst) {
                self.store(k, ptr, o, r);
            }
            k.emit(Ins::add(Ty::S64, from, from, 1));
            k.emit(Ins::bra(&next));
        }
        k.place(&next);
        k.emit(Ins::add(Ty::S64, o, o, 1));
        k.emit(Ins::bra(&top));
        k.place(&end);
    }

    /// Whether the key with leaves `a` comes before the one with leaves `b` in the sort
    /// order (lexicographic over the leaves, each by its [radix key](Gen::radix_key)).
    fn key_less(k: &mut Kernel, a: &[Reg], b: &[Reg]) -> Reg {
        let mut less: Option<Reg> = None;
        for (x, y) in a.iter().zip(b).rev() {
            let (kx, ky) = (Self::radix_key(k, x, x.ty), Self::radix_key(k, y, y.ty));
            let ty = mem(kx.ty);
            let lt = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Lt, ty, &lt, &kx, &ky));
            if let Some(later) = less {
                let eq = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Eq, ty, &eq, &kx, &ky));
                k.emit(Ins::and(Ty::Pred, &eq, &eq, &later));
                k.emit(Ins::or(Ty::Pred, &lt, &lt, &eq));
            }
            less = Some(lt);
        }
        less.unwrap_or_else(|| {
            let f = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &f, 0, 0));
            f
        })
    }
}
