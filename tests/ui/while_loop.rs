use dpl::prelude::*;

#[parallel]
fn f(n: usize) -> usize {
    while n > 0 {}
    n
}

fn main() {}
