use dpl::prelude::*;

// Slice bounds are `usize`, as in Rust.
#[parallel]
fn f(x: &[f32], a: i32) -> Vec<f32> {
    x[a..]
}

fn main() {}
