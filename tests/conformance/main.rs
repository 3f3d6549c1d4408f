//! The conformance suite: flat DSL programs covering every primitive and language feature of
//! the language, each run on every place at sizes 0, 1, 1001 and 2^20 + 7 and compared with
//! plain Rust written independently here.
//!
//! One file per primitive family, each with its programs (`mod prog`) next to their checks
//! (programs other suites run too are in `tests/programs/`, re-exported by `mod prog`).
//! Integer results and maps must match exactly; floating-point reductions and scans may
//! differ by reassociation (see `common::assert_reduced`).

#[path = "../common/mod.rs"]
mod common;
/// The indexed programs shared with other suites.
#[path = "../programs/indexed.rs"]
mod indexed;

mod filters;
mod gather_scatter;
mod generics;
mod halfs;
mod in_place;
mod language;
mod loops;
mod maps;
mod math;
mod modules;
mod nans;
mod operators;
mod pipelines;
mod reductions;
mod scans;
mod sequences;
mod small_ints;
mod top_loops;
mod vocabulary;

use common::*;
use dpl::Place;

/// `|a, b| a OP b` applied element-wise to two slices, for the oracles.
fn zip_with<A: Copy, B: Copy, R>(a: &[A], b: &[B], f: impl Fn(A, B) -> R) -> Vec<R> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// `f` applied to every element, for the oracles.
fn each<A: Copy, R>(a: &[A], mut f: impl FnMut(A) -> R) -> Vec<R> {
    a.iter().map(|&x| f(x)).collect()
}

/// Calls from many threads at once, and from inside rayon tasks (nested parallelism), on
/// both CPU places: every call returns its own correct result and nothing deadlocks.
#[test]
fn concurrent_and_nested_calls() {
    use rayon::prelude::*;
    let inputs: Vec<(Vec<f32>, Vec<f32>)> = (0..8)
        .map(|k| {
            let mut rng = Rng::new(k);
            let n = if k % 2 == 0 { BIG / 4 } else { 1001 };
            (rng.f32s(n, -1.0, 1.0), rng.f32s(n, -1.0, 1.0))
        })
        .collect();
    let expected: Vec<Vec<f32>> = inputs
        .iter()
        .map(|(x, y)| zip_with(x, y, |p, q| 1.5 * p + q))
        .collect();
    std::thread::scope(|s| {
        for (k, ((x, y), want)) in inputs.iter().zip(&expected).enumerate() {
            let place = if k % 3 == 0 { Place::Seq } else { Place::Cpu };
            s.spawn(move || {
                for _ in 0..3 {
                    let got = dpl::with_place(place, || maps::prog::saxpy(1.5, x, y));
                    assert_same(&got, want, &format!("thread {k} on {place:?}"));
                }
            });
        }
    });
    // Inside rayon tasks the CPU place's own parallel loops nest in the same pool.
    inputs
        .par_iter()
        .zip(&expected)
        .enumerate()
        .for_each(|(k, ((x, y), want))| {
            let got = dpl::with_place(Place::Cpu, || maps::prog::saxpy(1.5, x, y));
            assert_same(&got, want, &format!("rayon task {k}"));
        });
}
