//! An oracle of dpl's order of reduction, written from its description (README,
//! "Reductions are reproducible to the bit") independently of `dpl_core::order`: tiles of
//! 2048 elements; in a tile, lane `j` of 32 folds elements `j, j + 32, ...`; the lanes
//! present meet in a tree, halves first (`s` = 16, 8, 4, 2, 1); the tiles' results are
//! reduced the same way. Scans ([`scanned`]): README, "Scans are reproducible too".

/// The elements of one tile.
const TILE: usize = 2048;

/// The lane pattern and the tree over the lanes present; `xs` not empty.
fn lanes<T: Copy>(xs: &[T], op: &impl Fn(T, T) -> T) -> T {
    let mut lane: Vec<T> = xs.iter().take(32).copied().collect();
    for (i, &x) in xs.iter().enumerate().skip(32) {
        lane[i % 32] = op(lane[i % 32], x);
    }
    for s in [16, 8, 4, 2, 1] {
        for j in 0..s {
            if j + s < lane.len() {
                lane[j] = op(lane[j], lane[j + s]);
            }
        }
    }
    lane[0]
}

/// `xs` reduced by `op` in dpl's order (`None` when empty).
pub fn ordered<T: Copy>(xs: &[T], op: impl Fn(T, T) -> T) -> Option<T> {
    match xs.len() {
        0 => None,
        n if n <= TILE => Some(lanes(xs, &op)),
        _ => {
            let partials: Vec<T> = xs.chunks(TILE).map(|c| lanes(c, &op)).collect();
            Some(lanes(&partials, &op))
        }
    }
}

/// `op(init, ordered(xs))`, or `init` when `xs` is empty.
pub fn ordered_from<T: Copy>(xs: &[T], init: T, op: impl Fn(T, T) -> T + Copy) -> T {
    ordered(xs, op).map_or(init, |t| op(init, t))
}

/// The scan of one tile (at most 2048 elements) from `carry`, and the tile's total: lane
/// `j` runs over the 64 elements from `64 j` left to right; the lanes' totals meet in a
/// warp's Kogge-Stone scan (`shfl.up` by 1, 2, 4, 8, 16); each element gets the carry and
/// the scanned totals of the lanes before its own in front.
fn scanned_tile<T: Copy>(xs: &[T], carry: Option<T>, op: &impl Fn(T, T) -> T) -> (Vec<T>, T) {
    let runs: Vec<Vec<T>> = xs
        .chunks(64)
        .map(|run| {
            let mut acc: Option<T> = None;
            run.iter()
                .map(|&x| {
                    let v = acc.map_or(x, |a| op(a, x));
                    acc = Some(v);
                    v
                })
                .collect()
        })
        .collect();
    // The warp: each step reads every lane's value before the step.
    let mut warp: Vec<T> = runs.iter().map(|r| *r.last().unwrap()).collect();
    for d in [1, 2, 4, 8, 16] {
        let up = warp.clone();
        for (j, w) in warp.iter_mut().enumerate().skip(d) {
            *w = op(up[j - d], *w);
        }
    }
    let mut out = Vec::with_capacity(xs.len());
    for (j, run) in runs.iter().enumerate() {
        let front = match (carry, j.checked_sub(1).map(|p| warp[p])) {
            (Some(c), Some(e)) => Some(op(c, e)),
            (c, e) => c.or(e),
        };
        out.extend(run.iter().map(|&l| front.map_or(l, |f| op(f, l))));
    }
    (out, *warp.last().unwrap())
}

/// `xs` scanned (inclusive) by `op` in dpl's order, from `init` when given: tiles of 2048
/// elements, each scanned by `scanned_tile` from its carry; the first tile's carry is
/// `init`, tile `b`'s is element `b - 1` of the tiles' totals scanned the same way.
pub fn scanned<T: Copy>(xs: &[T], init: Option<T>, op: impl Fn(T, T) -> T + Copy) -> Vec<T> {
    if xs.len() <= TILE {
        return if xs.is_empty() {
            Vec::new()
        } else {
            scanned_tile(xs, init, &op).0
        };
    }
    let totals: Vec<T> = xs
        .chunks(TILE)
        .map(|t| scanned_tile(t, None, &op).1)
        .collect();
    let carries = scanned(&totals, init, op);
    xs.chunks(TILE)
        .enumerate()
        .flat_map(|(b, t)| {
            let carry = if b == 0 { init } else { Some(carries[b - 1]) };
            scanned_tile(t, carry, &op).0
        })
        .collect()
}

/// The exclusive scan from `init` in dpl's order: `init`, then the inclusive scan from
/// `init` of every element but the last.
pub fn scanned_exclusive<T: Copy>(xs: &[T], init: T, op: impl Fn(T, T) -> T + Copy) -> Vec<T> {
    match xs.split_last() {
        None => Vec::new(),
        Some((_, front)) => std::iter::once(init)
            .chain(scanned(front, Some(init), op))
            .collect(),
    }
}
