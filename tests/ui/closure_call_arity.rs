use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let add = |a, b| a + b;
    add(sum(x))
}

fn main() {}
