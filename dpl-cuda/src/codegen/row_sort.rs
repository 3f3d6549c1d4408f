//! `sort` and `sort_by_key` inside element functions (a row's sort): the elements are
//! written to a temporary, as long as the bound on the row's length known before the
//! launch, then sorted there by rounds that merge sorted runs of width 1, 2, 4, ... from
//! it into a second one and back; the result is a view of the sorted values. The sort is
//! stable: of two equal keys, the one from the left run goes first.
//!
//! * **By one thread** (a thread per element, or in report mode): each pair of runs is
//!   merged sequentially (a bottom-up merge sort), in the thread's part of per-thread
//!   temporaries ([`KArg::Scratch`]).
//! * **By a group** (a warp or a block per element, the schedules long rows get): every
//!   element of a round is placed at once, thread `lane` taking the positions `lane,
//!   lane + width, ...`. An element's place in its merged pair of runs is its position
//!   plus the number of elements of the other run that go before it, found by a binary
//!   search over that run in the order of (key, position), so a left run's equal keys go
//!   first; a round ends at a group barrier. The elements are written in chunks of the
//!   group's width (a `filter`'s survivors placed by a group count); the temporary is
//!   that of the group's first thread, whose part spans the group's (each thread's part
//!   holds a 32nd of the bound). In report mode (the run again after a failed check,
//!   [`crate::runtime`]) every thread evaluates the elements alone, in order, so the
//!   failure reported first is the first in sequential order, and the group's first
//!   thread writes them.
//!
//! A row of `m` elements takes `ceil(log2 m)` rounds: one thread makes `m` steps in each,
//! a group of `w` threads `m / w` placements of at most `log2` of the runs' width steps.

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
        let (otop, oend, left, right, next) =
            (k.label(), k.label(), k.label(), k.label(), k.label());
        k.place(&otop);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &o, &hi));
        k.emit(Ins::bra(&oend).when(&p));
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &i, &mid));
        k.emit(Ins::bra(&right).when(&p));
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &j, &hi));
        k.emit(Ins::bra(&left).when(&p));
        // The right element goes first only when its key is smaller.
        let a = self.load_leaves(k, &src[..*keys], &i, &ls[..*keys]);
        let b = self.load_leaves(k, &src[..*keys], &j, &ls[..*keys]);
        let smaller = Self::key_less(k, &b, &a);
        k.emit(Ins::bra(&right).when(&smaller));
        for (label, from) in [(&left, &i), (&right, &j)] {
            k.place(label);
            let v = self.load_leaves(k, src, from, ls);
            for (r, ptr) in v.iter().zip(dst.iter()) {
                self.store(k, ptr, &o, r);
            }
            k.emit(Ins::add(Ty::S64, from, from, 1));
            k.emit(Ins::bra(&next));
        }
        k.place(&next);
        k.emit(Ins::add(Ty::S64, &o, &o, 1));
        k.emit(Ins::bra(&otop));
        k.place(&oend);
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
            let Some(ok) = ok else {
                return unsupported("a group's position without a flag (internal)");
            };
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
        // Rounds of merges of runs of `width` elements, the halves swapped after each.
        let width = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &width, 1));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &width, &m));
        k.emit(Ins::bra_uni(&end).when(&p));
        self.positions(k, Lanes::Group(&grp), &m, &mut |g, k, j, ok| {
            let Some(ok) = ok else {
                return unsupported("a group's position without a flag (internal)");
            };
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(ok));
            let at = g.merged_place(k, (&src[..keys], &ls[..keys]), j, &width, &m);
            let v = g.load_leaves(k, &src, j, ls);
            for (r, d) in v.iter().zip(&dst) {
                g.store(k, d, &at, r);
            }
            k.place(&skip);
            Ok(())
        })?;
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

    /// Where the element at position `j` of a round of merges of runs of `width` (of a row
    /// of `m` elements, keys at `keys`) goes: its position plus the number of elements of
    /// the run it is merged with that come before it in the order of (key, position),
    /// counted by a binary search.
    fn merged_place(
        &mut self,
        k: &mut Kernel,
        (keys, ls): (&[Reg], &[Scalar]),
        j: &Reg,
        width: &Reg,
        m: &Reg,
    ) -> Reg {
        // The pair of runs: [lo, mid) and [mid, hi); j is in the left one when its
        // `width` bit is clear.
        let (lo, mid, hi, t) = (
            k.reg(Scalar::U64),
            k.reg(Scalar::U64),
            k.reg(Scalar::U64),
            k.reg(Scalar::U64),
        );
        k.emit(Ins::shl(Ty::B64, &t, width, 1));
        k.emit(Ins::sub(Ty::S64, &t, &t, 1));
        k.emit(Ins::and(Ty::B64, &t, j, &t));
        k.emit(Ins::sub(Ty::S64, &lo, j, &t));
        k.emit(Ins::add(Ty::S64, &mid, &lo, width));
        k.emit(Ins::min(Ty::U64, &mid, &mid, m));
        k.emit(Ins::add(Ty::S64, &hi, &mid, width));
        k.emit(Ins::min(Ty::U64, &hi, &hi, m));
        let left = k.reg(Scalar::Bool);
        k.emit(Ins::and(Ty::B64, &t, j, width));
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &left, &t, 0));
        // The other run: [a, b), searched over [c, d).
        let (a, c, d) = (k.reg(Scalar::U64), k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::selp(Ty::U64, &a, &mid, &lo, &left));
        k.emit(Ins::selp(Ty::U64, &d, &hi, &mid, &left));
        k.emit(Ins::mov(Ty::U64, &c, &a));
        let mut mine = self.load_leaves(k, keys, j, ls);
        mine.push(Self::position(k, j));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &c, &d));
        k.emit(Ins::bra(&end).when(&p));
        let h = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &h, &c, &d));
        k.emit(Ins::shr(Ty::U64, &h, &h, 1));
        let mut other = self.load_leaves(k, keys, &h, ls);
        other.push(Self::position(k, &h));
        let before = Self::key_less(k, &other, &mine);
        let h1 = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &h1, &h, 1));
        k.emit(Ins::selp(Ty::U64, &c, &h1, &c, &before));
        k.emit(Ins::selp(Ty::U64, &d, &d, &h, &before));
        k.emit(Ins::bra(&top));
        k.place(&end);
        // j + (c - a), less the width for the right run (j - mid + lo).
        let at = k.reg(Scalar::Usize);
        k.emit(Ins::sub(Ty::S64, &at, &c, &a));
        k.emit(Ins::add(Ty::S64, &at, &at, j));
        k.emit(Ins::selp(Ty::U64, &t, 0, width, &left));
        k.emit(Ins::sub(Ty::S64, &at, &at, &t));
        at
    }

    /// Position `j` as a `u64` leaf of a key (the last, so it breaks ties).
    fn position(k: &mut Kernel, j: &Reg) -> Reg {
        let r = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &r, j));
        r
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
