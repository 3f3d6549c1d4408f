use dpl::prelude::*;

// 11 x 11 combinations: past the limit of 64.
#[parallel]
fn pairs<T: Num, U: Num>(x: &[T], y: &[U]) -> Vec<(T, U)> {
    zip(x, y)
}

fn main() {}
