use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut n = v;
            while n > 1 {
                if n == 7 {
                    return 0;
                }
                n /= 2;
            }
            n
        },
        x,
    )
}

fn main() {}
