//! The nested conformance suite: DSL programs over `Nested` and `Matrix` data (per-row
//! primitives, maps inside maps, ragged results, closures capturing outer sequences, nested
//! fns and module functions taking rows, errors raised inside rows), each run on every place
//! at every shape of `common_nested` (no rows, one row, empty rows among others, many short
//! rows, few long rows, one very long row among many short, and 2^20 elements) and compared
//! with plain Rust written independently here.
//!
//! The programs of `sched` are compiled four times, once per schedule (default: inner
//! levels sequential; `inner = "block"` and `"warp"`: inner levels parallel too on the CPU;
//! `inner = "auto"`: chosen at run time from the shape), and every variant must give the
//! oracle's result.
//!
//! Integer results must match exactly; floating-point reductions and scans may differ by
//! reassociation (`common::assert_reduced`, `common::assert_scanned`), row by row.
//!
//! One file per family of nested programs, each with its programs (`mod prog`, or `mod sched`
//! for the scheduled ones) next to their checks.

#[path = "../common/mod.rs"]
mod common;
#[path = "../common_nested/mod.rs"]
mod common_nested;

mod errors;
mod filters;
mod gathers;
mod maps;
mod matrix;
mod phases;
mod reductions;
mod scans;
mod schedules;
mod three_levels;
mod two_inputs;

use common::*;
use common_nested::*;
use dpl::{Error, Nested, Place};

/// The oracle of `centered_rows`: each row minus its mean (the mean in `f64`, summed in
/// order; the program's sum may be reassociated, so the comparison allows for that).
fn check_centered(got: &Nested<f64>, rows: &[Vec<f64>], what: &str) {
    assert_eq!(got.len(), rows.len(), "{what}: number of rows");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(got.row_len(i), r.len(), "{what}: length of row {i}");
        let (s, m) = f64_sum(r.iter().copied());
        let mean = s / r.len() as f64;
        // An error e in the sum shifts every element by e / len.
        let allowed = reassociation_tolerance::<f64>(r.len()) * m / r.len() as f64;
        for (k, (&g, &v)) in got.row(i).iter().zip(r).enumerate() {
            let w = v - mean;
            assert!(
                (g - w).abs() <= allowed + 4.0 * f64::EPSILON * v.abs().max(mean.abs()),
                "{what}: row {i}[{k}]: got {g}, want {w}"
            );
        }
    }
}

/// The rows as slices.
fn slices<T>(rows: &[Vec<T>]) -> impl Iterator<Item = &[T]> {
    rows.iter().map(Vec::as_slice)
}

/// `f` applied to every row.
fn per_row<T, R>(rows: &[Vec<T>], f: impl FnMut(&[T]) -> R) -> Vec<R> {
    slices(rows).map(f).collect()
}

fn wrapping_sum_i64(r: &[i64]) -> i64 {
    r.iter().fold(0i64, |a, &b| a.wrapping_add(b))
}

fn wrapping_sum_i32(r: &[i32]) -> i32 {
    r.iter().fold(0i32, |a, &b| a.wrapping_add(b))
}

/// `n` dense `f32` values in `[-1, 1)`, a vector to multiply by.
fn dense(n: usize, rng: &mut Rng) -> Vec<f32> {
    rng.f32s(n, -1.0, 1.0)
}

/// A CSR matrix with the given row lengths over `ncols` columns: `(vals, cols)` rows.
fn csr(lens: &[usize], ncols: usize, rng: &mut Rng) -> (Vec<Vec<f32>>, Vec<Vec<u32>>) {
    let vals = rows_of(lens, rng, |r| r.f32_in(-2.0, 2.0));
    let cols = rows_of(lens, rng, |r| r.below(ncols) as u32);
    (vals, cols)
}

fn spmv_oracle(vals: &[Vec<f32>], cols: &[Vec<u32>], x: &[f32]) -> Vec<Vec<f32>> {
    vals.iter()
        .zip(cols)
        .map(|(a, c)| a.iter().zip(c).map(|(v, &j)| v * x[j as usize]).collect())
        .collect()
}
