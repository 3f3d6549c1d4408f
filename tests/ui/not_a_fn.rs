use dpl::prelude::*;

#[parallel]
struct S {
    x: f32,
}

fn main() {}
