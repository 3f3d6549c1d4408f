use dpl::prelude::*;

fn helper(v: f32) -> f32 {
    v * 2.0
}

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    map(|v| helper(v), x)
}

fn main() {}
