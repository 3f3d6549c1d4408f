//! `map` and `filter` producing rows (ragged results): the sizes pass, the offsets, the
//! fill pass, with a thread, a warp or a block per row ([`Gen::rows_scheduled`]).

use super::*;

/// Said after the block-size reason of the kernels of a `map` or `filter` producing rows
/// that run a thread per row although an inner schedule was asked for.
const THREAD_PER_ROW: &str =
    "the inner schedule asked for is not applied to sequences of rows: a thread per element";

/// Said after the block-size reason of the sizes kernel of a `map` producing rows with a
/// warp or a block per row, when that kernel runs a thread per row on purpose.
const LENGTHS_ONLY: &str = "a thread per row for the sizes alone: they need only the rows' lengths";

/// The generator of a combinator producing rows, with a warp (`Some(false)`), a block
/// (`Some(true)`) or a thread (`None`) per row ([`Gen::rows_scheduled`]).
type RowsGen<'b, 'f> = dyn FnMut(&mut Gen<'f>, Option<bool>, &mut Vec<Step>) -> R<()> + 'b;

/// A group of threads (a warp or a block) writing or measuring one row of a ragged
/// result together (see [`Lanes::Group`]): thread `lane` takes the positions
/// `lane, lane + width, ...` of each sequence, in chunks of `width`.
#[derive(Clone, Debug)]
pub(super) struct Group {
    /// A whole block (else a warp).
    pub(super) block: bool,
    /// The thread's position in its group (`u32`).
    pub(super) lane: Reg,
    /// The group's width (`u64`): 32 or the block's threads.
    pub(super) width: Reg,
    /// The key of the row's failures (its index).
    pub(super) key: Reg,
    /// Where the whole group goes when a check fails in the row.
    pub(super) fail: Label,
}

/// A ragged result being generated: its rows' type and leaves, the number of rows (the
/// combinator's index space), and who produces a row: a thread (`group` is `None`), a
/// warp (`Some(false)`) or a block (`Some(true)`).
struct Rows<'a> {
    row: &'a Type,
    ls: Vec<Scalar>,
    n_count: Count,
    group: Option<bool>,
}

impl<'f> Gen<'f> {
    /// A `map` or a `filter` whose elements are sequences of `row` (a ragged result),
    /// under the inner schedule asked for ([`Gen::rows_scheduled`], [`Gen::nested_map`],
    /// [`Gen::nested_filter`]).
    pub(super) fn ragged(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        row: &Type,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Ok(ls) = leaves(row) else {
            return unsupported(format!("sequences of `[{row}]` as results"));
        };
        self.rows_scheduled(soac, steps, &mut |g, group, steps| {
            // A block per row: the combinator's kernels get a group's block size.
            if group == Some(true) {
                g.set_group(g.cur.group, GROUP_BLOCK);
            }
            let rows = Rows {
                row,
                ls: ls.clone(),
                n_count: Count::Var(var(soac.len)),
                group,
            };
            match &soac.kind {
                SoacKind::Filter { pred } => g.nested_filter(s, soac, pred, &rows, steps),
                _ => g.nested_map(s, soac, &rows, steps),
            }
        })
    }

    /// A `map` or a `filter` whose elements are sequences (a ragged result) under the
    /// inner schedule asked for: `rows(group)` generates it with a warp or a block per
    /// row (`Some(false)` / `Some(true)`, see [`Gen::nested_map`], [`Gen::nested_filter`])
    /// or a thread per row (`None`). The group version is used when it can be generated
    /// (the row written by a group, [`Gen::write_seq`]: rows, captured sequences, and
    /// `map`s, `scan`s and `filter`s of them); otherwise, or with `inner = "seq"`, a
    /// thread per row, which the kernels' block-size reason says when an inner schedule
    /// was asked for. `inner = "auto"` compiles both, chosen at run time from the shape of
    /// the rows the element function reads ([`Step::ByShape`]).
    pub(super) fn rows_scheduled(
        &mut self,
        soac: &Soac,
        steps: &mut Vec<Step>,
        rows: &mut RowsGen<'_, 'f>,
    ) -> R<()> {
        let shape = self.shape_source(soac);
        if self.float_scan_too_wide(&soac.elem) {
            self.narrow_for_float_scan();
            return rows(self, None, steps);
        }
        let block = match self.opts.inner {
            crate::Inner::Seq => return rows(self, None, steps),
            crate::Inner::Warp => false,
            crate::Inner::Block => true,
            crate::Inner::Auto if self.holds_float_scan(&soac.elem) => {
                self.cur.note = Some(super::map::FLOAT_SCAN);
                return rows(self, None, steps);
            }
            crate::Inner::Auto if shape.is_some() => false,
            crate::Inner::Auto => {
                self.cur.note = Some(THREAD_PER_ROW);
                return rows(self, None, steps);
            }
        };
        let Some(grouped) = self.try_grouped(&mut |g, steps| rows(g, Some(block), steps)) else {
            self.cur.note = Some(THREAD_PER_ROW);
            return rows(self, None, steps);
        };
        match shape {
            Some(shape) if self.opts.inner == crate::Inner::Auto => {
                let mut seq = Vec::new();
                rows(self, None, &mut seq)?;
                steps.push(Step::ByShape {
                    rows: shape,
                    warp: grouped,
                    seq,
                });
            }
            _ => steps.extend(grouped),
        }
        Ok(())
    }

    /// Whether the length of an element function's result needs no work beyond reading
    /// lengths: its top-level statements (and those of its `if`s) hold no combinator
    /// other than `map`, `scan` and `exclusive_scan` (which stay lazy, their length being
    /// their index space's): no reduction, `filter` (counted) or `scatter`/`permute`.
    fn lengths_only(&self, b: &Block) -> bool {
        b.stmts.iter().all(|st| match &st.expr {
            Expr::Soac(x) => matches!(
                x.kind,
                SoacKind::Map | SoacKind::Scan { .. } | SoacKind::ExclusiveScan { .. }
            ),
            Expr::If(_, t, e) => self.lengths_only(t) && self.lengths_only(e),
            // An element of a map not stored is its element function, evaluated here.
            Expr::Index { seq, .. } => self
                .deferred
                .get(seq)
                .is_none_or(|d| self.lengths_only(&d.elem.body)),
            _ => true,
        })
    }

    /// A `map` whose elements are sequences (a nested result, rows of any lengths), in
    /// phases: (1) each element's length into `sizes`; (2) an exclusive scan of the sizes
    /// gives the row offsets and the total, read back to allocate the leaves exactly;
    /// (3) each element again, written at its offset.
    ///
    /// With `group` (`Some(true)`: a block per row, `Some(false)`: a warp), (1) and (3)
    /// give each row a group of threads: every thread evaluates the element function (its
    /// inner reductions split across the group), then the group measures
    /// ([`Gen::group_len`]) or writes ([`Gen::write_seq`]) the row together. (1) stays a
    /// thread per row when the lengths need no work ([`Gen::lengths_only`]). Fails when
    /// the row cannot be written by a group.
    fn nested_map(&mut self, s: &Stmt, soac: &Soac, r: &Rows<'_>, steps: &mut Vec<Step>) -> R<()> {
        let (ls, n_count, group) = (&r.ls, &r.n_count, r.group);
        // Not zeroed: each row's size is stored, then each row written whole.
        let sizes = self.alloc_written(&[Scalar::U64], n_count, steps)[0];

        let sized_by = group.filter(|_| !self.lengths_only(&soac.elem.body));
        let mut k = self.new_kernel(&Self::loop_name("row_sizes", sized_by));
        k.env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
        let el = Self::elem_loop(&mut k, &n, sized_by);
        let v = self.loop_elem(&mut k, &soac.elem, &el)?;
        let len = self.row_len(&mut k, &v, &el)?;
        Self::leader_only(&mut k, &el);
        self.store(&mut k, &sp, &el.i, &len);
        Self::elem_loop_end(&mut k, &el);
        let note = self.cur.note;
        if group.is_some() && sized_by.is_none() {
            self.cur.note = Some(LENGTHS_ONLY);
        }
        self.launch_stride(k, n_count, self.per_block(sized_by), steps);
        self.cur.note = note;
        steps.push(Step::CheckErrors);

        let (offs, total) = self.offsets(sizes, n_count, steps)?;
        let outs = self.alloc_written(ls, &Count::Temp(total), steps);
        let mut has_permute = false;
        soac.elem.body.walk(&mut |st| {
            if let Expr::Soac(x) = &st.expr {
                has_permute |= matches!(x.kind, SoacKind::Permute);
            }
        });
        let owner =
            has_permute.then(|| self.alloc_leaves(&[Scalar::Bool], &Count::Temp(total), steps)[0]);

        let mut k = self.new_kernel(&Self::loop_name("row_fill", group));
        k.env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let op = Self::temp_ptrs(&mut k, &[offs])[0].clone();
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        self.owner = owner.map(|o| Self::temp_ptrs(&mut k, &[o])[0].clone());
        let written = (|| {
            let el = Self::elem_loop(&mut k, &n, group);
            let v = self.loop_elem(&mut k, &soac.elem, &el)?;
            let (base, size) = Self::row_bounds(&mut k, &op, &el);
            self.write_row(&mut k, &v, &ptrs, (&base, size.as_ref()), &el)?;
            Self::elem_loop_end(&mut k, &el);
            Ok(())
        })();
        self.owner = None;
        written?;
        self.finish_rows(k, s, r, (outs, n_count.clone(), offs), steps);
        Ok(())
    }

    /// The length of row `v` at the loop's element: measured by its thread, or by its
    /// group ([`Gen::group_len`]).
    fn row_len(&mut self, k: &mut Kernel, v: &KVal, el: &ElemLoop) -> R<Reg> {
        match &el.group {
            None => self.seq_len(k, v, &el.ctx()),
            Some(gl) => {
                let grp = Self::group(k, gl, el);
                self.group_len(k, v, &grp)
            }
        }
    }

    /// Where the loop's row goes, from the row offsets `offs`: its start, and with a group
    /// per row its length (from the next row's start).
    fn row_bounds(k: &mut Kernel, offs: &Reg, el: &ElemLoop) -> (Reg, Option<Reg>) {
        let a = Self::addr(k, offs, &el.i, Scalar::U64);
        let base = k.reg(Scalar::U64);
        if el.group.is_none() {
            k.emit(Ins::ld(Space::Global, Ty::U64, &base, &a));
            return (base, None);
        }
        let stop = k.reg(Scalar::U64);
        k.emit(Ins::ld(Space::Global, Ty::U64, &base, &a));
        k.emit(Ins::ld(
            Space::Global,
            Ty::U64,
            &stop,
            Addr::from(&a).plus(8),
        ));
        let size = k.reg(Scalar::U64);
        k.emit(Ins::sub(Ty::S64, &size, &stop, &base));
        (base, Some(size))
    }

    /// The [`Group`] of an element loop's group of threads, for its current element.
    pub(super) fn group(k: &mut Kernel, gl: &GroupLoop, el: &ElemLoop) -> Group {
        Group {
            block: gl.block,
            lane: gl.lane.clone(),
            width: Self::group_width(k, gl.block),
            key: el.i.clone(),
            fail: el.cont.clone(),
        }
    }

    /// The width of a group of threads (`u64`): the block's threads, or 32 for a warp.
    pub(super) fn group_width(k: &mut Kernel, block: bool) -> Reg {
        let width = k.reg(Scalar::U64);
        if block {
            let nt = k.reg(Scalar::U32);
            k.emit(Ins::mov(Ty::U32, &nt, Sreg::NtidX));
            k.emit(Ins::cvt(Ty::U64, Ty::U32, &width, &nt));
        } else {
            k.emit(Ins::mov(Ty::U64, &width, 32));
        }
        width
    }

    /// A `filter` of rows (elements that are sequences): (1) per element, whether it is
    /// kept and its length if so; (2) exclusive scans of the flags (positions of the kept
    /// rows, and their number) and of the lengths (where each kept row's elements go);
    /// (3) each kept row written at its place, its offset at its position.
    ///
    /// With `group` (`Some(true)`: a block per row, `Some(false)`: a warp), (1) and (3)
    /// give each row a group of threads, as [`Gen::nested_map`] does: the element
    /// function and the predicate are evaluated by every thread (their inner reductions
    /// split across the group), the row measured and written by the group. Fails when the
    /// row cannot be written by a group.
    fn nested_filter(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        pred: &Lambda,
        r: &Rows<'_>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let (ls, n_count, group) = (&r.ls, &r.n_count, r.group);
        let flags = self.alloc_leaves(&[Scalar::U64], n_count, steps)[0];
        let sizes = self.alloc_leaves(&[Scalar::U64], n_count, steps)[0];
        // Evaluates the element and the predicate at the loop's element (split across a
        // group); returns (row, keep). (Predicate failures are keyed after every
        // element's, as the flat filter does.)
        let kept = |g: &mut Self, k: &mut Kernel, el: &ElemLoop, n: &Reg| {
            g.split_by(el, |g| {
                let ctx = el.ctx();
                let v = g.elem(k, &soac.elem, &el.i, &ctx)?;
                k.env.insert(pred.params[0], v.clone());
                let key = k.reg(Scalar::U64);
                k.emit(Ins::add(Ty::S64, &key, n, &el.i));
                let pctx = Ctx {
                    key,
                    fail: ctx.fail,
                };
                let keep = g.block(k, &pred.body, &pctx)?.reg()?.clone();
                Ok((v, keep))
            })
        };

        let mut k = self.new_kernel(&Self::loop_name("row_filter_sizes", group));
        k.env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let fp = Self::temp_ptrs(&mut k, &[flags])[0].clone();
        let sp = Self::temp_ptrs(&mut k, &[sizes])[0].clone();
        let el = Self::elem_loop(&mut k, &n, group);
        let (v, keep) = kept(self, &mut k, &el, &n)?;
        let len = self.row_len(&mut k, &v, &el)?;
        let f = Self::flag(&mut k, Some(&keep));
        let sz = k.reg(Scalar::U64);
        k.emit(Ins::selp(Ty::U64, &sz, &len, 0, &keep));
        Self::leader_only(&mut k, &el);
        self.store(&mut k, &fp, &el.i, &f);
        self.store(&mut k, &sp, &el.i, &sz);
        Self::elem_loop_end(&mut k, &el);
        self.launch_stride(k, n_count, self.per_block(group), steps);
        steps.push(Step::CheckErrors);

        let (pos, n_kept) = self.offsets(flags, n_count, steps)?;
        let (eoffs, total) = self.offsets(sizes, n_count, steps)?;
        let outs = self.alloc_leaves(ls, &Count::Temp(total), steps);
        let n1 = Count::Add(Box::new(Count::Temp(n_kept)), Box::new(Count::Const(1)));
        let out_offs = self.alloc_leaves(&[Scalar::U64], &n1, steps)[0];

        let mut k = self.new_kernel(&Self::loop_name("row_filter", group));
        k.env = self.bind_captures(&mut k, &[&soac.elem, pred])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let pp = Self::temp_ptrs(&mut k, &[pos])[0].clone();
        let ep = Self::temp_ptrs(&mut k, &[eoffs])[0].clone();
        let op = Self::temp_ptrs(&mut k, &[out_offs])[0].clone();
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        // The end of the last row: out_offs[pos[n]] = eoffs[n] (thread 0 of block 0).
        let first = k.reg(Scalar::Bool);
        let gid = k.reg(Scalar::U64);
        k.emit(Ins::or(Ty::B64, &gid, &k.ctaid64, &k.tid64));
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &first, &gid, 0));
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&first));
        let last_pos = self.load_leaves(&mut k, std::slice::from_ref(&pp), &n, &[Scalar::U64]);
        let last_off = self.load_leaves(&mut k, std::slice::from_ref(&ep), &n, &[Scalar::U64]);
        self.store(&mut k, &op, &last_pos[0], &last_off[0]);
        k.place(&skip);
        let el = Self::elem_loop(&mut k, &n, group);
        let (v, keep) = kept(self, &mut k, &el, &n)?;
        // The same in every thread of a group.
        k.emit(Ins::bra(&el.cont).unless(&keep));
        // The kept row's position, and where its elements go.
        let at = |g: &mut Self, k: &mut Kernel| {
            g.load_leaves(k, std::slice::from_ref(&pp), &el.i, &[Scalar::U64])
                .remove(0)
        };
        let ((base, size), at) = match el.group {
            None => {
                let at = at(self, &mut k);
                (Self::row_bounds(&mut k, &ep, &el), at)
            }
            Some(_) => (Self::row_bounds(&mut k, &ep, &el), at(self, &mut k)),
        };
        // Its offset, written by one thread.
        let not_leader = el.group.as_ref().map(|gl| {
            let l = k.label();
            k.emit(Ins::bra(&l).unless(&gl.leader));
            l
        });
        self.store(&mut k, &op, &at, &base);
        if let Some(l) = not_leader {
            k.place(&l);
        }
        self.write_row(&mut k, &v, &ptrs, (&base, size.as_ref()), &el)?;
        Self::elem_loop_end(&mut k, &el);
        self.finish_rows(k, s, r, (outs, Count::Temp(n_kept), out_offs), steps);
        Ok(())
    }

    /// Ends and launches the fill kernel `k` of a ragged result, then binds `s`'s variable
    /// to the rows written: `(outs, len, offs)`, the temporaries of the leaves, the number
    /// of rows and the temporary of the row offsets.
    fn finish_rows(
        &mut self,
        k: Kernel,
        s: &Stmt,
        r: &Rows<'_>,
        (outs, len, offs): (Vec<u32>, Count, u32),
        steps: &mut Vec<Step>,
    ) {
        self.launch_stride(k, &r.n_count, self.per_block(r.group), steps);
        steps.push(Step::CheckErrors);
        steps.push(Step::BindSeq {
            var: var(s.var),
            elem: Type::seq(r.row.clone()),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            len,
            offs: Some(Buf::Temp(offs)),
        });
    }

    /// Writes row `v` of the loop's element at `base` of `ptrs`: by its thread
    /// ([`Gen::write_seq`]), or by its group (`size` elements, from the sizes pass); in
    /// report mode every thread of a group writes it alone, in order, so the failure
    /// recorded first is the first in sequential order. A group ends at the loop's next
    /// element.
    #[allow(clippy::too_many_arguments)]
    fn write_row(
        &mut self,
        k: &mut Kernel,
        v: &KVal,
        ptrs: &[Reg],
        (base, size): (&Reg, Option<&Reg>),
        el: &ElemLoop,
    ) -> R<()> {
        let ctx = el.ctx();
        let alone = Lanes::Thread(&ctx);
        let (Some(gl), Some(size)) = (&el.group, size) else {
            return self.write_seq(k, v, ptrs, base, alone, None);
        };
        let rep = Self::report_mode(k);
        let by_one = k.label();
        k.emit(Ins::bra(&by_one).when(&rep));
        let grp = Self::group(k, gl, el);
        self.write_seq(k, v, ptrs, base, Lanes::Group(&grp), Some(size))?;
        k.emit(Ins::bra(&el.cont));
        k.place(&by_one);
        self.write_seq(k, v, ptrs, base, alone, None)
    }
}
