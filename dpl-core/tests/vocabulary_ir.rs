//! What the everyday vocabulary needs of the IR: `unzip` of any width (what `zip` of up to 8
//! sequences gives back) in the verifier and the interpreter, and the checks of the forms
//! the front end lowers (`argmin`, slices) reported under their own names, in the text form
//! too.

use dpl_core::interp::{Error, Value, run};
use dpl_core::ir::*;
use dpl_core::text::{parse, print};
use dpl_core::verify::{verify, verify_types};

fn f(text: &str) -> Function {
    parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const UNZIP3: &str = "fn f(%0 a: [i32], %1 b: [u32], %2 c: [f64]) -> ([i32], [u32], [f64]) {
  %3: [(i32, u32, f64)] = map(|%4 p: i32, %5 q: u32, %6 r: f64| [] { %7: (i32, u32, f64) = tuple(%4, %5, %6); %7 }, %0, %1, %2)
  %8: ([i32], [u32], [f64]) = unzip(%3)
  %8
}";

#[test]
fn unzip_of_three_verifies_and_runs() {
    let g = f(UNZIP3);
    assert_eq!(verify(&g), Ok(()));
    assert_eq!(verify_types(&g), Ok(()));
    for n in [0usize, 1, 7] {
        let a: Vec<i32> = (0..n as i32).map(|i| i * 3 - 2).collect();
        let b: Vec<u32> = (0..n as u32).map(|i| i ^ 5).collect();
        let c: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
        let got = run(
            &g,
            vec![a.clone().into(), b.clone().into(), c.clone().into()],
        )
        .unwrap();
        let want = Value::Tuple(vec![a.into(), b.into(), c.into()]);
        assert_eq!(got, want, "n = {n}");
    }
}

#[test]
fn form_origins_name_their_checks() {
    let g = f("fn f(%0 x: [f32], %1 a: usize) -> usize {
  %2: usize = len %0
  %3: () = assert(argmin) non_empty %2
  %4: () = assert(slice) in_bounds %1, %2
  %2
}");
    let text = print(&g);
    assert!(text.contains("assert(argmin) non_empty"), "{text}");
    assert!(text.contains("assert(slice) in_bounds"), "{text}");
    assert_eq!(parse(&text).as_ref(), Ok(&g));
    assert!(matches!(
        run(&g, vec![Vec::<f32>::new().into(), 0usize.into()]),
        Err(Error::Empty {
            origin: "argmin",
            ..
        })
    ));
    assert!(matches!(
        run(&g, vec![vec![1.0f32].into(), 3usize.into()]),
        Err(Error::IndexOutOfRange {
            origin: "slice",
            index: 3,
            len: 1,
            ..
        })
    ));
    for form in Form::ALL {
        assert_eq!(Origin::from_name(form.name()), Some(Origin::Form(form)));
    }
    assert_eq!(Origin::from_name("index"), Some(Origin::Index));
    assert_eq!(
        Origin::from_name("gather"),
        Some(Origin::Prim(Prim::Gather))
    );
    assert_eq!(Origin::from_name("nothing"), None);
}
