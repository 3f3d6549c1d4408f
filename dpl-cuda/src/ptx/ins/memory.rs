//! Loads and stores.

use super::{Ins, Src, addr, src};
use crate::ptx::{Addr, Reg, Ty};

spelled! {
    /// The state space of a memory access, with its ordering and scope where it has one.
    pub(crate) enum Space {
        /// `.global`.
        Global = "global",
        /// `.shared`.
        Shared = "shared",
        /// `.local` (per thread).
        Local = "local",
        /// `.param` (a kernel parameter).
        Param = "param",
        /// `.const` (a module-scope table).
        Const = "const",
        /// `.volatile.global`: not cached in the thread, seen by other blocks.
        VolatileGlobal = "volatile.global",
        /// `.relaxed.gpu.global`: coherent at the device scope.
        RelaxedGpuGlobal = "relaxed.gpu.global",
        /// `.acquire.gpu.global`: later accesses see what came before the release it reads.
        AcquireGpuGlobal = "acquire.gpu.global",
        /// `.release.gpu.global`: earlier accesses are seen before this one.
        ReleaseGpuGlobal = "release.gpu.global",
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
