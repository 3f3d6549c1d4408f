use dpl::prelude::*;

#[parallel]
fn f(x: &[i32]) -> Vec<i32> {
    map(
        |v| match v {
            0 if v > 1 => 1,
            n => n,
            "two" => 2,
            (1, 2) => 3,
            _ => 4,
        },
        x,
    )
}

fn main() {}
