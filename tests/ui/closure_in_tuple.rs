use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let g = |v| v * 2.0;
    let pair = (g, 1.0);
    sum(x)
}

fn main() {}
