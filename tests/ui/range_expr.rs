use dpl::prelude::*;

#[parallel]
fn f(n: usize) -> Vec<usize> {
    map(|i| i * 2, 0..n)
}

fn main() {}
