use dpl::prelude::*;

// `max` of a `Nested` would compare rows; the per-row maxima are `map(|r| max(r), x)`.
#[parallel]
fn f(x: &Nested<i32>) -> Vec<i32> {
    max(x)
}

fn main() {}
