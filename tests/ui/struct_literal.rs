use dpl::prelude::*;

struct P {
    a: f32,
}

#[parallel]
fn f(x: &[f32]) -> f32 {
    let p = P { a: sum(x) };
    sum(x)
}

fn main() {}
