use dpl::prelude::*;

#[parallel]
fn last(x: &[f32]) -> f32 {
    x[-1]
}

#[parallel]
fn too_big(x: &[u32]) -> Vec<u32> {
    map(|v| v + 5_000_000_000, x)
}

fn main() {}
