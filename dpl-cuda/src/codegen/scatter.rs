//! `scatter` and `scatter_reduce`: each `(index, value)` checked and written; a
//! `scatter_reduce` combines with one `red.global` per leaf, a compare-and-swap loop or a
//! lock per destination element ([`combine_scheme`]).

use dpl_core::ops::LeafOp;

use super::*;

impl<'f> Gen<'f> {
    /// Splits an `(index, value)` element; returns the index as `u64`, whether it was
    /// signed, and the value's leaves.
    pub(super) fn pair(&mut self, k: &mut Kernel, v: KVal) -> R<(Reg, bool, Vec<Reg>)> {
        let (idx, signed, value) = self.target(k, v)?;
        Ok((idx, signed, value.flatten()?))
    }

    /// An `(index, value)` element of a scatter or permute: the index widened to 64 bits,
    /// whether it was signed, and the value.
    pub(super) fn target(&mut self, k: &mut Kernel, v: KVal) -> R<(Reg, bool, KVal)> {
        let KVal::Tup(mut parts) = v else {
            return unsupported("(index, value) elements expected");
        };
        if parts.len() != 2 {
            return unsupported("(index, value) elements expected");
        }
        let (Some(value), Some(idx)) = (parts.pop(), parts.pop()) else {
            return unsupported("(index, value) elements expected");
        };
        let idx = idx.reg()?.clone();
        if !idx.ty.is_int() {
            return unsupported("a non-integer scatter index");
        }
        let signed = idx.ty.is_signed_int();
        Ok((self.widen_index(k, &idx), signed, value))
    }

    pub(super) fn scatter(
        &mut self,
        s: &Stmt,
        soac: &Soac,
        op: Option<&Lambda>,
        dst: VarId,
        steps: &mut Vec<Step>,
    ) -> R<()> {
        let Some(elem_ty) = self.ty(s.var).elem() else {
            return unsupported("scatter without a sequence type");
        };
        let ls = leaves(elem_ty)?;
        let dlen = Count::Len {
            var: var(dst),
            path: Vec::new(),
        };
        let scheme = op.map(|op| combine_scheme(op, elem_ty, &ls));
        // Not zeroed: `dst` is copied into the result before the kernel runs (for words of
        // narrow leaves, the bytes past the end are never part of the result).
        let outs: Vec<u32> = match &scheme {
            // `bool`, 8- and 16-bit leaves (`f16`/`bf16` included) combined by atomics on
            // their containing 32-bit word: the buffer is rounded up to whole words, so
            // that word is always inside the allocation.
            Some(Combine::Atomic(_) | Combine::Cas) => ls
                .iter()
                .map(|&l| {
                    let (elem, count) = if size_of(l) < 4 {
                        let per_word = 4 / size_of(l);
                        (
                            Scalar::U32,
                            Count::CeilDiv(Box::new(dlen.clone()), per_word),
                        )
                    } else {
                        (l, dlen.clone())
                    };
                    self.alloc_written(&[elem], &count, steps)[0]
                })
                .collect(),
            _ => self.alloc_written(&ls, &dlen, steps),
        };
        let lock = matches!(scheme, Some(Combine::Lock))
            .then(|| self.alloc_leaves(&[Scalar::U32], &dlen, steps)[0]);
        for (j, (&t, &l)) in outs.iter().zip(&ls).enumerate() {
            steps.push(Step::Copy {
                src: Buf::Seq {
                    var: var(dst),
                    path: Vec::new(),
                    leaf: j as u32,
                },
                dst: Buf::Temp(t),
                elem: l,
                count: dlen.clone(),
            });
        }
        let what = if op.is_some() {
            "scatter_reduce"
        } else {
            "scatter"
        };
        let mut k = self.new_kernel(what);
        let lambdas: Vec<&Lambda> = std::iter::once(&soac.elem).chain(op).collect();
        k.env = self.bind_captures(&mut k, &lambdas)?;
        let n = k.param(Scalar::U64, KArg::Count(Count::Var(var(soac.len))));
        let dl = k.param(Scalar::U64, KArg::Count(dlen.clone()));
        let ptrs = Self::temp_ptrs(&mut k, &outs);
        let lock = lock.map(|t| Self::temp_ptrs(&mut k, &[t])[0].clone());
        let el = Self::elem_loop(&mut k, &n, None);
        let i = el.i.clone();
        let ctx = el.ctx();
        let e = self.elem(&mut k, &soac.elem, &i, &ctx)?;
        let (idx, signed, vals) = self.pair(&mut k, e)?;
        let key = k.reg(Scalar::U64);
        k.emit(Ins::add(Ty::S64, &key, &n, &i));
        let ctx2 = Ctx {
            key,
            fail: Some(el.cont.clone()),
        };
        self.check_index(&mut k, &ctx2, &idx, &dl, signed, Self::at(s, soac));
        match op {
            None => {
                for (r, p) in vals.iter().zip(&ptrs) {
                    self.store(&mut k, p, &idx, r);
                }
            }
            Some(op) => {
                let op_ctx = Ctx {
                    key: ctx2.key.clone(),
                    fail: None,
                };
                match &scheme {
                    Some(Combine::Atomic(ops)) => {
                        for (((r, p), &op), &l) in vals.iter().zip(&ptrs).zip(ops).zip(&ls) {
                            let addr = Self::addr(&mut k, p, &idx, l);
                            Self::atomic_leaf(&mut k, &addr, r, op)?;
                        }
                    }
                    Some(Combine::Cas) => {
                        let [v] = vals.as_slice() else {
                            return unsupported("a CAS loop on a tuple (internal)");
                        };
                        let addr = Self::addr(&mut k, &ptrs[0], &idx, v.ty);
                        self.cas_combine(&mut k, op, &addr, v, &op_ctx)?;
                    }
                    _ => {
                        let Some(lock) = &lock else {
                            return unsupported("a scatter_reduce without its locks (internal)");
                        };
                        let target = Locked {
                            ptrs: &ptrs,
                            lock,
                            idx: &idx,
                            elem_ty,
                        };
                        self.locked_combine(&mut k, op, &target, &vals, &op_ctx)?;
                    }
                }
            }
        }
        Self::elem_loop_end(&mut k, &el);
        let n_count = Count::Var(var(soac.len));
        self.launch_stride(k, &n_count, u64::from(self.bsize()), steps);
        steps.push(Step::CheckErrors);
        steps.push(Self::bind_flat(s.var, elem_ty, outs, dlen));
        Ok(())
    }

    /// `red.global.<op>` of leaf `r` into the slot at `addr` (see [`leaf_atomic`]). A
    /// `bool` slot is a byte of the 32-bit word at `addr & !3` (the buffer is rounded
    /// up to whole words): `or`/`xor` set/flip the byte's low bit when `r` holds, `and`
    /// clears the byte when it does not.
    fn atomic_leaf(k: &mut Kernel, addr: &Reg, r: &Reg, op: AtomOp) -> R<()> {
        let Some((atom, ty)) = leaf_atomic(op, r.ty) else {
            return unsupported(format!("no atomic `{op}` on {} (internal)", r.ty));
        };
        if r.ty != Scalar::Bool {
            k.emit(Ins::red(Space::Global, atom, ty, addr, r));
            return Ok(());
        }
        let (word, shift) = Self::byte_in_word(k, addr);
        let bits = k.reg(Scalar::U32);
        if atom == AtomOp::And {
            k.emit(Ins::shl(Ty::B32, &bits, 255, &shift));
            k.emit(Ins::not(Ty::B32, &bits, &bits));
            k.emit(Ins::red(Space::Global, atom, ty, &word, &bits).unless(r));
        } else {
            k.emit(Ins::shl(Ty::B32, &bits, 1, &shift));
            k.emit(Ins::red(Space::Global, atom, ty, &word, &bits).when(r));
        }
        Ok(())
    }

    /// The 32-bit word holding the byte (or the aligned 16 bits) at `addr`, and its bit
    /// offset in it.
    fn byte_in_word(k: &mut Kernel, addr: &Reg) -> (Reg, Reg) {
        let word = k.reg(Scalar::U64);
        k.emit(Ins::and(Ty::B64, &word, addr, -4));
        let (low, shift) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.emit(Ins::cvt(Ty::U32, Ty::U64, &low, addr));
        k.emit(Ins::and(Ty::B32, &low, &low, 3));
        k.emit(Ins::shl(Ty::B32, &shift, &low, 3));
        (word, shift)
    }

    /// `slot = op(slot, v)` at `addr` by a compare-and-swap loop with the operator
    /// inline: on the value's own 32/64-bit word, or for a `bool`, an 8- or 16-bit
    /// integer or an `f16`/`bf16` on its bytes inside their 32-bit word (the other bytes
    /// kept as the swap found them; PTX has no 8- or 16-bit compare-and-swap). A 16-bit
    /// float's bits are widened to the `f32` register it is held in
    /// ([`Kernel::widen_half`]), the operator computes and rounds as everywhere else
    /// ([`Kernel::round_half`]), and the result's bits go back ([`Kernel::half_bits`]).
    #[allow(clippy::too_many_arguments)]
    fn cas_combine(
        &mut self,
        k: &mut Kernel,
        op: &Lambda,
        addr: &Reg,
        v: &Reg,
        ctx: &Ctx,
    ) -> R<()> {
        let byte = (size_of(v.ty) < 4).then(|| Self::byte_in_word(k, addr));
        // The slot's bits, at the bottom of a word.
        let ones = u32::MAX >> (32 - 8 * size_of(v.ty).min(4));
        let raw = if width(v.ty) == 64 {
            Scalar::U64
        } else {
            Scalar::U32
        };
        let b = bits(raw);
        let at = byte.as_ref().map_or(addr, |(w, _)| w);
        let old = k.reg(raw);
        k.emit(Ins::ld(Space::Global, mem(raw), &old, at));
        let (lp, done) = (k.label(), k.label());
        k.place(&lp);
        let cur = match &byte {
            Some((_, shift)) if v.ty.is_half() => {
                let t = k.reg(Scalar::U32);
                k.emit(Ins::shr(Ty::B32, &t, &old, shift));
                k.emit(Ins::and(Ty::B32, &t, &t, ones));
                k.widen_half(&t, v.ty)
            }
            Some((_, shift)) if v.ty == Scalar::Bool => {
                let (t, cur) = (k.reg(Scalar::U32), k.reg(v.ty));
                k.emit(Ins::shr(Ty::B32, &t, &old, shift));
                k.emit(Ins::and(Ty::B32, &t, &t, 255));
                k.emit(Ins::setp(Cmp::Ne, Ty::U32, &cur, &t, 0));
                cur
            }
            Some((_, shift)) => {
                let cur = k.reg(v.ty);
                k.emit(Ins::shr(Ty::B32, &cur, &old, shift));
                k.wrap(&cur);
                cur
            }
            None => {
                let cur = k.reg(v.ty);
                k.emit(Ins::mov(b, &cur, &old));
                cur
            }
        };
        k.env.insert(op.params[0], KVal::S(cur));
        k.env.insert(op.params[1], KVal::S(v.clone()));
        let new = self.block(k, &op.body, ctx)?;
        let new = new.reg()?.clone();
        let nw = k.reg(raw);
        match &byte {
            Some((_, shift)) => {
                let (keep, put) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
                k.emit(Ins::shl(Ty::B32, &keep, ones, shift));
                k.emit(Ins::not(Ty::B32, &keep, &keep));
                k.emit(Ins::and(Ty::B32, &keep, &old, &keep));
                if new.ty == Scalar::Bool {
                    k.emit(Ins::selp(Ty::U32, &put, 1, 0, &new));
                } else if new.ty.is_half() {
                    let hb = k.half_bits(&new);
                    k.emit(Ins::and(Ty::B32, &put, &hb, ones));
                } else {
                    k.emit(Ins::and(Ty::B32, &put, &new, ones));
                }
                k.emit(Ins::shl(Ty::B32, &put, &put, shift));
                k.emit(Ins::or(Ty::B32, &nw, &keep, &put));
            }
            None => k.emit(Ins::mov(b, &nw, &new)),
        }
        let prev = k.reg(raw);
        k.emit(Ins::atom_cas(Space::Global, b, &prev, at, &old, &nw));
        let same = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Eq, arith(raw), &same, &prev, &old));
        k.emit(Ins::bra(&done).when(&same));
        k.emit(Ins::mov(b, &old, &prev));
        k.emit(Ins::bra(&lp));
        k.place(&done);
        Ok(())
    }

    /// `slot = op(slot, vals)` under the slot's lock (a `u32` per destination element,
    /// zeroed by the host): taken with `atom.acquire.gpu` compare-and-swap 0 -> 1, the
    /// leaves read, combined and written, then released with `st.release.gpu`. The
    /// critical section is the taken-lock side of the branch and the retry comes after
    /// it in the code, so a thread never waits for a lock held by a lane of its own warp
    /// that cannot run: on hardware without independent scheduling, and on dpl-sim, the
    /// lanes that got their lock run to the release before the others try again
    /// (sm_70+'s independent thread scheduling needs no such care). A thread holds at
    /// most one lock and never waits while holding it, so the loop always ends.
    #[allow(clippy::too_many_arguments)]
    fn locked_combine(
        &mut self,
        k: &mut Kernel,
        op: &Lambda,
        t: &Locked<'_>,
        vals: &[Reg],
        ctx: &Ctx,
    ) -> R<()> {
        let la = Self::addr(k, t.lock, t.idx, Scalar::U32);
        let (lp, retry, done) = (k.label(), k.label(), k.label());
        k.place(&lp);
        let (got, one) = (k.reg(Scalar::U32), k.reg(Scalar::U32));
        k.emit(Ins::mov(Ty::U32, &one, 1));
        k.emit(Ins::atom_cas(
            Space::AcquireGpuGlobal,
            Ty::B32,
            &got,
            &la,
            0,
            &one,
        ));
        let busy = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U32, &busy, &got, 0));
        k.emit(Ins::bra(&retry).when(&busy));
        let addrs: Vec<Reg> = t
            .ptrs
            .iter()
            .zip(vals)
            .map(|(p, v)| Self::addr(k, p, t.idx, v.ty))
            .collect();
        let olds: Vec<Reg> = addrs
            .iter()
            .zip(vals)
            .map(|(a, v)| Self::ld(k, Space::Global, a, v.ty))
            .collect();
        k.env
            .insert(op.params[0], unflatten(t.elem_ty, &mut olds.into_iter())?);
        k.env.insert(
            op.params[1],
            unflatten(t.elem_ty, &mut vals.iter().cloned())?,
        );
        let new = self.block(k, &op.body, ctx)?.flatten()?;
        for (a, r) in addrs.iter().zip(&new) {
            Self::st(k, Space::Global, a, r);
        }
        let zero = k.reg(Scalar::U32);
        k.emit(Ins::mov(Ty::U32, &zero, 0));
        k.emit(Ins::st(Space::ReleaseGpuGlobal, Ty::U32, &la, &zero));
        k.emit(Ins::bra(&done));
        k.place(&retry);
        k.emit(Ins::bra(&lp));
        k.place(&done);
        Ok(())
    }
}

/// The destination of a locked `scatter_reduce` combination ([`Gen::locked_combine`]).
struct Locked<'a> {
    /// One pointer per leaf of the destination.
    ptrs: &'a [Reg],
    /// The lock array (a `u32` per destination element).
    lock: &'a Reg,
    /// The destination index (`u64`, in range).
    idx: &'a Reg,
    /// The element type.
    elem_ty: &'a Type,
}

/// How a top-level `scatter_reduce` combines a value into its destination slot.
#[derive(Clone, Debug, PartialEq)]
enum Combine {
    /// The operator is component-wise and each leaf's operation has an atomic form: one
    /// `red.global` per leaf (the operations of [`leaf_atomic`]).
    Atomic(Vec<AtomOp>),
    /// One scalar leaf: a compare-and-swap loop with the operator inline (on the
    /// containing 32-bit word for a `bool`, an 8- or 16-bit integer, an `f16` or a
    /// `bf16`).
    Cas,
    /// Anything else (tuples with a general operator, or a component-wise one with a
    /// leaf that has no atomic form: `*`, a float `min`/`max`, an 8- or 16-bit leaf such
    /// as an `f16`): the slot's lock, taken with a compare-and-swap, the leaves read,
    /// combined and written while it is held.
    Lock,
}

/// Chooses how a `scatter_reduce` with operator `op` on elements of type `ty` (leaves
/// `ls`) combines.
fn combine_scheme(op: &Lambda, ty: &Type, ls: &[Scalar]) -> Combine {
    match leafwise_ops(op, ty) {
        Some(ops)
            if ops.len() == ls.len()
                && ops
                    .iter()
                    .zip(ls)
                    .all(|(&op, &l)| leaf_atomic(op, l).is_some()) =>
        {
            Combine::Atomic(ops)
        }
        _ if ls.len() == 1 => Combine::Cas,
        _ => Combine::Lock,
    }
}

/// When `op` combines its operands leaf by leaf ([`dpl_core::ops::leafwise`]) with
/// operations that have an atomic form (`add`, `&`, `|`, `^`, `min`, `max`; not `*`), the
/// atomic operation of each leaf.
fn leafwise_ops(op: &Lambda, ty: &Type) -> Option<Vec<AtomOp>> {
    dpl_core::ops::leafwise(op, ty)?
        .into_iter()
        .map(|o| match o {
            LeafOp::Add => Some(AtomOp::Add),
            LeafOp::Min => Some(AtomOp::Min),
            LeafOp::Max => Some(AtomOp::Max),
            LeafOp::And => Some(AtomOp::And),
            LeafOp::Or => Some(AtomOp::Or),
            LeafOp::Xor => Some(AtomOp::Xor),
            LeafOp::Mul => None,
        })
        .collect()
}

/// The `red.global` operation and type doing `op` on one leaf of type `ty` in memory, if
/// there is one. A `bool` is a byte of a 32-bit word: `|`/`max` and `^` become `or`/`xor`
/// of its low bit, `&`/`min` an `and` clearing the byte (see [`Gen::atomic_leaf`]).
fn leaf_atomic(op: AtomOp, ty: Scalar) -> Option<(AtomOp, Ty)> {
    use AtomOp::*;
    match (op, ty) {
        (Or | Max, Scalar::Bool) => Some((Or, Ty::B32)),
        (And | Min, Scalar::Bool) => Some((And, Ty::B32)),
        (Xor, Scalar::Bool) => Some((Xor, Ty::B32)),
        (_, Scalar::Bool) => None,
        // No 8- or 16-bit atomics: a compare-and-swap on the containing word instead.
        (_, s) if size_of(s) < 4 => None,
        (Add, s) if s.is_float() => Some((Add, arith(s))),
        (_, s) if s.is_float() => None,
        (Add, s) => Some((Add, if width(s) == 32 { Ty::U32 } else { Ty::U64 })),
        (Min | Max, s) => Some((op, arith(s))),
        (_, s) => Some((op, bits(s))),
    }
}
