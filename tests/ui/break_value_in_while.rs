use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut n = v;
            while n > 1 {
                n /= 2;
                if n == 7 {
                    break n;
                }
            }
            n
        },
        x,
    )
}

fn main() {}
