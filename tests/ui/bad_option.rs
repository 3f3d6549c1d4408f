use dpl::prelude::*;

#[parallel(inner = "grid")]
fn f(x: &[f32]) -> f32 {
    sum(x)
}

fn main() {}
