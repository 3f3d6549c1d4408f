//! The order in which a scan combines its elements: one fixed pattern per length, the same
//! on every place, so a float `scan` or `exclusive_scan` gives the same bits everywhere.
//!
//! An inclusive scan of `x_0 .. x_{n-1}` by `op`, with an optional start value `v`:
//!
//! * **Tiles and lanes**: the index space is cut into tiles of [`TILE`] = 2048 consecutive
//!   elements (the last may be shorter). In a tile, lane `j` (of [`LANES`] = 32) holds the
//!   [`RUN`] = 64 consecutive elements from `64 j` (a warp's lanes holding their items
//!   contiguously, as CUB's blocked arrangement; the lanes present are the first
//!   `c = ceil(len / 64)`).
//! * **Runs**: each lane folds its run left to right: `L_i = x_i` at the run's first element,
//!   `L_i = op(L_{i-1}, x_i)` after it. The lane's total `t_j` is `L` at the run's end.
//! * **Across the lanes**: a Kogge-Stone scan of the totals of the lanes present: `s = t`;
//!   for `d` in 1, 2, 4, 8, 16, every lane `j >= d` becomes `op(s[j - d], s[j])` (all reading
//!   the values from before the step: a warp's `shfl.up` by `d`). The tile's total is
//!   `T_b = s[c - 1]`.
//! * **Across the tiles**: tile 0's carry is `C_0 = v`. With `m >= 2` tiles, the totals
//!   `T_0 .. T_{m-1}` are scanned by this same definition with the same start value
//!   (recursively; a scan of one tile has no level above it) and tile `b`'s carry `C_b` is
//!   element `b - 1` of that scan. The whole scan of the totals is computed, its last element
//!   too, so every place applies `op` to the same operands.
//! * **Results**: `y_i = op(op(C_b, s[j - 1]), L_i)`, leaving out the operands that do not
//!   exist (no carry without a start value in tile 0, no `s[-1]` in lane 0).
//!
//! An exclusive scan with start value `v` is `v` followed by the inclusive scan with start
//! value `v` of all elements but the last (which is computed for its errors, not combined).
//! The result at `i` depends on `x_0 .. x_i` only, and `op` always gets the operand from
//! lower indices first, so an associative operator is all a scan needs. Integer scans follow
//! the same order (their results do not depend on it).
//!
//! [`scan_into`] is `Place::Seq`'s scan and the reference; the CPU run time cuts the same
//! pattern across threads with [`runs`], [`fixup`] and [`Carries`]; [`try_scan`] follows
//! [`scan_into`]'s steps over fallible values for the interpreter.

use super::{LANES, TILE};
use std::mem::MaybeUninit;

/// Elements of a lane's run: a tile is [`LANES`] runs.
pub const RUN: usize = TILE / LANES;

/// `op(a, b)`, or `b` without `a`.
#[inline(always)]
fn combine<T: Copy>(a: Option<T>, b: T, op: &impl Fn(T, T) -> T) -> T {
    match a {
        Some(a) => op(a, b),
        None => b,
    }
}

/// The Kogge-Stone scan of the lane totals `s` (the lanes present, at most [`LANES`]) in
/// place: for `d` = 1, 2, 4, 8, 16, lane `j >= d` becomes `op(s[j - d], s[j])`.
#[inline]
pub fn lane_scan<T: Copy, Op: Fn(T, T) -> T>(s: &mut [T], op: &Op) {
    let mut d = 1;
    while d < LANES {
        for j in (d..s.len()).rev() {
            s[j] = op(s[j - d], s[j]);
        }
        d *= 2;
    }
}

/// One tile after its runs: the scanned lane totals (`s[..c]`, the rest unused) and the
/// number of lanes present.
#[derive(Clone, Copy, Debug)]
pub struct Lanes<T> {
    /// The lane totals after [`lane_scan`]; entries from `c` on are padding.
    pub s: [T; LANES],
    /// The lanes present.
    pub c: usize,
}

impl<T: Copy> Lanes<T> {
    /// The tile's total `s[c - 1]`.
    pub fn total(&self) -> T {
        self.s[self.c - 1]
    }
}

/// The runs of one tile: `out[k] = L` of element `start + k` (`out.len()` elements, at most
/// a tile, at least one), then the scan across the lanes.
#[inline(always)]
pub fn runs<T, H, Op>(out: &mut [MaybeUninit<T>], start: usize, h: &H, op: &Op) -> Lanes<T>
where
    T: Copy,
    H: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let len = out.len();
    debug_assert!((1..=TILE).contains(&len));
    let mut s = if len == TILE {
        let tile: &mut [MaybeUninit<T>; TILE] = out.try_into().expect("a full tile");
        full_runs(tile, start, h, op)
    } else {
        {
            let first = h(start);
            let mut s = [first; LANES];
            for (j, run) in out.chunks_mut(RUN).enumerate() {
                let base = start + j * RUN;
                let mut acc = if j == 0 { first } else { h(base) };
                run[0].write(acc);
                for (k, slot) in run.iter_mut().enumerate().skip(1) {
                    acc = op(acc, h(base + k));
                    slot.write(acc);
                }
                s[j] = acc;
            }
            s
        }
    };
    let c = len.div_ceil(RUN);
    lane_scan(&mut s[..c], op);
    Lanes { s, c }
}

/// Lanes whose runs advance together in [`full_runs`]: enough independent chains of `op`
/// to hide its latency, few enough to stay in registers.
const GROUP: usize = 8;

/// The runs of a full tile, [`GROUP`] lanes at a time advancing together (independent
/// chains of `op`, in registers); returns the lane totals.
#[inline(always)]
fn full_runs<T, H, Op>(out: &mut [MaybeUninit<T>; TILE], start: usize, h: &H, op: &Op) -> [T; LANES]
where
    T: Copy,
    H: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let mut totals = [MaybeUninit::<T>::uninit(); LANES];
    for g in (0..LANES).step_by(GROUP) {
        let mut acc: [T; GROUP] = std::array::from_fn(|j| h(start + (g + j) * RUN));
        for j in 0..GROUP {
            out[(g + j) * RUN].write(acc[j]);
        }
        for k in 1..RUN {
            for j in 0..GROUP {
                acc[j] = op(acc[j], h(start + (g + j) * RUN + k));
                out[(g + j) * RUN + k].write(acc[j]);
            }
        }
        for j in 0..GROUP {
            totals[g + j].write(acc[j]);
        }
    }
    // SAFETY: every group wrote its lanes' totals.
    totals.map(|t| unsafe { t.assume_init() })
}

/// The results of one tile from its runs `out` (as [`runs`] left them) and its carry:
/// lane `j`'s elements become `op(op(carry, s[j - 1]), L)`.
#[inline(always)]
pub fn fixup<T: Copy, Op: Fn(T, T) -> T>(out: &mut [T], carry: Option<T>, l: &Lanes<T>, op: &Op) {
    for (j, run) in out.chunks_mut(RUN).enumerate() {
        let before = if j == 0 { None } else { Some(l.s[j - 1]) };
        let k = match (carry, before) {
            (None, None) => continue,
            (Some(c), None) => c,
            (c, Some(e)) => combine(c, e, op),
        };
        for v in run {
            *v = op(k, *v);
        }
    }
}

/// The tiles' carries, computed as the tiles' totals come in order: the scan of the totals
/// (the level above the elements, and the levels above it) kept as it grows.
#[derive(Debug)]
pub struct Carries<T> {
    /// The carry of the next tile.
    next: Option<T>,
    /// The scan of the tiles' totals, when there are at least two tiles.
    level: Option<Level<T>>,
}

impl<T: Copy> Carries<T> {
    /// The carries of the `tiles` tiles of a scan with start value `init`.
    pub fn new(init: Option<T>, tiles: usize) -> Self {
        Carries {
            next: init,
            level: (tiles >= 2).then(|| Level::new(init)),
        }
    }

    /// The carry of the next tile (the first: the start value).
    pub fn carry(&self) -> Option<T> {
        self.next
    }

    /// Takes the next tile's total (in tile order): the carry moves to the tile after it.
    pub fn push(&mut self, total: T, op: &impl Fn(T, T) -> T) {
        if let Some(level) = &mut self.level {
            let Ok(y) = level.push::<std::convert::Infallible>(total, &mut |a, b| Ok(op(a, b)));
            self.next = Some(y);
        }
    }

    /// After the last tile's total: completes the levels above (their last tiles' totals),
    /// so every place applies the same operations.
    pub fn finish(self, op: &impl Fn(T, T) -> T) {
        if let Some(level) = self.level {
            let Ok(()) = level.finish::<std::convert::Infallible>(&mut |a, b| Ok(op(a, b)));
        }
    }
}

/// One level of the scan over tiles' totals, fed one value at a time: the definition
/// applied incrementally (the value at `i` is known as soon as `x_i` is).
#[derive(Debug)]
struct Level<T> {
    /// The start value.
    init: Option<T>,
    /// Values taken so far.
    count: usize,
    /// The current tile's carry.
    carry: Option<T>,
    /// The totals of the current tile's complete lanes.
    totals: Vec<T>,
    /// The current lane's `op(carry, s[j - 1])`, and its run so far.
    lane: Option<(Option<T>, T)>,
    /// The level above, from this level's second tile on.
    upper: Option<Box<Level<T>>>,
}

impl<T: Clone> Level<T> {
    /// An empty level of a scan with start value `init`.
    fn new(init: Option<T>) -> Self {
        Level {
            carry: init.clone(),
            init,
            count: 0,
            totals: Vec::with_capacity(LANES),
            lane: None,
            upper: None,
        }
    }

    /// The scanned totals of the current tile's complete lanes.
    fn scanned<E>(&self, op: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<Vec<T>, E> {
        let mut s = self.totals.clone();
        try_lane_scan(&mut s, op)?;
        Ok(s)
    }

    /// Takes the next value; returns the scan's element at its index.
    fn push<E>(&mut self, x: T, op: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<T, E> {
        let i = self.count;
        if i > 0 && i.is_multiple_of(TILE) {
            // A new tile: the last one's total goes up a level and gives this one's carry.
            let total = self.scanned(op)?.pop().expect("a complete tile has lanes");
            let upper = self
                .upper
                .get_or_insert_with(|| Box::new(Level::new(self.init.clone())));
            self.carry = Some(upper.push(total, op)?);
            self.totals.clear();
        }
        let (k, run) = if i.is_multiple_of(RUN) {
            let before = self.scanned(op)?.pop();
            let k = match (self.carry.clone(), before) {
                (c, None) => c,
                (None, e) => e,
                (Some(c), Some(e)) => Some(op(c, e)?),
            };
            (k, x)
        } else {
            let (k, run) = self.lane.take().expect("a lane in progress");
            (k, op(run, x)?)
        };
        self.count += 1;
        if self.count.is_multiple_of(RUN) {
            self.totals.push(run.clone());
        }
        let y = match &k {
            Some(k) => op(k.clone(), run.clone())?,
            None => run.clone(),
        };
        self.lane = Some((k, run));
        Ok(y)
    }

    /// After the last value: with two tiles or more, the last tile's total goes up a
    /// level, and that level finishes in turn.
    fn finish<E>(mut self, op: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<(), E> {
        if let Some(mut upper) = self.upper.take() {
            if !self.count.is_multiple_of(RUN) {
                let (_, run) = self.lane.take().expect("a lane in progress");
                self.totals.push(run);
            }
            let total = self.scanned(op)?.pop().expect("the last tile has lanes");
            upper.push(total, op)?;
            upper.finish(op)?;
        }
        Ok(())
    }
}

/// [`lane_scan`] over fallible combinations.
fn try_lane_scan<T: Clone, E>(
    s: &mut [T],
    op: &mut dyn FnMut(T, T) -> Result<T, E>,
) -> Result<(), E> {
    let mut d = 1;
    while d < LANES {
        for j in (d..s.len()).rev() {
            s[j] = op(s[j - d].clone(), s[j].clone())?;
        }
        d *= 2;
    }
    Ok(())
}

/// The inclusive scan of `h(0) .. h(out.len() - 1)` with start value `init`, written into
/// `out`, sequentially: `Place::Seq`'s scan and the reference every place follows. Tile by
/// tile: the runs, the carry, the results.
#[inline]
pub fn scan_into<T, H, Op>(out: &mut [MaybeUninit<T>], init: Option<T>, h: &H, op: &Op)
where
    T: Copy,
    H: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    let mut carries = Carries::new(init, super::tiles(out.len()));
    tiles_into(out, 0, &mut carries, h, op);
    carries.finish(op);
}

/// The results of consecutive tiles, `out` holding the elements from `start` (a multiple
/// of [`TILE`]; `out` whole tiles but for the index space's last), with `carries` at the
/// first of them: tile by tile, the runs, the carry, the results.
#[inline]
pub fn tiles_into<T, H, Op>(
    out: &mut [MaybeUninit<T>],
    start: usize,
    carries: &mut Carries<T>,
    h: &H,
    op: &Op,
) where
    T: Copy,
    H: Fn(usize) -> T,
    Op: Fn(T, T) -> T,
{
    for (b, tile) in out.chunks_mut(TILE).enumerate() {
        let lanes = runs(tile, start + b * TILE, h, op);
        // SAFETY: `runs` wrote every slot of the tile; `MaybeUninit<T>` has `T`'s layout.
        let tile = unsafe { &mut *(tile as *mut [MaybeUninit<T>] as *mut [T]) };
        fixup(tile, carries.carry(), &lanes, op);
        carries.push(lanes.total(), op);
    }
}

/// [`scan_into`] over values that may fail to be combined (the interpreter's values): the
/// same operations in the same sequence; the first error stops the scan.
pub fn try_scan<T: Clone, E>(
    mut xs: Vec<T>,
    init: Option<T>,
    op: &mut dyn FnMut(T, T) -> Result<T, E>,
) -> Result<Vec<T>, E> {
    let m = super::tiles(xs.len());
    let mut level = (m >= 2).then(|| Level::new(init.clone()));
    let mut carry = init;
    for tile in xs.chunks_mut(TILE) {
        let mut s = Vec::with_capacity(LANES);
        for run in tile.chunks_mut(RUN) {
            for k in 1..run.len() {
                run[k] = op(run[k - 1].clone(), run[k].clone())?;
            }
            s.push(run[run.len() - 1].clone());
        }
        try_lane_scan(&mut s, op)?;
        for (j, run) in tile.chunks_mut(RUN).enumerate() {
            let before = j.checked_sub(1).map(|j| s[j].clone());
            let k = match (carry.clone(), before) {
                (c, None) => c,
                (None, e) => e,
                (Some(c), Some(e)) => Some(op(c, e)?),
            };
            if let Some(k) = k {
                for v in run.iter_mut() {
                    *v = op(k.clone(), v.clone())?;
                }
            }
        }
        if let Some(level) = &mut level {
            let total = s.pop().expect("a tile has lanes");
            carry = Some(level.push(total, op)?);
        }
    }
    if let Some(level) = level {
        level.finish(op)?;
    }
    Ok(xs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition written out plainly: recursive, over whole vectors.
    fn reference(xs: &[u64], init: Option<u64>, op: &impl Fn(u64, u64) -> u64) -> Vec<u64> {
        let mut l = xs.to_vec();
        let mut all_s = Vec::new();
        for tile in l.chunks_mut(TILE) {
            let mut s: Vec<u64> = Vec::new();
            for run in tile.chunks_mut(RUN) {
                for k in 1..run.len() {
                    run[k] = op(run[k - 1], run[k]);
                }
                s.push(run[run.len() - 1]);
            }
            for d in [1, 2, 4, 8, 16] {
                let before = s.clone();
                for j in d..s.len() {
                    s[j] = op(before[j - d], before[j]);
                }
            }
            all_s.push(s);
        }
        let totals: Vec<u64> = all_s.iter().map(|s| s[s.len() - 1]).collect();
        let upper = (totals.len() >= 2).then(|| reference(&totals, init, op));
        let mut y = Vec::new();
        for (b, tile) in l.chunks(TILE).enumerate() {
            let carry = if b == 0 {
                init
            } else {
                Some(upper.as_ref().unwrap()[b - 1])
            };
            for (j, run) in tile.chunks(RUN).enumerate() {
                let e = (j > 0).then(|| all_s[b][j - 1]);
                let k = match (carry, e) {
                    (Some(c), Some(e)) => Some(op(c, e)),
                    (c, e) => c.or(e),
                };
                y.extend(run.iter().map(|&v| k.map_or(v, |k| op(k, v))));
            }
        }
        y
    }

    /// A combination that records its bracketing (not associative): the order is visible.
    fn op(a: u64, b: u64) -> u64 {
        a.wrapping_mul(1_000_003).wrapping_add(b ^ 0x9e37)
    }

    fn fast(n: usize, init: Option<u64>) -> Vec<u64> {
        let mut out = vec![MaybeUninit::uninit(); n];
        scan_into(&mut out, init, &|i| i as u64 * 7 + 1, &op);
        out.into_iter()
            .map(|v| unsafe { v.assume_init() })
            .collect()
    }

    /// The sequential form, the fallible one and the plain definition agree at every
    /// length class, with and without a start value, over one, two and three levels.
    #[test]
    fn forms_agree() {
        let lens = [0, 1, 2, 31, 63, 64, 65, 100, 2047, 2048, 2049, 4096, 5000];
        let many = [TILE * 64 - 1, TILE * 64 + 1, TILE * (TILE + 1) + 70];
        for n in lens.into_iter().chain(many) {
            let xs: Vec<u64> = (0..n as u64).map(|i| i * 7 + 1).collect();
            for init in [None, Some(5)] {
                let want = reference(&xs, init, &op);
                assert_eq!(fast(n, init), want, "n = {n}, init = {init:?}");
                let slow = try_scan::<u64, ()>(xs.clone(), init, &mut |a, b| Ok(op(a, b)));
                assert_eq!(slow.unwrap(), want, "n = {n}, init = {init:?}");
            }
        }
    }

    /// A few elements by hand: one lane's run is a left fold.
    #[test]
    fn small_by_hand() {
        let cat = |a: String, b: String| Ok::<_, ()>(format!("({a}{b})"));
        let xs: Vec<String> = (0..3).map(|i| i.to_string()).collect();
        let y = try_scan(xs.clone(), None, &mut |a, b| cat(a, b)).unwrap();
        assert_eq!(y, ["0", "(01)", "((01)2)"]);
        let y = try_scan(xs, Some("v".into()), &mut |a, b| cat(a, b)).unwrap();
        assert_eq!(y, ["(v0)", "(v(01))", "(v((01)2))"]);
        // Lane 1 starts at 64: its elements get lane 0's total in front.
        let xs: Vec<String> = (0..66).map(|i| i.to_string()).collect();
        let y = try_scan(xs, None, &mut |a, b| cat(a, b)).unwrap();
        assert!(y[65].ends_with("(6465))"), "{}", y[65]);
    }

    /// Sums in this order are accurate: a million tenths.
    #[test]
    fn accurate_sums() {
        let n = 1 << 20;
        let mut out = vec![MaybeUninit::uninit(); n];
        scan_into(&mut out, None, &|_| 0.1f32, &|a, b| a + b);
        let last = unsafe { out[n - 1].assume_init() };
        let exact = 0.1f64 * n as f64;
        assert!(((last as f64 - exact) / exact).abs() < 1e-5, "{last}");
    }
}
