//! One run-time helper call per combinator: the choice of run time (outer, inner or the
//! load-balancing `heavy` one, with the work estimate it takes), `count` as a count of
//! flags, and the identity passed to `scatter_reduce` where the operator has one.

use dpl_core::ir::{Block, Const, Expr, Lambda, Soac, SoacKind, Span, Type, VarId};
use proc_macro2::TokenStream;
use quote::quote;

use super::value::Rep;
use super::{Gen, contains_soac, cost};

impl Gen<'_> {
    pub(super) fn soac(&mut self, v: VarId, s: &Soac, span: Span) -> TokenStream {
        // Loops inside loops use the inner schedule's run time; an outer loop whose elements
        // contain loops balances load per element (the `heavy` helpers).
        let nested = s.elem.body.stmts.iter().any(|st| contains_soac(&st.expr));
        let outer = self.depth == 0 && self.heavy.is_some();
        // A flat map of costly elements (loops, software arithmetic) balances load per
        // element too, and goes parallel by its estimated work (see `cost`).
        let costly = (outer && !nested && s.kind == SoacKind::Map)
            .then(|| cost::block(self.f, &s.elem.body))
            .filter(|&c| c >= cost::COSTLY);
        let heavy = outer
            && (nested || costly.is_some())
            && matches!(s.kind, SoacKind::Map | SoacKind::Reduce { .. });
        let rt = match (self.depth, self.heavy) {
            (0, Some(h)) if heavy => h,
            (0, _) => self.rt,
            _ => self.inner_rt,
        };
        // The `heavy` helpers take the work of all elements together: the number of inner
        // elements, or the elements' estimated cost.
        let work = match costly {
            _ if !heavy => TokenStream::new(),
            Some(c) => {
                let (n, per) = (self.ident(s.len), c.div_ceil(cost::PER_WORK) as usize);
                quote!(#n.saturating_mul(#per),)
            }
            None => {
                let w = self.work(s);
                quote!(#w,)
            }
        };
        if heavy && s.kind == SoacKind::Map {
            if let Some(code) = self.ragged_map(v, s, span) {
                return code;
            }
            if let Some(code) = self.blocked_map(v, s, span) {
                return code;
            }
        }
        let n = self.ident(s.len);
        // Every helper that allocates a result names the primitive and its location.
        let what = s.kind.origin_name();
        let loc = self.loc(span);
        // A map's float results made NaN-canonical by the run time after the loop instead of
        // by the element function (`defer_output_nan`; undone once its lambdas are made).
        let canon = s.kind == SoacKind::Map && !heavy && self.defer_output_nan(s);
        if s.kind == SoacKind::Map && self.depth == 0 {
            let variants = self.bounded_variant(v, s);
            let slow = variants
                .as_ref()
                .and_then(|vs| vs.cond.as_ref())
                .map(|_| self.lambda(&s.elem, false, &[Rep::Value]));
            if let Some(vs) = variants {
                if canon {
                    self.nan_deferred.remove(&s.elem.body.result);
                }
                let (map, split) = if canon {
                    (quote!(map_canon), quote!(map_split_canon))
                } else {
                    (quote!(map), quote!(map_split))
                };
                let edge = vs.fast;
                // Loops over heavy elements keep one element function (`heavy::map`).
                let fast = match vs.interior.filter(|_| !heavy) {
                    Some((lo, hi, int)) => {
                        quote!(#rt::#split(#n, #lo, #hi, #edge, #int, #what, #loc))
                    }
                    None => quote!(#rt::#map(#n, #work #edge, #what, #loc)),
                };
                let value = match (vs.cond, slow) {
                    (Some(cond), Some(slow)) => {
                        quote!(if #cond { #fast } else { #rt::#map(#n, #work #slow, #what, #loc) })
                    }
                    _ => fast,
                };
                return self.bind_owned(v, value);
            }
        }
        if let (
            SoacKind::Reduce {
                op,
                init: Some(init),
            },
            false,
        ) = (&s.kind, heavy)
            && let Some(pred) = self.count_predicate(s, op)
        {
            // `count`: the flags are counted in 32-bit lanes (`rt::count`).
            let (name, init) = (self.ident(v), self.ident(*init));
            let ty = &self.f.vars[v].ty;
            let rty = self.rep_ty(ty);
            self.reps.insert(v, Self::default_rep(ty));
            let pred = self.lambda(&pred, false, &[Rep::Value]);
            return quote!(let #name: #rty = #init.wrapping_add(#rt::count(#n, #pred) as #rty););
        }
        let ty = &self.f.vars[v].ty;
        let applied = match &s.kind {
            SoacKind::Reduce { op, init } => self.deferred_reduce(s, op, init.is_some(), ty),
            _ => None,
        };
        let elem = self.lambda(&s.elem, false, &[Rep::Value]);
        if canon {
            self.nan_deferred.remove(&s.elem.body.result);
        }
        let name = self.ident(v);
        let rty = self.rep_ty(ty);
        let value = match &s.kind {
            SoacKind::Map if canon => quote!(#rt::map_canon(#n, #elem, #what, #loc)),
            SoacKind::Map => quote!(#rt::map(#n, #work #elem, #what, #loc)),
            SoacKind::Reduce { op, init } => {
                let op_fn = self.lambda(op, false, &[]);
                // Deferred for this reduction only (dpl-mpi generates `op` again to combine
                // the ranks' results).
                self.nan_deferred.remove(&op.body.result);
                self.nan_deferred.remove(&s.elem.body.result);
                let op = op_fn;
                let init = match init {
                    Some(i) => {
                        let i = self.ident(*i);
                        quote!(::core::option::Option::Some(#i))
                    }
                    None => quote!(::core::option::Option::None),
                };
                self.reps.insert(v, Self::default_rep(ty));
                let value = quote!(#rt::reduce(#n, #work #init, #elem, #op, #what, #loc));
                let value = match applied {
                    Some(applied) => {
                        let canon = self.canonical(quote!(__dpl_r), ty);
                        quote!({ let __dpl_r = #value; if #applied { #canon } else { __dpl_r } })
                    }
                    None => value,
                };
                return quote!(let #name: #rty = #value;);
            }
            SoacKind::Scan { op } => {
                let op = self.lambda(op, false, &[]);
                let ordered = ty.holds_float();
                quote!(#rt::scan(#n, #elem, #op, #ordered, #what, #loc))
            }
            SoacKind::ExclusiveScan { op, init } => {
                let op = self.lambda(op, false, &[]);
                let init = self.ident(*init);
                let ordered = ty.holds_float();
                quote!(#rt::exclusive_scan(#n, #init, #elem, #op, #ordered, #what, #loc))
            }
            SoacKind::Filter { pred } => {
                let pred = self.lambda(pred, true, &[]);
                quote!(#rt::filter(#n, #elem, #pred, #what, #loc))
            }
            SoacKind::Scatter { dst } => {
                let dst = self.ident(*dst);
                quote!(#rt::scatter(#n, #elem, #dst, "scatter", #loc))
            }
            SoacKind::ScatterReduce { op, dst } => {
                let identity = ty.elem().and_then(|e| self.operator_identity(op, e));
                let op = self.lambda(op, false, &[]);
                let dst = self.ident(*dst);
                match identity {
                    Some(id) => quote!(#rt::scatter_reduce_identity(
                        #n, #elem, #dst, #op, #id, "scatter_reduce", #loc
                    )),
                    None => {
                        quote!(#rt::scatter_reduce(#n, #elem, #dst, #op, "scatter_reduce", #loc))
                    }
                }
            }
            SoacKind::Permute => quote!(#rt::permute(#n, #elem, "permute", #loc)),
            SoacKind::Sort => quote!(#rt::sort(#n, #elem, #what, #loc)),
            SoacKind::SortByKey => quote!(#rt::sort_by_key(#n, #elem, #what, #loc)),
        };
        self.bind_owned(v, value)
    }

    /// If `s` is a `reduce` with `+` over an integer type of an element function whose
    /// result is a `bool` cast to that type (what `count` becomes), the element function
    /// returning the `bool` instead.
    pub(super) fn count_predicate(&self, s: &Soac, op: &Lambda) -> Option<Lambda> {
        let t = &self.f.vars[s.elem.body.result].ty;
        if !t.scalar()?.is_int() || dpl_core::ops::leafwise(op, t)? != [dpl_core::ops::LeafOp::Add]
        {
            return None;
        }
        let last = s.elem.body.stmts.last()?;
        match last.expr {
            // The cast is the last statement: nothing else reads its value.
            Expr::Cast(flag, _)
                if last.var == s.elem.body.result && self.f.vars[flag].ty == Type::bool() =>
            {
                let mut pred = s.elem.clone();
                pred.body.stmts.pop();
                pred.body.result = flag;
                Some(pred)
            }
            _ => None,
        }
    }

    /// Whether the element function of the map `s` returns an `f32`/`f64` that an
    /// operation computes (not a value moved: it keeps its bits) and that would be made
    /// NaN-canonical as its last step: it is then
    /// marked in `nan_deferred` (the caller removes it once the element function is
    /// generated), and the run time makes the stored values canonical instead
    /// (`rt::map_canon`, `rt::update_canon`), which costs less per element.
    pub(super) fn defer_output_nan(&mut self, s: &Soac) -> bool {
        let (body, r) = (&s.elem.body, s.elem.body.result);
        self.defer_nan(body, r) || self.defer_loop_output(body, r)
    }

    /// [`Gen::defer_output_nan`] for a map generated as one loop writing one vector per
    /// component of its tuples (`unzip`, `n` components): for each component, the variable
    /// marked in `nan_deferred` (the caller removes them once the element function is
    /// generated) if the run time makes its NaNs canonical instead (`rt::map_unzip2_canon`,
    /// `rt::update_unzip2_canon`, ...). Those are the float components that
    /// `defer_output_nan`'s rule defers, of a tuple made last by the element function and
    /// read by nothing else; integer components and values moved keep their bits.
    pub(super) fn defer_output_nans(&mut self, s: &Soac, n: usize) -> Vec<Option<VarId>> {
        let body = &s.elem.body;
        let r = body.result;
        let parts = body.stmts.iter().find_map(|st| match &st.expr {
            Expr::Tuple(vs) if st.var == r && vs.len() == n => Some(vs),
            _ => None,
        });
        match parts {
            Some(vs) if super::mentions(body, r) == 1 => vs
                .iter()
                .map(|&x| (self.defer_nan(body, x) || self.defer_loop_output(body, x)).then_some(x))
                .collect(),
            _ => vec![None; n],
        }
    }

    /// Whether the value `r` of `body` (its result, or a component of the tuple that is)
    /// is an `f32`/`f64` computed by an operation whose NaN would be made canonical (as in
    /// `Gen::stmt`), read by nothing else in `body`: if so, marked in `nan_deferred`.
    fn defer_nan(&mut self, body: &Block, r: VarId) -> bool {
        let float = matches!(
            self.f.vars[r].ty.scalar(),
            Some(dpl_core::ir::Scalar::F32 | dpl_core::ir::Scalar::F64)
        );
        // Made by an operation whose NaNs are replaced (as in `Gen::stmt`), not moved.
        let computed = body.stmts.iter().any(|st| {
            st.var == r
                && match &st.expr {
                    Expr::Unary(..) | Expr::Binary(..) | Expr::Math(..) => true,
                    Expr::Cast(a, _) => self.f.vars[*a].ty.scalar().is_some_and(|t| t.is_float()),
                    _ => false,
                }
        });
        if float
            && computed
            && self.nan_observed.contains(&r)
            && !self.nan_deferred.contains(&r)
            && super::mentions(body, r) == 1
        {
            self.nan_deferred.insert(r);
            true
        } else {
            false
        }
    }

    /// Whether the value `r` of `body` (a component of the tuple that is its result) is
    /// a float output of a loop of `body` that would be made canonical after the loop
    /// ([`Gen::loop_outputs`]), projected once and read by nothing else, the loop's value
    /// read by projections only: if so, `r` is marked in `nan_deferred` and the output in
    /// `nan_loop_outputs_deferred`, and the run time makes the stored values canonical
    /// instead. The bits are the same; the loop's value is then never read as bits, which
    /// kept it in an integer register across the loop (measured: a Newton iteration of
    /// an `exp` and a division took 13% longer than the same loop written by hand).
    fn defer_loop_output(&mut self, body: &Block, r: VarId) -> bool {
        let Some((l, k)) = body.stmts.iter().find_map(|st| match st.expr {
            Expr::Field(l, k) if st.var == r => Some((l, k as usize)),
            _ => None,
        }) else {
            return false;
        };
        let is_loop = body
            .stmts
            .iter()
            .any(|st| st.var == l && matches!(st.expr, Expr::Loop(_)));
        let float = matches!(
            self.f.vars[r].ty.scalar(),
            Some(dpl_core::ir::Scalar::F32 | dpl_core::ir::Scalar::F64)
        );
        let fields: Vec<usize> = body
            .stmts
            .iter()
            .filter_map(|st| match st.expr {
                Expr::Field(x, j) if x == l => Some(j as usize),
                _ => None,
            })
            .collect();
        if is_loop
            && float
            && self.nan_loops.get(&l).is_some_and(|d| d.contains(&k))
            && !self.nan_deferred.contains(&r)
            && super::mentions(body, r) == 1
            && super::mentions(body, l) == fields.len()
            && fields.iter().filter(|&&j| j == k).count() == 1
        {
            self.nan_deferred.insert(r);
            self.nan_loop_outputs_deferred.insert(r, (l, k));
            true
        } else {
            false
        }
    }

    /// A float reduction by a leaf-wise operator (`+`, `*`, `min`, `max`): whatever the bits
    /// of NaN operands, each application gives a NaN or the same number, so the operator's
    /// results (and, with a start value, the element function's) need not be made
    /// canonical at every element: they are marked in `nan_deferred`, and the returned
    /// condition (the operator was applied at least once) says when the reduction's result
    /// must be made canonical instead. Elements only moved to the result (the one element
    /// of a `min`) keep their bits, as everywhere. `None` for other reductions.
    pub(super) fn deferred_reduce(
        &mut self,
        s: &Soac,
        op: &Lambda,
        init: bool,
        ty: &Type,
    ) -> Option<TokenStream> {
        if !ty.scalar().is_some_and(|t| t.is_float()) || dpl_core::ops::leafwise(op, ty).is_none() {
            return None;
        }
        // A result also read inside its own lambda is left alone.
        let alone = |b: &dpl_core::ir::Block| super::mentions(b, b.result) == 1;
        if alone(&op.body) {
            self.nan_deferred.insert(op.body.result);
        }
        if init && alone(&s.elem.body) {
            self.nan_deferred.insert(s.elem.body.result);
        }
        let n = self.ident(s.len);
        Some(if init {
            quote!(#n >= 1)
        } else {
            quote!(#n >= 2)
        })
    }

    /// The identity of the operator `op` on values of type `ty`, as a Rust value, when
    /// `dpl_core::ops` knows it.
    pub(super) fn operator_identity(&self, op: &Lambda, ty: &Type) -> Option<TokenStream> {
        let consts = dpl_core::ops::identity(op, ty)?;
        Some(self.identity_value(ty, &mut consts.into_iter()))
    }

    /// The value of type `ty` (scalars and tuples) whose scalar leaves are `consts`, in
    /// order: the identity of a `scatter_reduce` operator.
    fn identity_value(&self, ty: &Type, consts: &mut impl Iterator<Item = Const>) -> TokenStream {
        match ty {
            Type::Tuple(ts) => {
                let parts: Vec<TokenStream> =
                    ts.iter().map(|t| self.identity_value(t, consts)).collect();
                quote!((#(#parts,)*))
            }
            _ => match consts.next() {
                Some(c) => self.constant(c, ty),
                None => quote!(::core::panic!(
                    "dpl internal error: identity without a value"
                )),
            },
        }
    }

    /// The number of inner elements a loop over heavy elements walks, as an expression: the
    /// total length of the first `Nested` or `Matrix` whose rows the element function reads
    /// at its own index, or `usize::MAX` (unknown) when there is none.
    pub(super) fn work(&self, s: &Soac) -> TokenStream {
        let i = s.elem.params.first().copied();
        for st in &s.elem.body.stmts {
            if let Expr::Index { seq, index, .. } = &st.expr {
                if Some(*index) != i {
                    continue;
                }
                let x = self.ident(*seq);
                match self.rep(*seq) {
                    Rep::Nested => return quote!(#x.total_len()),
                    Rep::Matrix(_) => return quote!(#x.rows().saturating_mul(#x.cols())),
                    _ => {}
                }
            }
        }
        quote!(usize::MAX)
    }
}
