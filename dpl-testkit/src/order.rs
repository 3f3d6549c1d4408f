//! An oracle of dpl's order of reduction, written from its description (README,
//! "Reductions are reproducible to the bit") independently of `dpl_core::order`: tiles of
//! 2048 elements; in a tile, lane `j` of 32 folds elements `j, j + 32, ...`; the lanes
//! present meet in a tree, halves first (`s` = 16, 8, 4, 2, 1); the tiles' results are
//! reduced the same way.

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
