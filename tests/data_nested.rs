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

#[test]
fn with_offsets_of_shares_the_rows_structure() {
    let cols = Nested::from_rows([vec![0u32, 2], vec![], vec![1, 1, 3]]);
    let vals = Nested::with_offsets_of(&cols, vec![1.5f32, 2.5, 3.5, 4.5, 5.5]).unwrap();
    assert_eq!(
        vals.to_vecs(),
        vec![vec![1.5, 2.5], vec![], vec![3.5, 4.5, 5.5]]
    );
    assert_eq!(vals.offsets(), cols.offsets());
    assert_eq!(vals.max_row_len(), 3);
    assert!(vals.same_offsets(&cols) && cols.same_offsets(&vals));
    // Sharing is transitive through every constructor that shares.
    let doubled = vals.map_values(|v| v * 2.0);
    assert!(doubled.same_offsets(&cols));
    assert!(vals.clone().same_offsets(&cols));
    // Equal offsets built separately are not shared: the test is a pointer comparison.
    let copy = Nested::from_rows(cols.to_vecs());
    assert_eq!(copy, cols);
    assert!(!copy.same_offsets(&cols));
    // Taking apart and appending copy the offsets: the original is untouched.
    let (values, offsets) = vals.clone().into_parts();
    assert_eq!((values.len(), offsets), (5, vec![0, 2, 2, 5]));
    let mut grown = doubled.clone();
    grown.push_row([9.0]);
    assert!(!grown.same_offsets(&cols));
    assert_eq!(cols.offsets(), &[0, 2, 2, 5]);
    assert_eq!(doubled.offsets(), &[0, 2, 2, 5]);
    assert_eq!(grown.offsets(), &[0, 2, 2, 5, 6]);
    assert_eq!(grown.max_row_len(), 3);
}

#[test]
fn with_offsets_of_rejects_a_wrong_number_of_values() {
    let cols = Nested::from_rows([vec![0u32, 2], vec![1]]);
    for n in [0usize, 2, 4, 10] {
        let e = Nested::with_offsets_of(&cols, vec![0i8; n]).unwrap_err();
        assert!(
            matches!(e, Error::Malformed { what: "Nested", .. }),
            "{n} values: {e:?}"
        );
        assert_eq!(
            e.to_string(),
            format!(
                "malformed Nested: {n} values for the offsets of a Nested of 3 elements in 2 rows"
            )
        );
    }
    // No rows: only zero values fit.
    let none: Nested<u8> = Nested::new();
    assert!(
        Nested::with_offsets_of(&none, Vec::<u8>::new())
            .unwrap()
            .is_empty()
    );
    assert!(Nested::with_offsets_of(&none, vec![1u8]).is_err());
}

proptest! {
    #[test]
    fn with_offsets_of_matches_rows_of_the_same_lengths(rows in ragged()) {
        let shape = Nested::from_rows(rows.clone());
        let values: Vec<i64> = (0..shape.total_len() as i64).map(|k| k * 3 - 7).collect();
        let shared = Nested::with_offsets_of(&shape, values.clone()).unwrap();
        let mut rest = values.into_iter();
        let want: Vec<Vec<i64>> =
            rows.iter().map(|r| rest.by_ref().take(r.len()).collect()).collect();
        prop_assert_eq!(shared.to_vecs(), want.clone());
        prop_assert!(shared.same_offsets(&shape));
        prop_assert_eq!(shared, Nested::from_rows(want));
    }
}
