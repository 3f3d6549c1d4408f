use dpl::prelude::*;

// `norm` takes a scalar, but `map` over a `Nested` calls it with rows.
#[parallel]
fn f(x: &Nested<f32>) -> Vec<f32> {
    fn norm(r: f32) -> f32 {
        r.abs()
    }
    map(norm, x)
}

fn main() {}
