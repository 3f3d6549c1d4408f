use dpl::prelude::*;

// A `Matrix` is an input layout only; results are `Vec<T>` or `Nested<T>`.
#[parallel]
fn f(m: &Matrix<f32>) -> Matrix<f32> {
    map(|r| map(|v| v * 2.0, r), m)
}

fn main() {}
