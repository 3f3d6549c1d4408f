//! `map` with scalar or tuple elements, under the inner schedule asked for: a thread, a
//! warp ([`Gen::map_warp`]) or a block ([`Gen::map`]) per element, or both a warp
//! and a thread chosen at run time from the rows' shape.

use super::*;

/// Said when `auto` takes a thread per element because of a float scan inside.
pub(super) const FLOAT_SCAN: &str = "a float scan in the element function runs in dpl's order as one stream, which a group would run in every thread: a thread per element";

/// Said when a block of more than 512 threads would spill a float scan's registers.
const FLOAT_SCAN_WIDE: &str = "a float scan in the element function needs more than the 64 registers per thread that a block of more than 512 threads leaves: a thread per element, 512 per block";

/// Said after the block-size reason of the kernels of a `map` with scalar or tuple
/// elements that runs a thread per element although an inner schedule was asked for.
const NOT_SPLIT: &str = "the inner schedule asked for cannot split this element function (a part of it has no version for a group of threads, such as a `sort` of a sequence an `if` chooses): a thread per element";

impl<'f> Gen<'f> {
    /// A `map` whose elements are scalars or tuples, with a thread (`per` is `None`), a
    /// warp (`Some(false)`) or a block (`Some(true)`) per element ([`Gen::map_to_temps`]).
    pub(super) fn map(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        per: Option<bool>,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("map without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        if per == Some(true) {
            self.set_group(self.cur.group, GROUP_BLOCK);
        }
        let n_count = Count::Var(var(soac.len));
        let outs = self.map_to_temps(soac, &ls, &Self::loop_name("map", per), per, steps)?;
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }

    /// Makes `v` the flat sequence of `len` elements of type `elem` held in the
    /// temporaries `outs` (one per scalar leaf).
    pub(super) fn bind_flat(v: VarId, elem: &Type, outs: Vec<u32>, len: Count) -> Step {
        Step::BindSeq {
            var: var(v),
            elem: elem.clone(),
            bufs: outs.into_iter().map(Buf::Temp).collect(),
            len,
            offs: None,
        }
    }

    /// The elements of `soac` (a combinator over `soac.len` indices whose element function
    /// gives scalars or tuples of leaf types `ls`), one kernel named `what` evaluating the
    /// element function once per index and storing each leaf in a fresh temporary of
    /// `soac.len` elements; returns the temporaries. With a thread per element (`per` is
    /// `None`) or a group of threads, a warp or a block: every thread of the group
    /// evaluates the element function (so control flow stays uniform in the group), except
    /// the inner reductions, whose elements are split across the group's threads and
    /// combined with shuffles / shared memory (see [`Gen::inner_soac`]); the group's first
    /// thread stores the result.
    pub(super) fn map_to_temps(
        &mut self,
        soac: &Soac,
        ls: &[Scalar],
        what: &str,
        per: Option<bool>,
        steps: &mut Vec<Step>,
    ) -> R<Vec<u32>> {
        let n_count = Count::Var(var(soac.len));
        let outs = self.alloc_written(ls, &n_count, steps);
        let mut k = self.new_kernel(what);
        // Element `i` written at `i < n` (unless the element function records checks or
        // loops).
        k.any_data = true;
        k.env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        let el = Self::elem_loop(&mut k, &n, per);
        let v = self.loop_elem(&mut k, &soac.elem, &el)?;
        Self::leader_only(&mut k, &el);
        for (r, p) in v.flatten()?.iter().zip(&ptrs) {
            self.store(&mut k, p, &el.i, r);
        }
        Self::elem_loop_end(&mut k, &el);
        self.launch_stride(k, &n_count, self.per_block(per), steps);
        steps.push(Step::CheckErrors);
        Ok(outs)
    }

    /// A `map` whose elements are scalars or tuples under the inner schedule asked for:
    /// a thread ([`Gen::map`]), a warp ([`Gen::map_warp`]) or a block
    /// ([`Gen::map`] with `Some(true)`) per element, or with `inner = "auto"` both a warp and a
    /// thread per element, chosen at run time from the shape of the rows the element
    /// function reads ([`Step::ByShape`]). Where the group version cannot be generated (a
    /// part of the element function has none, such as a `sort` of a sequence an `if`
    /// chooses), a thread per element, which the kernels' block-size reason says.
    pub(super) fn map_scheduled(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        if self.float_scan_too_wide(&soac.elem) {
            self.narrow_for_float_scan();
            return self.map(s, soac, None, steps);
        }
        let shape = self.shape_source(soac);
        let block = match (self.opts.inner, shape) {
            (crate::Inner::Seq, _) | (crate::Inner::Auto, None) => {
                return self.map(s, soac, None, steps);
            }
            (crate::Inner::Auto, _) if self.holds_float_scan(&soac.elem) => {
                self.cur.note = Some(FLOAT_SCAN);
                return self.map(s, soac, None, steps);
            }
            (crate::Inner::Warp | crate::Inner::Auto, _) => false,
            (crate::Inner::Block, _) => true,
        };
        let Some(grouped) = self.try_grouped(&mut |g, steps| match block {
            true => g.map(s, soac, Some(true), steps),
            false => g.map_warp(s, soac, steps),
        }) else {
            self.cur.note = Some(NOT_SPLIT);
            return self.map(s, soac, None, steps);
        };
        match shape {
            Some(rows) if self.opts.inner == crate::Inner::Auto => {
                let mut seq = Vec::new();
                self.map(s, soac, None, &mut seq)?;
                steps.push(Step::ByShape {
                    rows,
                    warp: grouped,
                    seq,
                });
            }
            _ => steps.extend(grouped),
        }
        Ok(())
    }

    /// The kernels generated from now on run a thread per element in blocks of 512: a float
    /// scan's stream would spill registers in the wider block asked for
    /// ([`Gen::float_scan_too_wide`]).
    pub(super) fn narrow_for_float_scan(&mut self) {
        self.cur = KernelInfo {
            block: 512,
            default: 512,
            note: Some(FLOAT_SCAN_WIDE),
            fixed: true,
            ..self.cur
        };
    }

    /// Generates a group schedule with `make` into fresh steps; if it fails, undoes what it
    /// made (kernels, sites, temporaries, the kernels' block size) and returns `None`.
    pub(super) fn try_grouped(
        &mut self,
        make: &mut dyn FnMut(&mut Self, &mut Vec<Step>) -> R<()>,
    ) -> Option<Vec<Step>> {
        let mark = (
            self.kernels.len(),
            self.kinfo.len(),
            self.sites.len(),
            self.temps,
            self.cur,
        );
        let mut grouped = Vec::new();
        if make(self, &mut grouped).is_ok() {
            return Some(grouped);
        }
        self.kernels.truncate(mark.0);
        self.kinfo.truncate(mark.1);
        self.sites.truncate(mark.2);
        self.temps = mark.3;
        self.split = None;
        self.owner = None;
        self.set_group(mark.4.group, DEFAULT_BLOCK);
        None
    }

    /// For `inner = "auto"`: the nested sequence (a top-level variable) whose rows a
    /// `map`'s element function reads (`x[i]` of a captured `[[T]]`, directly or through
    /// the element of a map not stored), if any.
    pub(super) fn shape_source(&self, soac: &Soac) -> Option<u32> {
        soac.elem.body.stmts.iter().find_map(|st| match &st.expr {
            Expr::Index { seq, .. }
                if soac.elem.captures.contains(seq)
                    && matches!(self.ty(*seq).elem(), Some(Type::Seq(_))) =>
            {
                Some(var(*seq))
            }
            // An element of a map not stored: the rows its element function reads.
            Expr::Index { seq, .. } => self.shape_source(self.deferred.get(seq)?),
            _ => None,
        })
    }

    /// A `map` with a warp per element (vector CSR, when the element reads rows): each
    /// warp takes 32 consecutive elements at a time. It first loads the row offsets those
    /// 32 elements read (one coalesced load per nested sequence, lane `r` for element
    /// `r`), then evaluates the elements one after the other, every lane evaluating the
    /// element function and the inner reductions split across the lanes (see
    /// [`Gen::ordered_reduce`]); lane `r` keeps element `r`'s result, and the 32 results are
    /// stored with one coalesced store.
    fn map_warp(&mut self, s: &Stmt, soac: &Soac, steps: &mut Vec<Step>) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("map without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let n_count = Count::Var(var(soac.len));
        let outs = self.alloc_written(&ls, &n_count, steps);
        let mut k = self.new_kernel("map_warp");
        k.env = self.bind_captures(&mut k, &[&soac.elem])?;
        let n = k.param(Scalar::U64, KArg::Count(n_count.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        // Rows read as `x[i]` (i the element's index) of captured nested sequences.
        let p0 = soac.elem.params[0];
        // In the order of the first read of each (not a hash set's order: the PTX text
        // must not change from one compilation to the next).
        let mut rows: Vec<VarId> = Vec::new();
        for st in &soac.elem.body.stmts {
            // Only reads in range by construction (a checked one may be past the end of
            // `seq`'s offsets, which the prefetch must not read).
            if let Expr::Index {
                seq,
                index,
                checked: None,
            } = &st.expr
                && *index == p0
                && soac.elem.captures.contains(seq)
                && matches!(self.ty(*seq).elem(), Some(Type::Seq(_)))
                && !rows.contains(seq)
            {
                rows.push(*seq);
            }
        }
        let ntid = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &ntid, Sreg::NtidX));
        let ncta = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &ncta, Sreg::NctaidX));
        let cta = k.reg(Scalar::U32);
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &cta, &k.ctaid64));
        // base = warp * 32 = (ctaid * ntid + tid) & ~31; stride = ntid * nctaid.
        let base = k.reg(Scalar::U64);
        k.emit(Ins::mul_wide(Ty::U32, &base, &ntid, &cta));
        k.emit(Ins::add(Ty::S64, &base, &base, &k.tid64));
        k.emit(Ins::and(Ty::B64, &base, &base, -32));
        let stride = k.reg(Scalar::U64);
        k.emit(Ins::mul_wide(Ty::U32, &stride, &ntid, &ncta));
        let lane64 = k.reg(Scalar::U64);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &lane64, &k.lane));
        let (top, end) = (k.label(), k.label());
        k.place(&top);
        let p = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &p, &base, &n));
        k.emit(Ins::bra(&end).when(&p));
        let mine = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &mine, &base, &lane64));
        let live = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Lt, Ty::U64, &live, &mine, &n));
        // The lanes whose next row's start is not in the warp: lane 31 and the last row.
        let last = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &last, &k.lane, 31));
        let next = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &next, &mine, 1));
        let edge = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &edge, &next, &n));
        k.emit(Ins::or(Ty::Pred, &last, &last, &edge));
        // Prefetch: lane r loads offs[base + r]; the end of row r is the start of row
        // r + 1 (a shuffle), or loaded by the lanes of `last`.
        let mut pre = Vec::new();
        for &x in &rows {
            let Some(KVal::Seq {
                offs: Some(o),
                layout,
                ..
            }) = k.env.get(&x).cloned()
            else {
                continue;
            };
            let start = k.reg(Scalar::U64);
            k.emit(Ins::mov(Ty::U64, &start, 0));
            let a = Self::addr(&mut k, &o, &mine, Scalar::U64);
            let load = k.reg(Scalar::Bool);
            match &layout {
                Some(l) => {
                    let (_, offsets) = l.strided(&mut k);
                    k.emit(Ins::and(Ty::Pred, &load, &live, &offsets));
                }
                None => k.emit(Ins::mov(Ty::Pred, &load, &live)),
            }
            k.emit(Ins::ld(Space::Global, Ty::U64, &start, &a).when(&load));
            let stop = Self::shfl(&mut k, &start, Shfl::Down, 1, 31);
            let l31 = k.reg(Scalar::Bool);
            k.emit(Ins::and(Ty::Pred, &l31, &last, &load));
            k.emit(Ins::ld(Space::Global, Ty::U64, &stop, Addr::from(&a).plus(8)).when(&l31));
            if let Some(l) = &layout {
                Self::strided_bounds(&mut k, l, &mine, &start, &stop);
            }
            pre.push((x, start, stop));
        }
        let res: Vec<Reg> = ls.iter().map(|&l| self.zero(&mut k, l)).collect();
        let ok = self.pconst(&mut k, false);
        let r = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &r, 0));
        let (rtop, rnext, rend) = (k.label(), k.label(), k.label());
        k.place(&rtop);
        let i = k.reg(Scalar::Usize);
        k.emit(Ins::cvt(Ty::U64, Ty::U32, &i, &r));
        k.emit(Ins::add(Ty::S64, &i, &i, &base));
        let done = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &done, &i, &n));
        let r32 = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U32, &r32, &r, 32));
        k.emit(Ins::or(Ty::Pred, &done, &done, &r32));
        k.emit(Ins::bra(&rend).when(&done));
        let mut bound = HashMap::new();
        for (x, start, stop) in &pre {
            let a = Self::shfl(&mut k, start, Shfl::Idx, &r, 31);
            let b = Self::shfl(&mut k, stop, Shfl::Idx, &r, 31);
            bound.insert(*x, (a, b));
        }
        let ctx = Ctx {
            key: i.clone(),
            fail: Some(rnext.clone()),
        };
        self.split = Some(Split { block: false });
        self.prefetched = Some((i.clone(), bound));
        let v = self.elem(&mut k, &soac.elem, &i, &ctx);
        self.split = None;
        self.prefetched = None;
        let v = v?.flatten()?;
        let me = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, Ty::U32, &me, &k.lane, &r));
        for (d, x) in res.iter().zip(&v) {
            Self::select(&mut k, d, &me, x, d);
        }
        k.emit(Ins::or(Ty::Pred, &ok, &ok, &me));
        k.place(&rnext);
        k.emit(Ins::add(Ty::S32, &r, &r, 1));
        k.emit(Ins::bra(&rtop));
        k.place(&rend);
        let skip = k.label();
        k.emit(Ins::bra(&skip).unless(&ok));
        for (x, p) in res.iter().zip(&ptrs) {
            self.store(&mut k, p, &mine, x);
        }
        k.place(&skip);
        k.emit(Ins::add(Ty::S64, &base, &base, &stride));
        k.emit(Ins::bra(&top));
        k.place(&end);
        self.launch_stride(k, &n_count, u64::from(self.bsize()), steps);
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, n_count));
        Ok(())
    }
}
