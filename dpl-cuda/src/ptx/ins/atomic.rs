//! Atomics: `atom` (returns the old value), `red` (does not), compare-and-swap.

use super::{Ins, Src, addr, src};
use crate::ptx::{Addr, Reg, Space, Ty};

spelled! {
    /// The operation of an `atom` or `red`.
    pub(crate) enum AtomOp {
        /// `.add`.
        Add = "add",
        /// `.and`.
        And = "and",
        /// `.or`.
        Or = "or",
        /// `.xor`.
        Xor = "xor",
        /// `.min`.
        Min = "min",
        /// `.max`.
        Max = "max",
        /// `.exch`: `*a = b`.
        Exch = "exch",
    }
}

impl Ins {
    /// `atom.space.op.ty d, [a], b`: `*a = *a op b`, `d` the old value.
    pub(crate) fn atom(
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: &Reg,
        a: impl Into<Addr>,
        b: impl Into<Src>,
    ) -> Ins {
        Ins::new(format!("atom.{space}.{op}.{ty}"), &[d, &addr(a), &src(b)])
    }

    /// `atom.space.cas.ty d, [a], cmp, new`: `*a = new` if `*a == cmp`, `d` the old value.
    pub(crate) fn atom_cas(
        space: Space,
        ty: Ty,
        d: &Reg,
        a: impl Into<Addr>,
        cmp: impl Into<Src>,
        new: impl Into<Src>,
    ) -> Ins {
        Ins::new(
            format!("atom.{space}.cas.{ty}"),
            &[d, &addr(a), &src(cmp), &src(new)],
        )
    }

    /// `red.space.op.ty [a], b`: `*a = *a op b`.
    pub(crate) fn red(
        space: Space,
        op: AtomOp,
        ty: Ty,
        a: impl Into<Addr>,
        b: impl Into<Src>,
    ) -> Ins {
        Ins::new(format!("red.{space}.{op}.{ty}"), &[&addr(a), &src(b)])
    }
}
