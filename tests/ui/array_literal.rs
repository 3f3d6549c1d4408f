use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let w = [1.0, 2.0, 3.0];
    sum(x)
}

fn main() {}
