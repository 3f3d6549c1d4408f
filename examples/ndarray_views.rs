//! `ndarray` 1-D views read in place with their stride: a dot product and a map over a
//! column of an `n x 3` row-major array (stride 3), timed in interleaved rounds against
//! the same calls on a copy of the column (what dpl did before: a strided view was copied
//! into a `Vec`) and against hand-written rayon indexing the view.
//!
//! `cargo run --release --features ndarray --example ndarray_views [rounds]`

use dpl::ndarray::{Array1, Array2, ArrayView1};
use dpl::prelude::*;
use rayon::prelude::*;

#[path = "shared/timing.rs"]
mod timing;

#[parallel]
fn dot(x: ArrayView1<'_, f64>, y: &Array1<f64>) -> f64 {
    sum(map(|a, b| a * b, x, y))
}

#[parallel]
fn scale(x: ArrayView1<'_, f64>, k: f64) -> Vec<f64> {
    map(|v| v * k + 1.0, x)
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    for n in [1usize << 16, 1 << 20, 1 << 22] {
        let a = Array2::from_shape_fn((n, 3), |(r, c)| ((r * 7 + c) % 13) as f64 * 0.5);
        let y = Array1::from_shape_fn(n, |i| (i % 5) as f64);
        let col = a.column(1);
        // The same results by every route.
        let copy = col.to_owned();
        assert_eq!(dot(col, &y), dot(copy.view(), &y));
        assert_eq!(scale(col, 2.0), scale(copy.view(), 2.0));
        let fs: [&dyn Fn(); 3] = [
            &|| {
                std::hint::black_box(dot(col, &y));
            },
            &|| {
                let c = col.to_owned();
                std::hint::black_box(dot(c.view(), &y));
            },
            &|| {
                let s: f64 = (0..n).into_par_iter().map(|i| col[i] * y[i]).sum();
                std::hint::black_box(s);
            },
        ];
        let t = timing::interleaved(&fs, rounds);
        let gs: [&dyn Fn(); 3] = [
            &|| {
                std::hint::black_box(scale(col, 2.0));
            },
            &|| {
                let c = col.to_owned();
                std::hint::black_box(scale(c.view(), 2.0));
            },
            &|| {
                let v: Vec<f64> = (0..n).into_par_iter().map(|i| col[i] * 2.0 + 1.0).collect();
                std::hint::black_box(v);
            },
        ];
        let u = timing::interleaved(&gs, rounds);
        let ratio =
            |a: std::time::Duration, b: std::time::Duration| b.as_secs_f64() / a.as_secs_f64();
        println!(
            "n = {n}: dot in place {} (copy then dot {}: {:.2}x, rayon {}: {:.2}x) | map in place {} (copy then map {}: {:.2}x, rayon {}: {:.2}x)",
            timing::fmt(t[0].0),
            timing::fmt(t[1].0),
            ratio(t[0].0, t[1].0),
            timing::fmt(t[2].0),
            ratio(t[0].0, t[2].0),
            timing::fmt(u[0].0),
            timing::fmt(u[1].0),
            ratio(u[0].0, u[1].0),
            timing::fmt(u[2].0),
            ratio(u[0].0, u[2].0),
        );
    }
}
