use dpl::prelude::*;

#[parallel]
fn f(x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|a| a * 2.0, x, y)
}

fn main() {}
