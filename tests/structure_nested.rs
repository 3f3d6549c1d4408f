//! Structure of nested `#[parallel]` functions, read with `dpl::inspect!`: fusion across
//! nesting levels (the gather and the product of SpMV fused into the per-row sum, maps
//! fused into per-row filters and scans, module functions inlined into the rows), what is
//! left materialized (a costly producer read by every row is computed once, not once per
//! row), and what each schedule generates for the CPU.
//!
//! Counts are `(loops before fusion, temporaries before, loops after, temporaries after)`:
//! a loop is a combinator of the IR at any nesting level (the outer map over rows and the
//! loop inside each row are two), a temporary a materialized intermediate sequence.

mod prog {
    use dpl::prelude::*;

    #[parallel]
    pub fn spmv_csr(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
        let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
        map(spvv, vals, cols)
    }

    #[parallel(inner = "block")]
    pub fn spmv_csr_block(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
        let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
        map(spvv, vals, cols)
    }

    #[parallel(inner = "auto")]
    pub fn spmv_csr_auto(vals: &Nested<f32>, cols: &Nested<u32>, x: &[f32]) -> Vec<f32> {
        let spvv = |ai, ci| sum(map(|aij, xj| aij * xj, ai, gather(x, ci)));
        map(spvv, vals, cols)
    }

    #[parallel]
    pub fn spmv_ell(vals: &Matrix<f32>, cols: &Matrix<u32>, x: &[f32]) -> Vec<f32> {
        map(|a, c| sum(map(|v, j| v * x[j], a, c)), vals, cols)
    }

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
}

/// `(loops before fusion, temporaries before, loops after, temporaries after)`.
fn counts(i: &dpl::Inspect) -> (usize, usize, usize, usize) {
    (
        i.loops_before_fusion,
        i.temporaries_before_fusion,
        i.loops,
        i.temporaries,
    )
}

#[track_caller]
fn shape(i: dpl::Inspect, want: (usize, usize, usize, usize)) {
    assert_eq!(
        counts(&i),
        want,
        "{}: (loops before, temporaries before, loops, temporaries)\nnormalized:\n{}\nfused:\n{}",
        i.name,
        i.normalized_ir,
        i.fused_ir
    );
}

/// Occurrences of `soac <kind>(` in an IR text.
fn soacs(ir: &str, kind: &str) -> usize {
    ir.matches(&format!("soac {kind}(")).count()
}

/// The generated Rust with all whitespace runs made single spaces.
fn flat(rust: &str) -> String {
    rust.split_whitespace().collect::<Vec<_>>().join(" ")
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
    // Default: rows spread over the threads (heavy::map), each row's sum sequential.
    let s = flat(seq.cpu_rust);
    assert_eq!(s.matches("heavy :: map(").count(), 1, "{s}");
    assert_eq!(s.matches("seq :: reduce(").count(), 1, "{s}");
    assert_eq!(s.matches("rt :: reduce(").count(), 0, "{s}");
    // Block: the sum of each row is parallel too.
    let b = flat(block.cpu_rust);
    assert_eq!(b.matches("heavy :: map(").count(), 1, "{b}");
    assert_eq!(b.matches("seq :: reduce(").count(), 0, "{b}");
    assert_eq!(b.matches("rt :: reduce(").count(), 1, "{b}");
    // Auto: both, chosen by the documented rule from the shape of the first Nested.
    let a = flat(auto.cpu_rust);
    assert_eq!(a.matches("heavy :: parallel_inner(").count(), 1, "{a}");
    assert!(a.contains("vals.max_row_len()"), "{a}");
    assert_eq!(a.matches("seq :: reduce(").count(), 1, "{a}");
    assert_eq!(a.matches("rt :: reduce(").count(), 1, "{a}");
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
    // The one temporary left is each row's result (collected into the Nested result).
    for i in [
        dpl::inspect!(prog::row_filter_of_map),
        dpl::inspect!(prog::row_scan_of_map),
    ] {
        shape(i, (3, 2, 2, 1));
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
    shape(i, (3, 1, 3, 1));
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
#[ignore = "missed optimization: a ragged result is built as Vec<Vec<T>> (one allocation per \
            row, counted as a temporary) and then copied by Nested::from, instead of being \
            written in place after a pass computing the row lengths"]
fn ragged_map_in_map_writes_rows_in_place() {
    let i = dpl::inspect!(prog::row_map_in_map);
    assert_eq!(
        (i.loops, i.temporaries),
        (2, 0),
        "{}\n{}",
        i.fused_ir,
        i.cpu_rust
    );
}

#[test]
fn fused_programs_compute_the_right_thing() {
    // The structures above are not bought with wrong answers (the suites in
    // conformance_nested.rs test these shapes of program thoroughly).
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
