//! Helpers of the nested test suites (`conformance_nested`, `differential_nested`,
//! `structure_nested`): the shapes every nested program runs at (ragged `Nested` row
//! lengths and `Matrix` layouts), builders of inputs of those shapes, and comparisons of
//! ragged results.
//!
//! Oracles are written in the test files themselves, in plain Rust, never by calling dpl.
//! This module uses the generator of `tests/common` (declare `mod common;` before it).

#![allow(dead_code)]

use crate::common::{Exact, Float, Rng, assert_reduced, assert_same, f64_sum};
use dpl::{Matrix, Nested, Place};

/// The shapes of a `Nested` input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Zero rows.
    NoRows,
    /// A single row of 1001 elements.
    OneRow,
    /// 300 rows of 0 to 7 elements, about a third of them empty.
    EmptyAmong,
    /// 20,000 rows of 0 to 5 elements (more rows than any grain, each cheap).
    ManyShort,
    /// 3 rows of 2^16 + 1 to 2^16 + 3 elements (fewer rows than threads, each long).
    FewLong,
    /// 5,000 rows of 0 to 3 elements and, in the middle, one of 2^17 + 5.
    Skewed,
    /// 2^14 + 3 rows of 0 to 127 elements, at least 2^20 elements in all.
    Large,
}

/// Every [`Shape`].
pub const ALL_SHAPES: [Shape; 7] = [
    Shape::NoRows,
    Shape::OneRow,
    Shape::EmptyAmong,
    Shape::ManyShort,
    Shape::FewLong,
    Shape::Skewed,
    Shape::Large,
];

/// The shapes without an empty row (for programs whose contract needs non-empty rows).
pub const NONEMPTY_ROW_SHAPES: [Shape; 3] = [Shape::NoRows, Shape::OneRow, Shape::FewLong];

/// At least this many elements in a [`Shape::Large`] input.
pub const LARGE_TOTAL: usize = 1 << 20;

/// The number of rows of a [`Shape::ManyShort`] input on the simulated GPU.
pub const SIM_MANY_SHORT_ROWS: usize = 5_000;

/// The longest first row of a [`Shape::Large`] input on the simulated GPU.
pub const SIM_LARGE_TOTAL: usize = 1 << 18;

/// The row lengths of a `Nested` of shape `shape`.
pub fn row_lengths(shape: Shape, rng: &mut Rng) -> Vec<usize> {
    match shape {
        Shape::NoRows => Vec::new(),
        Shape::OneRow => vec![1001],
        Shape::EmptyAmong => rng.vec(300, |r| if r.below(3) == 0 { 0 } else { r.below(8) }),
        Shape::ManyShort => rng.vec(20_000, |r| r.below(6)),
        Shape::FewLong => vec![(1 << 16) + 3, (1 << 16) + 1, (1 << 16) + 2],
        Shape::Skewed => {
            let mut lens = rng.vec(5_000, |r| r.below(4));
            lens[2_500] = (1 << 17) + 5;
            lens
        }
        Shape::Large => {
            let mut lens = rng.vec((1 << 14) + 3, |r| r.below(128));
            let total: usize = lens.iter().sum();
            if total < LARGE_TOTAL {
                // Top the first row up so the total is at least 2^20 whatever was drawn.
                lens[0] += LARGE_TOTAL - total;
            }
            lens
        }
    }
}

/// Runs `body(shape, lengths, rng)` on `place` for every shape of `shapes`, with a
/// generator seeded from the shape. The place and shape are printed first, so a failure
/// shows which case it was.
pub fn each_shape(place: Place, shapes: &[Shape], mut body: impl FnMut(Shape, &[usize], &mut Rng)) {
    for (k, &shape) in shapes.iter().enumerate() {
        let mut rng = Rng::new(0x0e57_ed00 ^ (k as u64) << 20);
        let mut lens = row_lengths(shape, &mut rng);
        if place == Place::Sim && shape == Shape::ManyShort {
            // One block (or warp) per row: 5,000 rows are still many more blocks than a
            // GPU runs at once, and take a quarter of the simulation time of 20,000.
            lens.truncate(SIM_MANY_SHORT_ROWS);
        }
        if place == Place::Sim && shape == Shape::Large {
            // Every thread of the simulated GPU is simulated: a quarter of the rows (still
            // 2^18 elements, more than a grid's worth of threads) keeps the suite's time
            // in bounds.
            lens.truncate(lens.len() / 4);
            lens[0] = lens[0].min(SIM_LARGE_TOTAL);
        }
        eprintln!(
            "place {place:?}, shape {shape:?}: {} rows, {} elements",
            lens.len(),
            lens.iter().sum::<usize>()
        );
        dpl::with_place(place, || body(shape, &lens, &mut rng));
    }
}

/// Rows of the given lengths, each element drawn by `generate`.
pub fn rows_of<T>(
    lens: &[usize],
    rng: &mut Rng,
    mut generate: impl FnMut(&mut Rng) -> T,
) -> Vec<Vec<T>> {
    lens.iter().map(|&n| rng.vec(n, &mut generate)).collect()
}

/// The running combination of `r` by `op` from `init` (the oracle of the scans):
/// inclusive (each element's own value included) or exclusive (the value before it).
pub fn running<T: Copy>(r: &[T], init: T, inclusive: bool, op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut s = init;
    r.iter()
        .map(|&v| {
            let before = s;
            s = op(s, v);
            if inclusive { s } else { before }
        })
        .collect()
}

/// A `Nested` with the given lengths, each element drawn by `generate`, and the same
/// rows as plain vectors (for the oracle).
pub fn nested_of<T: Clone>(
    lens: &[usize],
    rng: &mut Rng,
    generate: impl FnMut(&mut Rng) -> T,
) -> (Nested<T>, Vec<Vec<T>>) {
    let rows = rows_of(lens, rng, generate);
    (Nested::from(rows.clone()), rows)
}

/// Asserts that a ragged result has exactly the rows of `want` ([`Exact`] elements); on
/// failure names the first differing row, never prints a whole (possibly huge) input.
#[track_caller]
pub fn assert_rows<T: Exact + Clone>(got: &Nested<T>, want: &[Vec<T>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: number of rows");
    for (i, w) in want.iter().enumerate() {
        assert_eq!(got.row_len(i), w.len(), "{what}: length of row {i}");
    }
    for (i, w) in want.iter().enumerate() {
        assert_same(got.row(i), w, &format!("{what}: row {i}"));
    }
}

/// How a [`Matrix`] input lays its elements out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row after row (`row_stride = cols`, `col_stride = 1`).
    RowMajor,
    /// Column after column (`row_stride = 1`, `col_stride = rows`).
    ColMajor,
    /// Row-major with 3 unused elements after each row (`row_stride = cols + 3`).
    PaddedRows,
    /// Column-major with 2 unused elements after each column (`col_stride = rows + 2`),
    /// built with `with_strides`.
    PaddedCols,
}

/// Every [`Layout`].
pub const ALL_LAYOUTS: [Layout; 4] = [
    Layout::RowMajor,
    Layout::ColMajor,
    Layout::PaddedRows,
    Layout::PaddedCols,
];

/// The `(rows, cols)` a `Matrix` program runs at: empty both ways, no columns, one
/// element, one long row (2^16 + 5), many short rows, and about 2^20 elements.
pub const MATRIX_SHAPES: [(usize, usize); 7] = [
    (0, 0),
    (4, 0),
    (1, 1),
    (1, (1 << 16) + 5),
    (5_000, 3),
    (37, 1001),
    (1024, 1025),
];

/// A `rows x cols` matrix of layout `layout` whose element `(r, c)` is `rows[r][c]`.
///
/// `pad` fills the unused elements of padded layouts (a value the program would notice if
/// it read one).
pub fn matrix<T: Copy>(layout: Layout, rows: &[Vec<T>], cols: usize, pad: T) -> Matrix<T> {
    let n = rows.len();
    let at = |r: usize, c: usize| rows[r][c];
    // Element `(r, c)` at `r * rs + c * cs` of `len` elements, the others `pad`.
    let strided = |rs: usize, cs: usize, len: usize| {
        let mut data = vec![pad; len];
        for r in 0..n {
            for c in 0..cols {
                data[r * rs + c * cs] = at(r, c);
            }
        }
        Matrix::with_strides(n, cols, data, rs, cs)
    };
    let m = match layout {
        Layout::RowMajor => Matrix::row_major(n, cols, rows.iter().flatten().copied().collect()),
        Layout::ColMajor => Matrix::col_major(
            n,
            cols,
            (0..cols)
                .flat_map(|c| (0..n).map(move |r| at(r, c)))
                .collect(),
        ),
        Layout::PaddedRows => strided(cols + 3, 1, n * (cols + 3)),
        Layout::PaddedCols => strided(1, n + 2, cols * (n + 2)),
    };
    let m = m.expect("a well-formed matrix");
    assert_eq!(m.shape(), (n, cols));
    m
}

/// Runs `body(layout, rows, cols, rng)` on `place` for every matrix shape and layout, with
/// a generator seeded from the shape. The layout and shape are printed first.
pub fn each_matrix(place: Place, mut body: impl FnMut(Layout, usize, usize, &mut Rng)) {
    for (k, &(rows, cols)) in MATRIX_SHAPES.iter().enumerate() {
        // On the simulated GPU the largest matrix has a quarter of the rows (see
        // `each_shape`).
        let rows = if place == Place::Sim && rows == 1024 {
            256
        } else {
            rows
        };
        for layout in ALL_LAYOUTS {
            let mut rng = Rng::new(0x3a7_0000 ^ (k as u64) << 8);
            eprintln!("place {place:?}, {layout:?} {rows} x {cols}");
            dpl::with_place(place, || body(layout, rows, cols, &mut rng));
        }
    }
}

/// Compiles the given `#[parallel] mod` items four times, once per schedule, as the modules
/// `seq_inner` (default), `block_inner`, `warp_inner` and `auto_inner` (the same tokens under
/// four attributes). Use it inside a module named `sched`, which [`each_schedule!`] reads.
#[allow(unused_macros)]
macro_rules! scheduled {
    ($($body:tt)*) => {
        /// Default schedule: the outer level parallel, inner levels sequential.
        #[dpl::parallel]
        pub mod seq_inner {
            use dpl::prelude::*;
            $($body)*
        }
        /// `inner = "block"`: inner levels parallel too.
        #[dpl::parallel(inner = "block")]
        pub mod block_inner {
            use dpl::prelude::*;
            $($body)*
        }
        /// `inner = "warp"`: on the CPU the same as "block".
        #[dpl::parallel(inner = "warp")]
        pub mod warp_inner {
            use dpl::prelude::*;
            $($body)*
        }
        /// `inner = "auto"`: chosen at run time from the shape of the first nested input.
        #[dpl::parallel(inner = "auto")]
        pub mod auto_inner {
            use dpl::prelude::*;
            $($body)*
        }
    };
}
#[allow(unused_imports)]
pub(crate) use scheduled;

/// Runs `$body` four times, with `$f` naming each compilation of the programs of the module
/// `sched` (made by [`scheduled!`]) and `$name` its schedule (`"seq"`, `"block"`, ...).
#[allow(unused_macros)]
macro_rules! each_schedule {
    (|$name:ident, $f:ident| $body:expr) => {{
        {
            let $name = "seq";
            use sched::seq_inner as $f;
            $body
        }
        {
            let $name = "block";
            use sched::block_inner as $f;
            $body
        }
        {
            let $name = "warp";
            use sched::warp_inner as $f;
            $body
        }
        {
            let $name = "auto";
            use sched::auto_inner as $f;
            $body
        }
    }};
}
#[allow(unused_imports)]
pub(crate) use each_schedule;

/// Asserts that every row's float sum is within reassociation of the oracle.
#[track_caller]
pub fn assert_row_sums<T: Float>(got: &[T], terms: &[Vec<T>], what: &str) {
    assert_eq!(got.len(), terms.len(), "{what}: number of rows");
    for (i, (g, r)) in got.iter().zip(terms).enumerate() {
        let (s, m) = f64_sum(r.iter().copied());
        assert_reduced(*g, s, m, r.len(), &format!("{what}: row {i}"));
    }
}
