//! `Nested`, `Matrix` and `Seq` through serde (feature `serde`, JSON here): values of every
//! shape and layout come back equal, the written form does not depend on the storage
//! (a column-major or padded matrix writes what a row-major one does), and broken input is
//! an error with the constructor's message, never a malformed value.
#![cfg(feature = "serde")]

use dpl::{Matrix, Nested, Seq};

fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(v: &T) -> (String, T) {
    let text = serde_json::to_string(v).unwrap();
    let back = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    (text, back)
}

#[test]
fn nested_round_trips() {
    for rows in [
        vec![],
        vec![vec![]],
        vec![vec![1i64, -2], vec![], vec![3]],
        vec![vec![7; 5]; 4],
    ] {
        let n = Nested::from_rows(rows.clone());
        let (text, back) = round_trip(&n);
        assert_eq!(back.to_vecs(), rows, "{text}");
        assert_eq!(back, n);
    }
    let (text, _) = round_trip(&Nested::from_rows(vec![vec![1.5f32], vec![]]));
    assert_eq!(text, r#"{"values":[1.5],"offsets":[0,1,1]}"#);
    // Tuples as elements.
    let pairs = Nested::from_rows(vec![vec![(1u32, true)], vec![(2, false), (3, true)]]);
    assert_eq!(round_trip(&pairs).1, pairs);
}

#[test]
fn matrices_write_their_rows_whatever_the_layout() {
    let rows = vec![vec![1, 2, 3], vec![4, 5, 6]];
    let a = Matrix::row_major(2, 3, vec![1, 2, 3, 4, 5, 6]).unwrap();
    let b = Matrix::col_major(2, 3, vec![1, 4, 2, 5, 3, 6]).unwrap();
    let c = Matrix::with_strides(2, 3, vec![1, 2, 3, 0, 0, 4, 5, 6, 0, 0], 5, 1).unwrap();
    let want = r#"{"rows":2,"cols":3,"data":[1,2,3,4,5,6]}"#;
    for m in [a, b, c] {
        let (text, back) = round_trip(&m);
        assert_eq!(text, want);
        assert_eq!(back.to_row_vecs(), rows);
    }
    for (r, c) in [(0, 0), (0, 4), (3, 0)] {
        let m = Matrix::<f64>::row_major(r, c, vec![]).unwrap();
        assert_eq!(round_trip(&m).1.shape(), (r, c));
    }
}

#[test]
fn seqs_are_sequences() {
    let s = Seq::from(vec![1.0f64, -0.0, f64::MAX]);
    let (text, back) = round_trip(&s);
    assert_eq!(
        text,
        serde_json::to_string(&vec![1.0f64, -0.0, f64::MAX]).unwrap()
    );
    assert_eq!(back.to_vec(), s.to_vec());
    assert!(back.is_on_host());
    assert_eq!(round_trip(&Seq::<u8>::new()).1.len(), 0);
}

#[test]
fn broken_input_is_an_error_with_the_constructors_message() {
    let nested = |text: &str| {
        serde_json::from_str::<Nested<i32>>(text)
            .unwrap_err()
            .to_string()
    };
    assert!(nested(r#"{"values":[1,2],"offsets":[0,2,1]}"#).contains("offsets decrease at row 1"));
    assert!(
        nested(r#"{"values":[1,2],"offsets":[0,1]}"#)
            .contains("last offset is 1 but there are 2 values")
    );
    assert!(nested(r#"{"values":[1],"offsets":[1,1]}"#).contains("offsets[0] is 1"));
    assert!(nested(r#"{"values":[],"offsets":[]}"#).contains("offsets is empty"));
    assert!(nested(r#"{"values":[],"offsets":[0],"rows":1}"#).contains("unknown field"));
    assert!(nested(r#"{"values":[]}"#).contains("missing field `offsets`"));
    let matrix = |text: &str| {
        serde_json::from_str::<Matrix<i32>>(text)
            .unwrap_err()
            .to_string()
    };
    let e = matrix(r#"{"rows":2,"cols":2,"data":[1,2,3]}"#);
    assert!(e.contains("Matrix"), "{e}");
    assert!(matrix(r#"{"rows":2,"cols":2,"data":[1,2,3,4],"stride":1}"#).contains("unknown field"));
}
