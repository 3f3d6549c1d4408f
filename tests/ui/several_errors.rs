use dpl::prelude::*;

#[parallel]
fn f(x: &[f32], y: &mut [f32]) -> Vec<f32> {
    let mut acc = 0.0;
    for v in x { *y = map(|a| a, x); }
    let z = [acc; 4];
    map(|v| v.frobnicate() + undefined, x)
}

fn main() {}
