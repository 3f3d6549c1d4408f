use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let s = sum(x);
    s = 2.0;
    s
}

fn main() {}
