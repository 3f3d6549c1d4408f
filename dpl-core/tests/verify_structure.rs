//! The structural verifier: valid functions pass, each kind of violation is reported.

mod text_support;

use dpl_core::ir::*;
use dpl_core::text::parse;
use dpl_core::verify::{VerifyError, free_vars, verify};
use proptest::prelude::*;

fn v(i: usize) -> VarId {
    VarId::new(i)
}

fn errors(text: &str) -> Vec<VerifyError> {
    let f = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify(&f).expect_err("expected verification errors")
}

use text_support::SAXPY;

#[test]
fn valid_functions_pass() {
    verify(&parse(SAXPY).unwrap()).unwrap();
    // Nested lambdas: the outer lambda captures what the inner one uses from outside both.
    verify(
        &parse(
            "fn f(%0 xs: [[f32]], %1 s: f32) -> [f32] {
               %2: [f32] = map(|%3 row: [f32]| [%1] {
                 %4: [f32] = map(|%5 e: f32| [%1] { %6: f32 = mul %5, %1; %6 }, %3)
                 %7: f32 = sum(%4)
                 %7
               }, %0)
               %2
             }",
        )
        .unwrap(),
    )
    .unwrap();
    // A variable defined in both branches of an `if` in turn is fine scope-wise only once.
    verify(
        &parse(
            "fn f(%0 c: bool, %1 x: i32) -> i32 {
               %2: i32 = if %0 { %3: i32 = neg %1; %3 } else { %1 }
               %2
             }",
        )
        .unwrap(),
    )
    .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// The generator builds well-scoped functions; the verifier accepts all of them.
    #[test]
    fn random_well_scoped_functions_pass(seed in any::<u64>()) {
        let f = text_support::random_function(seed);
        prop_assert_eq!(verify(&f), Ok(()), "{}", f);
    }
}

#[test]
fn use_before_definition() {
    let e = errors("fn f() -> i32 { %0: i32 = neg %1; %1: i32 = const 1; %0 }");
    assert_eq!(
        e,
        vec![VerifyError::NotInScope {
            var: v(1),
            at: Some(v(0))
        }]
    );
}

#[test]
fn use_of_own_variable() {
    let e = errors("fn f() -> i32 { %0: i32 = neg %0; %0 }");
    assert_eq!(
        e,
        vec![VerifyError::NotInScope {
            var: v(0),
            at: Some(v(0))
        }]
    );
}

#[test]
fn use_after_its_block_ended() {
    let e = errors(
        "fn f(%0 c: bool) -> i32 {
           %1: i32 = if %0 { %2: i32 = const 1; %2 } else { %3: i32 = const 2; %3 }
           %4: i32 = add %1, %2
           %4
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::NotInScope {
            var: v(2),
            at: Some(v(4))
        }]
    );
}

#[test]
fn branch_result_not_in_scope() {
    let e = errors(
        "fn f(%0 c: bool) -> i32 {
           %1: i32 = if %0 { %2: i32 = const 1; %2 } else { %2 }
           %1
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::NotInScope {
            var: v(2),
            at: Some(v(1))
        }]
    );
}

#[test]
fn function_result_not_in_scope() {
    let e = errors(
        "fn f(%0 c: bool) -> i32 {
           %1: i32 = if %0 { %2: i32 = const 1; %2 } else { %2 }
           %2
         }",
    );
    assert!(
        e.contains(&VerifyError::NotInScope {
            var: v(2),
            at: None
        }),
        "{e:?}"
    );
}

#[test]
fn declared_but_never_defined_variable() {
    let e = errors("fn f() -> i32 { declare %0 ghost: i32; %0 }");
    assert_eq!(
        e,
        vec![VerifyError::NotInScope {
            var: v(0),
            at: None
        }]
    );
}

#[test]
fn lambda_parameter_used_outside() {
    let e = errors(
        "fn f(%0 x: [i32]) -> [i32] {
           %1: [i32] = map(|%2 e: i32| [] { %2 }, %0)
           %3: i32 = neg %2
           %1
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::NotInScope {
            var: v(2),
            at: Some(v(3))
        }]
    );
}

#[test]
fn defined_twice() {
    let e = errors("fn f(%0 a: i32) -> i32 { %0 a: i32 = const 1; %0 }");
    assert_eq!(e, vec![VerifyError::Redefined { var: v(0) }]);
    let e = errors(
        "fn f(%0 x: [i32]) -> [i32] {
           %1: [i32] = map(|%2 e: i32| [] { %2 }, %0)
           %3: [i32] = map(|%2 e: i32| [] { %2 }, %0)
           %1
         }",
    );
    assert_eq!(e, vec![VerifyError::Redefined { var: v(2) }]);
}

#[test]
fn handles_outside_the_arena() {
    let mut f = parse("fn f(%0 a: i32) -> i32 { %1: i32 = neg %0; %1 }").unwrap();
    f.body.stmts[0].expr = Expr::Unary(UnOp::Neg, v(9));
    f.body.result = v(12);
    let e = verify(&f).unwrap_err();
    assert_eq!(
        e,
        vec![
            VerifyError::NoSuchVar {
                var: v(9),
                at: Some(v(1))
            },
            VerifyError::NoSuchVar {
                var: v(12),
                at: None
            },
        ]
    );
    f.params.push(v(7));
    let e = verify(&f).unwrap_err();
    assert!(
        e.contains(&VerifyError::NoSuchVar {
            var: v(7),
            at: None
        }),
        "{e:?}"
    );
}

#[test]
fn missing_capture() {
    let e = errors(
        "fn f(%0 a: f32, %1 x: [f32]) -> [f32] {
           %2: [f32] = map(|%3 e: f32| [] { %4: f32 = mul %3, %0; %4 }, %1)
           %2
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::MissingCapture {
            var: v(0),
            stmt: v(2)
        }]
    );
}

#[test]
fn extra_and_duplicate_captures() {
    let e = errors(
        "fn f(%0 a: f32, %1 x: [f32]) -> [f32] {
           %2: [f32] = map(|%3 e: f32| [%0, %1] { %4: f32 = mul %3, %0; %4 }, %1)
           %2
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::ExtraCapture {
            var: v(1),
            stmt: v(2)
        }]
    );
    let e = errors(
        "fn f(%0 a: f32, %1 x: [f32]) -> [f32] {
           %2: [f32] = map(|%3 e: f32| [%0, %0] { %4: f32 = mul %3, %0; %4 }, %1)
           %2
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::ExtraCapture {
            var: v(0),
            stmt: v(2)
        }]
    );
    // A lambda's own parameter is not a capture.
    let e = errors(
        "fn f(%0 x: [f32]) -> [f32] {
           %1: [f32] = map(|%2 e: f32| [%2] { %2 }, %0)
           %1
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::ExtraCapture {
            var: v(2),
            stmt: v(1)
        }]
    );
}

#[test]
fn outer_lambda_must_capture_what_inner_lambda_uses() {
    let e = errors(
        "fn f(%0 xs: [[f32]], %1 s: f32) -> [[f32]] {
           %2: [[f32]] = map(|%3 row: [f32]| [] {
             %4: [f32] = map(|%5 e: f32| [%1] { %6: f32 = mul %5, %1; %6 }, %3)
             %4
           }, %0)
           %2
         }",
    );
    assert_eq!(
        e,
        vec![VerifyError::MissingCapture {
            var: v(1),
            stmt: v(2)
        }]
    );
}

#[test]
fn free_vars_in_first_use_order() {
    let f = parse(
        "fn f(%0 a: f32, %1 b: f32, %2 x: [f32]) -> [f32] {
           %3: [f32] = map(|%4 e: f32| [%1, %0] { %5: f32 = mul %1, %0; %6: f32 = add %5, %1; %6 }, %2)
           %3
         }",
    )
    .unwrap();
    verify(&f).unwrap();
    let Expr::Prim { lambdas, .. } = &f.body.stmts[0].expr else {
        panic!()
    };
    assert_eq!(free_vars(&lambdas[0]), vec![v(1), v(0)]);
}

#[test]
fn primitive_arities() {
    let e = errors("fn f(%0 x: [i32]) -> [i32] { %1: [i32] = gather(%0); %1 }");
    assert!(
        matches!(&e[..], [VerifyError::Arity { stmt, message }] if *stmt == v(1) && message.contains("2 data argument")),
        "{e:?}"
    );
    let e = errors(
        "fn f(%0 x: [i32]) -> [i32] { %1: [i32] = map(|%2 a: i32, %3 b: i32| [] { %2 }, %0); %1 }",
    );
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("must take 1 parameter")),
        "{e:?}"
    );
    let e = errors("fn f(%0 x: [i32]) -> [i32] { %1: [i32] = sum(|%2 a: i32| [] { %2 }, %0); %1 }");
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("no function argument")),
        "{e:?}"
    );
    let e = errors(
        "fn f(%0 x: [i32], %1 i: i32) -> i32 { %2: i32 = reduce(|%3 a: i32| [] { %3 }, %0, %1); %2 }",
    );
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("must take 2 parameter")),
        "{e:?}"
    );
    let e = errors("fn f(%0 x: [bool]) -> usize { %1: usize = count(%0, %0); %1 }");
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("1 data argument")),
        "{e:?}"
    );
    let args: Vec<String> = (0..9).map(|_| "%0".to_string()).collect();
    let params: Vec<String> = (0..9).map(|i| format!("%{} a: i32", i + 2)).collect();
    let e = errors(&format!(
        "fn f(%0 x: [i32]) -> [i32] {{ %1: [i32] = map(|{}| [] {{ %2 }}, {}); %1 }}",
        params.join(", "),
        args.join(", ")
    ));
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("1 to 8 sequences")),
        "{e:?}"
    );
}

#[test]
fn math_arity() {
    let e = errors("fn f(%0 a: f32) -> f32 { %1: f32 = powf %0; %1 }");
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("`powf` takes 2")),
        "{e:?}"
    );
}

#[test]
fn soac_lambda_arities() {
    let e = errors(
        "fn f(%0 n: usize) -> [usize] {
           %1: [usize] = soac map(%0, |%2 i: usize, %3 j: usize| [] { %2 })
           %1
         }",
    );
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("exactly one parameter")),
        "{e:?}"
    );
    let e = errors(
        "fn f(%0 n: usize) -> usize {
           %1: usize = soac reduce(%0, |%2 i: usize| [] { %2 }, op: |%3 a: usize| [] { %3 })
           %1
         }",
    );
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("operator of `soac reduce` takes 2")),
        "{e:?}"
    );
    let e = errors(
        "fn f(%0 n: usize) -> [usize] {
           %1: [usize] = soac filter(%0, |%2 i: usize| [] { %2 }, pred: |%3 a: usize, %4 b: usize| [] { %3 })
           %1
         }",
    );
    assert!(
        matches!(&e[..], [VerifyError::Arity { message, .. }] if message.contains("predicate of `soac filter` takes 1")),
        "{e:?}"
    );
}

#[test]
fn every_error_is_collected_and_displayed() {
    let e = errors(
        "fn f(%0 x: [i32]) -> i32 {
           %1: i32 = neg %5
           %2: [i32] = gather(%0)
           %3: i32 = powf %1
           %4: i32 = const 1
           %5: i32 = const 1
           %4
         }",
    );
    assert_eq!(e.len(), 3, "{e:?}");
    assert_eq!(
        e[0].to_string(),
        "%5 is used in the statement defining %1 but is not in scope there"
    );
    assert_eq!(
        e[1].to_string(),
        "the statement defining %2: `gather` takes 2 data argument(s), found 1"
    );
}
