//! Nested data on the simulated GPU: `[[T]]` parameters (rows stored as the elements plus
//! row offsets), rows inside element functions (per-row reductions, scans, filters,
//! gathers, `r[i]`, `len(r)`), and ragged results (sizes, offsets, fill), under every inner
//! schedule, compared with the reference interpreter.
#![cfg(feature = "sim")]

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{Inner, Options};
use support::programs::source;
use support::*;

const SCHEDULES: [Inner; 4] = [Inner::Seq, Inner::Warp, Inner::Block, Inner::Auto];

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

/// Runs `src` under every schedule on inputs from `gen` for each size; compares with the
/// interpreter (relative tolerance `rel` for floats) and returns how many runs failed
/// (with the same error on both sides), per schedule.
fn check(
    src: &str,
    sizes: &[usize],
    rel: f64,
    generate: impl Fn(&mut Rng, usize) -> Vec<Value>,
) -> usize {
    let c = compiled(src);
    let mut errors = 0;
    for inner in SCHEDULES {
        let prog = dpl_cuda::compile_with(
            &c.fused,
            &Options {
                inner,
                ..Options::default()
            },
        )
        .unwrap_or_else(|e| panic!("{inner:?}: {e}\n{}", c.fused));
        errors = 0;
        for &n in sizes {
            let mut r = Rng::new(0x5eed ^ (n as u64).wrapping_mul(0x9e37_79b9));
            let args = generate(&mut r, n);
            let want = interp::run(&c.fused, args.clone());
            let got = dpl_cuda::run(&prog, driver(), args);
            let case = format!("{} ({inner:?}) at n = {n}", c.fused.name);
            if agree(&want, &got, rel, &case) {
                errors += 1;
            }
        }
    }
    errors
}

const SIZES: [usize; 5] = [0, 1, 7, 33, 300];

/// `n` rows of exactly `width` elements (a `Matrix`).
fn matrix(r: &mut Rng, n: usize, width: usize, mut item: impl FnMut(&mut Rng) -> Value) -> Value {
    Value::seq(
        (0..n)
            .map(|_| Value::seq((0..width).map(|_| item(r)).collect()))
            .collect(),
    )
}

fn f32v(r: &mut Rng) -> Value {
    Value::F32(r.f64_in(-10.0, 10.0) as f32)
}
fn f64v(r: &mut Rng) -> Value {
    Value::F64(r.f64_in(-10.0, 10.0))
}
fn i64v(r: &mut Rng) -> Value {
    Value::I64(r.int_in(-1000..1000))
}
fn i32v(r: &mut Rng) -> Value {
    Value::I32(r.int_in(-1000..1000) as i32)
}

#[test]
fn row_sums() {
    check(source("row_sums"), &SIZES, 1e-4, |r, n| {
        vec![ragged(r, n, 40, f32v)]
    });
    check(source("row_sums"), &[5, 64], 1e-4, |r, n| {
        vec![matrix(r, n, 9, f32v)]
    });
}

#[test]
fn spmv_csr() {
    check(source("spmv_csr"), &SIZES, 1e-4, |r, n| {
        let m = n + 3;
        let lens: Vec<usize> = (0..n).map(|_| r.int_in(0..12) as usize).collect();
        let vals = Value::seq(
            lens.iter()
                .map(|&l| Value::seq((0..l).map(|_| f32v(r)).collect()))
                .collect(),
        );
        let cols = Value::seq(
            lens.iter()
                .map(|&l| {
                    Value::seq(
                        (0..l)
                            .map(|_| Value::U32(r.int_in(0..m as i64) as u32))
                            .collect(),
                    )
                })
                .collect(),
        );
        vec![vals, cols, f32s(r, m, 2.0)]
    });
}

#[test]
fn spmv_csr_bad_column_and_mismatched_rows() {
    let errors = check(source("spmv_csr"), &[7, 33, 300], 1e-4, |r, n| {
        let lens: Vec<usize> = (0..n).map(|_| r.int_in(1..6) as usize).collect();
        let vals = Value::seq(
            lens.iter()
                .map(|&l| Value::seq((0..l).map(|_| f32v(r)).collect()))
                .collect(),
        );
        let cols = Value::seq(
            lens.iter()
                .enumerate()
                .map(|(i, &l)| {
                    Value::seq(
                        (0..l)
                            .map(|j| Value::U32(if i == n / 2 && j == 0 { 99 } else { 1 }))
                            .collect(),
                    )
                })
                .collect(),
        );
        vec![vals, cols, f32s(r, 4, 2.0)]
    });
    assert_eq!(errors, 3);
    let errors = check(source("spmv_csr"), &[7, 33], 1e-4, |r, n| {
        let vals = ragged(r, n, 5, f32v);
        let cols = ragged(r, n, 5, |r| Value::U32(r.int_in(0..4) as u32));
        vec![vals, cols, f32s(r, 4, 2.0)]
    });
    assert_eq!(errors, 2);
}

#[test]
fn row_min_max_and_empty_rows() {
    check(source("row_min_max"), &[0, 1, 7, 300], 0.0, |r, n| {
        vec![Value::seq(
            (0..n)
                .map(|_| Value::seq((0..r.int_in(1..30)).map(|_| i64v(r)).collect()))
                .collect(),
        )]
    });
    let errors = check(source("row_min_max"), &[7, 300], 0.0, |r, n| {
        vec![ragged(r, n, 30, i64v)]
    });
    assert_eq!(errors, 2);
}

#[test]
fn row_scans() {
    check(source("row_scan"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, i64v)]
    });
    check(source("running_balances"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, i64v), i64s(r, n, -100, 100)]
    });
    check(source("row_exclusive_scan"), &SIZES, 0.0, |r, n| {
        vec![
            ragged(r, n, 40, |r| Value::U32(r.u64() as u32)),
            u32s(r, n, 0, 1 << 30),
        ]
    });
}

#[test]
fn row_filters() {
    check(source("row_filter_of_map"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, i64v)]
    });
    check(source("row_map_of_filter"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, f32v)]
    });
    check(source("row_sum_of_filter"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, i32v)]
    });
    check(source("row_neighbour_diffs"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, i32v)]
    });
    check(source("gather_kept_indices"), &SIZES, 0.0, |r, n| {
        vec![
            ragged(r, n, 20, |r| Value::U32(r.int_in(0..60) as u32)),
            f32s(r, 40, 1.0),
        ]
    });
}

#[test]
fn gathered_and_identical_rows() {
    check(source("pick_rows"), &SIZES, 0.0, |r, n| {
        let m = n + 2;
        vec![ragged(r, m, 30, i32v), u32s(r, n, 0, m as i64)]
    });
    let errors = check(source("pick_rows"), &[7, 33], 0.0, |r, n| {
        vec![ragged(r, n, 30, i32v), u32s(r, n, 0, n as i64 + 2)]
    });
    assert_eq!(errors, 2);
    check(source("identity_nested"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 30, |r| {
            Value::Tuple(vec![i32v(r), Value::Bool(r.u64() % 2 == 0)])
        })]
    });
}

#[test]
fn rows_built_from_counts() {
    check(source("rows_from_counts"), &SIZES, 0.0, |r, n| {
        vec![u32s(r, n, 0, 50)]
    });
}

#[test]
fn row_index_in_and_out_of_range() {
    check(source("row_index"), &[0, 1, 33], 0.0, |r, n| {
        vec![
            Value::seq(
                (0..n)
                    .map(|_| Value::seq((0..r.int_in(3..9)).map(|_| i32v(r)).collect()))
                    .collect(),
            ),
            Value::Usize(2),
        ]
    });
    let errors = check(source("row_index"), &[7, 300], 0.0, |r, n| {
        vec![ragged(r, n, 9, i32v), Value::Usize(2)]
    });
    assert_eq!(errors, 2);
}

#[test]
fn centered_rows_and_row_dots() {
    check(source("centered_rows"), &SIZES, 1e-12, |r, n| {
        vec![ragged(r, n, 40, f64v)]
    });
    check(source("row_dots"), &SIZES, 1e-12, |r, n| {
        let a = matrix(r, n, 13, f64v);
        let b = matrix(r, n, 13, f64v);
        vec![a, b]
    });
    let errors = check(source("row_dots"), &[7], 1e-12, |r, n| {
        vec![matrix(r, n, 13, f64v), matrix(r, n, 12, f64v)]
    });
    assert_eq!(errors, 1);
}

#[test]
fn matrix_row_on_the_host_and_first_column() {
    check(source("mat_row_and_col0"), &[1, 7, 33], 1e-12, |r, n| {
        vec![matrix(r, n, 6, f64v), Value::Usize(n / 2)]
    });
    let errors = check(source("mat_row_and_col0"), &[0, 7], 1e-12, |r, n| {
        vec![matrix(r, n, 6, f64v), Value::Usize(n + 1)]
    });
    assert_eq!(errors, 2);
}

#[test]
fn three_loops_per_row() {
    check(source("pair_sums_per_row"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 20, i64v)]
    });
}

#[test]
fn random_access_into_row_scans_and_filters() {
    let errors = check(source("last_of_row_scan"), &SIZES, 0.0, |r, n| {
        vec![
            Value::seq(
                (0..n)
                    .map(|_| Value::seq((0..r.int_in(4..20)).map(|_| i64v(r)).collect()))
                    .collect(),
            ),
            Value::Usize(1),
        ]
    });
    assert!(errors <= SIZES.len());
}

#[test]
fn offsets_of_rows() {
    check(source("offsets_of"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, i32v)]
    });
}

#[test]
fn per_row_scatter_reduce_scatter_and_permute() {
    check(source("row_histograms"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 30, |r| Value::U32(r.u64() as u32))]
    });
    // Each row permuted by a random permutation of its positions.
    let perms = |r: &mut Rng, x: &Value| -> Value {
        let Value::Seq(rows) = x else { unreachable!() };
        Value::seq(
            rows.iter()
                .map(|row| {
                    let Value::Seq(items) = row else {
                        unreachable!()
                    };
                    Value::seq(
                        r.permutation(items.len())
                            .into_iter()
                            .map(|p| Value::I64(p as i64))
                            .collect(),
                    )
                })
                .collect(),
        )
    };
    check(source("row_permute_scatter"), &SIZES, 0.0, |r, n| {
        let x = ragged(r, n, 30, i32v);
        let idx = perms(r, &x);
        vec![x, idx]
    });
    // A duplicate, and an index out of range, in some row.
    let errors = check(source("row_permute_scatter"), &[7, 33], 0.0, |r, n| {
        let x = Value::seq(
            (0..n)
                .map(|_| Value::seq((0..r.int_in(3..9)).map(|_| i32v(r)).collect()))
                .collect(),
        );
        let Value::Seq(p) = perms(r, &x) else {
            unreachable!()
        };
        let mut p: Vec<Value> = p.iter().cloned().collect();
        let Value::Seq(row) = &p[n / 2] else {
            unreachable!()
        };
        let mut row: Vec<Value> = row.iter().cloned().collect();
        row[1] = if n == 7 {
            row[0].clone()
        } else {
            Value::I64(-1)
        };
        p[n / 2] = Value::seq(row);
        vec![x, Value::seq(p)]
    });
    assert_eq!(errors, 2);
}

#[test]
fn row_argmax_with_branches_in_the_operator() {
    check(source("row_argmax"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 40, |r| Value::F32((r.int_in(-5..5)) as f32))]
    });
}

#[test]
fn filter_of_rows_and_unzipped_rows() {
    for k in [0, 1, 3] {
        check(source("rows_longer_than"), &SIZES, 0.0, |r, n| {
            vec![ragged(r, n, 7, i32v), Value::Usize(k)]
        });
    }
    check(source("row_positives_and_sums"), &SIZES, 0.0, |r, n| {
        vec![ragged(r, n, 30, i32v)]
    });
}

/// A row where element 2 divides by zero and element 5 indexes out of range (a check that
/// comes first in the element's code): every schedule reports the division, the first
/// failure in sequential order, even when a warp or block evaluates both at once. (`i32`:
/// a 64-bit division is a subroutine call in SASS, around which ptxas spills in the block
/// schedule on sm_90.)
#[test]
fn first_failure_in_sequential_order_under_every_schedule() {
    let errors = check(source("two_failures_per_row"), &[1, 7], 0.0, |r, n| {
        let rows = (0..n)
            .map(|i| {
                let mut row: Vec<i32> = (0..40).map(|_| r.int_in(1..10) as i32).collect();
                if i == n / 2 {
                    row[2] = 0;
                    row[5] = 999;
                }
                Value::seq(row.into_iter().map(Value::I32).collect())
            })
            .collect();
        vec![Value::seq(rows), i32s(r, 10, -5, 5)]
    });
    assert_eq!(errors, 2);
}
