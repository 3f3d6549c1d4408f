use dpl::prelude::*;

#[parallel]
fn f(x: &[f32], k: f32) -> Vec<f32> {
    fn scale(v: f32) -> f32 {
        v * k
    }
    map(scale, x)
}

fn main() {}
