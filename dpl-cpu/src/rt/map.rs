//! `map`: every task writes its chunk of the uninitialised output once.

use super::par;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// `[f(0), f(1), ..., f(len - 1)]`.
pub fn map<T, F>(len: usize, f: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let mut out: Vec<T> = Vec::with_capacity(len);
    let spare = &mut out.spare_capacity_mut()[..len];
    if len < super::GRAIN {
        fill(spare, 0, &f);
    } else {
        let chunk = par::chunk_len(len, super::GRAIN / 4);
        spare
            .par_chunks_mut(chunk)
            .with_max_len(1)
            .enumerate()
            .for_each(|(c, part)| fill(part, c * chunk, &f));
    }
    // SAFETY: `fill` wrote every one of the first `len` slots (it returned normally; a
    // panic in `f` unwinds past this point and the Vec is dropped with length 0, leaking
    // the values written so far, which is safe).
    unsafe { out.set_len(len) };
    out
}

/// `out[j] = f(base + j)` for every slot of `out`.
///
/// Never inlined, on purpose: as a function of its own, `out` is a `noalias` parameter, so
/// LLVM knows that the stores cannot change the slices that `f` captured and hoists their
/// loads out of the loop, which is what lets the loop vectorize. Inlined into rayon's
/// closures, that knowledge was lost and the loop ran scalar (measured 2-4x slower).
#[inline(never)]
pub(crate) fn fill<T, F>(out: &mut [MaybeUninit<T>], base: usize, f: &F)
where
    F: Fn(usize) -> T,
{
    for (j, slot) in out.iter_mut().enumerate() {
        slot.write(f(base + j));
    }
}
