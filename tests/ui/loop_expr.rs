use dpl::prelude::*;

#[parallel]
fn f(n: usize) -> usize {
    loop {}
}

fn main() {}
