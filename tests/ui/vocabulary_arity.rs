use dpl::prelude::*;

#[parallel]
fn f(x: &[i32], y: &[i32]) -> (Vec<i32>, Vec<i32>, usize) {
    (reverse(x, y), concat(x), argmin(|v| v, x))
}

#[parallel]
fn g(x: &[i32]) -> Vec<i32> {
    zip(x)
}

#[parallel]
fn h(x: &[f32]) -> Vec<f32> {
    map(|v| v.powi(2, 3) + v.powi(3_000_000_000), x)
}

fn main() {}
