//! The order in which a reduction combines its elements: one fixed tree per length, the
//! same on every place, whatever the number of threads or the GPU (scans: [`scan`]).
//!
//! Floating-point addition is not associative, so a sum's bits depend on the order of its
//! additions. dpl fixes that order as a function of the length `n` alone, and every place
//! (the interpreter, `Place::Seq`, `Place::Cpu` with any pool, the simulator and the GPU)
//! follows it, so a reduction gives the same bits everywhere:
//!
//! * **Lanes** ([`lanes`]): over `len` values `g(0) .. g(len - 1)`, lane `j` (of
//!   [`LANES`] = 32) folds `g(j), g(j + 32), g(j + 64), ...` left to right; the lanes
//!   present (the first `min(len, 32)`) are then combined by the *lane tree* of halves:
//!   for `s` in 16, 8, 4, 2, 1, lane `j < s` becomes `op(lane j, lane j + s)` when lane
//!   `j + s` is present; the result is lane 0. This is a warp's pattern on the GPU (lane
//!   `j` loads element `j` of each 32-element row, coalesced; the tree is `shfl.sync.down`
//!   by 16, 8, 4, 2, 1) and the CPU's 32-accumulator vector loop (each step adds the upper
//!   half of the lanes' registers to the lower half).
//! * **Tiles** ([`reduce`]): up to [`TILE`] = 2048 elements are one tile, reduced by
//!   [`lanes`]. A longer index space is cut into tiles of 2048 consecutive elements (the
//!   last may be shorter); the tiles' results, in order, are reduced by [`lanes`] again (a
//!   second level over all of them: lane `j` folds the partials of tiles `j, j + 32, ...`).
//!   Tiles are the unit of parallel work: threads and GPU warps take whole tiles.
//! * **Start value**: `op(init, result)`; with no element, `init` alone.
//!
//! The order also makes a long sum accurate: each addition adds values of similar
//! magnitude (32 lanes of 64 elements, then a tree), not a running total to one element.
//! The order interleaves the elements (lane 0 folds elements 0, 32, 64, ...), so it
//! needs `reduce`'s contract: an operator that is associative and commutative. Within
//! that, `op(a, b)` always gets the operand from lower indices first. Integer reductions
//! follow the same order (their results do not depend on it).
//!
//! [`lanes`], [`tile`], [`tile_pair`], [`fold_partials`] and [`reduce`] are the fast
//! generic kernels the CPU run times call (the lanes in registers, whole vectors at a
//! time); [`try_reduce`] is the same order over fallible values for the interpreter.

use std::mem::MaybeUninit;

pub mod scan;

/// Lanes of the lane pattern: a GPU warp.
pub const LANES: usize = 32;

/// Elements of a tile: 64 per lane.
pub const TILE: usize = 2048;

/// The number of tiles of an index space of `n` elements.
pub const fn tiles(n: usize) -> usize {
    n.div_ceil(TILE)
}

/// The lane tree over the first `c` lanes of `acc` (`1 <= c <= LANES`): for `s` = 16, 8,
/// 4, 2, 1, lane `j < s` becomes `op(lane j, lane j + s)` where lane `j + s < c`. Lanes
/// from `c` on are not read.
#[inline]
pub fn tree<T: Copy, Op: Fn(T, T) -> T>(acc: &mut [T], c: usize, op: &Op) -> T {
    let mut s = LANES / 2;
    while s > 0 {
        for j in 0..s.min(c.saturating_sub(s)) {
            acc[j] = op(acc[j], acc[j + s]);
        }
        s /= 2;
    }
    acc[0]
}

/// `g(start) .. g(start + len - 1)` reduced in the lane order (module docs); `len >= 1`.
#[inline(always)]
pub fn lanes<T, G, Op>(start: usize, len: usize, g: &G, op: &Op) -> T
where
    T: Copy,
    G: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    debug_assert!(len >= 1);
    if len <= SHORT {
        return short(start, len, g, op);
    }
    if len < LANES {
        // One element per lane: the tree alone.
        return match len <= 2 * SHORT {
            true => folded::<SHORT, T, G, Op>(start, len, g, op),
            false => folded::<{ 2 * SHORT }, T, G, Op>(start, len, g, op),
        };
    }
    // The lanes as two halves of 16: loops of 16 are unrolled whole, so every index into
    // the lanes is a constant, the lanes stay in registers and the loop vectorizes (a loop
    // of 32 is not unrolled and keeps them in memory).
    let mut lo: [T; HALF] = std::array::from_fn(|j| g(start + j));
    let mut hi: [T; HALF] = std::array::from_fn(|j| g(start + HALF + j));
    let (end, full_end) = (start + len, start + len / LANES * LANES);
    let mut k = LANES;
    while k < len / LANES * LANES {
        for j in 0..HALF {
            lo[j] = op(lo[j], g(start + k + j));
            hi[j] = op(hi[j], g(start + k + HALF + j));
        }
        k += LANES;
    }
    if full_end < end {
        (lo, hi) = tail(lo, hi, full_end, end, g, op);
    }
    tree32_out(lo, hi, op)
}

/// Lengths up to this are reduced by straight-line code per length ([`short`]): the rows
/// of sparse matrices and other short inner sequences, where the loops of the general
/// tree (trip counts that depend on the length) cost more than the additions.
const SHORT: usize = 8;

/// [`lanes`] for `1 <= len <= SHORT`: the same tree, with the length a constant in each
/// arm so that its loops unroll into the few operations that length needs.
#[inline(always)]
fn short<T, G, Op>(start: usize, len: usize, g: &G, op: &Op) -> T
where
    T: Copy,
    G: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    match len {
        1 => g(start),
        2 => fixed::<2, T, G, Op>(start, g, op),
        3 => fixed::<3, T, G, Op>(start, g, op),
        4 => fixed::<4, T, G, Op>(start, g, op),
        5 => fixed::<5, T, G, Op>(start, g, op),
        6 => fixed::<6, T, G, Op>(start, g, op),
        7 => fixed::<7, T, G, Op>(start, g, op),
        _ => fixed::<8, T, G, Op>(start, g, op),
    }
}

/// The lane tree over `g(start) .. g(start + N - 1)`, one element per lane (`N <= SHORT`):
/// the loop of [`tree`] on an array of constant length (calling `tree` on it measured 6%
/// more instructions on short sparse rows: the slice hides the constant from the bounds
/// checks).
#[inline(always)]
fn fixed<const N: usize, T, G, Op>(start: usize, g: &G, op: &Op) -> T
where
    T: Copy,
    G: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let first = g(start);
    let mut buf = [first; N];
    for (j, slot) in buf.iter_mut().enumerate().skip(1) {
        *slot = g(start + j);
    }
    let mut s = LANES / 2;
    while s > 0 {
        for j in 0..s.min(N.saturating_sub(s)) {
            buf[j] = op(buf[j], buf[j + s]);
        }
        s /= 2;
    }
    buf[0]
}

/// The lane tree over `g(start) .. g(start + len - 1)`, one element per lane, for
/// `N < len <= 2 * N` (`N` = 8 or 16, `len < LANES`): the tree's steps above `N` combine
/// lane `j` with lane `j + N` for the lanes `j + N` present (one loop over the extra
/// elements), and the `N` lanes, all present, then meet in a tree of constant shape (no
/// loop whose trip count depends on the length: the rows of 9 to 31 entries of sparse
/// matrices).
#[inline(always)]
fn folded<const N: usize, T, G, Op>(start: usize, len: usize, g: &G, op: &Op) -> T
where
    T: Copy,
    G: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    debug_assert!(N < len && len <= 2 * N && len < LANES);
    let mut a: [T; N] = std::array::from_fn(|j| g(start + j));
    for (j, lane) in a.iter_mut().enumerate().take(len - N) {
        *lane = op(*lane, g(start + N + j));
    }
    let mut s = N / 2;
    while s > 0 {
        for j in 0..s {
            a[j] = op(a[j], a[j + s]);
        }
        s /= 2;
    }
    a[0]
}

/// [`tree32`] out of line: inlined into [`lanes`], it leads LLVM to vectorize the main
/// loop two lanes wide instead of four.
#[inline(never)]
fn tree32_out<T: Copy, Op: Fn(T, T) -> T>(lo: [T; HALF], hi: [T; HALF], op: &Op) -> T {
    tree32(lo, hi, op)
}

/// Half the lanes.
const HALF: usize = LANES / 2;

/// The last, partial row of lanes: `g(from + j)` into lane `j` for `from + j < end`. Out of
/// line: its lane index is not a constant, and inlined it would keep the main loop's
/// lanes in memory instead of registers.
#[inline(never)]
fn tail<T, G, Op>(
    mut lo: [T; HALF],
    mut hi: [T; HALF],
    from: usize,
    end: usize,
    g: &G,
    op: &Op,
) -> ([T; HALF], [T; HALF])
where
    T: Copy,
    G: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    for (a, i) in lo.iter_mut().chain(hi.iter_mut()).zip(from..end) {
        *a = op(*a, g(i));
    }
    (lo, hi)
}

/// [`tree`] of 32 present lanes (`lo`: lanes 0-15, `hi`: 16-31): each step combines the
/// lower half of the lanes with the upper half, whole registers at a time.
#[inline(always)]
fn tree32<T: Copy, Op: Fn(T, T) -> T>(lo: [T; HALF], hi: [T; HALF], op: &Op) -> T {
    let a: [T; 16] = std::array::from_fn(|j| op(lo[j], hi[j]));
    let a: [T; 8] = std::array::from_fn(|j| op(a[j], a[j + 8]));
    let a: [T; 4] = std::array::from_fn(|j| op(a[j], a[j + 4]));
    let a: [T; 2] = std::array::from_fn(|j| op(a[j], a[j + 2]));
    op(a[0], a[1])
}

/// Index spaces of at least this many bytes (beyond the caches) reduce two tiles in lock
/// step ([`tile_pair`]: two memory streams); smaller ones one tile at a time, which in cache
/// is 10-15% faster (half the accumulators, no spills; measured for f32 at 2^12-2^20).
pub const PAIRS_MIN_BYTES: usize = 8 << 20;

/// Whether an index space of `n` elements of `T` reduces tiles in pairs.
#[inline]
pub const fn paired<T>(n: usize) -> bool {
    n.saturating_mul(size_of::<T>()) >= PAIRS_MIN_BYTES
}

/// The results of the full tiles `a` and `b`, computed in lock step: twice the
/// independent accumulators of one tile and two memory streams (the same bits as two
/// calls of [`tile`]).
#[inline(always)]
pub fn tile_pair<T, F, Op>(a: usize, b: usize, f: &F, op: &Op) -> (T, T)
where
    T: Copy,
    F: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let (a, b) = (a * TILE, b * TILE);
    let (mut la, mut ha) = ([f(a); HALF], [f(a + HALF); HALF]);
    let (mut lb, mut hb) = ([f(b); HALF], [f(b + HALF); HALF]);
    for j in 1..HALF {
        la[j] = f(a + j);
        ha[j] = f(a + HALF + j);
        lb[j] = f(b + j);
        hb[j] = f(b + HALF + j);
    }
    let mut k = LANES;
    while k < TILE {
        for j in 0..HALF {
            la[j] = op(la[j], f(a + k + j));
            ha[j] = op(ha[j], f(a + k + HALF + j));
            lb[j] = op(lb[j], f(b + k + j));
            hb[j] = op(hb[j], f(b + k + HALF + j));
        }
        k += LANES;
    }
    (tree32(la, ha, op), tree32(lb, hb, op))
}

/// The result of tile `t` of an index space of `n` elements.
#[inline(always)]
pub fn tile<T, F, Op>(n: usize, t: usize, f: &F, op: &Op) -> T
where
    T: Copy,
    F: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let start = t * TILE;
    lanes(start, TILE.min(n - start), f, op)
}

/// The second level: the tiles' results `partials` (in order, not empty) reduced in the
/// lane order.
#[inline]
pub fn fold_partials<T: Copy, Op: Fn(T, T) -> T>(partials: &[T], op: &Op) -> T {
    lanes(0, partials.len(), &|k| partials[k], op)
}

/// `f(0) .. f(n - 1)` reduced in dpl's order, sequentially (`None` when `n == 0`): the
/// reference every place follows, and `Place::Seq`'s implementation. The tiles' results
/// go straight into the second level's lanes: no allocation.
#[inline]
pub fn reduce<T, F, Op>(n: usize, f: &F, op: &Op) -> Option<T>
where
    T: Copy,
    F: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    match tiles(n) {
        0 => None,
        1 => Some(lanes(0, n, f, op)),
        m => {
            // The second level's lanes, filled as the tiles' results come, in order.
            let mut acc = [MaybeUninit::<T>::uninit(); LANES];
            let mut put = |t: usize, p: T| {
                let j = t % LANES;
                if t < LANES {
                    acc[j].write(p);
                } else {
                    // SAFETY: lane `j` was written by tile `j < t`.
                    let a = unsafe { acc[j].assume_init() };
                    acc[j].write(op(a, p));
                }
            };
            let full = if paired::<T>(n) { n / TILE } else { 0 };
            let mut t = 0;
            while t + 1 < full {
                let (x, y) = tile_pair(t, t + 1, f, op);
                put(t, x);
                put(t + 1, y);
                t += 2;
            }
            for t in t..m {
                put(t, tile(n, t, f, op));
            }
            let c = m.min(LANES);
            // SAFETY: the first `c` lanes were written (tiles `0..c`).
            let mut acc: [T; LANES] = std::array::from_fn(|j| unsafe {
                if j < c {
                    acc[j].assume_init()
                } else {
                    acc[0].assume_init()
                }
            });
            Some(tree(&mut acc, c, op))
        }
    }
}

/// [`reduce`] over values that may fail to be computed or combined (the interpreter's
/// values): `f(i)` is called once per element, in index order, before any combination;
/// the first error stops the reduction.
pub fn try_reduce<T, E>(
    n: usize,
    f: &mut dyn FnMut(usize) -> Result<T, E>,
    op: &mut dyn FnMut(T, T) -> Result<T, E>,
) -> Result<Option<T>, E>
where
    T: Clone,
{
    let xs: Vec<T> = (0..n).map(&mut *f).collect::<Result<_, E>>()?;
    if xs.is_empty() {
        return Ok(None);
    }
    let mut partials = Vec::with_capacity(tiles(n));
    for chunk in xs.chunks(TILE) {
        partials.push(try_lanes(chunk, op)?);
    }
    try_lanes(&partials, op).map(Some)
}

/// [`lanes`] over fallible combinations of the values `xs` (not empty).
fn try_lanes<T: Clone, E>(xs: &[T], op: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<T, E> {
    let mut acc: Vec<T> = xs.iter().take(LANES).cloned().collect();
    for (i, x) in xs.iter().enumerate().skip(LANES) {
        let j = i % LANES;
        acc[j] = op(acc[j].clone(), x.clone())?;
    }
    let c = acc.len();
    let mut s = LANES / 2;
    while s > 0 {
        for j in 0..s.min(c.saturating_sub(s)) {
            acc[j] = op(acc[j].clone(), acc[j + s].clone())?;
        }
        s /= 2;
    }
    Ok(acc.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A combination that records its tree: the order is visible in the result.
    fn show(n: usize) -> String {
        let op = |a: u64, b: u64| a.wrapping_mul(1_000_003).wrapping_add(b ^ 0x9e37);
        let fast = reduce(n, &|i| i as u64 * 7 + 1, &op);
        let slow =
            try_reduce::<u64, ()>(n, &mut |i| Ok(i as u64 * 7 + 1), &mut |a, b| Ok(op(a, b)))
                .unwrap();
        assert_eq!(fast, slow, "n = {n}");
        format!("{fast:?}")
    }

    /// The fast sequential form and the fallible one follow the same tree at every length
    /// class: every length up to two warps (straight-line, folded, lanes), one tile,
    /// several tiles, more than 32 tiles.
    #[test]
    fn forms_agree() {
        for n in (0..=65).chain([100, 2047, 2048, 2049, 4096, 5000]).chain([
            TILE * 32 - 1,
            TILE * 32,
            TILE * 32 + 1,
            TILE * 70 + 17,
        ]) {
            show(n);
        }
        // Beyond the caches, tiles in pairs: an odd and an even number of full tiles.
        for n in [
            PAIRS_MIN_BYTES / 8 + TILE * 3 + 5,
            PAIRS_MIN_BYTES / 8 + TILE * 2,
        ] {
            assert!(paired::<u64>(n));
            show(n);
        }
    }

    /// The tree of a few elements, written out: lanes 0..5 hold one element each.
    #[test]
    fn small_tree_by_hand() {
        let op = |a: String, b: String| format!("({a}{b})");
        let f = |i: usize| char::from(b'a' + i as u8).to_string();
        let r = try_reduce::<String, ()>(5, &mut |i| Ok(f(i)), &mut |a, b| Ok(op(a, b)));
        // s = 4: lane 0 = (ae); s = 2: lane 0 = ((ae)c), lane 1 = (bd); s = 1: both.
        assert_eq!(r.unwrap().unwrap(), "(((ae)c)(bd))");
        let r =
            try_reduce::<String, ()>(34, &mut |i| Ok(format!("{i},")), &mut |a, b| Ok(op(a, b)));
        // Lanes 0 and 1 hold two elements (0, 32 and 1, 33); the tree starts at s = 16.
        let r = r.unwrap().unwrap();
        assert!(
            r.starts_with("((((((0,32,)16,)(8,24,))((4,20,)(12,28,)))"),
            "{r}"
        );
    }

    /// Sums in this order are as accurate as pairwise summation: a million ones and
    /// tenths.
    #[test]
    fn accurate_sums() {
        let n = 1 << 20;
        let s = reduce(n, &|_| 0.1f32, &|a, b| a + b).unwrap();
        let exact = 0.1f64 * n as f64;
        assert!(((s as f64 - exact) / exact).abs() < 1e-6, "{s}");
    }
}
