use dpl::prelude::*;

// `sort` orders scalars and tuples of scalars; rows are not sort keys.
#[parallel]
fn f(x: &Nested<f32>) -> Vec<usize> {
    let s = sort(x);
    map(|r| len(r), s)
}

// `sort_by_key` reorders values without sequences in them.
#[parallel]
fn g(k: &[u32], x: &Nested<f32>) -> Vec<usize> {
    map(|r| len(r), sort_by_key(k, x))
}

fn main() {}
