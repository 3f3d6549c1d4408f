use dpl::prelude::*;

// `sum` of a `Nested` would add rows; the per-row sums are `map(|r| sum(r), x)`.
#[parallel]
fn f(x: &Nested<f32>) -> f32 {
    sum(x)
}

fn main() {}
