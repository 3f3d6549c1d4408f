use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let s = sum(x);
    s += 1.0;
    s
}

fn main() {}
