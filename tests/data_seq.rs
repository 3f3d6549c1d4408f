//! `Seq<T>` behaves like an owned, fixed-length `Vec<T>`: conversions, slice access,
//! mutation through `DerefMut`, and sharing between threads.

use dpl::Seq;
use rayon::prelude::*;

#[test]
fn conversions_and_slice_access() {
    let v: Vec<f64> = (0..100).map(|i| i as f64 * 0.5).collect();
    let s = Seq::from(v.clone());
    assert_eq!(s.len(), v.len());
    assert_eq!(s.as_slice(), v.as_slice());
    assert_eq!(&s[10..13], &v[10..13]);
    assert_eq!(s.iter().sum::<f64>(), v.iter().sum::<f64>());
    assert_eq!(s, Seq::from(v.as_slice()));
    assert_eq!(s, v.iter().copied().collect::<Seq<f64>>());
    assert_eq!(s.to_vec(), v);
    assert_eq!(s.into_vec(), v);
}

#[test]
fn mutation_through_deref_mut() {
    let mut s: Seq<u32> = (0..10).rev().collect();
    s.sort();
    s[0] = 100;
    let want: Vec<u32> = std::iter::once(100).chain(1..10).collect();
    assert_eq!(s, want);
}

#[test]
fn shared_between_threads() {
    let s: Seq<u64> = (0..10_000).collect();
    let total: u64 = (0..s.len()).into_par_iter().map(|i| s[i]).sum();
    assert_eq!(total, (0..10_000u64).sum::<u64>());
    let doubled: Seq<u64> = s.par_iter().map(|x| 2 * x).collect::<Vec<_>>().into();
    assert!(doubled.iter().zip(s.iter()).all(|(d, x)| *d == 2 * x));
}
