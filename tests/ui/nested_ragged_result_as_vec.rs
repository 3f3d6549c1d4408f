use dpl::prelude::*;

// A per-row filter is ragged: its result is a `Nested<f32>`, not a `Vec<f32>`.
#[parallel]
fn f(x: &Nested<f32>) -> Vec<f32> {
    map(|r| filter(|v| v > 0.0, r), x)
}

fn main() {}
