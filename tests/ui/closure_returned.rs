use dpl::prelude::*;

#[parallel]
fn f(k: f32) -> f32 {
    let g = |v| v * k;
    g
}

fn main() {}
