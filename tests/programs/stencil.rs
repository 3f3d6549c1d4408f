//! Stencil programs written once and shared by the stencil tests (every place), the MPI
//! suite (halo exchanges) and the MPI structure tests. Each includes this file with
//! `#[path]`.
#![allow(dead_code)]

use dpl::prelude::*;

#[parallel]
pub fn blur3(x: &[f32]) -> Vec<f32> {
    stencil(|w| (w[0] + w[1] + w[2]) / 3.0, x, [-1, 0, 1], 0.0)
}

#[parallel]
pub fn wide(x: &[i64], d: i64) -> Vec<i64> {
    stencil(|w| w[0] * 1000 + w[1] * 10 - w[2], x, &[-3, 2, 5], d)
}

/// The 5-point Laplacian of a grid.
#[parallel]
pub fn laplacian(u: &Matrix<f64>) -> Nested<f64> {
    stencil(
        |w| 4.0 * w[2] - w[0] - w[1] - w[3] - w[4],
        u,
        [(-1, 0), (0, -1), (0, 0), (0, 1), (1, 0)],
        0.0,
    )
}

/// The 3x3 box sum of a ragged grid (`edge` outside it).
#[parallel]
pub fn box3(u: &Nested<i32>, edge: i32) -> Nested<i32> {
    stencil(
        |w| w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + w[7] + w[8],
        u,
        [
            (-1, -1),
            (-1, 0),
            (-1, 1),
            (0, -1),
            (0, 0),
            (0, 1),
            (1, -1),
            (1, 0),
            (1, 1),
        ],
        edge,
    )
}
