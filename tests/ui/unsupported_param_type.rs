use dpl::prelude::*;

#[parallel]
fn f(rows: &[Vec<f32>], m: &mut [f32]) -> f32 {
    0.0
}

fn main() {}
