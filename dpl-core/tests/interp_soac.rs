//! The interpreter's combinators (Soac level) and assertions against plain Rust, and the
//! agreement of Prim-level and Soac-level forms of the same computation.

use dpl_core::interp::{ConversionError, Error, Value, run};
use dpl_core::ir::*;
use dpl_core::run as rt;
use dpl_core::text::parse;
use dpl_testkit::order::{ordered, ordered_from, scanned, scanned_exclusive};
use proptest::prelude::*;

fn f(text: &str) -> Function {
    parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// `x[i]` for every i, as a combinator of the given kind with extra arguments; `x: [i64]`.
fn soac(kind: &str, extra: &str, ret: &str) -> Function {
    f(&format!(
        "fn g(%0 x: [i64], %1 z: i64, %2 d: [i64]) -> {ret} {{
           %3: usize = len %0
           %4: {ret} = soac {kind}(%3, |%5 i: usize| [%0] {{ %6: i64 = index(unchecked) %0[%5]; %6 }}{extra})
           %4
         }}"
    ))
}

const OP: &str = "|%7 a: i64, %8 b: i64| [] { %9: i64 = const 3; %10: i64 = mul %7, %9; %11: i64 = add %10, %8; %11 }";

fn op(a: i64, b: i64) -> i64 {
    a.wrapping_mul(3).wrapping_add(b)
}

fn go(g: &Function, x: &[i64], z: i64, d: &[i64]) -> Result<Value, Error> {
    run(g, vec![x.into(), z.into(), d.into()])
}

proptest! {
    #[test]
    fn soac_map_reduce_scan(x in prop::collection::vec(-100i64..100, 0..150), z in -5i64..5) {
        let got = go(&soac("map", "", "[i64]"), &x, z, &[]).unwrap();
        prop_assert_eq!(got, Value::from(x.clone()));

        let got = go(&soac("reduce", &format!(", op: {OP}, init: %1"), "i64"), &x, z, &[]).unwrap();
        prop_assert_eq!(got, Value::I64(ordered_from(&x, z, op)));

        let got = go(&soac("reduce", &format!(", op: {OP}"), "i64"), &x, z, &[]);
        match ordered(&x, op) {
            Some(want) => prop_assert_eq!(got.unwrap(), Value::I64(want)),
            None => prop_assert!(matches!(got, Err(Error::Empty { origin: "reduce", .. })), "{:?}", got),
        }

        let got: Vec<i64> = go(&soac("scan", &format!(", op: {OP}"), "[i64]"), &x, z, &[]).unwrap().try_into().unwrap();
        prop_assert_eq!(got, scanned(&x, None, op));

        let got: Vec<i64> = go(&soac("exclusive_scan", &format!(", op: {OP}, init: %1"), "[i64]"), &x, z, &[]).unwrap().try_into().unwrap();
        prop_assert_eq!(got, scanned_exclusive(&x, z, op));

        let got: Vec<i64> = go(&soac("filter", ", pred: |%7 e: i64| [%1] { %8: bool = gt %7, %1; %8 }", "[i64]"), &x, z, &[]).unwrap().try_into().unwrap();
        prop_assert_eq!(got, x.iter().copied().filter(|&e| e > z).collect::<Vec<_>>());
    }

    #[test]
    fn soac_scatters_and_permute(d in prop::collection::vec(-9i64..9, 1..20), x in prop::collection::vec(0i64..100, 0..30)) {
        // Element i is (x[i] % len(d), x[i]).
        let scatter = |kind: &str, extra: &str| f(&format!(
            "fn g(%0 x: [i64], %1 z: i64, %2 d: [i64]) -> [i64] {{
               %3: usize = len %0
               %4: usize = len %2
               %5: [i64] = soac {kind}(%3, |%6 i: usize| [%0, %4] {{
                 %7: i64 = index(unchecked) %0[%6]
                 %8: i64 = cast %4 as i64
                 %9: i64 = rem %7, %8
                 %10: (i64, i64) = tuple(%9, %7)
                 %10
               }}{extra})
               %5
             }}"));
        let n = d.len() as i64;
        let got: Vec<i64> = go(&scatter("scatter", ", dst: %2"), &x, 0, &d).unwrap().try_into().unwrap();
        let mut want = d.clone();
        for &e in &x { want[(e % n) as usize] = e; }
        prop_assert_eq!(got, want);

        let sr = ", op: |%11 a: i64, %12 b: i64| [] { %13: i64 = const 3; %14: i64 = mul %11, %13; %15: i64 = add %14, %12; %15 }, dst: %2";
        let got: Vec<i64> = go(&scatter("scatter_reduce", sr), &x, 0, &d).unwrap().try_into().unwrap();
        let mut want = d.clone();
        for &e in &x { let k = (e % n) as usize; want[k] = op(want[k], e); }
        prop_assert_eq!(got, want);

        // Permute with the reversing permutation.
        let p = f("fn g(%0 x: [i64], %1 z: i64, %2 d: [i64]) -> [i64] {
            %3: usize = len %0
            %4: [i64] = soac permute(%3, |%5 i: usize| [%3, %0] {
              %6: usize = const 1
              %7: usize = sub %3, %6
              %8: usize = sub %7, %5
              %9: i64 = index(unchecked) %0[%5]
              %10: (usize, i64) = tuple(%8, %9)
              %10
            })
            %4 }");
        let got: Vec<i64> = go(&p, &x, 0, &[]).unwrap().try_into().unwrap();
        prop_assert_eq!(got, x.iter().rev().copied().collect::<Vec<_>>());
    }

    /// The same gather at the Prim level and at the Soac level (with explicit checks).
    #[test]
    fn prim_and_soac_gather_agree(x in prop::collection::vec(any::<i32>(), 0..20), idx in prop::collection::vec(-2i32..25, 0..20)) {
        let prim = f("fn g(%0 x: [i32], %1 i: [i32]) -> [i32] { %2: [i32] = gather(%0, %1); %2 }");
        let soac = f("fn g(%0 x: [i32], %1 i: [i32]) -> [i32] {
            %2: usize = len %0
            %3: () = assert(gather) indices_in_range %1, %2
            %4: usize = len %1
            %5: [i32] = soac map(%4, |%6 j: usize| [%1, %0] {
              %7: i32 = index(unchecked) %1[%6]
              %8: i32 = index(unchecked) %0[%7]
              %8
            })
            %5 }");
        let a = run(&prim, vec![x.clone().into(), idx.clone().into()]);
        let b = run(&soac, vec![x.clone().into(), idx.clone().into()]);
        prop_assert_eq!(&a, &b);
        let want: Option<Vec<i32>> = idx.iter().map(|&i| usize::try_from(i).ok().and_then(|i| x.get(i).copied())).collect();
        match want {
            Some(w) => prop_assert_eq!(a.unwrap(), Value::from(w)),
            None => prop_assert!(matches!(a, Err(Error::IndexOutOfRange { origin: "gather", .. })), "{:?}", a),
        }
    }
}

#[test]
fn soac_errors() {
    let scatter = f("fn g(%0 n: usize, %1 d: [f32]) -> [f32] {
        %2: [f32] = soac scatter(%0, |%3 i: usize| [] { %4: f32 = const 1.0; %5: (usize, f32) = tuple(%3, %4); %5 }, dst: %1)
        %2 }");
    let got = run(&scatter, vec![2usize.into(), vec![0.0f32; 3].into()]).unwrap();
    assert_eq!(got, vec![1.0f32, 1.0, 0.0].into());
    let e = run(&scatter, vec![4usize.into(), vec![0.0f32; 3].into()]).unwrap_err();
    assert_eq!(
        e,
        Error::IndexOutOfRange {
            origin: "scatter",
            index: 3,
            len: 3,
            span: Span::NONE
        }
    );

    let permute = f("fn g(%0 n: usize) -> [usize] {
        %1: [usize] = soac permute(%0, |%2 i: usize| [] { %3: usize = const 0; %4: (usize, usize) = tuple(%3, %2); %4 })
        %1 }");
    assert_eq!(
        run(&permute, vec![1usize.into()]).unwrap(),
        vec![0usize].into()
    );
    let e = run(&permute, vec![2usize.into()]).unwrap_err();
    assert!(
        matches!(&e, Error::NotAPermutation { origin: "permute", detail, .. } if detail == "index 0 appears twice"),
        "{e:?}"
    );

    // An index function that fails stops the combinator with its error.
    let failing = f("fn g(%0 n: usize) -> [usize] {
        %1: [usize] = soac map(%0, |%2 i: usize| [] { %3: usize = const 2; %4: usize = sub %3, %2; %5: usize = div %2, %4; %5 })
        %1 }");
    assert_eq!(
        run(&failing, vec![2usize.into()]).unwrap(),
        vec![0usize, 1].into()
    );
    assert!(matches!(
        run(&failing, vec![3usize.into()]),
        Err(Error::DivideByZero { .. })
    ));
}

#[test]
fn assertions() {
    let g = f("fn g(%0 a: [i32], %1 b: [i64]) -> () {
        %2: usize = len %0
        %3: usize = len %1
        %4: () = assert(zip) eq_len %2, %3
        %5: () = assert(gather) indices_in_range %1, %2
        %6: () = assert(min) non_empty %2
        %7: i64 = const 0
        %8: () = assert(index) in_bounds %7, %2
        %8 }");
    assert_eq!(
        run(&g, vec![vec![1, 2].into(), vec![1i64, 0].into()]).unwrap(),
        Value::unit()
    );
    let e = run(&g, vec![vec![1, 2].into(), vec![1i64].into()]).unwrap_err();
    assert_eq!(
        e,
        Error::LengthMismatch {
            origin: "zip",
            left: 2,
            right: 1,
            span: Span::NONE
        }
    );
    let e = run(&g, vec![vec![1, 2].into(), vec![1i64, -1].into()]).unwrap_err();
    assert_eq!(
        e,
        Error::IndexOutOfRange {
            origin: "gather",
            index: -1,
            len: 2,
            span: Span::NONE
        }
    );
    let e = run(&g, vec![vec![1, 2].into(), vec![1i64, 2].into()]).unwrap_err();
    assert_eq!(
        e,
        Error::IndexOutOfRange {
            origin: "gather",
            index: 2,
            len: 2,
            span: Span::NONE
        }
    );
    let e = run(&g, vec![Value::seq(vec![]), Value::seq(vec![])]).unwrap_err();
    assert_eq!(
        e,
        Error::Empty {
            origin: "min",
            span: Span::NONE
        }
    );

    let in_bounds =
        f("fn g(%0 i: i64, %1 n: usize) -> () { %2: () = assert(index) in_bounds %0, %1; %2 }");
    assert!(run(&in_bounds, vec![4i64.into(), 5usize.into()]).is_ok());
    for i in [5i64, -1, i64::MIN] {
        let e = run(&in_bounds, vec![i.into(), 5usize.into()]).unwrap_err();
        assert_eq!(
            e,
            Error::IndexOutOfRange {
                origin: "index",
                index: i.into(),
                len: 5,
                span: Span::NONE
            }
        );
    }
}

#[test]
fn errors_carry_the_statement_span() {
    let mut g = f("fn g(%0 a: i32, %1 b: i32) -> i32 { %2: i32 = div %0, %1; %2 }");
    g.body.stmts[0].span = Span(42);
    let e = run(&g, vec![1.into(), 0.into()]).unwrap_err();
    assert_eq!(e.span(), Some(Span(42)));
    let at = rt::Location {
        file: "src/lib.rs",
        line: 3,
        column: 9,
    };
    assert_eq!(
        e.to_run_error(at),
        Some(rt::Error::DivideByZero { op: "/", at })
    );
    let e = Error::IndexOutOfRange {
        origin: "gather",
        index: -2,
        len: 4,
        span: Span(1),
    };
    assert_eq!(
        e.to_run_error(at),
        Some(rt::Error::IndexOutOfRange {
            prim: "gather",
            index: -2,
            len: 4,
            at
        })
    );
    assert_eq!(Error::Arguments("x".into()).to_run_error(at), None);
    assert_eq!(
        Error::UncheckedIndex {
            index: 1,
            len: 0,
            span: Span(1)
        }
        .to_run_error(at),
        None
    );
}

#[test]
fn value_conversions() {
    let v = Value::from(vec![vec![1u32, 2], vec![]]);
    assert_eq!(v.to_string(), "[[1, 2], []]");
    assert!(v.conforms(&Type::seq(Type::seq(Type::Scalar(Scalar::U32)))));
    assert!(!v.conforms(&Type::seq(Type::seq(Type::Scalar(Scalar::I32)))));
    assert!(v.conforms(&Type::seq(Type::Infer)));
    let back: Vec<Vec<u32>> = v.try_into().unwrap();
    assert_eq!(back, vec![vec![1, 2], vec![]]);
    let pair = Value::from((1.5f64, vec![true]));
    assert_eq!(pair.to_string(), "(1.5, [true])");
    let (a, b): (f64, Vec<bool>) = pair.try_into().unwrap();
    assert_eq!((a, b), (1.5, vec![true]));
    let e = f32::try_from(Value::I32(1)).unwrap_err();
    assert_eq!(
        e,
        ConversionError {
            expected: "f32",
            found: "1".into()
        }
    );
    assert!(Vec::<i32>::try_from(Value::I32(1)).is_err());
    assert_eq!(Value::from(&[1i64, 2][..]), Value::from(vec![1i64, 2]));
    assert_eq!(Value::from((1i32, 2u64, 3usize)).to_string(), "(1, 2, 3)");
    assert_eq!(Value::Tuple(vec![Value::F32(1.0)]).to_string(), "(1.0,)");
    // Cloning a large sequence is cheap: it is shared.
    let big = Value::from(vec![0u8 as i32; 1000]);
    let copy = big.clone();
    match (&big, &copy) {
        (Value::Seq(a), Value::Seq(b)) => assert!(std::sync::Arc::ptr_eq(a, b)),
        _ => unreachable!(),
    }
}
