use dpl::prelude::*;

#[parallel]
fn f(mut n: usize) -> usize {
    n
}

fn main() {}
