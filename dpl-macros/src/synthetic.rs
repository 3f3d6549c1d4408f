//! Synthetic bodies whose size grows with one parameter, for the tests that keep
//! compilation linear (`bounded.rs`) and the expansion benchmarks (`benches/expand.rs`,
//! which includes this file).
//!
//! Each returns the source of one `#[parallel]` function (without the attribute).

/// `let`-bound closures nested `depth` deep, each defined and used inside the body of the
/// one around it (each level once checked, once used: twice per level when a closure was
/// checked at its definition and again at its use).
pub fn nested_closures(depth: usize) -> String {
    let mut body = "v + 1.0".to_string();
    for k in (0..depth).rev() {
        body = format!("{{ let c{k} = |v: f32| {body}; c{k}(v) * 2.0 }}");
    }
    format!("fn nested(x: &[f32]) -> Vec<f32> {{ map(|v: f32| {body}, x) }}")
}

/// `n` independent `sum(map(...))`, added up.
pub fn primitives(n: usize) -> String {
    let mut s = String::from("fn prims(x: &[f32]) -> f32 { ");
    for k in 0..n {
        s += &format!("let s{k} = sum(map(|v: f32| v * {k}.5 + 1.0, x)); ");
    }
    s += "0.0";
    for k in 0..n {
        s += &format!(" + s{k}");
    }
    s + " }"
}

/// A recurrence unrolled `steps` times in which each step reads the previous sequence
/// twice: `a{k+1} = map(|v| v * 0.5 + 1.0, a{k})`, then the sum of it with itself.
pub fn recurrence(steps: usize) -> String {
    let mut s = String::from("fn recur(x: &[f32]) -> Vec<f32> { let a0 = map(|v: f32| v, x); ");
    for k in 0..steps {
        s += &format!(
            "let b{k} = map(|v: f32| v * 0.5 + 1.0, a{k}); \
             let a{} = map(|(p, q): (f32, f32)| p + q, zip(b{k}, b{k})); ",
            k + 1
        );
    }
    s + &format!("a{steps} }}")
}

/// The same inside an element function, with the two reads at different positions
/// (`a{k}[i]` and `a{k}[n - 1 - i]`, which a GPU kernel cannot share by streaming): per
/// row of a `Nested`, the sum of the last step.
pub fn row_recurrence(steps: usize) -> String {
    let mut s = String::from(
        "fn row_recur(x: &Nested<f32>) -> Vec<f32> { \
         map(|r| { let n = len(r); let a0 = map(|v: f32| v, r); ",
    );
    for k in 0..steps {
        s += &format!(
            "let a{} = map(|i: usize| a{k}[i] * 0.5 + a{k}[n - 1 - i], range(n)); ",
            k + 1
        );
    }
    s + &format!("sum(a{steps}) }}, x) }}")
}

/// A pipeline of `n` maps, a scan and a sum over a generic element type: `params` is the
/// generic parameter list (`""` for the same function written for `f32`, `"<T: Num>"`,
/// ...) and `ty` the element type (`f32` or `T`).
pub fn generic(params: &str, ty: &str, n: usize) -> String {
    let mut s = format!(
        "fn gen{params}(x: &[{ty}], a: {ty}) -> ({ty}, Vec<{ty}>) {{ let y0 = map(|v| v, x); "
    );
    for k in 0..n {
        s += &format!("let y{} = map(|v| v * a + {k} as {ty}, y{k}); ", k + 1);
    }
    s + &format!("(sum(y{n}), scan(|p, q| p.max(q), y{n})) }}")
}

/// A `#[parallel] mod` whose function `f` calls a chain of `depth` generic functions, each
/// calling the next (`g{k}` maps, then calls `g{k-1}`): `f` is lowered in `depth + 1`
/// rounds (`front::lower::generic_call`).
pub fn generic_calls(depth: usize) -> String {
    let mut s = String::from("mod m { use dpl::prelude::*; ");
    s += "pub fn g0<T: Num>(x: &[T], a: T) -> T { sum(map(|v| v * a, x)) } ";
    for k in 1..=depth {
        s += &format!(
            "pub fn g{k}<T: Num>(x: &[T], a: T) -> T {{ g{}(map(|v| v + a * {k}, x), a) }} ",
            k - 1
        );
    }
    s + &format!("pub fn f(x: &[f32]) -> f32 {{ g{depth}(x, 2.0) }} }}")
}
