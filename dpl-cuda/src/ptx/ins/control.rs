//! Branches (a guard makes them conditional: [`Ins::when`], [`Ins::unless`]).

use super::Ins;
use crate::ptx::Label;

impl Ins {
    /// `bra l`.
    pub(crate) fn bra(l: &Label) -> Ins {
        Ins::new("bra".into(), &[l])
    }

    /// `bra.uni l`: a branch every thread of the warp takes together.
    pub(crate) fn bra_uni(l: &Label) -> Ins {
        Ins::new("bra.uni".into(), &[l])
    }
}
