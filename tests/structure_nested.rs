//! Structure of nested `#[parallel]` functions, read with `dpl::inspect!`: fusion across
//! nesting levels (the gather and the product of SpMV fused into the per-row sum, maps
//! fused into per-row filters and scans, module functions inlined into the rows), what is
//! left materialized (a costly producer read by every row is computed once, not once per
//! row), and what each schedule generates for the CPU.
//!
//! Counts are `(loops before fusion, temporaries before, loops after, temporaries after)`:
//! a loop is a combinator of the IR at any nesting level (the outer map over rows and the
//! loop inside each row are two), a temporary a materialized intermediate sequence.

use dpl::{Error, Nested};

mod common_structure;
use common_structure::{counts, flat, shape, soacs};

/// The SpMV kernels of the `spmv` example (CSR with each schedule, ELLPACK).
#[path = "../examples/spmv/kernels.rs"]
mod kernels;

mod prog {
    pub use super::kernels::*;
    use dpl::prelude::*;

    #[parallel]
    pub fn row_sum_of_squares(x: &Nested<f64>) -> Vec<f64> {
        map(|r| sum(map(|v| v * v, r)), x)
    }

    #[parallel]
    pub fn row_filter_of_map(x: &Nested<i32>) -> Nested<i32> {
        map(|r| filter(|v| v > 0, map(|v| v * 3 - 1, r)), x)
    }

    #[parallel]
    pub fn row_scan_of_map(x: &Nested<i64>) -> Nested<i64> {
        map(|r| scan(|a, b| a + b, map(|v| v * v, r)), x)
    }

    #[parallel]
    pub fn row_map_in_map(x: &Nested<f32>, a: f32) -> Nested<f32> {
        map(|r| map(|v| a * v + 1.0, r), x)
    }

    /// A costly producer (each element a reduction over `y`) read inside every row.
    #[parallel]
    pub fn costly_weights(x: &Nested<i64>, y: &[i64]) -> Vec<i64> {
        let w = map(|v| sum(map(|u| u * v, y)), y);
        let n = len(w);
        map(|r| sum(map(|a, i| a * w[i % n], r, indices(r))), x)
    }

    /// A cheap producer (one multiplication per element) read inside every row.
    #[parallel]
    pub fn cheap_weights(x: &Nested<i64>, y: &[i64]) -> Vec<i64> {
        let w = map(|v| v * 2, y);
        let n = len(w);
        map(|r| sum(map(|a, i| a * w[i % n], r, indices(r))), x)
    }

    /// A per-row result read by a second per-row loop.
    #[parallel]
    pub fn centered(x: &Nested<f64>) -> Nested<f64> {
        map(
            |r| {
                let m = sum(r) / (len(r) as f64);
                map(|v| v - m, r)
            },
            x,
        )
    }

    /// An outer reduction of per-row reductions.
    #[parallel]
    pub fn total(x: &Nested<i64>) -> i64 {
        sum(map(|r| sum(r), x))
    }

    /// A producer over a flat input read element-wise by every row of a matrix.
    #[parallel]
    pub fn mat_vec_squared(m: &Matrix<f32>, y: &[f32]) -> Vec<f32> {
        let y2 = map(|v| v * v, y);
        map(|r| sum(map(|a, b| a * b, r, y2)), m)
    }

    #[parallel]
    pub mod rows {
        use dpl::prelude::*;

        pub fn sum_sq(r: &[f32]) -> f32 {
            sum(map(|v| v * v, r))
        }

        pub fn norms(x: &Nested<f32>) -> Vec<f32> {
            map(|r| sum_sq(r).sqrt(), x)
        }
    }

    /// Zips the rows of two `Nested` and the rows' elements: the per-row length check
    /// that shared offsets make redundant.
    #[parallel]
    pub fn row_dots(x: &Nested<i64>, y: &Nested<i64>, w: &Nested<i64>) -> Result<Vec<i64>, Error> {
        map(|a, b, c| sum(map(|p, q, r| p * q + r, a, b, c)), x, y, w)
    }
}

/// The fused IR without the function's name line, to compare schedules of one program.
fn body(ir: &str) -> &str {
    ir.split_once('\n').map_or(ir, |p| p.1)
}

#[test]
fn spmv_csr_is_one_row_loop_around_one_fused_inner_loop() {
    let i = dpl::inspect!(prog::spmv_csr);
    // Before: the row map, and in each row the gather, the product map and the sum.
    assert_eq!(soacs(i.normalized_ir, "map"), 3, "{}", i.normalized_ir);
    // After: the row map and one reduction per row reading `vals`, `cols` and `x`
    // directly; neither the gathered row nor the products are materialized.
    shape(i, (4, 2, 2, 0));
    assert_eq!(soacs(i.fused_ir, "map"), 1, "{}", i.fused_ir);
    assert_eq!(soacs(i.fused_ir, "reduce"), 1, "{}", i.fused_ir);
    let (outer, inner) = i.fused_ir.split_once("soac reduce(").expect("a reduction");
    assert!(
        outer.contains("soac map("),
        "the reduction is inside the row map: {}",
        i.fused_ir
    );
    // The gather's bounds check is still made: inside the per-row loop, or once over all
    // of `cols` before the row loop.
    let rows_at = i.fused_ir.find("soac map(").unwrap();
    assert!(
        inner.contains("index(gather)")
            || i.fused_ir[..rows_at].contains("assert(gather) indices_in_range"),
        "{}",
        i.fused_ir
    );
    // One length check per level: the rows of vals and cols, the elements of each row.
    assert_eq!(
        i.fused_ir.matches("assert(map) eq_len").count(),
        2,
        "{}",
        i.fused_ir
    );
}

#[test]
fn schedules_fuse_alike_and_differ_only_in_the_inner_loop() {
    let seq = dpl::inspect!(prog::spmv_csr);
    let block = dpl::inspect!(prog::spmv_csr_block);
    let auto = dpl::inspect!(prog::spmv_csr_auto);
    for i in [block, auto] {
        shape(i, (4, 2, 2, 0));
        assert_eq!(body(i.fused_ir), body(seq.fused_ir), "{}", i.name);
    }
    // Every loop appears four times: in the variant for `vals` and `cols` sharing offsets
    // and in the general one (see the test below), each once with `x[cols[i][k]]`
    // unchecked (when the cached bound of `cols` allows) and once checked.
    // Default: rows spread over the threads (heavy::map), each row's sum sequential.
    let s = flat(seq.cpu_rust);
    assert_eq!(s.matches("heavy :: map(").count(), 4, "{s}");
    assert_eq!(s.matches("seq :: reduce(").count(), 4, "{s}");
    assert_eq!(s.matches("rt :: reduce(").count(), 0, "{s}");
    // Block: the sum of each row is parallel too.
    let b = flat(block.cpu_rust);
    assert_eq!(b.matches("heavy :: map(").count(), 4, "{b}");
    assert_eq!(b.matches("seq :: reduce(").count(), 0, "{b}");
    assert_eq!(b.matches("rt :: reduce(").count(), 4, "{b}");
    // Auto: both, chosen by the documented rule from the shape of the first Nested.
    let a = flat(auto.cpu_rust);
    assert_eq!(a.matches("heavy :: parallel_inner(").count(), 1, "{a}");
    assert!(a.contains("vals.max_row_len()"), "{a}");
    assert_eq!(a.matches("seq :: reduce(").count(), 4, "{a}");
    assert_eq!(a.matches("rt :: reduce(").count(), 4, "{a}");
}

#[test]
fn reads_indexed_by_a_parameters_values_get_an_unchecked_variant() {
    // `x[cols[i][k]]`: one test of the cached bound of `cols` per offsets variant, before
    // its row loop; the gather is checked (`rt :: index`) only in the other variant.
    let s = flat(dpl::inspect!(prog::spmv_csr).cpu_rust);
    assert_eq!(s.matches("cols.__indices_below(").count(), 2, "{s}");
    assert!(
        s.find("cols.__indices_below(").unwrap() < s.find("heavy :: map(").unwrap(),
        "{s}"
    );
    assert_eq!(s.matches("rt :: index(").count(), 2, "{s}");
    // The blocked ELL loop over a column-major Matrix, and the contiguous-rows variant.
    let e = flat(dpl::inspect!(prog::spmv_ell).cpu_rust);
    assert_eq!(e.matches("cols.__indices_below(").count(), 2, "{e}");
    assert_eq!(e.matches("heavy :: map_reduce_blocked(").count(), 2, "{e}");
    // No read indexed by a parameter's values: no variant.
    let t = flat(dpl::inspect!(prog::row_dots).cpu_rust);
    assert!(!t.contains("__indices_below"), "{t}");
}

#[test]
fn spmv_ell_over_matrices_is_one_fused_inner_loop() {
    let i = dpl::inspect!(prog::spmv_ell);
    shape(i, (3, 1, 2, 0));
    assert_eq!(soacs(i.fused_ir, "reduce"), 1, "{}", i.fused_ir);
    assert!(
        i.fused_ir.contains("index(index)"),
        "x[j] is checked: {}",
        i.fused_ir
    );
}

#[test]
fn per_row_sum_of_a_map_has_no_temporary() {
    let i = dpl::inspect!(prog::row_sum_of_squares);
    shape(i, (3, 1, 2, 0));
    assert_eq!(
        soacs(i.fused_ir, "map"),
        1,
        "only the row map is left: {}",
        i.fused_ir
    );
}

#[test]
fn module_function_taking_a_row_is_inlined_and_fused() {
    // `norms` calls `sum_sq(r)`: the same structure as writing the sum in the row.
    let i = dpl::inspect!(prog::rows::norms);
    shape(i, (3, 1, 2, 0));
    let direct = dpl::inspect!(prog::row_sum_of_squares);
    assert_eq!(counts(&i), counts(&direct));
    assert!(i.fused_ir.contains("sqrt"), "{}", i.fused_ir);
}

#[test]
fn per_row_filter_and_scan_absorb_the_map_before_them() {
    // No temporary is left: each row's result is written into the Nested result.
    for i in [
        dpl::inspect!(prog::row_filter_of_map),
        dpl::inspect!(prog::row_scan_of_map),
    ] {
        shape(i, (3, 1, 2, 0));
        assert_eq!(
            soacs(i.fused_ir, "map"),
            1,
            "{}: only the row map is left: {}",
            i.name,
            i.fused_ir
        );
    }
    let f = dpl::inspect!(prog::row_filter_of_map);
    assert_eq!(soacs(f.fused_ir, "filter"), 1, "{}", f.fused_ir);
    let s = dpl::inspect!(prog::row_scan_of_map);
    assert_eq!(soacs(s.fused_ir, "scan"), 1, "{}", s.fused_ir);
}

#[test]
fn outer_reduction_of_row_reductions_is_fused() {
    // sum(map(|r| sum(r), x)): the per-row sums are not materialized.
    let i = dpl::inspect!(prog::total);
    shape(i, (3, 1, 2, 0));
    assert_eq!(soacs(i.fused_ir, "reduce"), 2, "{}", i.fused_ir);
    assert_eq!(soacs(i.fused_ir, "map"), 0, "{}", i.fused_ir);
}

#[test]
fn costly_producer_read_by_every_row_is_computed_once() {
    // `w[k]` is a reduction over `y`: inlining it into the rows would redo that reduction
    // for every element of every row. It stays a temporary computed before the row loop.
    let i = dpl::inspect!(prog::costly_weights);
    shape(i, (7, 4, 4, 1));
    let (before_rows, rows) = i.fused_ir.split_once("len_x").expect("the row loop");
    assert_eq!(
        soacs(before_rows, "reduce"),
        1,
        "w's reduction is before the rows: {}",
        i.fused_ir
    );
    assert_eq!(
        soacs(rows, "reduce"),
        1,
        "one reduction per row: {}",
        i.fused_ir
    );
}

#[test]
fn cheap_producer_read_by_every_row_is_computed_once() {
    // Even a cheap producer is not recomputed per row: `w` is materialized once (the
    // row loop reads it at computed positions, `w[i % n]`).
    let i = dpl::inspect!(prog::cheap_weights);
    shape(i, (5, 3, 3, 1));
    let (before_rows, _) = i.fused_ir.split_once("len_x").expect("the row loop");
    assert_eq!(
        soacs(before_rows, "map"),
        1,
        "w is computed before the rows: {}",
        i.fused_ir
    );
}

#[test]
fn producer_read_element_wise_by_every_matrix_row_is_computed_once() {
    // `y2` is read in step with each row: fusing it would square `y` once per row.
    let i = dpl::inspect!(prog::mat_vec_squared);
    shape(i, (4, 2, 3, 1));
    let (before_rows, _) = i.fused_ir.split_once("len_m").expect("the row loop");
    assert!(before_rows.contains("y2"), "{}", i.fused_ir);
}

#[test]
fn per_row_reduction_read_by_the_row_map_is_computed_once_per_row() {
    // centered: the mean is a reduction over the row, then a map over the same row reads
    // it: three loops (rows, sum, map), the sum not pushed into the map.
    let i = dpl::inspect!(prog::centered);
    shape(i, (3, 0, 3, 0));
    let (before_map, inner_map) = i
        .fused_ir
        .split_once("soac reduce(")
        .unwrap()
        .1
        .split_once("soac map(")
        .expect("the per-row map");
    assert!(
        before_map.contains("div"),
        "the mean is computed before the map: {}",
        i.fused_ir
    );
    assert_eq!(soacs(inner_map, "reduce"), 0, "{}", i.fused_ir);
}

#[test]
fn ragged_map_in_map_writes_rows_in_place() {
    // Sizes first: the row lengths in one pass, then every row written in place into the
    // flat values of the result (no `Vec` per row, no copy).
    let i = dpl::inspect!(prog::row_map_in_map);
    assert_eq!(
        (i.loops, i.temporaries),
        (2, 0),
        "{}\n{}",
        i.fused_ir,
        i.cpu_rust
    );
    let r = flat(i.cpu_rust);
    assert_eq!(r.matches("heavy :: ragged(").count(), 1, "{r}");
    assert_eq!(r.matches("seq :: map_into(").count(), 1, "{r}");
    assert_eq!(r.matches("heavy :: map(").count(), 0, "{r}");
    assert_eq!(r.matches("seq :: map(").count(), 0, "{r}");
    // Scans too; filtered rows (lengths known only after) are appended to per-chunk
    // buffers instead.
    let s = flat(dpl::inspect!(prog::row_scan_of_map).cpu_rust);
    assert_eq!(s.matches("heavy :: ragged(").count(), 1, "{s}");
    assert_eq!(s.matches("seq :: scan_into(").count(), 1, "{s}");
    let f = flat(dpl::inspect!(prog::row_filter_of_map).cpu_rust);
    assert_eq!(f.matches("heavy :: ragged_push(").count(), 1, "{f}");
    assert_eq!(f.matches("seq :: filter_push(").count(), 1, "{f}");
    assert_eq!(f.matches("seq :: filter(").count(), 0, "{f}");
}

#[test]
fn fused_programs_compute_the_right_thing() {
    // The structures above are not bought with wrong answers (the suites in
    // tests/conformance_nested/ test these shapes of program thoroughly).
    let rows: Vec<Vec<i64>> = (0..40)
        .map(|k| (0..k % 7).map(|v| v * 3 - k).collect())
        .collect();
    let x = dpl::Nested::from(rows.clone());
    let y: Vec<i64> = (0..9).map(|v| v - 4).collect();
    let w_costly: Vec<i64> = y.iter().map(|v| y.iter().map(|u| u * v).sum()).collect();
    let w_cheap: Vec<i64> = y.iter().map(|v| v * 2).collect();
    let weigh = |w: &[i64]| -> Vec<i64> {
        rows.iter()
            .map(|r| r.iter().enumerate().map(|(i, a)| a * w[i % w.len()]).sum())
            .collect()
    };
    let m = dpl::Matrix::col_major(3, 9, (0..27).map(|v| v as f32 * 0.5).collect()).unwrap();
    let yf: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    let mv: Vec<f32> = m
        .to_row_vecs()
        .iter()
        .map(|r| r.iter().zip(&yf).map(|(a, b)| a * b * b).sum())
        .collect();
    for place in [dpl::Place::Seq, dpl::Place::Cpu] {
        dpl::with_place(place, || {
            assert_eq!(prog::costly_weights(&x, &y), weigh(&w_costly), "{place:?}");
            assert_eq!(prog::cheap_weights(&x, &y), weigh(&w_cheap), "{place:?}");
            assert_eq!(
                prog::total(&x),
                rows.iter().flatten().sum::<i64>(),
                "{place:?}"
            );
            assert_eq!(prog::mat_vec_squared(&m, &yf), mv, "{place:?}");
        });
    }
}

/// Ragged results built by the CPU's sizes-first (`map`, `scan`, `exclusive_scan` rows) and
/// per-chunk (`filter` rows) paths, and by the general path they fall back to.
mod ragged {
    use dpl::prelude::*;

    #[parallel]
    pub fn affine(x: &Nested<i64>, a: i64) -> Nested<i64> {
        map(|r| map(|v| a * v + 1, r), x)
    }

    #[parallel(inner = "block")]
    pub fn affine_block(x: &Nested<i64>, a: i64) -> Nested<i64> {
        map(|r| map(|v| a * v + 1, r), x)
    }

    #[parallel]
    pub fn prefix(x: &Nested<i64>) -> Nested<i64> {
        map(|r| scan(|a, b| a + b, r), x)
    }

    #[parallel(inner = "block")]
    pub fn prefix_block(x: &Nested<i64>) -> Nested<i64> {
        map(|r| scan(|a, b| a + b, r), x)
    }

    #[parallel]
    pub fn exclusive(x: &Nested<i64>, s: &[i64]) -> Nested<i64> {
        map(|r, s0| exclusive_scan(|a, b| a + b, r, s0), x, s)
    }

    #[parallel(inner = "block")]
    pub fn exclusive_block(x: &Nested<i64>, s: &[i64]) -> Nested<i64> {
        map(|r, s0| exclusive_scan(|a, b| a + b, r, s0), x, s)
    }

    #[parallel]
    pub fn above(x: &Nested<i64>, t: i64) -> Nested<i64> {
        map(|r| filter(|v| v > t, r), x)
    }

    #[parallel(inner = "block")]
    pub fn above_block(x: &Nested<i64>, t: i64) -> Nested<i64> {
        map(|r| filter(|v| v > t, r), x)
    }

    /// Row lengths computed from the row (a plain scalar expression): sized first.
    #[parallel]
    pub fn halves(x: &Nested<i64>) -> Nested<i64> {
        map(|r| map(|i| r[i * 2], range(len(r) / 2)), x)
    }

    /// Row lengths that depend on a loop (a filter): the general path.
    #[parallel]
    pub fn gaps(x: &Nested<i64>) -> Nested<i64> {
        map(
            |r| map(|i| r[i + 1] - r[i], filter(|i| i + 1 < len(r), indices(r))),
            x,
        )
    }

    /// A map over a scan of the row (running balances): the scan is written into the
    /// row's slot and the map applied in place.
    #[parallel]
    pub fn balances(x: &Nested<i64>, s: &[i64]) -> Nested<i64> {
        map(|r, b0| map(|v| b0 + v * 2, scan(|a, b| a + b, r)), x, s)
    }

    /// The same over a map of the row whose result is read twice.
    #[parallel]
    pub fn squares_twice(x: &Nested<i64>) -> Nested<i64> {
        map(
            |r| {
                let q = map(|v| v * v, r);
                map(|i| q[i] - q[i] / 2, indices(r))
            },
            x,
        )
    }

    /// A ragged result read by a second loop, and returned next to it.
    #[parallel]
    pub fn prefix_and_last(x: &Nested<i64>) -> (Nested<i64>, Vec<i64>) {
        let p = map(|r| scan(|a, b| a + b, r), x);
        (p, map(|r| if len(r) > 0 { r[len(r) - 1] } else { 0 }, p))
    }
}

/// Plain-Rust row functions for [`ragged`]'s programs.
fn rows_of(x: &[Vec<i64>], f: impl Fn(usize, &[i64]) -> Vec<i64>) -> Vec<Vec<i64>> {
    x.iter().enumerate().map(|(i, r)| f(i, r)).collect()
}

fn prefix_row(r: &[i64], start: i64, inclusive: bool) -> Vec<i64> {
    let mut acc = start;
    r.iter()
        .map(|&v| {
            let before = acc;
            acc = acc.wrapping_add(v);
            if inclusive { acc } else { before }
        })
        .collect()
}

#[test]
fn ragged_results_written_in_place_match_plain_rust() {
    // Shapes that stress the offsets of a sizes-first fill: no rows, all rows empty, many
    // empty rows between a few, one long row (parallel chunks, and above GRAIN for the
    // block schedule's parallel inner loops), skewed rows, and uniform ones.
    let long = 300_000usize;
    let shapes: Vec<(&str, Vec<Vec<i64>>)> = vec![
        ("no rows", vec![]),
        ("one empty row", vec![vec![]]),
        ("all empty", vec![vec![]; 5_000]),
        (
            "many empty",
            (0..20_000)
                .map(|k| {
                    if k % 97 == 3 {
                        vec![k as i64 % 11 - 5; k % 5 + 1]
                    } else {
                        vec![]
                    }
                })
                .collect(),
        ),
        (
            "one long row",
            vec![(0..long as i64).map(|v| v % 13 - 6).collect()],
        ),
        (
            "long row among empty",
            (0..9)
                .map(|k| {
                    if k == 4 {
                        (0..long as i64).map(|v| v % 7 - 3).collect()
                    } else {
                        vec![]
                    }
                })
                .collect(),
        ),
        (
            "skewed",
            (0..30_000)
                .map(|k: usize| {
                    let n = if k < 50 { 4_000 } else { k % 9 };
                    (0..n as i64)
                        .map(|v| (v * 31 + k as i64) % 17 - 8)
                        .collect()
                })
                .collect(),
        ),
        (
            "uniform",
            (0..40_000)
                .map(|k| (0..6).map(|v| v - (k % 4)).collect())
                .collect(),
        ),
    ];
    for (name, rows) in &shapes {
        let x = dpl::Nested::from(rows.clone());
        let s: Vec<i64> = (0..rows.len() as i64).map(|k| k * 3 - 7).collect();
        let affine = rows_of(rows, |_, r| r.iter().map(|v| 3 * v + 1).collect());
        let prefix = rows_of(rows, |_, r| prefix_row(r, 0, true));
        let exclusive = rows_of(rows, |i, r| prefix_row(r, s[i], false));
        let keep = |t: i64| {
            rows_of(rows, move |_, r| {
                r.iter().copied().filter(|&v| v > t).collect()
            })
        };
        let halves = rows_of(rows, |_, r| (0..r.len() / 2).map(|i| r[2 * i]).collect());
        let gaps = rows_of(rows, |_, r| r.windows(2).map(|w| w[1] - w[0]).collect());
        let last: Vec<i64> = prefix
            .iter()
            .map(|r| r.last().copied().unwrap_or(0))
            .collect();
        let balances = rows_of(rows, |i, r| {
            prefix_row(r, 0, true)
                .iter()
                .map(|p| s[i] + p * 2)
                .collect()
        });
        let squares = rows_of(rows, |_, r| r.iter().map(|v| v * v - v * v / 2).collect());
        let n = |v: Vec<Vec<i64>>| dpl::Nested::from(v);
        for place in [dpl::Place::Seq, dpl::Place::Cpu] {
            dpl::with_place(place, || {
                let at = format!("{name} on {place:?}");
                assert_eq!(ragged::affine(&x, 3), n(affine.clone()), "{at}");
                assert_eq!(ragged::affine_block(&x, 3), n(affine.clone()), "{at}");
                assert_eq!(ragged::prefix(&x), n(prefix.clone()), "{at}");
                assert_eq!(ragged::prefix_block(&x), n(prefix.clone()), "{at}");
                assert_eq!(ragged::exclusive(&x, &s), n(exclusive.clone()), "{at}");
                assert_eq!(
                    ragged::exclusive_block(&x, &s),
                    n(exclusive.clone()),
                    "{at}"
                );
                // Keeping none, some and all.
                for t in [i64::MAX, 0, i64::MIN] {
                    assert_eq!(ragged::above(&x, t), n(keep(t)), "{at}, t = {t}");
                    assert_eq!(ragged::above_block(&x, t), n(keep(t)), "{at}, t = {t}");
                }
                assert_eq!(ragged::halves(&x), n(halves.clone()), "{at}");
                assert_eq!(ragged::gaps(&x), n(gaps.clone()), "{at}");
                assert_eq!(ragged::balances(&x, &s), n(balances.clone()), "{at}");
                assert_eq!(ragged::squares_twice(&x), n(squares.clone()), "{at}");
                let (p, l) = ragged::prefix_and_last(&x);
                assert_eq!((p, l), (n(prefix.clone()), last.clone()), "{at}");
            });
        }
        // The longest row is kept right (`inner = "auto"` reads it).
        let longest = rows.iter().map(Vec::len).max().unwrap_or(0);
        let got = dpl::with_place(dpl::Place::Cpu, || ragged::prefix(&x));
        assert_eq!(got.max_row_len(), longest, "{name}");
        let kept = dpl::with_place(dpl::Place::Cpu, || ragged::above(&x, 0));
        assert_eq!(kept.max_row_len(), n(keep(0)).max_row_len(), "{name}");
    }
}

#[test]
fn ragged_paths_chosen_by_the_shape_of_the_row() {
    let flat_of = |i: dpl::Inspect| flat(i.cpu_rust);
    // Sized first: map, scan, exclusive scan, and a length computed from the row.
    for (i, into) in [
        (dpl::inspect!(ragged::affine), "map_into"),
        (dpl::inspect!(ragged::prefix), "scan_into"),
        (dpl::inspect!(ragged::exclusive), "exclusive_scan_into"),
        (dpl::inspect!(ragged::halves), "map_into"),
    ] {
        let r = flat_of(i);
        assert_eq!(r.matches("heavy :: ragged(").count(), 1, "{}: {r}", i.name);
        assert_eq!(
            r.matches(&format!("seq :: {into}(")).count(),
            1,
            "{}: {r}",
            i.name
        );
    }
    // A map over a scan of the row: no temporary per row, the map applied in place.
    let b = flat_of(dpl::inspect!(ragged::balances));
    assert_eq!(b.matches("heavy :: ragged(").count(), 1, "{b}");
    assert_eq!(b.matches("seq :: scan_into(").count(), 1, "{b}");
    assert_eq!(b.matches("seq :: map_in_place(").count(), 1, "{b}");
    assert_eq!(b.matches("seq :: scan(").count(), 0, "{b}");
    // The block schedule writes the rows with the parallel run time.
    let b = flat_of(dpl::inspect!(ragged::prefix_block));
    assert_eq!(b.matches("rt :: scan_into(").count(), 1, "{b}");
    // A length that depends on a loop: one Vec per row, then a Nested.
    let g = flat_of(dpl::inspect!(ragged::gaps));
    assert_eq!(g.matches("heavy :: ragged").count(), 0, "{g}");
    // A ragged result read by a later loop is read in place (rows of a Nested).
    let p = flat_of(dpl::inspect!(ragged::prefix_and_last));
    assert_eq!(p.matches("heavy :: ragged(").count(), 1, "{p}");
    assert!(p.contains("row_unchecked"), "{p}");
}

/// Stencils with clamped neighbour indices: their reads are proven in range
/// (`dpl_core::ranges`), and the interior, where no clamp is active, runs a variant with
/// the neighbours at `i - c` and `i + c`.
mod stencil {
    use dpl::prelude::*;

    /// Neighbours of `y` (length `n`, the loop's) and of `z` (any length: in range when
    /// `len(z) >= n`, checked otherwise).
    #[parallel]
    pub fn cross(y: &[f32], z: &[f32], w: usize) -> Vec<f32> {
        let n = len(y);
        map(
            |i| {
                let last = n - 1;
                let west = y[i.max(1) - 1];
                let east = y[(i + 1).min(last)];
                let north = z[i.max(w) - w];
                let south = z[(i + w).min(last)];
                (west + east) * 2.0 + north - south * 3.0
            },
            indices(y),
        )
    }

    /// Two outputs (one loop writing both: `map_unzip2`).
    #[parallel]
    pub fn pair(y: &[i64], w: usize) -> (Vec<i64>, Vec<i64>) {
        let n = len(y);
        unzip(map(
            |i| {
                let last = n - 1;
                let a = y[i.max(w) - w];
                let b = y[(w + i).min(last)];
                (a - b, a * 2 + b)
            },
            indices(y),
        ))
    }

    /// A clamped read in a loop over rows (elements that contain loops: `heavy::map`,
    /// which keeps one element function).
    #[parallel]
    pub fn row_weights(x: &Nested<f32>, y: &[f32]) -> Vec<f32> {
        let n = len(x);
        map(
            |r, i| {
                let last = n - 1;
                sum(r) * y[(i + 1).min(last)] + y[i.max(1) - 1]
            },
            x,
            indices(x),
        )
    }

    /// Not clamps: `max(i, 1) - 2` can wrap, `i + 1` can reach `n`; these stay checked.
    #[parallel]
    pub fn unclamped(y: &[i64]) -> Vec<i64> {
        map(|i| y[i.max(1) - 2] + y[i + 1], indices(y))
    }
}

fn cross_plain(y: &[f32], z: &[f32], w: usize) -> Vec<f32> {
    let n = y.len();
    (0..n)
        .map(|i| {
            let last = n - 1;
            let west = y[i.max(1) - 1];
            let east = y[(i + 1).min(last)];
            let north = z[i.max(w) - w];
            let south = z[(i + w).min(last)];
            (west + east) * 2.0 + north - south * 3.0
        })
        .collect()
}

#[test]
fn clamped_stencils_match_plain_rust_and_keep_their_errors() {
    // Lengths around the chunk sizes (one chunk, parallel chunks), offsets from 0 to
    // beyond the length (empty interior), z longer, equal and shorter.
    for n in [0usize, 1, 2, 3, 17, 1000, 300_001] {
        for w in [0usize, 1, 5, 999, 1000, 1001, 400_000] {
            let y: Vec<f32> = (0..n).map(|k| (k % 97) as f32 * 0.5 - 7.0).collect();
            for zlen in [n + 3, n, n.saturating_sub(1)] {
                let z: Vec<f32> = (0..zlen).map(|k| (k % 13) as f32 - 2.0).collect();
                // The plain version panics exactly when some read is out of range.
                let want = std::panic::catch_unwind(|| cross_plain(&y, &z, w)).ok();
                for place in [dpl::Place::Seq, dpl::Place::Cpu] {
                    let got = dpl::with_place(place, || {
                        std::panic::catch_unwind(|| stencil::cross(&y, &z, w)).ok()
                    });
                    assert_eq!(got, want, "n {n}, w {w}, len(z) {zlen}, {place:?}");
                }
            }
            let yi: Vec<i64> = (0..n as i64).map(|k| k * k % 101 - 50).collect();
            let want: (Vec<i64>, Vec<i64>) = (0..n)
                .map(|i| {
                    let (a, b) = (yi[i.max(w) - w], yi[(w + i).min(n - 1)]);
                    (a - b, a * 2 + b)
                })
                .unzip();
            for place in [dpl::Place::Seq, dpl::Place::Cpu] {
                let got = dpl::with_place(place, || stencil::pair(&yi, w));
                assert_eq!(got, want, "n {n}, w {w}, {place:?}");
            }
        }
    }
    // Clamped reads inside a loop over rows.
    let rows: Vec<Vec<f32>> = (0..2_000).map(|k| vec![k as f32 * 0.25; k % 50]).collect();
    let x = dpl::Nested::from(rows.clone());
    for ylen in [2_000usize, 2_005, 1_999] {
        let y: Vec<f32> = (0..ylen).map(|k| (k % 7) as f32).collect();
        let want = std::panic::catch_unwind(|| {
            let n = rows.len();
            (0..n)
                .map(|i| rows[i].iter().sum::<f32>() * y[(i + 1).min(n - 1)] + y[i.max(1) - 1])
                .collect::<Vec<f32>>()
        })
        .ok();
        for place in [dpl::Place::Seq, dpl::Place::Cpu] {
            let got = dpl::with_place(place, || {
                std::panic::catch_unwind(|| stencil::row_weights(&x, &y)).ok()
            });
            assert_eq!(got, want, "len(y) {ylen}, {place:?}");
        }
    }
    // A shorter z is still reported as the first out-of-range read.
    let y = vec![1.0f32; 10];
    let z = vec![1.0f32; 6];
    let e = dpl::with_place(dpl::Place::Cpu, || {
        std::panic::catch_unwind(|| stencil::cross(&y, &z, 2)).unwrap_err()
    });
    let msg = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("index 6") && msg.contains("length 6"), "{msg}");
    // Unclamped indices keep their checks.
    let y: Vec<i64> = (0..10).collect();
    assert!(
        dpl::with_place(dpl::Place::Cpu, || std::panic::catch_unwind(|| {
            stencil::unclamped(&y)
        }))
        .is_err()
    );
}

#[test]
fn clamped_stencils_get_an_interior_variant() {
    let c = flat(dpl::inspect!(stencil::cross).cpu_rust);
    // One variant for z at least as long as y (reads unchecked, interior split), the
    // checked one otherwise.
    assert_eq!(
        c.matches("rt :: map_split(").count() + c.matches("rt :: map_split_canon(").count(),
        1,
        "{c}"
    );
    assert!(
        c.contains("v1_z.len() >=") || c.contains("z.len() >="),
        "{c}"
    );
    assert!(c.contains("wrapping_sub"), "{c}");
    let p = flat(dpl::inspect!(stencil::pair).cpu_rust);
    assert_eq!(p.matches("rt :: map_unzip2_split(").count(), 1, "{p}");
    // y is the loop's own sequence: no condition, no checked variant.
    assert_eq!(p.matches("rt :: map_unzip2(").count(), 0, "{p}");
    let u = flat(dpl::inspect!(stencil::unclamped).cpu_rust);
    assert_eq!(u.matches("map_split").count(), 0, "{u}");
    assert_eq!(u.matches("rt :: index(").count(), 2, "{u}");
}

#[test]
fn zipped_nested_sharing_offsets_get_a_variant_reading_one_offsets_array() {
    let s = flat(dpl::inspect!(prog::spmv_csr).cpu_rust);
    // Tested once per call, before the row loop of each variant.
    assert_eq!(s.matches("vals.same_offsets(cols)").count(), 1, "{s}");
    assert!(
        s.find("vals.same_offsets(cols)").unwrap() < s.find("heavy :: map(").unwrap(),
        "{s}"
    );
    // The shared variant reads both rows from one offsets array, the general one each
    // through its own.
    // (Each twice: with and without the checks of `x[cols[i][k]]`, see above.)
    assert_eq!(s.matches("heavy :: map(").count(), 4, "{s}");
    assert_eq!(
        s.matches("__dpl_offsets : & [usize] = vals.offsets()")
            .count(),
        1,
        "{s}"
    );
    assert_eq!(s.matches("shared_row(").count(), 4, "{s}");
    assert_eq!(s.matches("row_unchecked(").count(), 4, "{s}");
    // Three Nested: all must share the first's offsets.
    let t = flat(dpl::inspect!(prog::row_dots).cpu_rust);
    assert!(t.contains("x.same_offsets(y) && x.same_offsets(w)"), "{t}");
    // Matrices are not Nested: one variant per row layout only.
    let e = flat(dpl::inspect!(prog::spmv_ell).cpu_rust);
    assert!(!e.contains("same_offsets"), "{e}");
}

/// Three `Nested` of the given rows; `share`: the second and third built on the first's
/// offsets.
fn three(rows: &[Vec<i64>], share: bool) -> (Nested<i64>, Nested<i64>, Nested<i64>) {
    let x = Nested::from_rows(rows.to_vec());
    let yv: Vec<i64> = x.values().iter().map(|v| v * 3 - 1).collect();
    let wv: Vec<i64> = x.values().iter().map(|v| 7 - v).collect();
    if share {
        let y = Nested::with_offsets_of(&x, yv).unwrap();
        let w = Nested::with_offsets_of(&x, wv).unwrap();
        assert!(x.same_offsets(&y) && x.same_offsets(&w));
        (x, y, w)
    } else {
        let y = Nested::from_parts(yv, x.offsets().to_vec()).unwrap();
        let w = Nested::from_parts(wv, x.offsets().to_vec()).unwrap();
        assert!(!x.same_offsets(&y) && !x.same_offsets(&w));
        (x, y, w)
    }
}

#[test]
fn shared_and_unshared_offsets_give_the_same_results() {
    // Empty rows, long rows (past any grain size), and no rows.
    let mut cases: Vec<Vec<Vec<i64>>> = vec![
        vec![],
        vec![vec![]],
        vec![vec![1, 2, 3], vec![], vec![4], vec![5, 6]],
    ];
    cases.push(
        (0..3000)
            .map(|r| (0..r % 7).map(|k| r * 10 + k).collect())
            .collect(),
    );
    cases.push(vec![(0..100_000).collect(), vec![3; 5], vec![]]);
    for rows in &cases {
        let want: Vec<i64> = rows
            .iter()
            .map(|r| r.iter().map(|&v| v * (v * 3 - 1) + (7 - v)).sum())
            .collect();
        for place in dpl::available_places() {
            for share in [true, false] {
                let (x, y, w) = three(rows, share);
                let got = dpl::with_place(place, || prog::row_dots(&x, &y, &w)).unwrap();
                assert_eq!(got, want, "{place:?}, shared {share}, {} rows", rows.len());
            }
        }
        // SpMV over to_nested's pair agrees with the same pair unshared.
        let vals = Nested::from_rows(
            rows.iter()
                .map(|r| r.iter().map(|&v| (v % 5) as f32).collect::<Vec<_>>()),
        );
        let cols = Nested::with_offsets_of(
            &vals,
            vals.values()
                .iter()
                .enumerate()
                .map(|(k, _)| (k % 11) as u32)
                .collect(),
        )
        .unwrap();
        let apart = Nested::from_parts(cols.values().to_vec(), cols.offsets().to_vec()).unwrap();
        let x: Vec<f32> = (0..11).map(|k| k as f32 - 4.0).collect();
        assert_eq!(
            prog::spmv_csr(&vals, &cols, &x),
            prog::spmv_csr(&vals, &apart, &x)
        );
    }
}

#[test]
fn unshared_rows_of_different_lengths_are_still_a_length_mismatch() {
    let rows = vec![vec![1i64, 2, 3], vec![4, 5], vec![6]];
    let (x, _, w) = three(&rows, true);
    // Same number of elements, rows split differently: only the per-row check sees it.
    let y = Nested::from_parts(vec![1i64; 6], vec![0, 3, 4, 6]).unwrap();
    for place in dpl::available_places() {
        match dpl::with_place(place, || prog::row_dots(&x, &y, &w)) {
            Err(Error::LengthMismatch {
                prim: "map",
                left,
                right,
                ..
            }) => assert_eq!((left.min(right), left.max(right)), (1, 2), "{place:?}"),
            other => panic!("{place:?}: want Err(LengthMismatch(map)), got {other:?}"),
        }
    }
    // A different number of rows: the outer map's check, whether or not offsets are shared.
    let more = Nested::from_rows(vec![vec![1i64]; 4]);
    for place in dpl::available_places() {
        match dpl::with_place(place, || prog::row_dots(&x, &more, &w)) {
            Err(Error::LengthMismatch {
                prim: "map",
                left,
                right,
                ..
            }) => {
                assert_eq!((left.min(right), left.max(right)), (3, 4), "{place:?}")
            }
            other => panic!("{place:?}: want Err(LengthMismatch(map)), got {other:?}"),
        }
    }
}
