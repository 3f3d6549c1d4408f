//! The interpreter's primitives (Prim level) and language constructs against plain Rust
//! computations, including their error cases.

mod text_support;

use dpl_core::interp::{Error, Value, run};
use dpl_core::ir::*;
use dpl_core::text::parse;
use dpl_testkit::SplitMix64;
use dpl_testkit::order::{ordered, ordered_from, scanned, scanned_exclusive};
use proptest::prelude::*;

fn f(text: &str) -> Function {
    parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn ints() -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(-1000i32..1000, 0..40)
}

use text_support::SAXPY;

proptest! {
    #[test]
    fn saxpy_matches_rust(a in -10.0f32..10.0, xy in prop::collection::vec((-100.0f32..100.0, -100.0f32..100.0), 0..50)) {
        let (x, y): (Vec<f32>, Vec<f32>) = xy.into_iter().unzip();
        let got: Vec<f32> = run(&f(SAXPY), vec![a.into(), x.clone().into(), y.clone().into()]).unwrap().try_into().unwrap();
        let want: Vec<f32> = x.iter().zip(&y).map(|(xi, yi)| a * xi + yi).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn map_of_three(x in ints()) {
        let g = f("fn g(%0 a: [i32], %1 b: [i32], %2 c: [i32]) -> [i32] {
            %3: [i32] = map(|%4 p: i32, %5 q: i32, %6 r: i32| [] { %7: i32 = mul %4, %5; %8: i32 = sub %7, %6; %8 }, %0, %1, %2)
            %3 }");
        let y: Vec<i32> = x.iter().map(|v| v * 3 + 1).collect();
        let z: Vec<i32> = x.iter().rev().copied().collect();
        let got: Vec<i32> = run(&g, vec![x.clone().into(), y.clone().into(), z.clone().into()]).unwrap().try_into().unwrap();
        let want: Vec<i32> = (0..x.len()).map(|i| x[i] * y[i] - z[i]).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn zip_unzip_gather(x in ints(), seed in any::<u64>()) {
        let n = x.len();
        let idx: Vec<u32> = (0..2 * n).map(|i| ((seed as usize).wrapping_add(i * 7919) % n.max(1)) as u32).collect();
        let g = f("fn g(%0 x: [i32], %1 i: [u32]) -> ([i32], [u32]) {
            %2: [i32] = gather(%0, %1)
            %3: [(i32, u32)] = zip(%2, %1)
            %4: ([i32], [u32]) = unzip(%3)
            %4 }");
        let got = run(&g, vec![x.clone().into(), idx.clone().into()]);
        if n == 0 && !idx.is_empty() {
            prop_assert!(matches!(got, Err(Error::IndexOutOfRange { .. })), "{:?}", got);
        } else {
            let (a, b): (Vec<i32>, Vec<u32>) = got.unwrap().try_into().unwrap();
            let want: Vec<i32> = idx.iter().map(|&i| x[i as usize]).collect();
            prop_assert_eq!(a, want);
            prop_assert_eq!(b, idx);
        }
    }

    #[test]
    fn reduce_follows_the_order_from_init(x in ints(), init in -5i32..5) {
        // `a * 3 + b` is not associative: the order is observable.
        let g = f("fn g(%0 x: [i32], %1 z: i32) -> i32 {
            %2: i32 = reduce(|%3 a: i32, %4 b: i32| [] { %5: i32 = const 3; %6: i32 = mul %3, %5; %7: i32 = add %6, %4; %7 }, %0, %1)
            %2 }");
        let got = run(&g, vec![x.clone().into(), init.into()]).unwrap();
        let want = ordered_from(&x, init, |a: i32, b| a.wrapping_mul(3).wrapping_add(b));
        prop_assert_eq!(got, Value::I32(want));
    }

    #[test]
    fn sum_min_max(x in ints(), y in prop::collection::vec(-1e3f64..1e3, 0..30)) {
        let g = f("fn g(%0 x: [i32]) -> (i32, i32, i32) { %1: i32 = sum(%0); %2: i32 = min(%0); %3: i32 = max(%0); %4: (i32, i32, i32) = tuple(%1, %2, %3); %4 }");
        let got = run(&g, vec![x.clone().into()]);
        if x.is_empty() {
            prop_assert!(matches!(got, Err(Error::Empty { origin: "min", .. })), "{:?}", got);
        } else {
            let want = Value::from((x.iter().sum::<i32>(), *x.iter().min().unwrap(), *x.iter().max().unwrap()));
            prop_assert_eq!(got.unwrap(), want);
        }
        let s = f("fn g(%0 x: [f64]) -> f64 { %1: f64 = sum(%0); %1 }");
        let got = run(&s, vec![y.clone().into()]).unwrap();
        let want = ordered(&y, |a, b| a + b).map_or(-0.0, |t| -0.0 + t);
        prop_assert_eq!(got, Value::F64(want));
        let m = f("fn g(%0 x: [f64]) -> f64 { %1: f64 = max(%0); %1 }");
        let got = run(&m, vec![y.clone().into()]);
        match y.iter().copied().reduce(f64::max) {
            Some(want) => prop_assert_eq!(got.unwrap(), Value::F64(want)),
            None => prop_assert!(matches!(got, Err(Error::Empty { origin: "max", .. })), "{:?}", got),
        }
    }

    #[test]
    fn any_all_count_filter(x in ints(), t in -1000i32..1000) {
        let g = f("fn g(%0 x: [i32], %1 t: i32) -> (bool, bool, usize, [i32], bool, usize) {
            %2: [bool] = map(|%3 e: i32| [%1] { %4: bool = lt %3, %1; %4 }, %0)
            %5: bool = any(%2)
            %6: bool = all(|%7 e: i32| [%1] { %8: bool = lt %7, %1; %8 }, %0)
            %9: usize = count(%2)
            %10: [i32] = filter(|%11 e: i32| [%1] { %12: bool = lt %11, %1; %12 }, %0)
            %13: bool = all(%2)
            %14: usize = count(|%15 e: i32| [%1] { %16: bool = ge %15, %1; %16 }, %0)
            %17: (bool, bool, usize, [i32], bool, usize) = tuple(%5, %6, %9, %10, %13, %14)
            %17 }");
        let got = run(&g, vec![x.clone().into(), t.into()]).unwrap();
        let below: Vec<i32> = x.iter().copied().filter(|&e| e < t).collect();
        let want = Value::Tuple(vec![
            Value::Bool(x.iter().any(|&e| e < t)),
            Value::Bool(x.iter().all(|&e| e < t)),
            Value::Usize(below.len()),
            below.clone().into(),
            Value::Bool(x.iter().all(|&e| e < t)),
            Value::Usize(x.len() - below.len()),
        ]);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn scans(x in ints(), init in -3i32..3) {
        let g = f("fn g(%0 x: [i32], %1 z: i32) -> ([i32], [i32]) {
            %2: [i32] = scan(|%3 a: i32, %4 b: i32| [] { %5: i32 = const 3; %6: i32 = mul %3, %5; %7: i32 = add %6, %4; %7 }, %0)
            %8: [i32] = exclusive_scan(|%9 a: i32, %10 b: i32| [] { %11: i32 = const 3; %12: i32 = mul %9, %11; %13: i32 = add %12, %10; %13 }, %0, %1)
            %14: ([i32], [i32]) = tuple(%2, %8)
            %14 }");
        let (inc, exc): (Vec<i32>, Vec<i32>) = run(&g, vec![x.clone().into(), init.into()]).unwrap().try_into().unwrap();
        let op = |a: i32, b: i32| a.wrapping_mul(3).wrapping_add(b);
        // The operator is not associative: the results show dpl's order of combination.
        let want_inc = scanned(&x, None, op);
        let want_exc = scanned_exclusive(&x, init, op);
        prop_assert_eq!(inc, want_inc);
        prop_assert_eq!(exc, want_exc);
    }

    #[test]
    fn scatter_and_scatter_reduce(dst in prop::collection::vec(-9i32..9, 1..20), pairs in prop::collection::vec((0usize..40, -9i32..9), 0..30)) {
        let n = dst.len();
        let idx: Vec<u64> = pairs.iter().map(|p| (p.0 % n) as u64).collect();
        let src: Vec<i32> = pairs.iter().map(|p| p.1).collect();
        let g = f("fn g(%0 s: [i32], %1 i: [u64], %2 d: [i32]) -> ([i32], [i32]) {
            %3: [i32] = scatter(%0, %1, %2)
            %4: [i32] = scatter_reduce(|%5 a: i32, %6 b: i32| [] { %7: i32 = const 10; %8: i32 = mul %5, %7; %9: i32 = add %8, %6; %9 }, %0, %1, %2)
            %10: ([i32], [i32]) = tuple(%3, %4)
            %10 }");
        let (sc, sr): (Vec<i32>, Vec<i32>) = run(&g, vec![src.clone().into(), idx.clone().into(), dst.clone().into()]).unwrap().try_into().unwrap();
        let mut want_sc = dst.clone();
        let mut want_sr = dst.clone();
        for (k, &v) in idx.iter().zip(&src) {
            want_sc[*k as usize] = v;
            want_sr[*k as usize] = want_sr[*k as usize].wrapping_mul(10).wrapping_add(v);
        }
        prop_assert_eq!(sc, want_sc);
        prop_assert_eq!(sr, want_sr);
    }

    #[test]
    fn permute_inverts_gather(x in prop::collection::vec(any::<i64>(), 0..40), seed in any::<u64>()) {
        // A permutation from a seeded shuffle.
        let n = x.len();
        let perm = SplitMix64::new(seed).permutation(n);
        let g = f("fn g(%0 x: [i64], %1 p: [usize]) -> [i64] { %2: [i64] = permute(%0, %1); %2 }");
        let got: Vec<i64> = run(&g, vec![x.clone().into(), perm.clone().into()]).unwrap().try_into().unwrap();
        let mut want = vec![0i64; n];
        for i in 0..n {
            want[perm[i]] = x[i];
        }
        prop_assert_eq!(got, want);
    }
}

#[test]
fn replicate_indices_range_len() {
    let g = f(
        "fn g(%0 v: f32, %1 n: usize, %2 x: [bool]) -> ([f32], [usize], [usize], usize, usize) {
        %3: [f32] = replicate(%0, %1)
        %4: [usize] = indices(%2)
        %5: [usize] = range(%1)
        %6: usize = len(%2)
        %7: usize = len %2
        %8: ([f32], [usize], [usize], usize, usize) = tuple(%3, %4, %5, %6, %7)
        %8 }",
    );
    let got = run(
        &g,
        vec![2.5f32.into(), 4usize.into(), vec![true, false].into()],
    )
    .unwrap();
    assert_eq!(
        got,
        Value::Tuple(vec![
            vec![2.5f32; 4].into(),
            vec![0usize, 1].into(),
            vec![0usize, 1, 2, 3].into(),
            Value::Usize(2),
            Value::Usize(2)
        ])
    );
    let too_big = run(
        &g,
        vec![1.0f32.into(), usize::MAX.into(), vec![true].into()],
    );
    assert!(
        matches!(too_big, Err(Error::TooLarge { .. })),
        "{too_big:?}"
    );
}

#[test]
fn sum_of_empty_is_zero_of_the_element_type() {
    for (t, zero) in [
        ("i32", Value::I32(0)),
        ("u64", Value::U64(0)),
        ("f32", Value::F32(0.0)),
        ("usize", Value::Usize(0)),
    ] {
        let g = f(&format!(
            "fn g(%0 x: [{t}]) -> {t} {{ %1: {t} = sum(%0); %1 }}"
        ));
        assert_eq!(run(&g, vec![Value::seq(vec![])]).unwrap(), zero);
    }
    let g = f("fn g(%0 x: [u32]) -> u32 { %1: u32 = sum(%0); %1 }");
    assert_eq!(
        run(&g, vec![vec![u32::MAX, 2].into()]).unwrap(),
        Value::U32(1),
        "sums wrap"
    );
}

#[test]
fn nested_sequences_segmented_sum() {
    // spmv over CSR rows: map(|ai, ci| sum(map(*, ai, gather(x, ci))), vals, cols)
    let g = f(
        "fn spmv(%0 vals: [[f32]], %1 cols: [[u32]], %2 x: [f32]) -> [f32] {
        %3: [f32] = map(|%4 ai: [f32], %5 ci: [u32]| [%2] {
          %6: [f32] = gather(%2, %5)
          %7: [f32] = map(|%8 a: f32, %9 b: f32| [] { %10: f32 = mul %8, %9; %10 }, %4, %6)
          %11: f32 = sum(%7)
          %11
        }, %0, %1)
        %3 }",
    );
    let vals = vec![vec![1.0f32, 2.0], vec![], vec![3.0, 4.0, 5.0]];
    let cols = vec![vec![0u32, 2], vec![], vec![1, 1, 0]];
    let x = vec![10.0f32, 20.0, 30.0];
    let got: Vec<f32> = run(
        &g,
        vec![vals.clone().into(), cols.clone().into(), x.clone().into()],
    )
    .unwrap()
    .try_into()
    .unwrap();
    let want: Vec<f32> = vals
        .iter()
        .zip(&cols)
        .map(|(a, c)| a.iter().zip(c).map(|(v, &j)| v * x[j as usize]).sum())
        .collect();
    assert_eq!(got, want);
    // A row whose column index is out of range.
    let bad_cols = vec![vec![0u32, 2], vec![], vec![1, 3, 0]];
    let e = run(&g, vec![vals.into(), bad_cols.into(), x.into()]).unwrap_err();
    assert_eq!(
        e,
        Error::IndexOutOfRange {
            origin: "gather",
            index: 3,
            len: 3,
            span: Span::NONE
        }
    );
}

#[test]
fn if_evaluates_only_the_taken_branch() {
    let g = f("fn g(%0 a: i32, %1 b: i32) -> i32 {
        %2: i32 = const 0
        %3: bool = ne %1, %2
        %4: i32 = if %3 { %5: i32 = div %0, %1; %5 } else { %2 }
        %4 }");
    assert_eq!(run(&g, vec![7.into(), 2.into()]).unwrap(), Value::I32(3));
    assert_eq!(run(&g, vec![7.into(), 0.into()]).unwrap(), Value::I32(0));
    let h = f("fn g(%0 a: i32, %1 b: i32) -> i32 { %2: i32 = div %0, %1; %2 }");
    assert!(matches!(
        run(&h, vec![7.into(), 0.into()]),
        Err(Error::DivideByZero { .. })
    ));
}

#[test]
fn tuples_and_fields() {
    let g = f("fn g(%0 a: i32, %1 b: [f32]) -> ([f32], i32) {
        %2: (i32, [f32]) = tuple(%0, %1)
        %3: [f32] = %2.1
        %4: i32 = %2.0
        %5: ([f32], i32) = tuple(%3, %4)
        %5 }");
    let got: (Vec<f32>, i32) = run(&g, vec![5.into(), vec![1.0f32].into()])
        .unwrap()
        .try_into()
        .unwrap();
    assert_eq!(got, (vec![1.0], 5));
}

#[test]
fn indexing_any_integer_type_and_errors() {
    for t in ["i32", "u32", "i64", "u64", "usize"] {
        let g = f(&format!(
            "fn g(%0 x: [f64], %1 i: {t}) -> f64 {{ %2: f64 = index(index) %0[%1]; %2 }}"
        ));
        let x: Value = vec![1.5f64, 2.5, 3.5].into();
        let i = |n: i64| match t {
            "i32" => Value::I32(n as i32),
            "u32" => Value::U32(n as u32),
            "i64" => Value::I64(n),
            "u64" => Value::U64(n as u64),
            _ => Value::Usize(n as usize),
        };
        assert_eq!(run(&g, vec![x.clone(), i(2)]).unwrap(), Value::F64(3.5));
        let e = run(&g, vec![x.clone(), i(3)]).unwrap_err();
        assert_eq!(
            e,
            Error::IndexOutOfRange {
                origin: "index",
                index: 3,
                len: 3,
                span: Span::NONE
            }
        );
        if t.starts_with('i') {
            let e = run(&g, vec![x, i(-1)]).unwrap_err();
            assert_eq!(
                e,
                Error::IndexOutOfRange {
                    origin: "index",
                    index: -1,
                    len: 3,
                    span: Span::NONE
                }
            );
        }
    }
    let g = f("fn g(%0 x: [f64], %1 i: usize) -> f64 { %2: f64 = index(unchecked) %0[%1]; %2 }");
    let e = run(&g, vec![vec![1.0f64].into(), 1usize.into()]).unwrap_err();
    assert_eq!(
        e,
        Error::UncheckedIndex {
            index: 1,
            len: 1,
            span: Span::NONE
        }
    );
    assert!(e.to_string().contains("compiler bug"));
}

#[test]
fn primitive_errors() {
    let map2 = f(
        "fn g(%0 a: [i32], %1 b: [i32]) -> [i32] { %2: [i32] = map(|%3 p: i32, %4 q: i32| [] { %3 }, %0, %1); %2 }",
    );
    let e = run(&map2, vec![vec![1, 2].into(), vec![1].into()]).unwrap_err();
    assert_eq!(
        e,
        Error::LengthMismatch {
            origin: "map",
            left: 2,
            right: 1,
            span: Span::NONE
        }
    );

    let zip =
        f("fn g(%0 a: [i32], %1 b: [i32]) -> [(i32, i32)] { %2: [(i32, i32)] = zip(%0, %1); %2 }");
    assert!(matches!(
        run(&zip, vec![vec![1].into(), vec![1, 2].into()]),
        Err(Error::LengthMismatch { origin: "zip", .. })
    ));

    let perm = f("fn g(%0 x: [i32], %1 p: [i32]) -> [i32] { %2: [i32] = permute(%0, %1); %2 }");
    let e = run(&perm, vec![vec![1, 2, 3].into(), vec![0, 2, 0].into()]).unwrap_err();
    assert!(
        matches!(&e, Error::NotAPermutation { origin: "permute", detail, .. } if detail == "index 0 appears twice"),
        "{e:?}"
    );
    let e = run(&perm, vec![vec![1, 2, 3].into(), vec![0, 3, 1].into()]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfRange {
                origin: "permute",
                index: 3,
                len: 3,
                ..
            }
        ),
        "{e:?}"
    );
    let e = run(&perm, vec![vec![1, 2, 3].into(), vec![0, -1, 1].into()]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfRange {
                origin: "permute",
                index: -1,
                ..
            }
        ),
        "{e:?}"
    );
    let e = run(&perm, vec![vec![1, 2, 3].into(), vec![0, 1].into()]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::LengthMismatch {
                origin: "permute",
                ..
            }
        ),
        "{e:?}"
    );

    let scatter = f(
        "fn g(%0 s: [i32], %1 i: [i64], %2 d: [i32]) -> [i32] { %3: [i32] = scatter(%0, %1, %2); %3 }",
    );
    let e = run(
        &scatter,
        vec![vec![1, 2].into(), vec![0i64, 5].into(), vec![0, 0].into()],
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfRange {
                origin: "scatter",
                index: 5,
                len: 2,
                ..
            }
        ),
        "{e:?}"
    );
    let e = run(
        &scatter,
        vec![vec![1, 2].into(), vec![0i64].into(), vec![0, 0].into()],
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::LengthMismatch {
                origin: "scatter",
                left: 2,
                right: 1,
                ..
            }
        ),
        "{e:?}"
    );
    // Later writes win.
    let got = run(
        &scatter,
        vec![
            vec![1, 2, 3].into(),
            vec![1i64, 1, 0].into(),
            vec![0, 0].into(),
        ],
    )
    .unwrap();
    assert_eq!(got, vec![3, 2].into());

    let min = f("fn g(%0 x: [f32]) -> f32 { %1: f32 = min(%0); %1 }");
    let e = run(&min, vec![Value::seq(vec![])]).unwrap_err();
    assert_eq!(e.to_string(), "min: empty sequence");
}

#[test]
fn run_checks_its_inputs() {
    let g = f(SAXPY);
    let e = run(&g, vec![1.0f32.into()]).unwrap_err();
    assert_eq!(
        e,
        Error::Arguments("`saxpy` takes 3 argument(s), 1 given".into())
    );
    let e = run(
        &g,
        vec![1.0f32.into(), vec![1.0f64].into(), vec![1.0f32].into()],
    )
    .unwrap_err();
    assert!(
        matches!(&e, Error::Arguments(m) if m.contains("argument 1 (`x`) must be [f32], found [1.0]")),
        "{e:?}"
    );
    // Invalid IR is refused before running.
    let bad = f("fn g(%0 a: i32) -> i32 { %1: i32 = neg %2; %2: i32 = const 1; %1 }");
    assert!(matches!(run(&bad, vec![1.into()]), Err(Error::Invalid(_))));
    // Ill-typed IR gives an internal error, not a panic.
    let ill = f("fn g(%0 a: i32, %1 b: f32) -> i32 { %2: i32 = add %0, %1; %2 }");
    assert!(matches!(
        run(&ill, vec![1.into(), 2.0f32.into()]),
        Err(Error::Internal { .. })
    ));
    let ill = f("fn g(%0 a: i32) -> [i32] { %1: [i32] = map(|%2 e: i32| [] { %2 }, %0); %1 }");
    assert!(matches!(
        run(&ill, vec![1.into()]),
        Err(Error::Internal { .. })
    ));
    let ill = f("fn g(%0 a: i32) -> i64 { %0 }");
    assert!(matches!(
        run(&ill, vec![1.into()]),
        Err(Error::Internal { .. })
    ));
    let ill = f("fn g() -> i32 { %0: i32 = const 1e5; %0 }");
    assert!(matches!(run(&ill, vec![]), Err(Error::Internal { .. })));
}

#[test]
fn large_inputs_run_reasonably_fast() {
    let n = 100_000;
    let g = f("fn g(%0 x: [f64], %1 y: [f64]) -> f64 {
        %2: [f64] = map(|%3 a: f64, %4 b: f64| [] { %5: f64 = mul %3, %4; %5 }, %0, %1)
        %6: [f64] = scan(|%7 a: f64, %8 b: f64| [] { %9: f64 = add %7, %8; %9 }, %2)
        %10: f64 = sum(%6)
        %10 }");
    let x: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
    let y: Vec<f64> = (0..n).map(|i| 1.0 / (1.0 + i as f64)).collect();
    let start = std::time::Instant::now();
    let got = run(&g, vec![x.clone().into(), y.clone().into()]).unwrap();
    let elapsed = start.elapsed();
    let products: Vec<f64> = (0..n).map(|i| x[i] * y[i]).collect();
    let total = -0.0 + ordered(&scanned(&products, None, |a, b| a + b), |a, b| a + b).unwrap();
    assert_eq!(got, Value::F64(total));
    assert!(elapsed.as_secs_f64() < 5.0, "{elapsed:?}");
}

#[test]
fn sort_orders_floats_totally() {
    let g = f("fn g(%0 x: [f64]) -> [f64] { %1: [f64] = sort(%0) %1 }");
    let x = vec![
        1.5,
        f64::NAN,
        -0.0,
        f64::INFINITY,
        0.0,
        -f64::NAN,
        f64::NEG_INFINITY,
        -1.5,
        0.0,
        -0.0,
    ];
    let got: Vec<f64> = run(&g, vec![x.clone().into()]).unwrap().try_into().unwrap();
    let mut want = x;
    want.sort_by(f64::total_cmp);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));
    assert!(got[0].is_nan() && got[0].is_sign_negative());
    assert!(got[9].is_nan() && got[9].is_sign_positive());
}

#[test]
fn sort_by_key_of_tuple_keys_is_lexicographic_and_stable() {
    let g =
        f("fn g(%0 k: [(bool, i32)], %1 v: [u32]) -> [u32] { %2: [u32] = sort_by_key(%0, %1) %2 }");
    let k = vec![
        (true, 1),
        (false, 5),
        (true, -3),
        (false, 5),
        (true, 1),
        (false, -7),
    ];
    let v: Vec<u32> = (0..k.len() as u32).collect();
    let got: Vec<u32> = run(&g, vec![k.clone().into(), v.clone().into()])
        .unwrap()
        .try_into()
        .unwrap();
    let mut want: Vec<((bool, i32), u32)> = k.into_iter().zip(v).collect();
    want.sort_by_key(|p| p.0);
    assert_eq!(got, want.into_iter().map(|p| p.1).collect::<Vec<_>>());
    let bad = run(&g, vec![vec![(true, 1)].into(), Vec::<u32>::new().into()]);
    assert!(
        matches!(
            bad,
            Err(Error::LengthMismatch {
                origin: "sort_by_key",
                left: 1,
                right: 0,
                ..
            })
        ),
        "{bad:?}"
    );
}

proptest! {
    #[test]
    fn sort_matches_rust(x in prop::collection::vec(any::<i64>(), 0..100), b in prop::collection::vec(any::<bool>(), 0..50)) {
        let g = f("fn g(%0 x: [i64], %1 b: [bool]) -> ([i64], [bool]) { %2: [i64] = sort(%0) %3: [bool] = sort(%1) %4: ([i64], [bool]) = tuple(%2, %3) %4 }");
        let got = run(&g, vec![x.clone().into(), b.clone().into()]).unwrap();
        let (mut xs, mut bs) = (x, b);
        xs.sort();
        bs.sort();
        prop_assert_eq!(got, Value::from((xs, bs)));
    }
}
