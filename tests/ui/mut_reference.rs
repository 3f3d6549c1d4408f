use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> Vec<f32> {
    map(
        |v| {
            let mut w = v;
            let r = &mut w;
            *r
        },
        x,
    )
}

fn main() {}
