use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    let mut double = |v: f32| v * 2.0;
    map(double, x)
}

fn main() {}
