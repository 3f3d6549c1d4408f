use dpl::prelude::*;

#[parallel(inner = "fast", chunk = 4)]
fn f(x: &[f32]) -> f32 {
    let mut s = sum(x);
    s
}

fn main() {}
