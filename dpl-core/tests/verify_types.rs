//! The type verifier: well-typed functions pass, each kind of type error is reported.

use dpl_core::ir::*;
use dpl_core::text::parse;
use dpl_core::verify::{VerifyError, verify, verify_types};

fn ok(text: &str) {
    let f = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify(&f).unwrap();
    if let Err(e) = verify_types(&f) {
        panic!("{e:?}\n{text}");
    }
}

/// The single type error of a function (structurally valid), as a message.
fn type_error(text: &str) -> String {
    let f = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    verify(&f).unwrap();
    let e = verify_types(&f).expect_err("expected a type error");
    assert_eq!(e.len(), 1, "{e:?}");
    e[0].to_string()
}

/// A one-statement function `fn f(params) -> ty { %N: ty = expr; %N }`.
fn one(params: &str, ty: &str, expr: &str) -> String {
    let n = params.matches('%').count();
    format!("fn f({params}) -> {ty} {{ %{n}: {ty} = {expr}; %{n} }}")
}

#[test]
fn well_typed_scalars() {
    ok(&one("%0 a: i32, %1 b: i32", "i32", "add %0, %1"));
    ok(&one("%0 a: u64, %1 b: i32", "u64", "shl %0, %1"));
    ok(&one("%0 a: f32, %1 b: f32", "bool", "lt %0, %1"));
    ok(&one("%0 a: bool, %1 b: bool", "bool", "xor %0, %1"));
    ok(&one("%0 a: u32", "u32", "not %0"));
    ok(&one("%0 a: i64", "i64", "neg %0"));
    ok(&one("%0 a: f64", "u32", "cast %0 as u32"));
    ok(&one("%0 a: bool", "i32", "cast %0 as i32"));
    ok(&one(
        "%0 a: f64, %1 b: f64, %2 c: f64",
        "f64",
        "mul_add %0, %1, %2",
    ));
    ok(&one("%0 a: i32", "i32", "abs %0"));
    ok(&one("%0 a: u32, %1 b: u32", "u32", "max %0, %1"));
    ok(&one(
        "%0 a: i32, %1 b: bool",
        "(i32, bool)",
        "tuple(%0, %1)",
    ));
    ok(&one("%0 t: (i32, bool)", "bool", "%0.1"));
    ok(&one("%0 x: [f32], %1 i: u32", "f32", "index(index) %0[%1]"));
    ok(&one("%0 x: [f32]", "usize", "len %0"));
    ok("fn f() -> u32 { %0: u32 = const 4294967295; %0 }");
    ok("fn f() -> f32 { %0: f32 = const 1.5; %0 }");
    ok(
        "fn f(%0 c: bool, %1 a: i32) -> i32 { %2: i32 = if %0 { %3: i32 = neg %1; %3 } else { %1 }; %2 }",
    );
}

#[test]
fn well_typed_primitives() {
    ok("fn f(%0 a: f32, %1 x: [f32], %2 y: [f32]) -> [f32] {
          declare %3 unit: ()
          %4: [f32] = map(|%5 xi: f32, %6 yi: f32| [%0] { %7: f32 = mul %0, %5; %8: f32 = add %7, %6; %8 }, %1, %2)
          %4
        }");
    ok("fn f(%0 x: [i32], %1 i: [u32], %2 z: i32) -> ([i32], [u32]) {
          %3: [(i32, u32)] = zip(%0, %1)
          %4: ([i32], [u32]) = unzip(%3)
          %5: [i32] = gather(%0, %1)
          %6: [i32] = permute(%0, %1)
          %7: [i32] = scatter(%5, %1, %6)
          %8: [i32] = scatter_reduce(|%9 a: i32, %10 b: i32| [] { %11: i32 = add %9, %10; %11 }, %5, %1, %7)
          %12: i32 = reduce(|%13 a: i32, %14 b: i32| [] { %15: i32 = max %13, %14; %15 }, %8, %2)
          %16: i32 = sum(%0)
          %17: i32 = min(%0)
          %18: [bool] = map(|%19 e: i32| [%2] { %20: bool = gt %19, %2; %20 }, %0)
          %21: bool = any(%18)
          %22: bool = all(|%23 e: i32| [%2] { %24: bool = lt %23, %2; %24 }, %0)
          %25: usize = count(%18)
          %26: [i32] = scan(|%27 a: i32, %28 b: i32| [] { %29: i32 = add %27, %28; %29 }, %0)
          %30: [i32] = exclusive_scan(|%31 a: i32, %32 b: i32| [] { %33: i32 = add %31, %32; %33 }, %0, %2)
          %34: [i32] = filter(|%35 e: i32| [%2] { %36: bool = ne %35, %2; %36 }, %0)
          %37: usize = len(%0)
          %38: [i32] = replicate(%2, %37)
          %39: [usize] = indices(%0)
          %40: [usize] = range(%37)
          %4
        }");
}

#[test]
fn well_typed_soacs_and_asserts() {
    ok("fn f(%0 x: [f32], %1 i: [u32], %2 z: f32) -> f32 {
          %3: usize = len %0
          %4: usize = len %1
          %5: () = assert(gather) eq_len %3, %4
          %6: () = assert(gather) indices_in_range %1, %3
          %7: () = assert(min) non_empty %3
          %8: u32 = const 0
          %9: () = assert(index) in_bounds %8, %3
          %10: [f32] = soac map(%4, |%11 j: usize| [%1, %0] {
            %12: u32 = index(unchecked) %1[%11]
            %13: f32 = index(unchecked) %0[%12]
            %13
          })
          %14: f32 = soac reduce(%3, |%15 j: usize| [%0] { %16: f32 = index(unchecked) %0[%15]; %16 },
                                 op: |%17 a: f32, %18 b: f32| [] { %19: f32 = add %17, %18; %19 }, init: %2)
          %20: [f32] = soac scan(%3, |%21 j: usize| [%0] { %22: f32 = index(unchecked) %0[%21]; %22 },
                                 op: |%23 a: f32, %24 b: f32| [] { %25: f32 = add %23, %24; %25 })
          %26: [f32] = soac exclusive_scan(%3, |%27 j: usize| [%0] { %28: f32 = index(unchecked) %0[%27]; %28 },
                                 op: |%29 a: f32, %30 b: f32| [] { %31: f32 = add %29, %30; %31 }, init: %2)
          %32: [f32] = soac filter(%3, |%33 j: usize| [%0] { %34: f32 = index(unchecked) %0[%33]; %34 },
                                 pred: |%35 e: f32| [%2] { %36: bool = lt %35, %2; %36 })
          %37: [f32] = soac scatter(%4, |%38 j: usize| [%1, %2] { %39: u32 = index(unchecked) %1[%38]; %40: (u32, f32) = tuple(%39, %2); %40 }, dst: %0)
          %41: [f32] = soac scatter_reduce(%4, |%42 j: usize| [%1, %2] { %43: u32 = index(unchecked) %1[%42]; %44: (u32, f32) = tuple(%43, %2); %44 },
                                 op: |%45 a: f32, %46 b: f32| [] { %47: f32 = add %45, %46; %47 }, dst: %0)
          %48: [f32] = soac permute(%3, |%49 j: usize| [%0] { %50: f32 = index(unchecked) %0[%49]; %51: (usize, f32) = tuple(%49, %50); %51 })
          %14
        }");
}

#[test]
fn unknown_types() {
    let f = parse("fn f(%0 a: _) -> i32 { %1: [_] = tuple(); %0 }").unwrap();
    let e = verify_types(&f).unwrap_err();
    assert!(
        e.contains(&VerifyError::UnknownType { var: VarId::new(0) }),
        "{e:?}"
    );
    assert!(
        e.contains(&VerifyError::UnknownType { var: VarId::new(1) }),
        "{e:?}"
    );
}

#[test]
fn binary_operand_mismatch() {
    let m = type_error(&one("%0 a: i32, %1 b: i64", "i32", "add %0, %1"));
    assert_eq!(
        m,
        "the statement defining %2: the operands of `+` differ: i32 vs i64"
    );
}

#[test]
fn arithmetic_on_bool() {
    assert!(
        type_error(&one("%0 a: bool, %1 b: bool", "bool", "mul %0, %1"))
            .contains("applies to numbers")
    );
}

#[test]
fn bit_operations_on_floats() {
    assert!(
        type_error(&one("%0 a: f32, %1 b: f32", "f32", "and %0, %1")).contains("integers and bool")
    );
    assert!(
        type_error(&one("%0 a: f32, %1 b: u32", "f32", "shl %0, %1")).contains("shifts an integer")
    );
}

#[test]
fn comparison_gives_bool() {
    assert!(
        type_error(&one("%0 a: i32, %1 b: i32", "i32", "lt %0, %1"))
            .contains("gives bool but the variable has type i32")
    );
}

#[test]
fn negating_unsigned() {
    assert!(type_error(&one("%0 a: u32", "u32", "neg %0")).contains("signed integers and floats"));
    assert!(type_error(&one("%0 a: f32", "f32", "not %0")).contains("integers and bool"));
}

#[test]
fn casts_rust_does_not_allow() {
    assert!(
        type_error(&one("%0 a: i32", "bool", "cast %0 as bool"))
            .contains("`i32 as bool` is not a Rust cast")
    );
    assert!(type_error(&one("%0 a: bool", "f32", "cast %0 as f32")).contains("`bool as f32`"));
    assert!(type_error(&one("%0 a: [i32]", "i32", "cast %0 as i32")).contains("converts scalars"));
}

#[test]
fn constants_must_match_their_type() {
    assert!(type_error("fn f() -> f32 { %0: f32 = const 1; %0 }").contains("cannot have type f32"));
    assert!(
        type_error("fn f() -> i32 { %0: i32 = const 1.0; %0 }").contains("cannot have type i32")
    );
    assert!(
        type_error("fn f() -> i32 { %0: i32 = const true; %0 }").contains("cannot have type i32")
    );
    assert!(type_error("fn f() -> u32 { %0: u32 = const -1; %0 }").contains("does not fit u32"));
    assert!(
        type_error("fn f() -> i32 { %0: i32 = const 2147483648; %0 }").contains("does not fit i32")
    );
}

#[test]
fn indexing() {
    assert!(
        type_error(&one("%0 x: [f32], %1 i: f32", "f32", "index(index) %0[%1]"))
            .contains("an index must be an integer")
    );
    assert!(
        type_error(&one("%0 x: f32, %1 i: usize", "f32", "index(index) %0[%1]"))
            .contains("must be a sequence")
    );
    assert!(
        type_error(&one(
            "%0 x: [f32], %1 i: usize",
            "f64",
            "index(index) %0[%1]"
        ))
        .contains("gives f32")
    );
    assert!(type_error(&one("%0 x: [f32]", "u32", "len %0")).contains("gives usize"));
}

#[test]
fn math_functions() {
    assert!(type_error(&one("%0 a: i32", "i32", "sqrt %0")).contains("`sqrt` applies to floats"));
    assert!(type_error(&one("%0 a: u32", "u32", "abs %0")).contains("floats and signed integers"));
    assert!(type_error(&one("%0 a: f32, %1 b: f64", "f32", "powf %0, %1")).contains("differ"));
    assert!(
        type_error(&one("%0 a: bool, %1 b: bool", "bool", "min %0, %1"))
            .contains("applies to numbers")
    );
}

#[test]
fn if_branches_and_condition() {
    assert!(type_error("fn f(%0 c: bool, %1 a: i32, %2 b: i64) -> i32 { %3: i32 = if %0 { %1 } else { %2 }; %3 }")
        .contains("the branches differ: i32 vs i64"));
    assert!(
        type_error("fn f(%0 c: i32, %1 a: i32) -> i32 { %2: i32 = if %0 { %1 } else { %1 }; %2 }")
            .contains("must be bool")
    );
}

#[test]
fn tuples_and_fields() {
    assert!(type_error(&one("%0 t: (i32, bool)", "i32", "%0.2")).contains("no field 2"));
    assert!(type_error(&one("%0 t: (i32, bool)", "i32", "%0.1")).contains("gives bool"));
    assert!(type_error(&one("%0 a: i32", "(i32,)", "tuple(%0, %0)")).contains("gives (i32, i32)"));
}

#[test]
fn function_result_type() {
    let f = parse("fn f(%0 a: i32) -> i64 { %0 }").unwrap();
    let e = verify_types(&f).unwrap_err();
    assert_eq!(
        e,
        vec![VerifyError::Type {
            stmt: None,
            message: "the body gives i32 but the function returns i64".into()
        }]
    );
}

#[test]
fn lambda_parameter_types() {
    let m = type_error(
        "fn f(%0 x: [f32]) -> [f32] { %1: [f32] = map(|%2 e: f64| [] { %3: f32 = const 1.0; %3 }, %0); %1 }",
    );
    assert!(
        m.contains("parameter 0 (%2) of the function of `map` must be f32, found f64"),
        "{m}"
    );
}

#[test]
fn operator_result_type() {
    let m = type_error(
        "fn f(%0 x: [i32], %1 z: i32) -> i32 { %2: i32 = reduce(|%3 a: i32, %4 b: i32| [] { %5: bool = lt %3, %4; %5 }, %0, %1); %2 }",
    );
    assert!(
        m.contains("the operator of `reduce` must give i32, found bool"),
        "{m}"
    );
    let m = type_error(
        "fn f(%0 x: [i32], %1 z: i64) -> i32 { %2: i32 = reduce(|%3 a: i32, %4 b: i32| [] { %3 }, %0, %1); %2 }",
    );
    assert!(m.contains("start value of `reduce` must be i32"), "{m}");
}

#[test]
fn predicate_result_type() {
    let m = type_error(
        "fn f(%0 x: [i32]) -> [i32] { %1: [i32] = filter(|%2 e: i32| [] { %2 }, %0); %1 }",
    );
    assert!(
        m.contains("the predicate of `filter` must give bool, found i32"),
        "{m}"
    );
    let m = type_error("fn f(%0 x: [i32]) -> bool { %1: bool = any(%0); %1 }");
    assert!(m.contains("without a predicate takes [bool]"), "{m}");
}

#[test]
fn index_sequences_must_be_integers() {
    let m =
        type_error("fn f(%0 x: [i32], %1 i: [f32]) -> [i32] { %2: [i32] = gather(%0, %1); %2 }");
    assert!(
        m.contains("the indices of `gather` must be a sequence of integers"),
        "{m}"
    );
    let m = type_error(
        "fn f(%0 x: [i32], %1 i: [u32], %2 d: [i64]) -> [i32] { %3: [i32] = scatter(%0, %1, %2); %3 }",
    );
    assert!(m.contains("destination of `scatter` must be [i32]"), "{m}");
}

#[test]
fn reductions_of_non_numbers() {
    let m = type_error("fn f(%0 x: [bool]) -> bool { %1: bool = sum(%0); %1 }");
    assert!(m.contains("`sum` applies to sequences of numbers"), "{m}");
    let m = type_error(
        "fn f(%0 x: [(i32, i32)]) -> ([i32], [i32], [i32]) { %1: ([i32], [i32], [i32]) = unzip(%0); %1 }",
    );
    assert!(m.contains("gives ([i32], [i32])"), "{m}");
}

#[test]
fn lengths_are_usize() {
    let m = type_error("fn f(%0 v: i32, %1 n: i32) -> [i32] { %2: [i32] = replicate(%0, %1); %2 }");
    assert!(m.contains("the count of `replicate` must be usize"), "{m}");
    let m = type_error(
        "fn f(%0 n: u32) -> [usize] { %1: [usize] = soac map(%0, |%2 i: usize| [] { %2 }); %1 }",
    );
    assert!(m.contains("length of `soac map` must be usize"), "{m}");
    let m =
        type_error("fn f(%0 n: u32, %1 m: usize) -> () { %2: () = assert(zip) eq_len %0, %1; %2 }");
    assert!(m.contains("a length must be usize"), "{m}");
}

#[test]
fn soac_index_function_and_pairs() {
    let m = type_error(
        "fn f(%0 n: usize) -> [u32] { %1: [u32] = soac map(%0, |%2 i: u32| [] { %2 }); %1 }",
    );
    assert!(
        m.contains("index function of `soac map` must be usize"),
        "{m}"
    );
    let m = type_error(
        "fn f(%0 n: usize, %1 d: [f32]) -> [f32] { %2: [f32] = soac scatter(%0, |%3 i: usize| [%1] { %1 }, dst: %1); %2 }",
    );
    assert!(m.contains("must give (integer, value)"), "{m}");
    let m = type_error(
        "fn f(%0 n: usize, %1 v: f32) -> [f64] { %2: [f64] = soac permute(%0, |%3 i: usize| [%1] { %4: (usize, f32) = tuple(%3, %1); %4 }); %2 }",
    );
    assert!(m.contains("gives [f32]"), "{m}");
}

#[test]
fn errors_in_nested_blocks_are_all_reported() {
    let f = parse(
        "fn f(%0 x: [i32], %1 c: bool) -> [i32] {
           %2: [i32] = map(|%3 e: i32| [%1] {
             %4: i32 = if %1 { %5: i32 = cast %3 as bool; %5 } else { %3 }
             %6: f32 = neg %3
             %4
           }, %0)
           %2
         }",
    )
    .unwrap();
    verify(&f).unwrap();
    let e = verify_types(&f).unwrap_err();
    let stmts: Vec<Option<VarId>> = e
        .iter()
        .map(|e| match e {
            VerifyError::Type { stmt, .. } => *stmt,
            _ => panic!("{e:?}"),
        })
        .collect();
    assert_eq!(
        stmts,
        vec![Some(VarId::new(5)), Some(VarId::new(6))],
        "{e:?}"
    );
}
