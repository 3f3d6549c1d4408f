use dpl::prelude::*;

#[parallel(inner = "fast", chunk = 4)]
fn f(x: &[f32]) -> f32 {
    let s = sum(x);
    s += 1.0;
    s
}

fn main() {}
