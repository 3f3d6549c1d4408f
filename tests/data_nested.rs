//! `Nested<T>` against plain `Vec<Vec<T>>`: every constructor, accessor and conversion on
//! random ragged data (empty rows and no rows included), and `from_parts` on random broken
//! offsets against an independent statement of the invariants.

use dpl::{Error, Nested};
use proptest::prelude::*;

fn ragged() -> impl Strategy<Value = Vec<Vec<i32>>> {
    // Rows of length 0..6, so empty rows are common.
    prop::collection::vec(prop::collection::vec(any::<i32>(), 0..6), 0..12)
}

/// The offsets of `rows`, computed directly.
fn offsets_of(rows: &[Vec<i32>]) -> Vec<usize> {
    let mut o = vec![0];
    for r in rows {
        o.push(o.last().unwrap() + r.len());
    }
    o
}

/// The invariants of `Nested` offsets, stated independently of the implementation.
fn valid(values_len: usize, offsets: &[usize]) -> bool {
    !offsets.is_empty()
        && offsets[0] == 0
        && offsets.windows(2).all(|w| w[0] <= w[1])
        && *offsets.last().unwrap() == values_len
}

proptest! {
    #[test]
    fn constructors_agree_with_vecs(rows in ragged()) {
        let flat: Vec<i32> = rows.concat();
        let lengths: Vec<usize> = rows.iter().map(Vec::len).collect();
        let all = [
            Nested::from_rows(rows.clone()),
            Nested::from_slices(&rows),
            Nested::from(rows.clone()),
            rows.iter().cloned().collect(),
            Nested::from_parts(flat.clone(), offsets_of(&rows)).unwrap(),
            Nested::from_lengths(flat.clone(), lengths.iter().copied()).unwrap(),
            {
                let mut n = Nested::new();
                for r in &rows {
                    n.push_row(r.iter().copied());
                }
                n
            },
        ];
        for n in &all {
            prop_assert_eq!(n, &all[0]);
            prop_assert_eq!(n.len(), rows.len());
            prop_assert_eq!(n.is_empty(), rows.is_empty());
            prop_assert_eq!(n.total_len(), flat.len());
            prop_assert_eq!(n.values(), flat.as_slice());
            prop_assert_eq!(n.offsets().to_vec(), offsets_of(&rows));
            prop_assert_eq!(n.to_vecs(), rows.clone());
            prop_assert_eq!(n.row_lengths().collect::<Vec<_>>(), lengths.clone());
            prop_assert_eq!(n.max_row_len(), lengths.iter().copied().max().unwrap_or(0));
            for (i, r) in rows.iter().enumerate() {
                prop_assert_eq!(n.row(i), r.as_slice());
                prop_assert_eq!(&n[i], r.as_slice());
            }
            prop_assert!(n.get(rows.len()).is_none());
            prop_assert!(n.rows().eq(rows.iter().map(Vec::as_slice)));
            prop_assert!(n.rows().rev().eq(rows.iter().rev().map(Vec::as_slice)));
        }
        let (v, o) = all[0].clone().into_parts();
        prop_assert_eq!(Nested::from_parts(v, o).unwrap(), all[0].clone());
        prop_assert_eq!(Vec::<Vec<i32>>::from(all[0].clone()), rows.clone());
        let doubled = all[0].map_values(|x| x.wrapping_mul(2));
        let want: Vec<Vec<i32>> =
            rows.iter().map(|r| r.iter().map(|x| x.wrapping_mul(2)).collect()).collect();
        prop_assert_eq!(doubled.to_vecs(), want);
    }

    #[test]
    fn from_parts_accepts_exactly_the_valid_offsets(
        values_len in 0usize..6,
        offsets in prop::collection::vec(0usize..7, 0..6),
    ) {
        let values: Vec<u8> = (0..values_len as u8).collect();
        match Nested::from_parts(values.clone(), offsets.clone()) {
            Ok(n) => {
                prop_assert!(valid(values_len, &offsets));
                // Row i is exactly the slice the offsets name.
                for i in 0..n.len() {
                    prop_assert_eq!(n.row(i), &values[offsets[i]..offsets[i + 1]]);
                }
            }
            Err(Error::Malformed { what, detail }) => {
                prop_assert!(!valid(values_len, &offsets), "rejected valid offsets: {}", detail);
                prop_assert_eq!(what, "Nested");
                prop_assert!(!detail.is_empty());
            }
            Err(other) => prop_assert!(false, "unexpected error {:?}", other),
        }
    }

    #[test]
    fn from_lengths_accepts_exactly_matching_sums(
        values_len in 0usize..8,
        lengths in prop::collection::vec(0usize..4, 0..5),
    ) {
        let values = vec![0u8; values_len];
        let ok = Nested::from_lengths(values, lengths.iter().copied()).is_ok();
        prop_assert_eq!(ok, lengths.iter().sum::<usize>() == values_len);
    }

    #[test]
    fn equality_is_equality_of_rows(a in ragged(), b in ragged()) {
        prop_assert_eq!(Nested::from_rows(a.clone()) == Nested::from_rows(b.clone()), a == b);
    }
}

#[test]
fn empty_rows_are_not_no_rows() {
    let none: Nested<f32> = Nested::new();
    let one_empty = Nested::from_rows([Vec::<f32>::new()]);
    assert_ne!(none, one_empty);
    assert_eq!(one_empty.len(), 1);
    assert_eq!(one_empty.row(0), &[] as &[f32]);
    assert_eq!(format!("{one_empty:?}"), "Nested[[]]");
}

#[test]
fn error_message_names_the_type() {
    let e = Nested::from_parts(vec![1, 2, 3], vec![0, 2]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "malformed Nested: last offset is 2 but there are 3 values"
    );
}
