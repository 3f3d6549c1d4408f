use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    map(|v| v as String, x)
}

fn main() {}
