use dpl::prelude::*;

#[parallel]
fn total(x: &[f32]) -> f32 {
    let s = 0.0;
    for v in x {}
    s
}

fn main() {}
