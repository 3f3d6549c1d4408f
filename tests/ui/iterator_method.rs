use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    x.iter().sum()
}

fn main() {}
