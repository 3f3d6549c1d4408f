use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    let mut total = 0.0f32;
    map(
        |v| {
            total += v;
            v
        },
        x,
    )
}

fn main() {}
