//! Loads and stores.

use std::fmt;

use super::{Ins, Src, addr, src};
use crate::ptx::{Addr, Reg, Ty};

/// The state space of a memory access, with its ordering and scope where it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Space {
    /// `.global`.
    Global,
    /// `.shared`.
    Shared,
    /// `.param` (a kernel parameter).
    Param,
    /// `.const` (a module-scope table).
    Const,
    /// `.volatile.global`: not cached in the thread, seen by other blocks.
    VolatileGlobal,
    /// `.relaxed.gpu.global`: coherent at the device scope.
    RelaxedGpuGlobal,
    /// `.acquire.gpu.global`: later accesses see what came before the release it reads.
    AcquireGpuGlobal,
    /// `.release.gpu.global`: earlier accesses are seen before this one.
    ReleaseGpuGlobal,
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Param => "param",
            Space::Const => "const",
            Space::VolatileGlobal => "volatile.global",
            Space::RelaxedGpuGlobal => "relaxed.gpu.global",
            Space::AcquireGpuGlobal => "acquire.gpu.global",
            Space::ReleaseGpuGlobal => "release.gpu.global",
        })
    }
}

impl Ins {
    /// `ld.space.ty d, [a]`.
    pub(crate) fn ld(space: Space, ty: Ty, d: &Reg, a: impl Into<Addr>) -> Ins {
        Ins::new(format!("ld.{space}.{ty}"), &[d, &addr(a)])
    }

    /// `st.space.ty [a], v`.
    pub(crate) fn st(space: Space, ty: Ty, a: impl Into<Addr>, v: impl Into<Src>) -> Ins {
        Ins::new(format!("st.{space}.{ty}"), &[&addr(a), &src(v)])
    }
}
