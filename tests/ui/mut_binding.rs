use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let mut s = sum(x);
    s
}

fn main() {}
