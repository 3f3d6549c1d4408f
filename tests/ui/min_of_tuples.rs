use dpl::prelude::*;

#[parallel]
fn smallest(x: &[f32]) -> (f32, usize) {
    min(zip(x, indices(x)))
}

#[parallel]
fn largest(x: &[f32]) -> (f32, usize) {
    reduce(|a, b| a.max(b), zip(x, indices(x)), (f32::MIN, 0))
}

fn main() {}
