use dpl::prelude::*;

#[parallel]
fn f(x: &[u32]) -> Vec<u32> {
    map(
        |v| {
            let mut s = 0u32;
            'outer: for i in 0..v {
                for j in 0..i {
                    if i * j > 50 {
                        break 'outer;
                    }
                    s += j;
                }
            }
            s
        },
        x,
    )
}

fn main() {}
