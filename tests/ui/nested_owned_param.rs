use dpl::prelude::*;

// `Nested` and `Matrix` parameters are borrowed.
#[parallel]
fn f(x: Nested<f32>, m: Matrix<f32>) -> Vec<f32> {
    map(|r, s| sum(r) + sum(s), x, m)
}

fn main() {}
