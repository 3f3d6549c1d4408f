use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    let name = "total";
    sum(x)
}

fn main() {}
