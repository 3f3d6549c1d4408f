use dpl::prelude::*;

const MAX_ITER: u32 = 100;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(|v| v.min(MAX_ITER) + self::MAX_ITER, x)
}

fn main() {}
