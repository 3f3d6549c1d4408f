//! The random programs compiled as Rust ([`dpl_random::PROGRAMS`]) against the reference
//! interpreter, on the inputs of every length of `dpl_testkit::programs::LENGTHS`:
//! `Place::Seq` (the normalized form, sequential) must give exactly what the interpreter
//! gives on the normalized form, results and errors alike (the same error, its values
//! included); `Place::Cpu` (the fused form, parallel) exactly what it gives on the fused
//! form, in rayon pools of 1, 2, 3 and 5 threads, or fail with the same kind of error
//! (which element's error a parallel loop reports first is not fixed: the index in an
//! `index out of range` may differ). A program that panics otherwise, or that the build
//! script could not compile, fails the test.
//!
//! Found and fixed with it: `Place::Cpu`'s exclusive scan did not evaluate its last input
//! element, which no output needs, so a call whose last element fails returned a result
//! (programs 1282, 1524, 1536: `exclusive_scan` of a map that fails on one element, length
//! 1; regression test in `dpl-cpu/tests/rt.rs`).

use std::panic::{AssertUnwindSafe, catch_unwind};

use dpl::{Error, Nested, Place};
use dpl_core::interp::{self, Value};
use dpl_core::pipeline::compile;
use dpl_random::{Entry, PROGRAMS, Program, REJECTED};
use dpl_testkit::programs::{self as generator, Inputs};
use rayon::prelude::*;

/// The interpreter's result, or the error it maps to (`None`: an error no place reports).
type Want = Result<Value, Option<Error>>;

/// A program on one input, with what the interpreter gives on its two forms.
struct Case {
    program: &'static Program,
    n: usize,
    inputs: Inputs,
    rows: Nested<i64>,
    /// On the normalized form (what `Place::Seq` runs).
    seq: Want,
    /// On the fused form (what `Place::Cpu` runs).
    cpu: Want,
}

impl Case {
    /// What `place` must give.
    fn want(&self, place: Place) -> &Want {
        if place == Place::Seq {
            &self.seq
        } else {
            &self.cpu
        }
    }
}

fn want(f: &dpl_core::ir::Function, args: Vec<Value>, at: dpl::Location) -> Want {
    interp::run(f, args).map_err(|e| e.to_run_error(at))
}

fn value(xs: &[i64]) -> Value {
    Value::seq(xs.iter().map(|&x| Value::I64(x)).collect())
}

/// Every case of every program, the interpreter's results computed in parallel.
fn cases() -> Vec<Case> {
    // Generated code reports this location; the interpreter's errors get it too.
    let at = dpl::Location {
        file: "",
        line: 0,
        column: 0,
    };
    PROGRAMS
        .par_iter()
        .flat_map_iter(|p| {
            let src = generator::program(p.seed);
            let f = dpl_core::text::parse_named(&src)
                .unwrap_or_else(|e| panic!("program {}: {e}", p.seed))
                .0;
            let c = compile(f).unwrap_or_else(|e| panic!("program {}: {e:?}", p.seed));
            generator::LENGTHS
                .iter()
                .map(|&n| {
                    let inputs = generator::inputs(p.seed, n);
                    let rows = Value::seq(inputs.rows.iter().map(|r| value(r)).collect());
                    let args = vec![
                        value(&inputs.a),
                        value(&inputs.b),
                        Value::I64(inputs.k),
                        rows,
                    ];
                    Case {
                        program: p,
                        n,
                        rows: Nested::from_rows(inputs.rows.iter().cloned()),
                        seq: want(&c.normalized, args.clone(), at),
                        cpu: want(&c.fused, args, at),
                        inputs,
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `e` without its location (generated code reports the location of its `quote!`).
fn unplaced(e: &Error) -> String {
    let text = e.to_string();
    match text.rfind(" at ") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The kind of an error: what it is about, without the values that depend on which
/// element a parallel loop reported first.
fn kind(e: &Error) -> String {
    match e {
        Error::IndexOutOfRange { prim, .. } => format!("{prim}: index out of range"),
        Error::LengthMismatch { prim, .. } => format!("{prim}: length mismatch"),
        _ => unplaced(e),
    }
}

/// Runs `f` on the case's inputs; a panic that is not a dpl error becomes a message.
fn call(f: Entry, c: &Case) -> Result<Result<(Vec<i64>, i64), Error>, String> {
    let i = &c.inputs;
    catch_unwind(AssertUnwindSafe(|| f(&i.a, &i.b, i.k, &c.rows))).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())
    })
}

/// What is wrong with what `place` gave (`got`) for the case; `Place::Seq`'s errors are
/// compared with their values, `Place::Cpu`'s by kind.
fn compare(
    place: Place,
    c: &Case,
    got: Result<Result<(Vec<i64>, i64), Error>, String>,
) -> Option<String> {
    let want = c.want(place);
    let ok = match (&got, want) {
        (Ok(Ok((xs, s))), Ok(w)) => Value::Tuple(vec![value(xs), Value::I64(*s)]) == *w,
        (Ok(Err(e)), Err(Some(w))) if place == Place::Seq => unplaced(e) == unplaced(w),
        (Ok(Err(e)), Err(Some(w))) => kind(e) == kind(w),
        _ => false,
    };
    (!ok).then(|| {
        let got = match got {
            Ok(Ok((xs, s))) => format!("{} values, {s}: {:?}", xs.len(), &xs[..xs.len().min(8)]),
            Ok(Err(e)) => e.to_string(),
            Err(panic) => format!("a panic: {panic}"),
        };
        format!(
            "program {}, n = {}: {place:?} gives {got}, the interpreter {}\n{}",
            c.program.seed,
            c.n,
            match want {
                Ok(v) => format!("{v:.100?}"),
                Err(e) => format!("{e:?}"),
            },
            generator::program(c.program.seed)
        )
    })
}

/// Prints what was checked (how many cases gave a result and how many an error, so that
/// a generator that only makes failing programs shows) and fails with the first failures.
fn report(place: Place, cases: &[Case], failures: Vec<String>) {
    let results = cases.iter().filter(|c| c.want(place).is_ok()).count();
    eprintln!(
        "random programs on {place:?}: {} programs, {} cases ({results} results, {} errors), {} failed, {} not compiled",
        PROGRAMS.len(),
        cases.len(),
        cases.len() - results,
        failures.len(),
        REJECTED.len()
    );
    let first: Vec<&str> = failures.iter().take(10).map(String::as_str).collect();
    assert!(
        failures.is_empty(),
        "{} failures; the first:\n{}",
        failures.len(),
        first.join("\n\n")
    );
}

#[test]
fn every_program_compiled() {
    let why: Vec<String> = REJECTED
        .iter()
        .map(|(seed, why)| format!("program {seed}: {why}"))
        .collect();
    assert!(why.is_empty(), "{}", why.join("\n\n"));
}

#[test]
fn seq_agrees_with_the_interpreter() {
    let cases = cases();
    let failures = cases
        .par_iter()
        .filter_map(|c| compare(Place::Seq, c, call(c.program.seq, c)))
        .collect();
    report(Place::Seq, &cases, failures);
}

#[test]
fn cpu_agrees_with_the_interpreter_in_pools_of_1_to_5_threads() {
    let cases = cases();
    let failures = std::sync::Mutex::new(Vec::new());
    dpl_testkit::in_pools(|| {
        for c in &cases {
            if let Some(f) = compare(Place::Cpu, c, call(c.program.cpu, c)) {
                failures.lock().unwrap().push(f);
            }
        }
    });
    report(Place::Cpu, &cases, failures.into_inner().unwrap());
}
