use dpl::prelude::*;

#[parallel]
fn f<T: Copy>(x: &[T]) -> Vec<T> {
    map(|v| v, x)
}

fn main() {}
