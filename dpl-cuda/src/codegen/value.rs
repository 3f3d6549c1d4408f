//! Values inside a kernel: registers, tuples, sequences in memory, lazy sequences
//! ([`KVal`]), optional values of reductions without identity ([`Opt`]), how two elements
//! are combined ([`Comb`]), the variables bound in a kernel ([`Env`]), the scalar
//! leaves of a type ([`leaves`]) and the small register helpers (constants, moves,
//! selects).

use super::*;

/// A value inside a kernel.
#[derive(Clone, Debug)]
pub(super) enum KVal {
    /// A scalar in a register.
    S(Reg),
    /// A sequence in memory: one pointer per scalar leaf of the element type, and the
    /// length. A nested sequence (`elem` is `[T]`) also has the pointer to its `len + 1`
    /// row offsets and its [`RowLayout`], and `ptrs` point to the leaves of `T`. A row of
    /// a strided matrix has a `step`: element `j` is at `ptrs + j * step` (else `j`).
    Seq {
        ptrs: Vec<Reg>,
        len: Reg,
        elem: Type,
        offs: Option<Reg>,
        layout: Option<Rc<RowLayout>>,
        step: Option<Reg>,
    },
    /// A sequence built inside an element function and not stored: its elements are
    /// produced on demand by a sequential loop (see [`Gen::stream`]).
    Lazy(Rc<LazySeq>),
    /// A lazy sequence while a loop streams it: the current position and element.
    Cur {
        idx: Reg,
        val: Box<KVal>,
        of: Rc<LazySeq>,
    },
    /// A tuple.
    Tup(Vec<KVal>),
    /// A sequence an `if` inside an element function chooses (alone or inside a tuple it
    /// chooses): not built; each consumer branches on the condition and consumes the
    /// branch's sequence, evaluating that branch's block there (see [`Gen::branch_seq`]).
    Cond(Rc<CondSeq>),
}

/// The condition and branches of a [`KVal::Cond`].
#[derive(Debug)]
pub(super) struct CondSeq {
    pub(super) cond: Reg,
    pub(super) then: Block,
    pub(super) els: Block,
    /// The field indices selecting the sequence in the branches' value (empty when the
    /// `if` chooses a sequence; a tuple's sequence is chosen along with the tuple).
    pub(super) path: Vec<u32>,
}

/// How the rows of a nested sequence are found, decided at run time (kernel parameters,
/// [`KArg::RowLayout`]): from the row offsets, or, for a strided matrix (`strided` set),
/// row `r` starting at element `r * rs` of the leaves, `cols` long, its elements `cs`
/// apart (a column-major matrix: `rs = 1`, `cs = rows`; no offsets then).
#[derive(Debug)]
pub(super) struct RowLayout {
    /// The parameters' names: strided flag, row stride, column stride, columns (loaded
    /// where used, so they hold no registers across the kernel).
    pub(super) names: [Sym; 4],
}

impl RowLayout {
    /// Loads field `f` (0 to 3) into a fresh register.
    pub(super) fn load(&self, k: &mut Kernel, f: usize) -> Reg {
        let r = k.reg(Scalar::U64);
        k.emit(Ins::ld(Space::Param, Ty::U64, &r, &self.names[f]));
        r
    }

    /// Whether the rows are strided (a predicate), and its negation.
    pub(super) fn strided(&self, k: &mut Kernel) -> (Reg, Reg) {
        let f = self.load(k, 0);
        let (p, n) = (k.reg(Scalar::Bool), k.reg(Scalar::Bool));
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &p, &f, 0));
        k.emit(Ins::setp(Cmp::Eq, Ty::U64, &n, &f, 0));
        (p, n)
    }
}

/// A combinator producing a sequence inside an element function.
#[derive(Debug)]
pub(super) struct LazySeq {
    /// The variable it defines.
    pub(super) var: VarId,
    /// The combinator (a `Map`, `Scan`, `ExclusiveScan` or `Filter`, which can be
    /// streamed; or a `Scatter`, `ScatterReduce` or `Permute`, which can only be written
    /// out as the element's result, see [`Gen::write_scattered`]).
    pub(super) soac: Soac,
    /// Its element type.
    pub(super) elem_ty: Type,
    /// The statement's span.
    pub(super) span: u32,
}

impl KVal {
    pub(super) fn unit() -> KVal {
        KVal::Tup(Vec::new())
    }

    pub(super) fn reg(&self) -> R<&Reg> {
        match self {
            KVal::S(r) => Ok(r),
            _ => unsupported("a scalar was expected (internal)"),
        }
    }

    /// The scalar leaves, in order.
    pub(super) fn flatten(&self) -> R<Vec<Reg>> {
        self.scalars(false)
    }

    /// The scalar leaves, in order; the sequences inside are skipped with `skip_seqs`,
    /// an error otherwise.
    pub(super) fn scalars(&self, skip_seqs: bool) -> R<Vec<Reg>> {
        let mut out = Vec::new();
        fn go(v: &KVal, skip: bool, out: &mut Vec<Reg>) -> R<()> {
            match v {
                KVal::S(r) => out.push(r.clone()),
                KVal::Tup(vs) => vs.iter().try_for_each(|v| go(v, skip, out))?,
                KVal::Seq { .. } | KVal::Lazy(_) | KVal::Cur { .. } | KVal::Cond(_) => {
                    if !skip {
                        return unsupported("a sequence inside a value computed per element");
                    }
                }
            }
            Ok(())
        }
        go(self, skip_seqs, &mut out)?;
        Ok(out)
    }

    /// The part of a tuple value `path` selects.
    pub(super) fn at(&self, path: &[u32]) -> R<KVal> {
        match path.split_first() {
            None => Ok(self.clone()),
            Some((&n, rest)) => match self {
                KVal::Tup(vs) if (n as usize) < vs.len() => vs[n as usize].at(rest),
                _ => unsupported("a field of a non-tuple (internal)"),
            },
        }
    }
}

/// The part of a tuple type `path` selects.
pub(super) fn type_at<'t>(ty: &'t Type, path: &[u32]) -> Option<&'t Type> {
    match path.split_first() {
        None => Some(ty),
        Some((&n, rest)) => match ty {
            Type::Tuple(ts) => type_at(ts.get(n as usize)?, rest),
            _ => None,
        },
    }
}

/// Rebuilds a structured value of type `ty` from its leaves.
pub(super) fn unflatten(ty: &Type, regs: &mut impl Iterator<Item = Reg>) -> R<KVal> {
    unflatten_with(ty, regs, &mut Vec::new(), &mut |_| {
        unsupported(format!("a value of type {ty} per element"))
    })
}

/// [`unflatten`] for a type holding sequences: the sequence at field path `p` is `seq(p)`.
pub(super) fn unflatten_with(
    ty: &Type,
    regs: &mut dyn Iterator<Item = Reg>,
    path: &mut Vec<u32>,
    seq: &mut dyn FnMut(&[u32]) -> R<KVal>,
) -> R<KVal> {
    Ok(match ty {
        Type::Scalar(_) => match regs.next() {
            Some(r) => KVal::S(r),
            None => return unsupported("too few leaves (internal)"),
        },
        Type::Tuple(ts) => {
            let mut vs = Vec::with_capacity(ts.len());
            for (n, t) in ts.iter().enumerate() {
                path.push(n as u32);
                let v = unflatten_with(t, regs, path, seq);
                path.pop();
                vs.push(v?);
            }
            KVal::Tup(vs)
        }
        Type::Seq(_) => seq(path)?,
        Type::Infer | Type::Param(..) => return unsupported("an untyped variable"),
    })
}

/// An optional value (for reductions without identity): a predicate and the leaves.
#[derive(Clone, Debug)]
pub(super) struct Opt {
    pub(super) has: Reg,
    pub(super) v: Vec<Reg>,
}

/// How two elements are combined.
#[derive(Clone, Copy)]
pub(super) enum Comb<'l> {
    /// The user's operator on elements of the given type.
    Op(&'l Lambda, &'l Type),
    /// `u64` addition (counts of filters).
    AddU64,
}

/// The values of the variables bound in a kernel.
pub(super) type Env = HashMap<VarId, KVal>;

impl<'f> Gen<'f> {
    /// A `none` optional value with zeroed leaves.
    pub(super) fn none(&mut self, k: &mut Kernel, ls: &[Scalar]) -> Opt {
        let has = self.pconst(k, false);
        let v = ls.iter().map(|&s| self.zero(k, s)).collect();
        Opt { has, v }
    }

    pub(super) fn zero(&mut self, k: &mut Kernel, s: Scalar) -> Reg {
        let r = k.reg(s);
        match s {
            Scalar::Bool => k.emit(Ins::setp(Cmp::Ne, Ty::U32, &r, 0, 0)),
            Scalar::F32 | Scalar::F64 => k.emit(Ins::mov(arith(s), &r, Src::float(s, 0.0))),
            _ => k.emit(Ins::mov(bits(s), &r, 0)),
        }
        r
    }

    pub(super) fn pconst(&mut self, k: &mut Kernel, b: bool) -> Reg {
        let r = k.reg(Scalar::Bool);
        let cmp = if b { Cmp::Eq } else { Cmp::Ne };
        k.emit(Ins::setp(cmp, Ty::U32, &r, 0, 0));
        r
    }

    pub(super) fn mov(k: &mut Kernel, d: &Reg, s: &Reg) {
        if d.name != s.name {
            k.emit(Ins::mov(bits(d.ty), d, s));
        }
    }

    pub(super) fn mov_opt(k: &mut Kernel, d: &Opt, s: &Opt) {
        Self::mov(k, &d.has, &s.has);
        for (a, b) in d.v.iter().zip(&s.v) {
            Self::mov(k, a, b);
        }
    }

    /// A copy of `x` in fresh registers.
    pub(super) fn copy_opt(k: &mut Kernel, x: &Opt) -> Opt {
        let cur = Opt {
            has: k.reg(Scalar::Bool),
            v: x.v.iter().map(|r| k.reg(r.ty)).collect(),
        };
        Self::mov_opt(k, &cur, x);
        cur
    }

    /// `d = c ? a : b`
    pub(super) fn select(k: &mut Kernel, d: &Reg, c: &Reg, a: &Reg, b: &Reg) {
        if d.ty == Scalar::Bool {
            let (t1, t2, nc) = (
                k.reg(Scalar::Bool),
                k.reg(Scalar::Bool),
                k.reg(Scalar::Bool),
            );
            k.emit(Ins::and(Ty::Pred, &t1, c, a));
            k.emit(Ins::not(Ty::Pred, &nc, c));
            k.emit(Ins::and(Ty::Pred, &t2, &nc, b));
            k.emit(Ins::or(Ty::Pred, d, &t1, &t2));
        } else {
            let t = if d.ty.is_float() {
                arith(d.ty)
            } else {
                bits(d.ty)
            };
            k.emit(Ins::selp(t, d, a, b, c));
        }
    }
}
