use dpl::prelude::*;

// Sequences of sequences are passed as `&Nested<T>` (or `&Matrix<T>`), not `Vec<Vec<T>>`.
#[parallel]
fn f(x: &Vec<Vec<f32>>) -> Vec<f32> {
    map(|r| sum(r), x)
}

fn main() {}
