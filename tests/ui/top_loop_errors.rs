use dpl::prelude::*;

#[parallel]
fn f(x: &[f32], y: &mut [f32], n: usize) -> f32 {
    let mut s = 0.0;
    while n > 0 {}
    for _ in 0..n {
        *y = map(|a| a * 2.0, x);
    }
    for i in 0..n {
        if i == 3 {
            return 1.0;
        }
        s += x[i];
    }
    s
}

fn main() {}
