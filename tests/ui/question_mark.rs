use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Result<f32, dpl::Error> {
    let s = sum(x)?;
    s
}

fn main() {}
