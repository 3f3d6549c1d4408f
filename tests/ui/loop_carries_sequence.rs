use dpl::prelude::*;

#[parallel]
fn f(rows: &Nested<f32>) -> Vec<f32> {
    map(
        |r| {
            let mut acc = r;
            for _ in 0..3 {
                acc = map(|v| v * 2.0, acc);
            }
            sum(acc)
        },
        rows,
    )
}

fn main() {}
