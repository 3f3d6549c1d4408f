//! `sort` and `sort_by_key`: a stable least-significant-digit radix sort.
//!
//! The elements (or the `(key, value)` pairs) are computed once into temporaries
//! (`sort_elems`). Each scalar leaf of the key is mapped to an unsigned integer of the
//! same order ([`Gen::radix_key`]: `bool` and unsigned integers as they are, signed ones
//! with the sign bit flipped, floats by IEEE 754 `totalOrder`: all bits flipped when the
//! sign is set, else the sign bit), and the leaves are sorted from the last to the first
//! (a tuple key is lexicographic: a stable sort by the last leaf, then by the one before,
//! ...). A leaf's keys are loaded with the current permutation (`sort_keys`: `u32`
//! element indices, the identity for the first leaf), then sorted by one digit of
//! [`DIGIT_BITS`] bits per pass, from the lowest: 1 pass for `bool`, 4 for 32-bit leaves,
//! 8 for 64-bit ones. A pass is three launches over tiles of [`SORT_TILE`] consecutive
//! elements, one block of [`RADIX`] threads per tile:
//!
//! 1. `sort_hist`: each tile's digit counts (`red.shared.add` into a shared histogram),
//!    stored digit-major (`counts[d * tiles + t]`);
//! 2. `scan_totals`: one block scans the counts (inclusive), so the elements of digit `d`
//!    in tile `t` start after those of smaller digits and of the same digit in earlier
//!    tiles;
//! 3. `sort_scatter`: each tile again, in rounds of [`RADIX`] elements: each warp finds
//!    the lanes holding the same digit as a lane ([`DIGIT_BITS`] ballots, "multi-split"),
//!    so a lane's rank among them is a `popc`; the warps' counts per digit go through
//!    shared memory, where thread `d` turns them into per-warp offsets of digit `d`; each
//!    element (key and index) is written at its digit's running start in the tile plus
//!    its warp's offset plus its rank. Rounds, warps and lanes follow the element order,
//!    so the pass is stable.
//!
//! The keys and indices move between two pairs of buffers; at the end `sort_gather` reads
//! each output element's value leaves at its index. Indices are `u32`: a sort of more than
//! `u32::MAX` elements fails before any launch with a clear error.

use super::*;

/// Bits of the digit one pass orders by.
const DIGIT_BITS: u32 = 8;
/// Values of a digit, and the threads per block of the radix kernels (one per value).
const RADIX: u32 = 1 << DIGIT_BITS;
/// Rounds of [`RADIX`] elements in a tile.
const SORT_ROUNDS: u64 = 16;
/// Elements per block of the histogram and scatter kernels.
const SORT_TILE: u64 = RADIX as u64 * SORT_ROUNDS;
/// Said after the block-size reason of a sort's kernels.
const RADIX_NOTE: &str =
    "a radix sort's kernels run 256 threads per block (a thread per digit value)";

/// The unsigned type a key leaf is sorted as, and its number of digits.
fn key_repr(s: Scalar) -> (Scalar, u32) {
    match s {
        Scalar::Bool => (Scalar::U32, 1),
        Scalar::I32 | Scalar::U32 | Scalar::F32 => (Scalar::U32, 32 / DIGIT_BITS),
        Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => (Scalar::U64, 64 / DIGIT_BITS),
    }
}

/// Where a pass reads and writes: the keys and indices it reads, those it writes.
struct Pass {
    keys: [u32; 2],
    idx: [u32; 2],
}

impl<'f> Gen<'f> {
    /// `sort` / `sort_by_key` (see the [module docs](self)).
    pub(super) fn sort(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(out_ty) = self.ty(s.var).elem() else {
            return unsupported("sort without a sequence type");
        };
        let elem_ty = self.ty(soac.elem.body.result);
        let ls = leaves(elem_ty)?;
        let key_leaves = match (&soac.kind, elem_ty) {
            (SoacKind::SortByKey, Type::Tuple(kv)) if kv.len() == 2 => leaves(&kv[0])?.len(),
            (SoacKind::SortByKey, _) => {
                return unsupported("sort_by_key without (key, value) pairs");
            }
            _ => ls.len(),
        };
        let values = if matches!(soac.kind, SoacKind::SortByKey) {
            key_leaves..ls.len()
        } else {
            0..ls.len()
        };
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
        let elems = self.map_to_temps(soac, &ls, "sort_elems", steps)?;
        let tiles = cmax1(cdiv(n.clone(), SORT_TILE));
        let counts = self.alloc_leaves(
            &[Scalar::U64],
            &Count::Mul(Box::new(tiles.clone()), u64::from(RADIX)),
            steps,
        )[0];
        let idx = self.alloc_leaves(&[Scalar::U32, Scalar::U32], &n, steps);
        let mut keys: HashMap<Scalar, Vec<u32>> = HashMap::new();
        // Which buffer of each pair holds the current keys and indices.
        let mut cur = 0;
        for (i, leaf) in (0..key_leaves).rev().enumerate() {
            let (kty, digits) = key_repr(ls[leaf]);
            let kb = match keys.get(&kty) {
                Some(kb) => kb.clone(),
                None => {
                    let kb = self.alloc_leaves(&[kty, kty], &n, steps);
                    keys.insert(kty, kb.clone());
                    kb
                }
            };
            self.sort_keys(ls[leaf], elems[leaf], i == 0, idx[cur], kb[cur], &n, steps);
            for d in 0..digits {
                let pass = Pass {
                    keys: [kb[cur], kb[1 - cur]],
                    idx: [idx[cur], idx[1 - cur]],
                };
                self.sort_pass(kty, d * DIGIT_BITS, &pass, counts, &tiles, &n, steps)?;
                cur = 1 - cur;
            }
        }
        let outs = self.sort_gather(&ls, &elems, values, idx[cur], &n, steps);
        steps.push(Step::BindSeq {
            var: var(s.var),
            elem: out_ty.clone(),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            len: n,
            offs: None,
        });
        Ok(())
    }

    /// `sort_keys`: `keys[j]` = the radix key of `leaf[idx[j]]` (of type `s`); for the
    /// first leaf sorted, `idx[j] = j` is stored and the leaf read at `j`.
    #[allow(clippy::too_many_arguments)]
    fn sort_keys(
        &mut self,
        s: Scalar,
        leaf: u32,
        first: bool,
        idx: u32,
        keys: u32,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) {
        let (mut k, c) = self.new_kernel("sort_keys");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let [lp, ip, kp] = [leaf, idx, keys].map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        let (j, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
        let src = if first {
            let j32 = k.reg(Scalar::U32);
            k.ins(format!("cvt.u32.u64 {j32}, {j}"));
            self.store(&mut k, &ip, &j, &j32);
            j.clone()
        } else {
            let at = self.load_leaves(&mut k, std::slice::from_ref(&ip), &j, &[Scalar::U32]);
            let src = k.reg(Scalar::U64);
            k.ins(format!("cvt.u64.u32 {src}, {}", at[0]));
            src
        };
        let key = Self::radix_key(&mut k, &lp, &src, s);
        self.store(&mut k, &kp, &j, &key);
        Self::loop_tail(&mut k, &j, &stride, &top, &cont, &end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.stride_launch(kid, n_count, u64::from(RADIX), args));
    }

    /// The radix key of element `i` of the leaf at `base` (of type `s`): an unsigned
    /// integer ([`key_repr`]) whose order is `total_cmp`'s.
    fn radix_key(k: &mut Kernel, base: &Reg, i: &Reg, s: Scalar) -> Reg {
        let (kty, _) = key_repr(s);
        let a = Self::addr(k, base, i, s);
        let raw = k.reg(kty);
        let w = if kty == Scalar::U64 { 64 } else { 32 };
        if s == Scalar::Bool {
            k.ins(format!("ld.global.u8 {raw}, [{a}]"));
        } else {
            k.ins(format!("ld.global.u{w} {raw}, [{a}]"));
        }
        let sign = format!("0x{:X}", 1u64 << (w - 1));
        match s {
            Scalar::I32 | Scalar::I64 => {
                let key = k.reg(kty);
                k.ins(format!("xor.b{w} {key}, {raw}, {sign}"));
                key
            }
            Scalar::F32 | Scalar::F64 => {
                // All ones when the sign is set, else the sign bit alone.
                let mask = k.reg(kty);
                k.ins(format!("shr.s{w} {mask}, {raw}, {}", w - 1));
                k.ins(format!("or.b{w} {mask}, {mask}, {sign}"));
                let key = k.reg(kty);
                k.ins(format!("xor.b{w} {key}, {raw}, {mask}"));
                key
            }
            _ => raw,
        }
    }

    /// The digit at `shift` of `key`, as a `u32`.
    fn digit(k: &mut Kernel, key: &Reg, shift: u32) -> Reg {
        let d = k.reg(Scalar::U32);
        if key.ty == Scalar::U64 {
            let t = k.reg(Scalar::U64);
            k.ins(format!("shr.b64 {t}, {key}, {shift}"));
            k.ins(format!("cvt.u32.u64 {d}, {t}"));
            k.ins(format!("and.b32 {d}, {d}, {}", RADIX - 1));
        } else {
            k.ins(format!("bfe.u32 {d}, {key}, {shift}, {DIGIT_BITS}"));
        }
        d
    }

    /// The element index of round `r` of this thread in its block's tile, and whether it is
    /// below `n`.
    fn tile_index(k: &mut Kernel, c: &Common, n: &Reg, r: &Reg) -> (Reg, Reg) {
        let i = k.reg(Scalar::U64);
        k.ins(format!(
            "mad.lo.u64 {i}, {}, {SORT_TILE}, {}",
            c.ctaid64, c.tid64
        ));
        let off = k.reg(Scalar::U64);
        k.ins(format!("mul.wide.u32 {off}, {r}, {RADIX}"));
        k.ins(format!("add.s64 {i}, {i}, {off}"));
        let valid = k.reg(Scalar::Bool);
        k.ins(format!("setp.lt.u64 {valid}, {i}, {n}"));
        (i, valid)
    }

    /// `base + 4 * i` for a shared array of `u32` (a 32-bit address).
    fn shared_u32(k: &mut Kernel, array: &str, i: &Reg) -> Reg {
        let a = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {a}, {array}"));
        k.ins(format!("mad.lo.u32 {a}, {i}, 4, {a}"));
        a
    }

    /// One pass over the digit at `shift`: `sort_hist`, `scan_totals`, `sort_scatter`.
    #[allow(clippy::too_many_arguments)]
    fn sort_pass(
        &mut self,
        kty: Scalar,
        shift: u32,
        pass: &Pass,
        counts: u32,
        tiles: &Count,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let ncounts = Count::Mul(Box::new(tiles.clone()), u64::from(RADIX));
        // 1. The tile's histogram.
        let (mut k, c) = self.new_kernel("sort_hist");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let g = k.param(Scalar::U64, KArg::Count(tiles.clone()));
        let [kp, cp] = [pass.keys[0], counts].map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        let hist = k.shared(RADIX * 4);
        let mine = Self::shared_u32(&mut k, &hist, &c.tid);
        k.ins(format!("st.shared.u32 [{mine}], 0"));
        k.ins("bar.sync 0");
        let (r, top, end) = Self::rounds_head(&mut k, SORT_ROUNDS);
        let (i, valid) = Self::tile_index(&mut k, &c, &n, &r);
        let skip = k.label();
        k.ins(format!("@!{valid} bra {skip}"));
        let key = self.load_leaves(&mut k, std::slice::from_ref(&kp), &i, &[kty]);
        let d = Self::digit(&mut k, &key[0], shift);
        let at = Self::shared_u32(&mut k, &hist, &d);
        k.ins(format!("red.shared.add.u32 [{at}], 1"));
        k.place(&skip);
        Self::rounds_tail(&mut k, &r, &top, &end);
        k.ins("bar.sync 0");
        let count = k.reg(Scalar::U32);
        k.ins(format!("ld.shared.u32 {count}, [{mine}]"));
        let count64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {count64}, {count}"));
        let slot = k.reg(Scalar::U64);
        k.ins(format!(
            "mad.lo.u64 {slot}, {}, {g}, {}",
            c.tid64, c.ctaid64
        ));
        self.store(&mut k, &cp, &slot, &count64);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.launch(kid, tiles.clone(), args));
        // 2. Where each (digit, tile) starts.
        self.scan_totals(
            &[Scalar::U64],
            Comb::AddU64,
            None,
            &[counts],
            &ncounts,
            n_count,
            steps,
        )?;
        // 3. The tile's elements at their places.
        self.sort_scatter(kty, shift, pass, counts, tiles, n_count, steps);
        Ok(())
    }

    /// `sort_scatter` (see the [module docs](self)).
    #[allow(clippy::too_many_arguments)]
    fn sort_scatter(
        &mut self,
        kty: Scalar,
        shift: u32,
        pass: &Pass,
        counts: u32,
        tiles: &Count,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) {
        let (mut k, c) = self.new_kernel("sort_scatter");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let g = k.param(Scalar::U64, KArg::Count(tiles.clone()));
        let [kin, iin, kout, iout, cp] =
            [pass.keys[0], pass.idx[0], pass.keys[1], pass.idx[1], counts]
                .map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        let warps = RADIX / 32;
        // The running start of each digit in this tile (`u64`), and per warp and digit
        // the warp's count, then its offset among the round's elements of the digit.
        let starts = k.shared(RADIX * 8);
        let wcount = k.shared(RADIX * warps * 4);
        // Thread d: digit d's start = the inclusive scan of the counts before its slot.
        let slot = k.reg(Scalar::U64);
        k.ins(format!(
            "mad.lo.u64 {slot}, {}, {g}, {}",
            c.tid64, c.ctaid64
        ));
        let start = k.reg(Scalar::U64);
        k.ins(format!("mov.u64 {start}, 0"));
        let first = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u64 {first}, {slot}, 0"));
        let skip = k.label();
        k.ins(format!("@{first} bra {skip}"));
        let prev = k.reg(Scalar::U64);
        k.ins(format!("sub.s64 {prev}, {slot}, 1"));
        let before = self.load_leaves(&mut k, std::slice::from_ref(&cp), &prev, &[Scalar::U64]);
        k.ins(format!("mov.u64 {start}, {}", before[0]));
        k.place(&skip);
        let my_start = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {my_start}, {starts}"));
        k.ins(format!("mad.lo.u32 {my_start}, {}, 8, {my_start}", c.tid));
        k.ins(format!("st.shared.u64 [{my_start}], {start}"));
        // Thread d's column of `wcount`: warp w's slot of digit d is at `w * RADIX + d`.
        let column = Self::shared_u32(&mut k, &wcount, &c.tid);
        let (r, top, end) = Self::rounds_head(&mut k, SORT_ROUNDS);
        for w in 0..warps {
            k.ins(format!("st.shared.u32 [{column}+{}], 0", w * RADIX * 4));
        }
        k.ins("bar.sync 0");
        let (i, valid) = Self::tile_index(&mut k, &c, &n, &r);
        let key = k.reg(kty);
        k.ins(format!(
            "mov.b{} {key}, 0",
            if kty == Scalar::U64 { 64 } else { 32 }
        ));
        let ix = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {ix}, 0"));
        let skip = k.label();
        k.ins(format!("@!{valid} bra {skip}"));
        let loaded = self.load_leaves(&mut k, &[kin.clone(), iin.clone()], &i, &[kty, Scalar::U32]);
        k.ins(format!(
            "mov.b{} {key}, {}",
            if kty == Scalar::U64 { 64 } else { 32 },
            loaded[0]
        ));
        k.ins(format!("mov.u32 {ix}, {}", loaded[1]));
        k.place(&skip);
        let d = Self::digit(&mut k, &key, shift);
        // The lanes of the warp holding an element with the same digit.
        let peers = k.reg(Scalar::U32);
        k.ins(format!("vote.sync.ballot.b32 {peers}, {valid}, 0xffffffff"));
        let (bit, set, ones) = (k.reg(Scalar::U32), k.reg(Scalar::Bool), k.reg(Scalar::U32));
        for b in 0..DIGIT_BITS {
            k.ins(format!("bfe.u32 {bit}, {d}, {b}, 1"));
            k.ins(format!("setp.ne.u32 {set}, {bit}, 0"));
            k.ins(format!("vote.sync.ballot.b32 {ones}, {set}, 0xffffffff"));
            k.ins(format!("@!{set} not.b32 {ones}, {ones}"));
            k.ins(format!("and.b32 {peers}, {peers}, {ones}"));
        }
        let lt = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {lt}, %lanemask_lt"));
        k.ins(format!("and.b32 {lt}, {lt}, {peers}"));
        let rank = k.reg(Scalar::U32);
        k.ins(format!("popc.b32 {rank}, {lt}"));
        // The warp's slot of this element's digit; the first lane of each group writes
        // the group's size.
        let wslot = k.reg(Scalar::U32);
        k.ins(format!("mad.lo.u32 {wslot}, {}, {RADIX}, {d}", c.warp));
        let wat = Self::shared_u32(&mut k, &wcount, &wslot);
        let leader = k.reg(Scalar::Bool);
        k.ins(format!("setp.eq.u32 {leader}, {rank}, 0"));
        k.ins(format!("and.pred {leader}, {leader}, {valid}"));
        let size = k.reg(Scalar::U32);
        k.ins(format!("popc.b32 {size}, {peers}"));
        k.ins(format!("@{leader} st.shared.u32 [{wat}], {size}"));
        k.ins("bar.sync 0");
        // Thread d: the warps' counts of digit d become their offsets.
        let (total, cnt) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.ins(format!("mov.u32 {total}, 0"));
        for w in 0..warps {
            let off = w * RADIX * 4;
            k.ins(format!("ld.shared.u32 {cnt}, [{column}+{off}]"));
            k.ins(format!("st.shared.u32 [{column}+{off}], {total}"));
            k.ins(format!("add.s32 {total}, {total}, {cnt}"));
        }
        k.ins("bar.sync 0");
        let skip = k.label();
        k.ins(format!("@!{valid} bra {skip}"));
        let woff = k.reg(Scalar::U32);
        k.ins(format!("ld.shared.u32 {woff}, [{wat}]"));
        k.ins(format!("add.s32 {woff}, {woff}, {rank}"));
        let dstart = k.reg(Scalar::U32);
        k.ins(format!("mov.u32 {dstart}, {starts}"));
        k.ins(format!("mad.lo.u32 {dstart}, {d}, 8, {dstart}"));
        let pos = k.reg(Scalar::U64);
        k.ins(format!("ld.shared.u64 {pos}, [{dstart}]"));
        let woff64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {woff64}, {woff}"));
        k.ins(format!("add.s64 {pos}, {pos}, {woff64}"));
        self.store(&mut k, &kout, &pos, &key);
        self.store(&mut k, &iout, &pos, &ix);
        k.place(&skip);
        k.ins("bar.sync 0");
        // Thread d: digit d's start moves past this round's elements of digit d.
        let total64 = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {total64}, {total}"));
        k.ins(format!("add.s64 {start}, {start}, {total64}"));
        k.ins(format!("st.shared.u64 [{my_start}], {start}"));
        Self::rounds_tail(&mut k, &r, &top, &end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.launch(kid, tiles.clone(), args));
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
        let outs = self.alloc_leaves(vls, n_count, steps);
        let (mut k, c) = self.new_kernel("sort_gather");
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ip = Self::temp_ptrs(&mut k, &[idx]);
        let src = Self::temp_ptrs(&mut k, &elems[values]);
        let dst = Self::temp_ptrs(&mut k, &outs);
        let (j, stride, top, cont, end) = self.grid_stride_head(&mut k, &c, &n);
        let at = self.load_leaves(&mut k, &ip, &j, &[Scalar::U32]);
        let from = k.reg(Scalar::U64);
        k.ins(format!("cvt.u64.u32 {from}, {}", at[0]));
        let vals = self.load_leaves(&mut k, &src, &from, vls);
        for (v, p) in vals.iter().zip(&dst) {
            self.store(&mut k, p, &j, v);
        }
        Self::loop_tail(&mut k, &j, &stride, &top, &cont, &end);
        let args = k.args.clone();
        let kid = self.push_kernel(k);
        steps.push(self.stride_launch(kid, n_count, u64::from(RADIX), args));
        outs
    }
}
