use dpl::prelude::*;

#[parallel]
fn f(x: &[i32]) -> Vec<i32> {
    map(|v| match v { 0 => 1, 1..=9 => 2, i32::MIN..=-1 => 3 }, x)
}

#[parallel]
fn g(x: &[i32]) -> Vec<i32> {
    map(|v| match v > 0 { true => 1 }, x)
}

fn main() {}
