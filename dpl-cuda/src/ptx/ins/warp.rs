//! Warp-level instructions over all 32 lanes (member mask `0xffffffff`): shuffles, votes,
//! `match`, the warp barrier.

use super::{Ins, Src, src};
use crate::ptx::Reg;

spelled! {
    /// The lane a shuffle reads from.
    pub(crate) enum Shfl {
        /// `.up`: `d` lanes below.
        Up = "up",
        /// `.down`: `d` lanes above.
        Down = "down",
        /// `.bfly`: the lane `lane ^ d`.
        Bfly = "bfly",
        /// `.idx`: lane `d`.
        Idx = "idx",
    }
}

/// The member mask of every warp-level instruction: the whole warp.
const ALL: &str = "0xffffffff";

impl Ins {
    /// `shfl.sync.mode.b32 d, a, lane, clamp, mask`: the 32-bit `a` of another lane.
    pub(crate) fn shfl(
        mode: Shfl,
        d: &Reg,
        a: &Reg,
        lane: impl Into<Src>,
        clamp: impl Into<Src>,
    ) -> Ins {
        Ins::new(
            format!("shfl.sync.{mode}.b32"),
            &[d, a, &src(lane), &src(clamp), &ALL],
        )
    }

    /// `vote.sync.ballot.b32 d, p, mask`: bit `l` of `d` is `p` of lane `l`.
    pub(crate) fn vote_ballot(d: &Reg, p: &Reg) -> Ins {
        Ins::new("vote.sync.ballot.b32".into(), &[d, p, &ALL])
    }

    /// `vote.sync.any.pred d, p, mask`: `p` holds in some lane.
    pub(crate) fn vote_any(d: &Reg, p: &Reg) -> Ins {
        Ins::new("vote.sync.any.pred".into(), &[d, p, &ALL])
    }

    /// `match.any.sync.b32 d, a, mask`: the lanes whose `a` equals this lane's.
    pub(crate) fn match_any(d: &Reg, a: &Reg) -> Ins {
        Ins::new("match.any.sync.b32".into(), &[d, a, &ALL])
    }

    /// `bar.warp.sync mask`: the lanes of the warp wait for each other.
    pub(crate) fn bar_warp_sync() -> Ins {
        Ins::new("bar.warp.sync".into(), &[&ALL])
    }
}
