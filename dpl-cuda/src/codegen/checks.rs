//! Run-time checks inside kernels: where a failed check goes ([`Ctx`]), the error record
//! ([`Gen::record`]: the smallest failing key wins, report mode writes the site and its
//! values) and the index widening the bounds checks use.

use super::*;

/// Where failed checks go: the key of the current element (smaller keys are reported
/// first) and the label to jump to (none: go on with an unspecified value).
#[derive(Clone, Debug)]
pub(super) struct Ctx {
    pub(super) key: Reg,
    pub(super) fail: Option<Label>,
}

/// Where a check is in the user's program: the primitive it belongs to and the
/// statement's source span.
#[derive(Clone, Copy, Debug)]
pub(super) struct At {
    pub(super) origin: Origin,
    pub(super) span: u32,
}

impl<'f> Gen<'f> {
    /// The place of statement `s`, combinator `soac`, in the user's program.
    pub(super) fn at(s: &Stmt, soac: &Soac) -> At {
        At {
            origin: origin_of(&soac.kind),
            span: s.span.0,
        }
    }

    /// `report != 0`: the kernel runs in report mode (see [`Gen::record`]).
    pub(super) fn report_mode(k: &mut Kernel) -> Reg {
        let rep = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &rep, &k.report, 0));
        rep
    }

    /// A context recording failures with the row's key and going on (in code no check
    /// can fail in, or where the group cannot leave: its collective steps).
    pub(super) fn no_fail(grp: &Group) -> Ctx {
        Ctx {
            key: grp.key.clone(),
            fail: None,
        }
    }

    /// If `bad` holds: records a failure of `kind` at `at` with its two values (the
    /// first a signed index with `signed`; none: zeros) for the current key, and jumps to
    /// the context's fail label.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check(
        &mut self,
        k: &mut Kernel,
        ctx: &Ctx,
        bad: &Reg,
        kind: SiteKind,
        at: At,
        signed: bool,
        vals: Option<[&Reg; 2]>,
    ) {
        let zero;
        let [a, b] = match vals {
            Some(v) => v,
            None => {
                zero = k.reg(Scalar::U64);
                k.emit(Ins::mov(Ty::U64, &zero, 0));
                [&zero, &zero]
            }
        };
        let site = self.sites.len() as u64;
        self.sites.push(ErrorSite {
            kind,
            origin: at.origin,
            span: at.span,
            signed,
        });
        let ok = k.label();
        k.emit(Ins::bra(&ok).unless(bad));
        self.record(k, ctx, site, a, b);
        if let Some(l) = &ctx.fail {
            k.emit(Ins::bra(l));
        }
        k.place(&ok);
    }

    /// Checks `idx < len` (`u64`s; `idx` came from a signed integer with `signed`, so a
    /// negative index is reported as one): an index out of range at `at`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn check_index(
        &mut self,
        k: &mut Kernel,
        ctx: &Ctx,
        idx: &Reg,
        len: &Reg,
        signed: bool,
        at: At,
    ) {
        let bad = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ge, Ty::U64, &bad, idx, len));
        self.check(
            k,
            ctx,
            &bad,
            SiteKind::IndexOutOfRange,
            at,
            signed,
            Some([idx, len]),
        );
    }

    /// A reduction without start value over no element (`has` does not hold): empty at
    /// `at`.
    pub(super) fn check_nonempty(&mut self, k: &mut Kernel, ctx: &Ctx, has: &Reg, at: At) {
        let bad = k.reg(Scalar::Bool);
        k.emit(Ins::not(Ty::Pred, &bad, has));
        self.check(k, ctx, &bad, SiteKind::Empty, at, false, None);
    }

    /// Records a failure: the error record's first word keeps the bitwise negation of the
    /// smallest failing key (`atom.max`, 0 = no failure). In report mode (the report key
    /// parameter is that negation), the thread with that key also writes the site and the
    /// two values; the first site it reaches wins (`atom.cas` on the site word).
    fn record(&mut self, k: &mut Kernel, ctx: &Ctx, site: u64, a: &Reg, b: &Reg) {
        k.any_data = false;
        let nk = k.reg(Scalar::U64);
        k.emit(Ins::not(Ty::B64, &nk, &ctx.key));
        k.emit(Ins::red(Space::Global, AtomOp::Max, Ty::U64, &k.err, &nk));
        let other = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &other, &nk, &k.report));
        let skip = k.label();
        k.emit(Ins::bra(&skip).when(&other));
        let (sid, old) = (k.reg(Scalar::U64), k.reg(Scalar::U64));
        k.emit(Ins::mov(Ty::U64, &sid, site + 1));
        k.emit(Ins::atom_cas(
            Space::Global,
            Ty::B64,
            &old,
            Addr::from(&k.err).plus(8),
            0,
            &sid,
        ));
        let taken = k.reg(Scalar::Bool);
        k.emit(Ins::setp(Cmp::Ne, Ty::U64, &taken, &old, 0));
        k.emit(Ins::bra(&skip).when(&taken));
        k.emit(Ins::st(
            Space::Global,
            Ty::U64,
            Addr::from(&k.err).plus(16),
            a,
        ));
        k.emit(Ins::st(
            Space::Global,
            Ty::U64,
            Addr::from(&k.err).plus(24),
            b,
        ));
        k.place(&skip);
    }

    /// An index register of any integer type as `u64` (sign-extended when signed, so a
    /// negative index is out of range of every length).
    pub(super) fn widen_index(&mut self, k: &mut Kernel, r: &Reg) -> Reg {
        if width(r.ty) == 64 {
            return Reg {
                ty: Scalar::U64,
                ..r.clone()
            };
        }
        // 32-bit registers (the 8- and 16-bit integers among them are held extended).
        let d = k.reg(Scalar::U64);
        let wide = if r.ty.is_signed_int() {
            Ty::S64
        } else {
            Ty::U64
        };
        k.emit(Ins::cvt(wide, arith(r.ty), &d, r));
        d
    }
}
