//! Device-wide scans (`scan`, `exclusive_scan`) and the offsets of ragged results: a
//! single pass with decoupled look-back ([`lookback`]) or reduce-then-scan
//! ([`reduce_then_scan`]), both over tiles staged in shared memory ([`tiles`]). Scans of
//! floats follow dpl's one scan order instead ([`ordered`]), whatever the algorithm asked
//! for, so their bits are those of every other place.

use super::*;

mod lookback;
pub(super) mod ordered;
mod reduce_then_scan;
pub(super) mod tiles;

/// Where the prefix of the tiles before a block's comes from.
enum Earlier {
    /// The look-back status of the tiles.
    Status(lookback::Status),
    /// The scanned totals of the tiles (reduce-then-scan).
    Totals(Vec<u32>),
}

impl<'f> Gen<'f> {
    /// A device-wide `scan` (an `exclusive_scan` with its start value `init`) over tiles of
    /// [`scan_items`] elements per thread, with the algorithm asked for: the single pass
    /// with decoupled look-back ([`lookback`]), or reduce-then-scan (the tiles' totals and
    /// one block scanning them first, [`Gen::tile_totals`]). The last kernel loads each
    /// tile, combines each thread's items, scans the thread totals over the block, puts
    /// the prefix of the tiles before (and the start value) in front, scans each thread's
    /// items from its prefix and writes the tile out.
    pub(super) fn scan(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let (op, init) = match &soac.kind {
            SoacKind::Scan { op } => (op, None),
            SoacKind::ExclusiveScan { op, init } => (op, Some(*init)),
            _ => return unsupported("a scan of another combinator (internal)"),
        };
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("scan without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        if ordered::is_ordered(&ls) {
            return self.ordered_scan(s, soac, op, init, elem_ty, steps);
        }
        let comb = Comb::Op(op, elem_ty);
        let n_count = Count::Var(var(soac.len));
        let tile_len = u64::from(self.bsize()) * self.scan_items(&ls);
        let grid = cmax1(cdiv(n_count.clone(), tile_len));
        let lookback = self.opts.scan == crate::Scan::LookBack;
        let earlier = if lookback {
            Earlier::Status(self.alloc_status(&ls, &grid, steps))
        } else {
            Earlier::Totals(self.tile_totals(soac, op, comb, &ls, &grid, &n_count, steps)?)
        };
        let outs = self.alloc_written(&ls, &n_count, steps);

        let mut k = self.new_kernel(if lookback { "scan_lookback" } else { "scan" });
        k.env = self.bind_captures(&mut k, &[&soac.elem, op])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let (status, totals) = match &earlier {
            Earlier::Status(st) => (Some(Self::status_ptrs(&mut k, st)), None),
            Earlier::Totals(t) => (None, Some(Self::temp_ptrs(&mut k, t))),
        };
        let op_p = Self::temp_ptrs(&mut k, &outs);
        let init_v = self.bind_init(&mut k, init)?;
        let op_ctx = Ctx {
            key: n.clone(),
            fail: None,
        };
        let mut elem = Self::scan_elem(soac, &n);
        // The tile, this thread's exclusive prefix in it, and (look-back) the prefix of the
        // tiles before.
        let (tile, taken) = match &status {
            Some(st) => {
                let (tile, is0) = Self::take_tile(&mut k, &st.counter);
                (tile, Some((st, is0)))
            }
            None => (k.ctaid64.clone(), None),
        };
        let (t, mine) = self.tile_reduced(&mut k, comb, &op_ctx, &ls, &tile, &n, &mut elem)?;
        let (before, excl) = match taken {
            Some((st, is0)) => {
                let (before, excl) =
                    self.tile_look_back(&mut k, st, &tile, &is0, &mine, comb, &op_ctx)?;
                (Some(before), excl)
            }
            None => {
                let (_, excl, _) =
                    self.block_scan(&mut k, &mine, &mut Self::fold(comb, &op_ctx))?;
                (None, excl)
            }
        };
        // The start value (exclusive scan), the tiles before, the threads before.
        let carry = self.none(&mut k, &ls);
        Self::set_init(&mut k, &carry, init_v.as_deref());
        let carry = match (before, &totals) {
            (Some(before), _) => self.opt_combine(&mut k, comb, &carry, &before, &op_ctx)?,
            (None, Some(tp)) => {
                self.add_earlier_tiles(&mut k, comb, &op_ctx, &carry, tp)?;
                carry
            }
            (None, None) => return unsupported("a scan without its tiles' prefixes (internal)"),
        };
        let prefix = self.opt_combine(&mut k, comb, &carry, &excl, &op_ctx)?;
        self.tile_scan(&mut k, comb, &t, &prefix, init.is_some(), &op_ctx)?;
        let mut store = Self::leaf_store(&op_p);
        self.tile_store(&mut k, &t, &mut store)?;
        self.launch_on(k, grid, steps);
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    /// [`Gen::exclusive_offsets`], then the total (`offs[n]`) read back into a numeric
    /// temporary; returns both temporaries.
    pub(in crate::codegen) fn offsets(
        &mut self,
        sizes: u32,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<(u32, u32)> {
        let offs = self.exclusive_offsets(sizes, n_count, steps)?;
        let total = self.temp();
        steps.push(Step::ReadCount {
            temp: total,
            src: Buf::Temp(offs),
            index: n_count.clone(),
            guard: Count::Const(1),
        });
        Ok((offs, total))
    }

    /// The element source of a scan's tile: the element function at the index.
    pub(super) fn scan_elem<'b>(
        soac: &'b Soac,
        n: &'b Reg,
    ) -> impl FnMut(&mut Self, &mut Kernel, &Reg, &Label) -> R<Vec<Reg>> + 'b {
        move |g: &mut Self, k: &mut Kernel, idx: &Reg, fail: &Label| {
            Ok(g.elem_at(k, soac, None, n, idx, fail)?.0)
        }
    }

    /// The store of a tile's results: leaf `j` at the index of buffer `ptrs[j]`.
    pub(super) fn leaf_store<'b>(
        ptrs: &'b [Reg],
    ) -> impl FnMut(&mut Self, &mut Kernel, &Reg, &[Reg]) -> R<()> + 'b {
        move |g: &mut Self, k: &mut Kernel, idx: &Reg, v: &[Reg]| {
            for (r, p) in v.iter().zip(ptrs) {
                g.store(k, p, idx, r);
            }
            Ok(())
        }
    }
}
