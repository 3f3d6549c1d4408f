use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(|v| v + 5000000000u32 + 1u8, x)
}

fn main() {}
