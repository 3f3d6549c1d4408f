use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            while v > 10 {}
            v
        },
        x,
    )
}

fn main() {}
