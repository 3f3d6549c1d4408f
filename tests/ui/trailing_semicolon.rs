use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    sum(x);
}

fn main() {}
