use dpl::prelude::*;
use dpl::MatrixView;

// A view borrows the caller's data: a result must own its data.
#[parallel]
fn rows(m: MatrixView<'_, f32>) -> MatrixView<'_, f32> {
    map(|r| map(|v| v * 2.0, r), m)
}

// A view parameter is fine, and any shape of result that owns its data.
#[parallel]
fn sums(m: MatrixView<'_, f32>) -> Vec<f32> {
    map(|r| sum(r), m)
}

#[parallel]
fn bad_elem(m: MatrixView<'_, Vec<f32>>) -> f32 {
    0.0
}

fn main() {}
