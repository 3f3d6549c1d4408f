use dpl::prelude::*;

#[parallel]
fn f(k: &[u32], v: &[f32]) -> Vec<f32> {
    sort_by_key(|a| a, k, v)
}

fn main() {}
