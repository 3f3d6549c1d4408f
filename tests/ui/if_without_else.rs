use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    map(|v| if v > 0.0 { v }, x)
}

fn main() {}
