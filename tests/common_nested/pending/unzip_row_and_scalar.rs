//! Pending (compiler): a per-row tuple of a sequence and a scalar, unzipped into
//! `(Nested<T>, Vec<T>)`. The generated Rust does not compile: `rt::read` needs `Copy`
//! elements but gets `(Vec<i32>, i32)`, and a `Vec<i32>` is passed where `&[i32]` is
//! expected.

use dpl::prelude::*;

#[parallel]
fn split(x: &Nested<i32>) -> (Nested<i32>, Vec<i32>) {
    unzip(map(|r| (filter(|v| v > 0, r), sum(r)), x))
}

fn main() {
    let rows = vec![vec![1, -2, 3], vec![], vec![-4]];
    for place in [Place::Seq, Place::Cpu] {
        let (kept, sums) = with_place(place, || split(&Nested::from(rows.clone())));
        assert_eq!(kept.to_vecs(), vec![vec![1, 3], vec![], vec![]], "{place:?}");
        assert_eq!(sums, vec![2, 0, -4], "{place:?}");
    }
}
