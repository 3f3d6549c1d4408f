use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    reduce(|a, b| a + b, x)
}

fn main() {}
