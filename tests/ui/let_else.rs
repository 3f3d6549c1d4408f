use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let (a, b) = (sum(x), 1.0) else { panic!() };
    a + b
}

fn main() {}
