//! Block barriers, memory fences and sleeping.

use super::Ins;
use crate::ptx::Reg;

impl Ins {
    /// `bar.sync 0`: the threads of the block wait for each other.
    pub(crate) fn bar_sync() -> Ins {
        Ins::new("bar.sync".into(), &[&0])
    }

    /// `bar.red.or.pred d, 0, p`: a block barrier giving every thread whether `p` holds in
    /// some thread.
    pub(crate) fn bar_red_or(d: &Reg, p: &Reg) -> Ins {
        Ins::new("bar.red.or.pred".into(), &[d, &0, p])
    }

    /// `membar.gl`: the thread's earlier memory accesses are seen by the device before its
    /// later ones.
    pub(crate) fn membar_gl() -> Ins {
        Ins::new("membar.gl".into(), &[])
    }

    /// `nanosleep.u32 ns`: the thread sleeps about `ns` nanoseconds.
    pub(crate) fn nanosleep(ns: u32) -> Ins {
        Ins::new("nanosleep.u32".into(), &[&ns])
    }
}
