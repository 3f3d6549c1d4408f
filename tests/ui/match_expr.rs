use dpl::prelude::*;

#[parallel]
fn f(x: &[i32]) -> Vec<i32> {
    map(|v| match v { 0 => 1, _ => v }, x)
}

fn main() {}
