use dpl::prelude::*;

// `r[0]` is a scalar: it has no length and cannot be summed.
#[parallel]
fn f(x: &Nested<u32>) -> Vec<u32> {
    map(|r| sum(r[0]) + len(r[0]) as u32, x)
}

fn main() {}
