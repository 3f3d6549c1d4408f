use dpl::prelude::*;

// Assigned twice, inside an `if`, inside a closure, and a `*z` that is not a parameter.
#[parallel]
fn twice(x: &[f32], y: &mut [f32], c: bool) {
    *y = map(|v| v + 1.0, x);
    if c {
        *y = map(|v| v * 2.0, x);
    }
    *y = map(|v| v, y);
    let z = map(|v| v, x);
    *z = map(|v| v, x);
}

// Never assigned, and a `&mut` scalar.
#[parallel]
fn never(y: &mut Vec<i32>, k: &mut i32) -> i32 {
    sum(y)
}

// A function without a result must end with a statement.
#[parallel]
fn ends_with_value(y: &mut [f32]) {
    *y = map(|v| v, y);
    sum(y)
}

fn main() {}
