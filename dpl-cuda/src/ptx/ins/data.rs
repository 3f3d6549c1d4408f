//! Data movement and conversions: `mov` (also of a 64-bit register's two halves), `cvt`
//! with its rounding modes, `cvta`.

use super::{Ins, Src, src};
use crate::ptx::{Reg, Ty};

spelled! {
    /// The rounding of a `cvt` that rounds.
    pub(crate) enum Rnd {
        /// `.rn`: to the nearest, ties to even (to a float).
        Rn = "rn",
        /// `.rz`: towards zero (to a float).
        Rz = "rz",
        /// `.rni`: to the nearest integer, ties to even.
        Rni = "rni",
        /// `.rzi`: to the integer towards zero.
        Rzi = "rzi",
        /// `.rmi`: to the integer towards minus infinity.
        Rmi = "rmi",
        /// `.rpi`: to the integer towards plus infinity.
        Rpi = "rpi",
        /// `.rzi.sat`: towards zero, saturated to the destination's range.
        RziSat = "rzi.sat",
    }
}

impl Ins {
    /// `mov.ty d, a`.
    pub(crate) fn mov(ty: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::new(format!("mov.{ty}"), &[d, &src(a)])
    }

    /// `mov.b64 {lo, hi}, a`: the two 32-bit halves of a 64-bit register.
    pub(crate) fn split64(lo: &Reg, hi: &Reg, a: &Reg) -> Ins {
        Ins::new("mov.b64".into(), &[&format!("{{{lo}, {hi}}}"), a])
    }

    /// `mov.b64 d, {lo, hi}`: a 64-bit register from its two 32-bit halves.
    pub(crate) fn join64(d: &Reg, lo: &Reg, hi: &Reg) -> Ins {
        Ins::new("mov.b64".into(), &[d, &format!("{{{lo}, {hi}}}")])
    }

    /// `cvt.to.from d, a`: an exact conversion (integers widened or narrowed, `f32` to
    /// `f64`).
    pub(crate) fn cvt(to: Ty, from: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::new(format!("cvt.{to}.{from}"), &[d, &src(a)])
    }

    /// `cvt.rnd.to.from d, a`: a conversion that rounds.
    pub(crate) fn cvt_rnd(rnd: Rnd, to: Ty, from: Ty, d: &Reg, a: impl Into<Src>) -> Ins {
        Ins::new(format!("cvt.{rnd}.{to}.{from}"), &[d, &src(a)])
    }

    /// `cvta.to.global.u64 d, a`: a generic address to a global one.
    pub(crate) fn cvta_to_global(d: &Reg, a: &Reg) -> Ins {
        Ins::new("cvta.to.global.u64".into(), &[d, a])
    }
}
