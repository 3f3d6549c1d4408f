use dpl::prelude::*;

#[parallel]
fn f(x: &[f32]) -> f32 {
    println!("{}", x.len());
    sum(x)
}

fn main() {}
