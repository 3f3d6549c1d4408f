//! Scan tiles: `items` consecutive elements per thread staged in shared memory (one
//! array per leaf), loaded and stored in coalesced rounds, reduced and scanned in the
//! thread ([`Tile`], [`scan_items`]).

use super::*;

/// The element source of a tile ([`Gen::tile_load`]): `(index, label a failed check
/// jumps to)` -> the element's leaves.
pub(in crate::codegen) type ElemAt<'b, 'f> =
    dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, &Label) -> R<Vec<Reg>> + 'b;

/// The work of one element in [`Gen::tile_rounds`]: `(index, shared address per leaf,
/// label skipping the rest)`.
type RoundBody<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, &[Reg], &Label) -> R<()> + 'b;

/// Where a tile's results go ([`Gen::tile_store`]): `(index, leaves)`.
type StoreAt<'b, 'f> = dyn FnMut(&mut Gen<'f>, &mut Kernel, &Reg, &[Reg]) -> R<()> + 'b;

/// At most this many bytes of shared memory hold a scan tile's elements.
const TILE_SHARED: u64 = 16 * 1024;

/// At most this many items per thread in a scan tile.
const MAX_ITEMS: u64 = 15;

/// Items per thread of a scan tile of `block` threads for elements of leaves `ls`: the
/// largest odd number (so a thread's consecutive items fall in distinct shared-memory
/// banks) with the tile, staged in shared memory (one array per leaf, a `bool` in a 32-bit
/// slot), within 16 KiB, at most 15, at least 1 (one item stays in registers: no shared
/// memory, whatever the element's size).
pub fn scan_items(block: u32, ls: &[Scalar]) -> u64 {
    let bytes: u64 = ls.iter().map(|&s| u64::from(slot_bytes(s))).sum();
    let fit = (TILE_SHARED / (u64::from(block) * bytes.max(1))).clamp(1, MAX_ITEMS);
    if fit.is_multiple_of(2) { fit - 1 } else { fit }
}

/// The shared address, in each of the tile's arrays `arrays` (leaves `ls`), of this
/// thread's slot: its first item of `items` consecutive ones per thread (1: the thread's
/// slot in a coalesced round).
fn slots(k: &mut Kernel, arrays: &[Sym], ls: &[Scalar], items: u64) -> Vec<Reg> {
    arrays
        .iter()
        .zip(ls)
        .map(|(a, &s)| Gen::thread_slot(k, a, items * u64::from(slot_bytes(s))))
        .collect()
}

/// One of a thread's items in [`Gen::thread_items`].
struct Item<'a> {
    /// The thread's first item.
    first: bool,
    /// The running state must be in the caller's fixed registers after this item.
    fix: bool,
    /// The item's address in each shared array.
    addrs: &'a [Addr],
}

/// A scan tile being generated: `items` consecutive elements per thread, staged in
/// shared memory (one array per leaf, `items * block` slots).
pub(in crate::codegen) struct Tile {
    /// The shared arrays, one per leaf.
    pub(super) arrays: Vec<Sym>,
    /// The leaves.
    pub(super) ls: Vec<Scalar>,
    /// Items per thread.
    pub(super) items: u64,
    /// Index of the tile's first element (`u64`).
    pub(super) base: Reg,
    /// Elements in the tile (`u64`; `items * block` but in the last tile).
    pub(super) lim: Reg,
    /// This thread's items (`u32`, `items` but in the last tile).
    pub(super) mine: Reg,
    /// Shared address of this thread's first item in each array (`u32`).
    pub(super) first: Vec<Reg>,
    /// With one item per thread, the thread's item is its element in the coalesced order
    /// too: it stays in these registers (one per leaf) and there are no shared arrays
    /// (so any element fits, whatever the block size).
    pub(super) regs: Option<Vec<Reg>>,
}

impl<'f> Gen<'f> {
    /// Items per thread of a scan tile for elements of leaves `ls`: the tile is staged in
    /// shared memory (one array per leaf, a `bool` in a 32-bit slot), at most
    /// [`TILE_SHARED`] bytes, at most [`MAX_ITEMS`] items; odd, so that a thread's
    /// consecutive items (stride `items` slots) fall in distinct banks.
    pub(super) fn scan_items(&self, ls: &[Scalar]) -> u64 {
        scan_items(self.bsize(), ls)
    }

    /// Sets up tile `tile` (a `u64` register) of `items` elements per thread over `n`
    /// elements, with its shared arrays (see [`Tile`]).
    pub(super) fn tile_begin(
        &mut self,
        k: &mut Kernel,
        ls: &[Scalar],
        tile: &Reg,
        n: &Reg,
    ) -> Tile {
        let items = self.scan_items(ls);
        let bsize = u64::from(self.bsize());
        let tile_len = items * bsize;
        let direct = items == 1;
        let arrays: Vec<Sym> = if direct {
            Vec::new()
        } else {
            ls.iter()
                .map(|&s| k.shared((tile_len * u64::from(slot_bytes(s))) as u32))
                .collect()
        };
        let base = k.reg(Scalar::U64);
        k.emit(Ins::mul_lo(Ty::U64, &base, tile, tile_len));
        // Elements in this tile: min(n - base, tile_len) (n >= base for every tile).
        let lim = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &lim, n, &base));
        k.emit(Ins::min(Ty::U64, &lim, &lim, tile_len));
        // This thread's: clamp(lim - tid * items, 0, items).
        let d = k.reg(Scalar::U64);
        k.emit(Ins::mul_lo(Ty::U64, &d, &k.tid64, items));
        k.emit(Ins::sub(Ty::S64, &d, &lim, &d));
        k.emit(Ins::max(Ty::S64, &d, &d, 0));
        k.emit(Ins::min(Ty::S64, &d, &d, items));
        let mine = k.reg(Scalar::U32);
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &mine, &d));
        let first = slots(k, &arrays, ls, items);
        let regs = direct.then(|| ls.iter().map(|&s| self.zero(k, s)).collect());
        Tile {
            arrays,
            ls: ls.to_vec(),
            items,
            base,
            lim,
            mine,
            first,
            regs,
        }
    }

    /// Loads tile `tile` (a `u64` register) of elements of leaves `ls` (`elem` gives the
    /// element at an index, see [`Gen::tile_load`]) and combines each thread's items in
    /// order ([`Gen::tile_reduce`]): the tile and this thread's combination.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tile_reduced(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        ctx: &Ctx,
        ls: &[Scalar],
        tile: &Reg,
        n: &Reg,
        elem: &mut ElemAt<'_, 'f>,
    ) -> R<(Tile, Opt)> {
        let t = self.tile_begin(k, ls, tile, n);
        self.tile_load(k, &t, elem)?;
        let mine = self.tile_reduce(k, comb, &t, ctx)?;
        Ok((t, mine))
    }

    /// Loops over the tile in coalesced rounds (thread `t` takes elements `t`, `t +
    /// block`, ... of the tile, while inside it); `body` gets the element's global index,
    /// the shared address of its slot in each array and a label to jump to to skip the
    /// rest of its work, and emits the work of one element.
    fn tile_rounds(&mut self, k: &mut Kernel, t: &Tile, body: &mut RoundBody<'_, 'f>) -> R<()> {
        let bsize = self.bsize();
        let (idx, end) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::add(Ty::S64, &idx, &t.base, &k.tid64));
        k.emit(Ins::add(Ty::S64, &end, &t.base, &t.lim));
        let addrs = slots(k, &t.arrays, &t.ls, 1);
        let (top, next, done) = (k.label(), k.label(), k.label());
        k.place(&top);
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &out, &idx, &end));
        k.emit(Ins::bra(&done).when(&out));
        body(self, k, &idx, &addrs, &next)?;
        k.place(&next);
        k.emit(Ins::add(Ty::S64, &idx, &idx, bsize));
        for (a, &s) in addrs.iter().zip(&t.ls) {
            k.emit(Ins::add(Ty::S32, a, a, bsize * slot_bytes(s)));
        }
        k.emit(Ins::bra_uni(&top));
        k.place(&done);
        Ok(())
    }

    /// With one item per thread ([`Tile::regs`]): the thread's element index (`base +
    /// tid`) and a label (placed by the caller) that threads past the tile's end jump to.
    fn direct_elem(k: &mut Kernel, t: &Tile) -> (Reg, Label) {
        let skip = k.label();
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &out, &k.tid64, &t.lim));
        k.emit(Ins::bra(&skip).when(&out));
        let idx = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &idx, &t.base, &k.tid64));
        (idx, skip)
    }

    /// Step 1 of a tile: the element function of each element of the tile, in coalesced
    /// rounds, into the shared arrays; then the block waits. A failed check leaves the
    /// slot unspecified (the failure is reported; the results are never used).
    pub(super) fn tile_load(
        &mut self,
        k: &mut Kernel,
        t: &Tile,
        elem: &mut ElemAt<'_, 'f>,
    ) -> R<()> {
        if let Some(regs) = &t.regs {
            let (idx, skip) = Self::direct_elem(k, t);
            let e = elem(self, k, &idx, &skip)?;
            for (d, s) in regs.iter().zip(&e) {
                Self::mov(k, d, s);
            }
            k.place(&skip);
            return Ok(());
        }
        self.tile_rounds(k, t, &mut |g, k, idx, addrs, next| {
            let e = elem(g, k, idx, next)?;
            for (r, a) in e.iter().zip(addrs) {
                Self::st(k, Space::Shared, a, r);
            }
            Ok(())
        })?;
        k.emit(Ins::bar_sync());
        Ok(())
    }

    /// The last step of a tile: each element's result from the shared arrays to `store`,
    /// in coalesced rounds (unrolled, with constant shared offsets, for a whole tile).
    pub(super) fn tile_store(
        &mut self,
        k: &mut Kernel,
        t: &Tile,
        store: &mut StoreAt<'_, 'f>,
    ) -> R<()> {
        if let Some(regs) = &t.regs {
            let (idx, skip) = Self::direct_elem(k, t);
            store(self, k, &idx, regs)?;
            k.place(&skip);
            return Ok(());
        }
        let bsize = u64::from(self.bsize());
        let (part, done) = (k.label(), k.label());
        let whole = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &whole, &t.lim, t.items * bsize));
        k.emit(Ins::bra(&part).unless(&whole));
        let idx0 = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &idx0, &t.base, &k.tid64));
        let rows = slots(k, &t.arrays, &t.ls, 1);
        for round in 0..t.items {
            let idx = if round == 0 {
                idx0.clone()
            } else {
                let i = k.reg(Scalar::U64);
                k.emit(Ins::add(Ty::S64, &i, &idx0, round * bsize));
                i
            };
            let v: Vec<Reg> = rows
                .iter()
                .zip(&t.ls)
                .map(|(a, &s)| {
                    let off = round * bsize * u64::from(slot_bytes(s));
                    Self::ld(k, Space::Shared, Addr::from(a).plus(off), s)
                })
                .collect();
            store(self, k, &idx, &v)?;
        }
        k.emit(Ins::bra_uni(&done));
        k.place(&part);
        self.tile_rounds(k, t, &mut |g, k, idx, addrs, _| {
            let v: Vec<Reg> = addrs
                .iter()
                .zip(&t.ls)
                .map(|(a, &s)| Self::ld(k, Space::Shared, a, s))
                .collect();
            store(g, k, idx, &v)
        })?;
        k.place(&done);
        Ok(())
    }

    /// Runs `body` on each of this thread's consecutive items of the tile in order, with
    /// an [`Item`] (first, whose state must be in registers fixed by the caller after it,
    /// shared addresses): unrolled with constant offsets when the thread has all its
    /// items (the state then only needs to be fixed after the last), else a loop over the
    /// ones it has (the tile's tail; after every item).
    fn thread_items(
        &mut self,
        k: &mut Kernel,
        t: &Tile,
        body: &mut dyn FnMut(&mut Self, &mut Kernel, Item<'_>) -> R<()>,
    ) -> R<()> {
        let (slow, done) = (k.label(), k.label());
        let full = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &full, &t.mine, t.items));
        k.emit(Ins::bra(&slow).unless(&full));
        for j in 0..t.items {
            let addrs: Vec<Addr> = t
                .first
                .iter()
                .zip(&t.ls)
                .map(|(a, &s)| Addr::from(a).plus(j * u64::from(slot_bytes(s))))
                .collect();
            let item = Item {
                first: j == 0,
                fix: j + 1 == t.items,
                addrs: &addrs,
            };
            body(self, k, item)?;
        }
        k.emit(Ins::bra_uni(&done));
        k.place(&slow);
        let none = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &none, &t.mine, 0));
        k.emit(Ins::bra(&done).when(&none));
        let first: Vec<Addr> = t.first.iter().map(Addr::from).collect();
        let item = Item {
            first: true,
            fix: true,
            addrs: &first,
        };
        body(self, k, item)?;
        let j = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &j, 1));
        let addrs: Vec<Reg> = t.first.iter().map(|a| k.reg(a.ty)).collect();
        for ((d, a), &s) in addrs.iter().zip(&t.first).zip(&t.ls) {
            k.emit(Ins::add(Ty::S32, d, a, slot_bytes(s)));
        }
        let top = k.label();
        k.place(&top);
        let out = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &out, &j, &t.mine));
        k.emit(Ins::bra(&done).when(&out));
        let item = Item {
            first: false,
            fix: true,
            addrs: &addrs.iter().map(Addr::from).collect::<Vec<_>>(),
        };
        body(self, k, item)?;
        k.emit(Ins::add(Ty::S32, &j, &j, 1));
        for (a, &s) in addrs.iter().zip(&t.ls) {
            k.emit(Ins::add(Ty::S32, a, a, slot_bytes(s)));
        }
        k.emit(Ins::bra_uni(&top));
        k.place(&done);
        Ok(())
    }

    /// Loads one item of this thread's (see [`Gen::thread_items`]) from the shared arrays.
    fn load_item(k: &mut Kernel, t: &Tile, addrs: &[Addr]) -> Vec<Reg> {
        addrs
            .iter()
            .zip(&t.ls)
            .map(|(a, &s)| Self::ld(k, Space::Shared, a, s))
            .collect()
    }

    /// This thread's items of the tile combined in order (no value when it has none).
    pub(super) fn tile_reduce(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        t: &Tile,
        ctx: &Ctx,
    ) -> R<Opt> {
        if let Some(regs) = &t.regs {
            let has = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &has, &t.mine, 0));
            return Ok(Opt {
                has,
                v: regs.clone(),
            });
        }
        let acc = self.none(k, &t.ls);
        // The running value (registers of the last combination between fixes).
        let mut cur = acc.v.clone();
        self.thread_items(k, t, &mut |g, k, it| {
            let x = Self::load_item(k, t, it.addrs);
            cur = if it.first {
                k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 1, 1));
                x
            } else {
                g.combine(k, comb, &cur, &x, ctx)?
            };
            if it.fix {
                for (d, s) in acc.v.iter().zip(&cur) {
                    Self::mov(k, d, s);
                }
                cur = acc.v.clone();
            }
            Ok(())
        })?;
        Ok(acc)
    }

    /// Replaces this thread's items in the shared arrays by their scan: `prefix` (the
    /// optional combination of everything before the thread's first item) combined with
    /// the items up to each one (inclusive) or before it (`exclusive`; `prefix` then has
    /// a value: the start value at least); then the block waits.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn tile_scan(
        &mut self,
        k: &mut Kernel,
        comb: Comb<'_>,
        t: &Tile,
        prefix: &Opt,
        exclusive: bool,
        ctx: &Ctx,
    ) -> R<()> {
        if let Some(regs) = &t.regs {
            // The thread's element (if it has one) becomes its result.
            let skip = k.label();
            let none = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &none, &t.mine, 0));
            k.emit(Ins::bra(&skip).when(&none));
            let res = if exclusive {
                prefix.v.clone()
            } else {
                let tr = self.pconst(k, true);
                let x = Opt {
                    has: tr,
                    v: regs.clone(),
                };
                self.opt_combine(k, comb, prefix, &x, ctx)?.v
            };
            for (d, s) in regs.iter().zip(&res) {
                Self::mov(k, d, s);
            }
            k.place(&skip);
            return Ok(());
        }
        let acc = Self::copy_opt(k, prefix);
        let mut cur = acc.v.clone();
        self.thread_items(k, t, &mut |g, k, it| {
            let x = Self::load_item(k, t, it.addrs);
            if exclusive {
                let before = if it.first { &acc.v } else { &cur };
                for (r, a) in before.iter().zip(it.addrs) {
                    Self::st(k, Space::Shared, a, r);
                }
            }
            cur = if it.first {
                let t = g.pconst(k, true);
                let xo = Opt { has: t, v: x };
                g.opt_combine(k, comb, &acc, &xo, ctx)?.v
            } else {
                g.combine(k, comb, &cur, &x, ctx)?
            };
            if !exclusive {
                for (r, a) in cur.iter().zip(it.addrs) {
                    Self::st(k, Space::Shared, a, r);
                }
            }
            if it.fix {
                // After the first item there is a value.
                k.emit(Ins::setp(Cmp::Eq, Ty::U32, &acc.has, 1, 1));
                for (d, s) in acc.v.iter().zip(&cur) {
                    Self::mov(k, d, s);
                }
                cur = acc.v.clone();
            }
            Ok(())
        })?;
        k.emit(Ins::bar_sync());
        Ok(())
    }

    /// The element function (and, for a filter, its predicate) at index `idx` for a tile:
    /// its leaves and whether it is kept (`None` without a predicate). A failed check in
    /// either jumps to `fail` (the key is `idx` for the element, `n + idx` for the
    /// predicate).
    #[allow(clippy::too_many_arguments)]
    pub(in crate::codegen) fn elem_at(
        &mut self,
        k: &mut Kernel,
        soac: &Soac,
        pred: Option<&Lambda>,
        n: &Reg,
        idx: &Reg,
        fail: &Label,
    ) -> R<(Vec<Reg>, Option<Reg>)> {
        let ctx = Ctx {
            key: idx.clone(),
            fail: Some(fail.clone()),
        };
        let e = self.elem(k, &soac.elem, idx, &ctx)?.flatten()?;
        let Some(pl) = pred else {
            return Ok((e, None));
        };
        let key = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &key, n, idx));
        let pctx = Ctx {
            key,
            fail: Some(fail.clone()),
        };
        let ev = unflatten(self.ty(pl.params[0]), &mut e.clone().into_iter())?;
        k.env.insert(pl.params[0], ev);
        let kv = self.block(k, &pl.body, &pctx)?;
        Ok((e, Some(kv.reg()?.clone())))
    }
}
