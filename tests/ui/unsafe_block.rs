use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    unsafe { sum(x) }
}

fn main() {}
