use dpl::prelude::*;

// The elements of a `Nested` are rows: `r * 2.0` multiplies a sequence.
#[parallel]
fn f(x: &Nested<f32>) -> Vec<f32> {
    map(|r| r * 2.0, x)
}

fn main() {}
