use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(|v| v + 5000000000u32 + 1u128, x)
}

#[parallel]
fn g(x: &[u8], y: &[i16]) -> (Vec<u8>, Vec<i16>, Vec<i8>) {
    (map(|v| v + 300u8, x), map(|v| v - 40000i16, y), map(|v| (v as i8) + -129i8, x))
}

#[parallel]
fn h(x: &[u8]) -> Vec<u8> {
    map(|v| v * 300, x)
}

fn main() {}
