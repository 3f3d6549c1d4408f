//! Pending (compiler): `filter` over the rows of a `Nested` (keeping whole rows). The
//! generated Rust does not compile: "cannot move out of a shared reference" (a row,
//! `Vec<i32>`, is moved out of the rows).

use dpl::prelude::*;

#[parallel]
fn long_rows(x: &Nested<i32>) -> Nested<i32> {
    filter(|r| len(r) > 1, x)
}

fn main() {
    let rows = vec![vec![1, 2, 3], vec![], vec![4], vec![5, 6]];
    for place in [Place::Seq, Place::Cpu] {
        let got = with_place(place, || long_rows(&Nested::from(rows.clone())));
        assert_eq!(got.to_vecs(), vec![vec![1, 2, 3], vec![5, 6]], "{place:?}");
    }
}
