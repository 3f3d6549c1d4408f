use dpl::prelude::*;

// `&` needs integers: `T: Float` admits floats only.
#[parallel]
fn bits<T: Float>(x: &[T], y: &[T]) -> Vec<T> {
    map(|a, b| a & b, x, y)
}

// `sqrt` needs a float: `T: Num` admits integers too.
#[parallel]
fn roots<T: Num>(x: &[T]) -> Vec<T> {
    map(|v| v.sqrt(), x)
}

fn main() {}
