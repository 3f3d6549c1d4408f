//! Top-level `sort` and `sort_by_key`: a stable least-significant-digit radix sort (sorts
//! inside element functions are merge sorts, [`super::row_sort`]).
//!
//! Each scalar leaf of the key is mapped to an unsigned integer of the same order
//! ([`Gen::radix_key`]: `bool` and unsigned integers as they are, signed ones with the sign
//! bit flipped, floats by IEEE 754 `totalOrder`: all bits flipped when the sign is set,
//! else the sign bit). A sort of scalars sorts these keys alone: `sort_keys` evaluates the
//! element function and makes the keys, the last pass writes the values back from them.
//! Other sorts compute the elements (or `(key, value)` pairs) into temporaries first
//! (`sort_elems`) and sort the leaves of the key from the last to the first (a tuple key is
//! lexicographic: a stable sort by the last leaf, then by the one before, ...), each
//! leaf's keys loaded through the current order (`sort_keys`: `u32` element indices, the
//! identity for the first leaf) and sorted along with the indices; `sort_gather` then
//! reads each output element's value leaves at its index. Indices are `u32`: a sort of
//! more than `u32::MAX` elements fails before any launch with a clear error.
//!
//! A leaf is sorted by one digit of [`DIGIT_BITS`] bits per pass, from the lowest: 1 pass
//! for `bool` and 8-bit leaves, 2 for 16-bit ones, 4 for 32-bit ones, 8 for 64-bit ones (8-
//! and 16-bit keys are held as `u32`s). The sort is *onesweep* (Adinets and Merrill):
//! `sort_keys`, which makes a leaf's keys, also counts the values of every digit of the
//! leaf over all elements (a shared histogram per digit in each block, added into the
//! sort's [`Sweep`] state when the block is done), and each pass is then one kernel,
//! `sort_pass`, with one block of [`RADIX`] threads per tile of consecutive elements
//! ([`Tiles`]), the tile taken from the pass's counter (so a block waits only for tiles
//! taken before its own, which are running or done):
//!
//! 1. thread `d` reads how many elements have digit `d`; when that is all of them (every
//!    key has the same digit, `bar.red.or` tells the block), the pass would keep the
//!    order, and the tile is copied instead;
//! 2. the exclusive scan of those counts says where digit `d`'s elements start; the tile's
//!    own count of each digit (`red.shared.add` into a shared histogram, over the tile's
//!    keys) is published in the tile's look-back status, and its exclusive scan says where
//!    the digit starts in the tile;
//! 3. in rounds of [`SUB_ROUNDS`] sub-rounds of 32 consecutive elements per warp:
//!    `match.any` gives each lane the lanes of its warp holding the same digit, so its
//!    rank among them is a `popc`, plus the warp's running count of the digit in shared
//!    memory; after the round, thread `d` turns the warps' counts of digit `d` into
//!    per-warp offsets; each element (key and index) is placed in shared memory at its
//!    digit's running start in the tile plus its warp's offset plus its rank;
//! 4. thread `d` looks back over the tiles before, adding their counts of digit `d` until
//!    one that has published its inclusive prefix, and publishes its own;
//! 5. the tile is written out from shared memory in order: element `p` at its digit's
//!    start plus the digit's count in the tiles before plus its rank in the tile
//!    (consecutive threads write runs of equal digits). Rounds, warps, sub-rounds and
//!    lanes follow the element order, so the pass is stable.
//!
//! A status is one `u64` per tile and digit value, shared by the passes: the count in
//! the low 32 bits, in the high ones pass `p`'s flag, [`own`] (`2p + 1`: the tile's own
//! count) or [`inclusive`] (`2p + 2`: the count in the tiles up to this one); a pass waits
//! while a status holds any other flag (0, or another pass's). Statuses are written and
//! read whole by atomics (`atom.exch`, `atom.or` of 0), so a reader never sees a flag
//! with a count it was not written with. The run time may launch the kernels of a call
//! again, in order, in report mode (after a failed check later in the call): every
//! launch of the sort then gives the same results ([`Sweep`]).
//!
//! The keys (and indices) move between two pairs of buffers.

use super::*;

/// Bits of the digit one pass orders by.
const DIGIT_BITS: u32 = 8;
/// Values of a digit, and the threads per block of the radix kernels (one per value).
const RADIX: u32 = 1 << DIGIT_BITS;
/// Shared memory of `sort_pass` for its tile in the pass's order (keys, and indices
/// where there are): what is left of the 48 KiB a block can declare after its other
/// arrays (12 KiB) and the block scan's.
const STAGING_BYTES: u64 = 34 * 1024;
/// The most elements in a tile.
const MAX_TILE: u64 = 8192;
/// Sub-rounds of 32 elements per warp in a round of a tile: the warps' counts per digit
/// are combined once per round, so the more sub-rounds, the less that costs per element
/// (but each holds an element in registers).
const SUB_ROUNDS: u32 = 4;

/// A look-back status of pass `p` (the high half of its `u64`; the low half is a count):
/// the tile's own count of the digit value.
fn own(p: u32) -> u64 {
    u64::from(2 * p + 1) << 32
}

/// A look-back status of pass `p`: the count of the digit value in the tiles up to this
/// one.
fn inclusive(p: u32) -> u64 {
    u64::from(2 * p + 2) << 32
}

/// The tiles of a sort: one block of `sort_pass` each.
struct Tiles {
    /// Rounds of `RADIX * SUB_ROUNDS` elements per tile: as many as the staging area
    /// holds (the longer the tile, the longer the runs of equal digits written together),
    /// so 8 for `u32` keys alone (8192 elements), 4 for `u32` keys with indices or `u64`
    /// keys alone (4096), 2 for `u64` keys with indices (2048).
    rounds: u64,
    /// The number of tiles.
    count: Count,
}

impl Tiles {
    fn new(n: &Count, key_bytes: u64, indices: bool) -> Tiles {
        let per = key_bytes + if indices { 4 } else { 0 };
        let round = u64::from(RADIX * SUB_ROUNDS);
        let rounds = (STAGING_BYTES / per).min(MAX_TILE) / round;
        Tiles {
            rounds,
            count: cmax1(cdiv(n.clone(), rounds * round)),
        }
    }

    /// Elements per tile.
    fn len(&self) -> u64 {
        self.rounds * u64::from(RADIX * SUB_ROUNDS)
    }
}

/// Said after the block-size reason of a sort's kernels.
const RADIX_NOTE: &str =
    "a radix sort's kernels run 256 threads per block (a thread per digit value)";

/// The unsigned type a key leaf is sorted as, and its number of digits.
fn key_repr(s: Scalar) -> (Scalar, u32) {
    match s {
        Scalar::Bool | Scalar::I8 | Scalar::U8 => (Scalar::U32, 1),
        Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => (Scalar::U32, 2),
        Scalar::I32 | Scalar::U32 | Scalar::F32 => (Scalar::U32, 32 / DIGIT_BITS),
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => (Scalar::U64, 64 / DIGIT_BITS),
    }
}

/// The untyped type of a key type (`u32` or `u64`) and the position of its top bit.
fn key_bits(kty: Scalar) -> (Ty, u32) {
    (bits(kty), width(kty) - 1)
}

/// The signed type of a key type's width (for arithmetic shifts).
fn signed(kty: Scalar) -> Ty {
    if width(kty) == 32 { Ty::S32 } else { Ty::S64 }
}

/// Where a pass reads and writes.
struct Pass {
    /// The keys it reads, those it writes.
    keys: [u32; 2],
    /// The element indices it reads and writes along with the keys (none for a sort of
    /// scalars, whose keys are the values).
    idx: Option<[u32; 2]>,
    /// For the last pass of a sort of scalars: instead of keys, the values of this type
    /// they stand for are written, into this temporary.
    out: Option<(Scalar, u32)>,
}

/// The onesweep state of a sort: one zeroed `u64` temporary holding, for each of its
/// `passes` passes, the counts of the digit's values over all elements ([`RADIX`] each,
/// written by the last block of `sort_keys`), then as many counts that the blocks of
/// `sort_keys` add to (cleared again by that last block), then each pass's tile counter,
/// then the count of `sort_keys`' blocks done, then the look-back status of each tile and
/// digit value (see the [module docs](self)). Every launch of the sort gives the same
/// results when the run time launches it again, in order, in report mode: the added
/// counts and the blocks done are set back to zero, a pass takes its tiles modulo the
/// grid, and it waits for statuses with its own flags, which (as the first run left them
/// or written again) hold the same counts.
struct Sweep {
    /// The temporary.
    temp: u32,
    /// The passes of the whole sort (over every leaf of the key).
    passes: u32,
}

impl Sweep {
    /// The elements of the state of a sort of `passes` passes over `tiles` tiles.
    fn len(passes: u32, tiles: &Count) -> Count {
        Count::Add(
            Box::new(Count::Const(Self::head(passes))),
            Box::new(Count::Mul(Box::new(tiles.clone()), u64::from(RADIX))),
        )
    }

    /// The index of pass `p`'s count of digit value 0.
    fn counts(p: u32) -> u64 {
        u64::from(p) * u64::from(RADIX)
    }

    /// The index of the count of digit value 0 that `sort_keys` adds to for pass `p`.
    fn added(&self, p: u32) -> u64 {
        u64::from(self.passes + p) * u64::from(RADIX)
    }

    /// The index of pass `p`'s tile counter (its low 32 bits).
    fn counter(&self, p: u32) -> u64 {
        u64::from(2 * self.passes) * u64::from(RADIX) + u64::from(p)
    }

    /// The index of the count of `sort_keys`' blocks done (its low 32 bits).
    fn done(&self) -> u64 {
        self.counter(self.passes)
    }

    /// The index of the status of tile 0 and digit value 0 (the passes share the
    /// statuses: each writes and waits for its own flags).
    fn status(&self) -> u64 {
        Self::head(self.passes)
    }

    /// The elements before the statuses of a sort of `passes` passes: per pass two rows of
    /// counts and a tile counter, then the count of blocks done.
    fn head(passes: u32) -> u64 {
        u64::from(passes) * (2 * u64::from(RADIX) + 1) + 1
    }
}

/// Where `sort_keys` finds the elements it makes keys of.
#[derive(Clone, Copy)]
enum KeySource<'s> {
    /// The sort's element function (a sort of scalars).
    Elem(&'s Soac),
    /// A temporary holding one scalar leaf of the elements.
    Leaf(u32),
}

/// The scalar leaves of a sort's elements (`sort`) or `(key, value)` pairs
/// (`sort_by_key`).
pub(super) struct SortLeaves {
    /// All of them, in order.
    pub(super) all: Vec<Scalar>,
    /// How many of the first ones are the key's.
    pub(super) keys: usize,
    /// Which ones are the result's.
    pub(super) values: std::ops::Range<usize>,
}

impl<'f> Gen<'f> {
    /// The leaves of `soac`'s elements (a `sort` or `sort_by_key`).
    pub(super) fn sort_leaves(&self, soac: &Soac) -> R<SortLeaves> {
        let elem_ty = self.ty(soac.elem.body.result);
        let all = leaves(elem_ty)?;
        let (keys, values) = match (&soac.kind, elem_ty) {
            (SoacKind::SortByKey, Type::Tuple(kv)) if kv.len() == 2 => {
                let keys = leaves(&kv[0])?.len();
                (keys, keys..all.len())
            }
            (SoacKind::SortByKey, _) => {
                return unsupported("sort_by_key without (key, value) pairs");
            }
            _ => (all.len(), 0..all.len()),
        };
        Ok(SortLeaves { all, keys, values })
    }

    /// `sort` / `sort_by_key` (see the [module docs](self)).
    pub(super) fn sort(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(out_ty) = self.ty(s.var).elem() else {
            return unsupported("sort without a sequence type");
        };
        let SortLeaves {
            all: ls,
            keys: key_leaves,
            values,
        } = self.sort_leaves(soac)?;
        self.cur = KernelInfo {
            block: RADIX,
            default: RADIX,
            note: Some(RADIX_NOTE),
            fixed: true,
            ..self.cur
        };
        steps.push(Step::Assert {
            check: HostAssert::AtMost {
                origin: origin_of(&soac.kind),
                len: var(soac.len),
                max: u64::from(u32::MAX),
            },
            span: s.span.0,
        });
        let n = Count::Var(var(soac.len));
        let scalars = ls.len() == 1;
        let widest = ls[..key_leaves]
            .iter()
            .map(|&l| size_of(key_repr(l).0))
            .max();
        let tiles = Tiles::new(&n, widest.unwrap_or(4), !scalars);
        // The onesweep state is zeroed (one memset); nothing else is: `sort_keys` and each
        // pass write every key (and index) of their buffer, the last pass every value.
        let passes = ls[..key_leaves].iter().map(|&l| key_repr(l).1).sum();
        let len = Sweep::len(passes, &tiles.count);
        let sweep = Sweep {
            temp: self.alloc_leaves(&[Scalar::U64], &len, steps)[0],
            passes,
        };
        let outs = if let [s1] = ls[..] {
            // A sort of scalars: the keys are the values, sorted without indices; the
            // element function runs in `sort_keys` and the last pass writes the values.
            let (kty, digits) = key_repr(s1);
            let kb = self.alloc_written(&[kty, kty], &n, steps);
            let out = self.alloc_written(&[s1], &n, steps)[0];
            let source = KeySource::Elem(soac);
            self.sort_keys(source, s1, None, kb[0], (&sweep, 0), &n, steps)?;
            for d in 0..digits {
                let cur = (d % 2) as usize;
                let pass = Pass {
                    keys: [kb[cur], kb[1 - cur]],
                    idx: None,
                    out: (d + 1 == digits).then_some((s1, out)),
                };
                self.sort_pass(kty, d * DIGIT_BITS, &pass, &sweep, d, &tiles, &n, steps)?;
            }
            vec![out]
        } else {
            let elems = self.map_to_temps(soac, &ls, "sort_elems", None, steps)?;
            let idx = self.alloc_written(&[Scalar::U32, Scalar::U32], &n, steps);
            let mut keys: HashMap<Scalar, Vec<u32>> = HashMap::new();
            // Which buffer of each pair holds the current keys and indices.
            let mut cur = 0;
            // The sort's passes so far.
            let mut p = 0;
            for (i, leaf) in (0..key_leaves).rev().enumerate() {
                let (kty, digits) = key_repr(ls[leaf]);
                let kb = match keys.get(&kty) {
                    Some(kb) => kb.clone(),
                    None => {
                        let kb = self.alloc_written(&[kty, kty], &n, steps);
                        keys.insert(kty, kb.clone());
                        kb
                    }
                };
                let source = KeySource::Leaf(elems[leaf]);
                let ids = (idx[cur], i == 0);
                self.sort_keys(source, ls[leaf], Some(ids), kb[cur], (&sweep, p), &n, steps)?;
                for d in 0..digits {
                    let pass = Pass {
                        keys: [kb[cur], kb[1 - cur]],
                        idx: Some([idx[cur], idx[1 - cur]]),
                        out: None,
                    };
                    self.sort_pass(kty, d * DIGIT_BITS, &pass, &sweep, p, &tiles, &n, steps)?;
                    cur = 1 - cur;
                    p += 1;
                }
            }
            self.sort_gather(&ls, &elems, values, idx[cur], &n, steps)
        };
        steps.push(Self::bind_flat(s.var, out_ty, outs, n));
        Ok(())
    }

    /// `sort_keys`: `keys[j]` = the radix key of element `j` of `source` (a scalar of type
    /// `s`), or with indices `Some((idx, first))` of element `idx[j]`; for the first leaf
    /// sorted (`first`), `idx[j] = j` is stored and the element read at `j`. The counts of
    /// the values of each of the key's digits are added into the passes' counts in
    /// `sweep`, from pass `p0` on (per block in shared memory first).
    #[allow(clippy::too_many_arguments)]
    fn sort_keys(
        &mut self,
        source: KeySource<'_>,
        s: Scalar,
        idx: Option<(u32, bool)>,
        keys: u32,
        (sweep, p0): (&Sweep, u32),
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let mut k = self.new_kernel("sort_keys");
        if let KeySource::Elem(soac) = source {
            k.env = self.bind_captures(&mut k, &[&soac.elem])?;
        }
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let [kp, sp] = [keys, sweep.temp].map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        // Digit `dd`'s histogram is row `dd` of `hist`; thread `d` clears column `d`.
        let digits = key_repr(s).1;
        let row = u64::from(RADIX * 4);
        let hist = k.shared(digits * RADIX * 4);
        let mine = Self::thread_slot(&mut k, &hist, 4);
        for dd in 0..digits {
            let at = Addr::from(&mine).plus(u64::from(dd) * row);
            k.emit(Ins::st(Space::Shared, Ty::U32, at, 0));
        }
        k.emit(Ins::bar_sync());
        let el = Self::elem_loop(&mut k, &n, None);
        let j = el.i.clone();
        let src = match idx {
            None => j.clone(),
            Some((idx, first)) => {
                let ip = Self::temp_ptrs(&mut k, &[idx])[0].clone();
                if first {
                    let j32 = k.reg(Scalar::U32);
                    k.emit(Ins::cvt(Ty::U32, Ty::U64, &j32, &j));
                    self.store(&mut k, &ip, &j, &j32);
                    j.clone()
                } else {
                    let at = self.load_leaves(&mut k, &[ip], &j, &[Scalar::U32]);
                    let src = k.reg(Scalar::U64);
                    k.emit(Ins::cvt(Ty::U64, Ty::U32, &src, &at[0]));
                    src
                }
            }
        };
        let value = match source {
            KeySource::Elem(soac) => {
                let ctx = el.ctx();
                let v = self.elem(&mut k, &soac.elem, &src, &ctx)?;
                // A scalar, or a tuple of one.
                v.flatten()?.remove(0)
            }
            KeySource::Leaf(leaf) => {
                let lp = Self::temp_ptrs(&mut k, &[leaf]);
                self.load_leaves(&mut k, &lp, &src, &[s]).remove(0)
            }
        };
        let key = Self::radix_key(&mut k, &value, s);
        self.store(&mut k, &kp, &j, &key);
        for dd in 0..digits {
            let d = Self::digit(&mut k, &key, dd * DIGIT_BITS);
            let at = Self::shared_at(&mut k, &hist, &d, 4);
            let at = Addr::from(&at).plus(u64::from(dd) * row);
            k.emit(Ins::red(Space::Shared, AtomOp::Add, Ty::U32, at, 1));
        }
        Self::elem_loop_end(&mut k, &el);
        // The block's counts into the sort's; the last block to be done moves them to the
        // passes' counts and clears them.
        k.emit(Ins::bar_sync());
        let (c, c64, some) = (k.reg(Scalar::U32), k.reg(Scalar::U64), k.reg(Scalar::Bool));
        let tid = k.tid64.clone();
        let col = Self::addr(&mut k, &sp, &tid, Scalar::U64);
        for dd in 0..digits {
            let at = Addr::from(&mine).plus(u64::from(dd) * row);
            k.emit(Ins::ld(Space::Shared, Ty::U32, &c, at));
            k.emit(Ins::setp(Cmp::Ne, Ty::U32, &some, &c, 0));
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &c64, &c));
            let to = Addr::from(&col).plus(8 * sweep.added(p0 + dd));
            k.emit(Ins::red(Space::Global, AtomOp::Add, Ty::U64, to, &c64).when(&some));
        }
        let done = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &done, &sp, 8 * sweep.done()));
        let (finish, tid) = Self::last_block(&mut k, &done);
        let tid64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &tid64, &tid));
        let col = Self::addr(&mut k, &sp, &tid64, Scalar::U64);
        for dd in 0..digits {
            let from = Addr::from(&col).plus(8 * sweep.added(p0 + dd));
            k.emit(Ins::ld(
                Space::RelaxedGpuGlobal,
                Ty::U64,
                &c64,
                from.clone(),
            ));
            let to = Addr::from(&col).plus(8 * Sweep::counts(p0 + dd));
            k.emit(Ins::st(Space::Global, Ty::U64, to, &c64));
            k.emit(Ins::st(Space::Global, Ty::U64, from, 0));
        }
        k.place(&finish);
        self.launch_stride(k, n_count, u64::from(RADIX), steps);
        if matches!(source, KeySource::Elem(_)) {
            steps.push(Step::CheckErrors);
        }
        Ok(())
    }

    /// The radix key of `v` (of type `s`): an unsigned integer ([`key_repr`]) whose order
    /// is `total_cmp`'s.
    pub(super) fn radix_key(k: &mut Kernel, v: &Reg, s: Scalar) -> Reg {
        if s.is_half() {
            // The 16 bits, all flipped when the sign is set, else the sign bit alone.
            let raw = k.half_bits(v);
            k.emit(Ins::and(Ty::B32, &raw, &raw, Src::hex(0xffff)));
            let mask = k.reg(Scalar::U32);
            k.emit(Ins::shl(Ty::B32, &mask, &raw, 16));
            k.emit(Ins::shr(Ty::S32, &mask, &mask, 31));
            k.emit(Ins::or(Ty::B32, &mask, &mask, Src::hex(0x8000)));
            k.emit(Ins::and(Ty::B32, &mask, &mask, Src::hex(0xffff)));
            let key = k.reg(Scalar::U32);
            k.emit(Ins::xor(Ty::B32, &key, &raw, &mask));
            return key;
        }
        let (kty, _) = key_repr(s);
        let (b, top) = key_bits(kty);
        let raw = k.reg(kty);
        match s {
            Scalar::Bool => k.emit(Ins::selp(Ty::U32, &raw, 1, 0, v)),
            _ => k.emit(Ins::mov(b, &raw, v)),
        }
        match s {
            Scalar::I32 | Scalar::I64 => {
                let key = k.reg(kty);
                k.emit(Ins::xor(b, &key, &raw, Src::hex(1 << top)));
                key
            }
            Scalar::I8 | Scalar::I16 => {
                // Sign-extended in 32 bits: the low bits with their own sign bit flipped.
                let w = 8 * size_of(s) as u32;
                let key = k.reg(kty);
                k.emit(Ins::xor(b, &key, &raw, Src::hex(1 << (w - 1))));
                k.emit(Ins::and(b, &key, &key, Src::hex((1 << w) - 1)));
                key
            }
            Scalar::F32 | Scalar::F64 => {
                // All ones when the sign is set, else the sign bit alone.
                let mask = k.reg(kty);
                k.emit(Ins::shr(signed(kty), &mask, &raw, top));
                k.emit(Ins::or(b, &mask, &mask, Src::hex(1 << top)));
                let key = k.reg(kty);
                k.emit(Ins::xor(b, &key, &raw, &mask));
                key
            }
            _ => raw,
        }
    }

    /// The value of type `s` whose [radix key](Gen::radix_key) is `key`.
    fn from_radix_key(k: &mut Kernel, key: &Reg, s: Scalar) -> Reg {
        if s.is_half() {
            // A set bit 15 was a positive value (flip it back), a clear one a negative
            // value (flip all 16 back).
            let mask = k.reg(Scalar::U32);
            k.emit(Ins::shl(Ty::B32, &mask, key, 16));
            k.emit(Ins::shr(Ty::S32, &mask, &mask, 31));
            k.emit(Ins::not(Ty::B32, &mask, &mask));
            k.emit(Ins::or(Ty::B32, &mask, &mask, Src::hex(0x8000)));
            k.emit(Ins::and(Ty::B32, &mask, &mask, Src::hex(0xffff)));
            let bits = k.reg(Scalar::U32);
            k.emit(Ins::xor(Ty::B32, &bits, key, &mask));
            return k.widen_half(&bits, s);
        }
        let (b, top) = key_bits(key.ty);
        let bits = match s {
            Scalar::Bool => {
                let p = k.reg(Scalar::Bool);
                k.emit(Ins::setp(Cmp::Ne, Ty::U32, &p, key, 0));
                return p;
            }
            Scalar::I32 | Scalar::I64 => {
                let x = k.reg(key.ty);
                k.emit(Ins::xor(b, &x, key, Src::hex(1 << top)));
                x
            }
            Scalar::I8 | Scalar::I16 => {
                let x = k.reg(s);
                let sign = 1u64 << (8 * size_of(s) - 1);
                k.emit(Ins::xor(b, &x, key, Src::hex(sign)));
                k.wrap(&x);
                return x;
            }
            Scalar::F32 | Scalar::F64 => {
                // A set top bit was a positive value (flip the sign bit back), a clear one
                // a negative value (flip every bit back).
                let mask = k.reg(key.ty);
                k.emit(Ins::shr(signed(key.ty), &mask, key, top));
                k.emit(Ins::not(b, &mask, &mask));
                k.emit(Ins::or(b, &mask, &mask, Src::hex(1 << top)));
                let x = k.reg(key.ty);
                k.emit(Ins::xor(b, &x, key, &mask));
                x
            }
            _ => key.clone(),
        };
        let v = k.reg(s);
        k.emit(Ins::mov(b, &v, &bits));
        v
    }

    /// The digit at `shift` of `key`, as a `u32`.
    fn digit(k: &mut Kernel, key: &Reg, shift: u32) -> Reg {
        let d = k.reg(Scalar::U32);
        if key.ty == Scalar::U64 {
            let t = k.reg(Scalar::U64);
            k.emit(Ins::shr(Ty::B64, &t, key, shift));
            k.emit(Ins::cvt(Ty::U32, Ty::U64, &d, &t));
            k.emit(Ins::and(Ty::B32, &d, &d, RADIX - 1));
        } else {
            k.emit(Ins::bfe(Ty::U32, &d, key, shift, DIGIT_BITS));
        }
        d
    }

    /// The index of this thread's first element in the tile starting at `tile0`: in each
    /// round (of `RADIX * SUB_ROUNDS` elements) warp `w` takes the `32 * SUB_ROUNDS`
    /// consecutive elements after those of the warps before it, 32 per sub-round, lane `l`
    /// the `l`-th of each.
    fn tile_first(k: &mut Kernel, tile0: &Reg) -> Reg {
        let within = k.reg(Scalar::U32);
        k.emit(Ins::mad_lo(
            Ty::U32,
            &within,
            &k.warp,
            32 * SUB_ROUNDS,
            &k.lane,
        ));
        let first = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &first, &within));
        k.emit(Ins::add(Ty::S64, &first, &first, tile0));
        first
    }

    /// The index of this thread's element in sub-round `q` of round `r` (from
    /// [`Gen::tile_first`]), and whether it is below `n`.
    fn tile_index(k: &mut Kernel, first: &Reg, n: &Reg, r: &Reg, q: u32) -> (Reg, Reg) {
        let i = k.reg(Scalar::U64);
        k.emit(Ins::mul_wide(Ty::U32, &i, r, RADIX * SUB_ROUNDS));
        k.emit(Ins::add(Ty::S64, &i, &i, first));
        if q > 0 {
            k.emit(Ins::add(Ty::S64, &i, &i, 32 * q));
        }
        let valid = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &valid, &i, n));
        (i, valid)
    }

    /// `sort_pass`: pass `p` of the sort, over the digit at `shift` (see the
    /// [module docs](self)).
    #[allow(clippy::too_many_arguments)]
    fn sort_pass(
        &mut self,
        kty: Scalar,
        shift: u32,
        pass: &Pass,
        sweep: &Sweep,
        p: u32,
        tiles: &Tiles,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let mut k = self.new_kernel("sort_pass");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let [kin, kout, sp] = [pass.keys[0], pass.keys[1], sweep.temp]
            .map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        let idx = pass
            .idx
            .map(|ix| ix.map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone()));
        let out = pass
            .out
            .map(|(s, t)| (s, Self::temp_ptrs(&mut k, &[t])[0].clone()));
        let kbytes = size_of(kty) as u32;
        let warps = RADIX / 32;
        // Per digit: where its elements of this tile go in the output (`u64`), where they
        // start in the tile's order, and where the next round's start (`u32` each; first
        // the tile's histogram); per warp and digit the warp's count, then its offset among
        // the round's elements of the digit; the tile in the pass's order (keys and
        // indices).
        let gstart = k.shared(RADIX * 8);
        let lbase = k.shared(RADIX * 4);
        let lnext = k.shared(RADIX * 4);
        let wcount = k.shared(RADIX * warps * 4);
        let tile_len = tiles.len() as u32;
        let skeys = k.shared(tile_len * kbytes);
        let sidx = idx.is_some().then(|| k.shared(tile_len * 4));
        // Thread 0 takes the tile from the pass's counter (the look-back scan's way).
        let counter = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &counter, &sp, 8 * sweep.counter(p)));
        let (tile, _) = Self::take_tile(&mut k, &counter);
        // Thread d: how many elements have digit d; whether some digit value has them all.
        let at = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &at, &k.tid64, Sweep::counts(p)));
        let total = self.load_leaves(&mut k, std::slice::from_ref(&sp), &at, &[Scalar::U64]);
        let all = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &all, &total[0], &n));
        let same = k.reg(Scalar::Bool);
        k.emit(Ins::bar_red_or(&same, &all));
        // The tile's elements: `m` from `tile * tile_len`.
        let tile0 = k.reg(Scalar::U64);
        k.emit(Ins::mul_lo(Ty::U64, &tile0, &tile, u64::from(tile_len)));
        let m = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &m, &n, &tile0));
        k.emit(Ins::min(Ty::U64, &m, &m, u64::from(tile_len)));
        let m32 = k.reg(Scalar::U32);
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &m32, &m));
        let (copy, done) = (k.label(), k.label());
        k.emit(Ins::bra_uni(&copy).when(&same));
        // Where digit d starts in the output.
        let dstart = self.digit_starts(&mut k, &total[0], &n)?;
        // The tile's count of each digit, in `lnext`.
        let my_next = Self::thread_slot(&mut k, &lnext, 4);
        k.emit(Ins::st(Space::Shared, Ty::U32, &my_next, 0));
        k.emit(Ins::bar_sync());
        let first = Self::tile_first(&mut k, &tile0);
        let (r, top, end) = Self::rounds_head(&mut k, tiles.rounds);
        for q in 0..SUB_ROUNDS {
            let (i, valid) = Self::tile_index(&mut k, &first, &n, &r, q);
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(&valid));
            let key = self.load_leaves(&mut k, std::slice::from_ref(&kin), &i, &[kty]);
            let d = Self::digit(&mut k, &key[0], shift);
            let at = Self::shared_at(&mut k, &lnext, &d, 4);
            k.emit(Ins::red(Space::Shared, AtomOp::Add, Ty::U32, &at, 1));
            k.place(&skip);
        }
        Self::rounds_tail(&mut k, &r, &top, &end);
        k.emit(Ins::bar_sync());
        let count32 = k.reg(Scalar::U32);
        k.emit(Ins::ld(Space::Shared, Ty::U32, &count32, &my_next));
        let count = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &count, &count32));
        // Published at once (tile 0: as its inclusive prefix), so that the tiles after
        // look back past this one while it ranks.
        let statuses = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &statuses, &sp, 8 * sweep.status()));
        let slot = k.reg(Scalar::U64);
        k.emit(Ins::mad_lo(
            Ty::U64,
            &slot,
            &tile,
            u64::from(RADIX),
            &k.tid64,
        ));
        let status = Self::addr(&mut k, &statuses, &slot, Scalar::U64);
        let is_first = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &is_first, &tile, 0));
        let word = k.reg(Scalar::U64);
        k.emit(Ins::selp(
            Ty::B64,
            &word,
            Src::hex(inclusive(p)),
            Src::hex(own(p)),
            &is_first,
        ));
        k.emit(Ins::or(Ty::B64, &word, &word, &count));
        Self::set_status(&mut k, &status, &word, None);
        // Where digit d starts in the tile's order.
        let lstart = self.digit_starts(&mut k, &count, &n)?;
        let first32 = k.reg(Scalar::U32);
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &first32, &lstart));
        let my_base = Self::thread_slot(&mut k, &lbase, 4);
        k.emit(Ins::st(Space::Shared, Ty::U32, &my_base, &first32));
        k.emit(Ins::st(Space::Shared, Ty::U32, &my_next, &first32));
        // Thread d's column of `wcount`: warp w's slot of digit d is at `w * RADIX + d`.
        let column = Self::thread_slot(&mut k, &wcount, 4);
        let (r, top, end) = Self::rounds_head(&mut k, tiles.rounds);
        for w in 0..warps {
            k.emit(Ins::st(
                Space::Shared,
                Ty::U32,
                Addr::from(&column).plus(u64::from(w * RADIX * 4)),
                0,
            ));
        }
        k.emit(Ins::bar_sync());
        // Each warp's sub-rounds in order: the elements' ranks among the warp's elements
        // of their digit so far (the warp's running count of the digit, in its row of
        // `wcount`, plus the rank among the lanes with the same digit).
        let mut items = Vec::new();
        for q in 0..SUB_ROUNDS {
            let (i, valid) = Self::tile_index(&mut k, &first, &n, &r, q);
            let key = k.reg(kty);
            k.emit(Ins::mov(bits(kty), &key, 0));
            let ix = k.reg(Scalar::U32);
            k.emit(Ins::mov(Ty::U32, &ix, 0));
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(&valid));
            let loaded = self.load_leaves(&mut k, std::slice::from_ref(&kin), &i, &[kty]);
            k.emit(Ins::mov(bits(kty), &key, &loaded[0]));
            if let Some([iin, _]) = &idx {
                let loaded =
                    self.load_leaves(&mut k, std::slice::from_ref(iin), &i, &[Scalar::U32]);
                k.emit(Ins::mov(Ty::U32, &ix, &loaded[0]));
            }
            k.place(&skip);
            let d = Self::digit(&mut k, &key, shift);
            // The lanes of the warp holding an element with the same digit.
            let (peers, inside) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
            k.emit(Ins::match_any(&peers, &d));
            k.emit(Ins::vote_ballot(&inside, &valid));
            k.emit(Ins::and(Ty::B32, &peers, &peers, &inside));
            let lt = k.reg(Scalar::U32);
            k.emit(Ins::mov(Ty::U32, &lt, Sreg::LanemaskLt));
            k.emit(Ins::and(Ty::B32, &lt, &lt, &peers));
            let rank = k.reg(Scalar::U32);
            k.emit(Ins::popc(Ty::B32, &rank, &lt));
            // The warp's count of this digit so far; the first lane of each group adds
            // the group's size once every lane has read it.
            let wslot = k.reg(Scalar::U32);
            k.emit(Ins::mad_lo(Ty::U32, &wslot, &k.warp, RADIX, &d));
            let wat = Self::shared_at(&mut k, &wcount, &wslot, 4);
            let before = k.reg(Scalar::U32);
            k.emit(Ins::ld(Space::Shared, Ty::U32, &before, &wat));
            k.emit(Ins::bar_warp_sync());
            let leader = k.reg(Scalar::Bool);
            k.emit(Ins::setp(Cmp::Eq, Ty::U32, &leader, &rank, 0));
            k.emit(Ins::and(Ty::Pred, &leader, &leader, &valid));
            let size = k.reg(Scalar::U32);
            k.emit(Ins::popc(Ty::B32, &size, &peers));
            k.emit(Ins::add(Ty::S32, &size, &size, &before));
            k.emit(Ins::st(Space::Shared, Ty::U32, &wat, &size).when(&leader));
            k.emit(Ins::bar_warp_sync());
            k.emit(Ins::add(Ty::S32, &rank, &rank, &before));
            items.push((valid, key, ix, d, wat, rank));
        }
        k.emit(Ins::bar_sync());
        // Thread d: the warps' counts of digit d become their offsets.
        let (total, cnt) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.emit(Ins::mov(Ty::U32, &total, 0));
        for w in 0..warps {
            let off = w * RADIX * 4;
            k.emit(Ins::ld(
                Space::Shared,
                Ty::U32,
                &cnt,
                Addr::from(&column).plus(u64::from(off)),
            ));
            k.emit(Ins::st(
                Space::Shared,
                Ty::U32,
                Addr::from(&column).plus(u64::from(off)),
                &total,
            ));
            k.emit(Ins::add(Ty::S32, &total, &total, &cnt));
        }
        k.emit(Ins::bar_sync());
        // Each element at its digit's next start in the tile, plus its warp's offset and
        // its rank in the warp.
        for (valid, key, ix, d, wat, rank) in &items {
            let skip = k.label();
            k.emit(Ins::bra(&skip).unless(valid));
            let pos = k.reg(Scalar::U32);
            k.emit(Ins::ld(Space::Shared, Ty::U32, &pos, wat));
            k.emit(Ins::add(Ty::S32, &pos, &pos, rank));
            let dnext = Self::shared_at(&mut k, &lnext, d, 4);
            let start = k.reg(Scalar::U32);
            k.emit(Ins::ld(Space::Shared, Ty::U32, &start, &dnext));
            k.emit(Ins::add(Ty::S32, &pos, &pos, &start));
            let kat = Self::shared_at(&mut k, &skeys, &pos, u64::from(kbytes));
            k.emit(Ins::st(Space::Shared, bits(kty), &kat, key));
            if let Some(sidx) = &sidx {
                let iat = Self::shared_at(&mut k, sidx, &pos, 4);
                k.emit(Ins::st(Space::Shared, Ty::U32, &iat, ix));
            }
            k.place(&skip);
        }
        k.emit(Ins::bar_sync());
        // Thread d: digit d's next start moves past this round's elements of digit d.
        let mine = k.reg(Scalar::U32);
        k.emit(Ins::ld(Space::Shared, Ty::U32, &mine, &my_next));
        k.emit(Ins::add(Ty::S32, &mine, &mine, &total));
        k.emit(Ins::st(Space::Shared, Ty::U32, &my_next, &mine));
        Self::rounds_tail(&mut k, &r, &top, &end);
        // Thread d: digit d's elements in the tiles before, then its own inclusive prefix.
        let before = Self::digit_look_back(&mut k, &statuses, p, &tile, &is_first);
        let incl = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &incl, &before, &count));
        k.emit(Ins::or(Ty::B64, &incl, &incl, Src::hex(inclusive(p))));
        Self::set_status(&mut k, &status, &incl, Some(&is_first));
        k.emit(Ins::add(Ty::S64, &before, &before, &dstart));
        let at = Self::thread_slot(&mut k, &gstart, 8);
        k.emit(Ins::st(Space::Shared, Ty::U64, &at, &before));
        k.emit(Ins::bar_sync());
        // The tile in order: element p goes to its digit's place plus its rank in the
        // digit (p minus the digit's start in the tile).
        let pos = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &pos, &k.tid));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let over = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &over, &pos, &m32));
        k.emit(Ins::bra(&end).when(&over));
        let kat = Self::shared_at(&mut k, &skeys, &pos, u64::from(kbytes));
        let key = k.reg(kty);
        k.emit(Ins::ld(Space::Shared, bits(kty), &key, &kat));
        let d = Self::digit(&mut k, &key, shift);
        let dbase = Self::shared_at(&mut k, &lbase, &d, 4);
        let rank = k.reg(Scalar::U32);
        k.emit(Ins::ld(Space::Shared, Ty::U32, &rank, &dbase));
        k.emit(Ins::sub(Ty::S32, &rank, &pos, &rank));
        let dstart = Self::shared_at(&mut k, &gstart, &d, 8);
        let to = k.reg(Scalar::U64);
        k.emit(Ins::ld(Space::Shared, Ty::U64, &to, &dstart));
        let rank64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &rank64, &rank));
        k.emit(Ins::add(Ty::S64, &to, &to, &rank64));
        let ix = match (&idx, &sidx) {
            (Some(_), Some(sidx)) => {
                let iat = Self::shared_at(&mut k, sidx, &pos, 4);
                let ix = k.reg(Scalar::U32);
                k.emit(Ins::ld(Space::Shared, Ty::U32, &ix, &iat));
                Some(ix)
            }
            _ => None,
        };
        self.sort_put(&mut k, &kout, &out, &idx, &to, &key, ix.as_ref());
        k.emit(Ins::add(Ty::S32, &pos, &pos, RADIX));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        k.emit(Ins::bra_uni(&done));
        // Every key has the same digit: the tile is copied (its place in the order).
        k.place(&copy);
        k.emit(Ins::mov(Ty::U32, &pos, &k.tid));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &over, &pos, &m32));
        k.emit(Ins::bra(&end).when(&over));
        let i = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &i, &pos));
        k.emit(Ins::add(Ty::S64, &i, &i, &tile0));
        let key = self.load_leaves(&mut k, std::slice::from_ref(&kin), &i, &[kty]);
        let ix = idx.as_ref().map(|[iin, _]| {
            let ip = std::slice::from_ref(iin);
            self.load_leaves(&mut k, ip, &i, &[Scalar::U32]).remove(0)
        });
        self.sort_put(&mut k, &kout, &out, &idx, &i, &key[0], ix.as_ref());
        k.emit(Ins::add(Ty::S32, &pos, &pos, RADIX));
        k.emit(Ins::bra_uni(&top));
        k.place(&end);
        k.place(&done);
        self.launch_on(k, tiles.count.clone(), steps);
        Ok(())
    }

    /// Writes a pass's element at `to`: its key to `kout` (or, on the last pass of a sort
    /// of scalars, the value it stands for to `out`) and its index `ix` to the pass's
    /// output indices.
    #[allow(clippy::too_many_arguments)]
    fn sort_put(
        &mut self,
        k: &mut Kernel,
        kout: &Reg,
        out: &Option<(Scalar, Reg)>,
        idx: &Option<[Reg; 2]>,
        to: &Reg,
        key: &Reg,
        ix: Option<&Reg>,
    ) {
        match out {
            Some((s, ptr)) => {
                let v = Self::from_radix_key(k, key, *s);
                self.store(k, ptr, to, &v);
            }
            None => self.store(k, kout, to, key),
        }
        if let (Some([_, iout]), Some(ix)) = (idx, ix) {
            self.store(k, iout, to, ix);
        }
    }

    /// The exclusive sum over the block's threads (thread `d` for digit `d`) of the `u64`
    /// `count`: where digit `d` starts, after the smaller ones.
    fn digit_starts(&mut self, k: &mut Kernel, count: &Reg, n: &Reg) -> R<Reg> {
        let t = self.pconst(k, true);
        let x = Opt {
            has: t,
            v: vec![count.clone()],
        };
        let ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let mut sum = Self::fold(Comb::AddU64, &ctx);
        let (incl, _, _) = self.block_scan(k, &x, &mut sum)?;
        let start = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &start, &incl.v[0], count));
        Ok(start)
    }

    /// Sets the status at `at` to `word` (unless `skip` holds) with an atomic exchange,
    /// so that a look-back, which reads it atomically, sees the flag and the count
    /// together.
    fn set_status(k: &mut Kernel, at: &Reg, word: &Reg, skip: Option<&Reg>) {
        let old = k.reg(Scalar::U64);
        let ins = Ins::atom(Space::Global, AtomOp::Exch, Ty::B64, &old, at, word);
        k.emit(match skip {
            Some(p) => ins.unless(p),
            None => ins,
        });
    }

    /// Step 4 of a pass (see the [module docs](self)), by thread `d`: how many elements
    /// have digit `d` in the tiles before `tile` (none before the first), from the pass's
    /// statuses at `statuses`: their own counts back to the nearest tile that has
    /// published its inclusive prefix.
    fn digit_look_back(k: &mut Kernel, statuses: &Reg, p: u32, tile: &Reg, is_first: &Reg) -> Reg {
        let before = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &before, 0));
        let (top, spin, first_try, done) = (k.label(), k.label(), k.label(), k.label());
        k.emit(Ins::bra(&done).when(is_first));
        let j = k.reg(Scalar::U64);
        k.emit(Ins::mov(Ty::U64, &j, tile));
        k.place(&top);
        k.emit(Ins::sub(Ty::S64, &j, &j, 1));
        let slot = k.reg(Scalar::U64);
        k.emit(Ins::mad_lo(Ty::U64, &slot, &j, u64::from(RADIX), &k.tid64));
        let at = Self::addr(k, statuses, &slot, Scalar::U64);
        let word = k.reg(Scalar::U64);
        k.emit(Ins::bra(&first_try));
        k.place(&spin);
        // Back off before reading again (that tile has not published yet).
        k.emit(Ins::nanosleep(64));
        k.place(&first_try);
        k.emit(Ins::atom(Space::Global, AtomOp::Or, Ty::B64, &word, &at, 0));
        // Pass p's flags, 2p + 1 and 2p + 2, as 0 and 1; anything else (0, or what
        // another pass left) means that the tile has not published in this pass yet.
        let e = k.reg(Scalar::U64);
        k.emit(Ins::shr(Ty::B64, &e, &word, 32));
        k.emit(Ins::sub(Ty::S64, &e, &e, u64::from(2 * p + 1)));
        let waiting = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &waiting, &e, 2));
        k.emit(Ins::bra(&spin).when(&waiting));
        let own = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &own, &e, 0));
        k.emit(Ins::and(Ty::B64, &word, &word, Src::hex(0xffff_ffff)));
        k.emit(Ins::add(Ty::S64, &before, &before, &word));
        k.emit(Ins::bra(&top).when(&own));
        k.place(&done);
        before
    }

    /// `sort_gather`: output element `j` is made of the leaves `values` of element
    /// `idx[j]`; returns the output's temporaries.
    fn sort_gather(
        &mut self,
        ls: &[Scalar],
        elems: &[u32],
        values: std::ops::Range<usize>,
        idx: u32,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> Vec<u32> {
        let vls = &ls[values.clone()];
        // Every output element is written.
        let outs = self.alloc_written(vls, n_count, steps);
        let mut k = self.new_kernel("sort_gather");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ip = Self::temp_ptrs(&mut k, &[idx]);
        let src = Self::temp_ptrs(&mut k, &elems[values]);
        let dst = Self::temp_ptrs(&mut k, &outs);
        let el = Self::elem_loop(&mut k, &n, None);
        let j = el.i.clone();
        let at = self.load_leaves(&mut k, &ip, &j, &[Scalar::U32]);
        let from = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &from, &at[0]));
        let vals = self.load_leaves(&mut k, &src, &from, vls);
        for (v, p) in vals.iter().zip(&dst) {
            self.store(&mut k, p, &j, v);
        }
        Self::elem_loop_end(&mut k, &el);
        self.launch_stride(k, n_count, u64::from(RADIX), steps);
        outs
    }
}
