use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Result<f32, String> {
    sum(x)
}

fn main() {}
