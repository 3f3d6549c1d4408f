use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut n = v;
            loop {
                n = if n > 100 { break; } else { n * 2 };
            }
            n
        },
        x,
    )
}

fn main() {}
