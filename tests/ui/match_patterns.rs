use dpl::prelude::*;

#[parallel]
fn f(x: &[i32]) -> Vec<i32> {
    map(
        |v| match v {
            0 if v > 1 => 1,
            "two" => 2,
            (1, 2) => 3,
            1.5 => 4,
            n => n,
        },
        x,
    )
}

fn main() {}
