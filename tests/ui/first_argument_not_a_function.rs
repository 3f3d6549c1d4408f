use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    filter(x, |v| v > 0.0)
}

fn main() {}
