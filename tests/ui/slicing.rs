use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let head = x[0..4];
    sum(x)
}

fn main() {}
