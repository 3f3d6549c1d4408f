use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    return sum(x);
}

fn main() {}
