//! Differential testing with random programs: the generator of `dpl_testkit::programs`
//! writes typed IR programs that chain every primitive at random, with nested forms over
//! rows and loops inside element functions, over `i64` data so that every result is
//! exact. Each program goes through the pipeline; the reference interpreter runs its typed
//! (Prim level), normalized and fused forms, and the fused form is compiled to PTX and
//! run on dpl-sim, on random inputs of several lengths. All four must give the same
//! result, or all fail (a zero divisor is a possible error: the generator does not avoid
//! it); the fused form and the simulator must fail with the same error. When inputs break
//! several contracts at once, the fused form may report another of them than the unfused
//! one (program 60 of the generator's first version: `rem v, v` fails where `v == 0`, a
//! fused division by its result fails earlier in index order) — a known limitation:
//! `Place::Seq` runs the unfused program.
//! Found and fixed with it: fusion inlined producers that can fail into gathers, so the
//! fused program could succeed where the unfused one fails (programs 272, 1002, 1331 of
//! the first version).
//!
//! Program `i` is generated from seed `i`, so a failure names the program to rerun.
//! `DPL_RANDOM_PROGRAMS` sets how many (200 in the test command; `cargo xtask fuzz` runs
//! 10^4). The same programs run as Rust on `Place::Seq` and `Place::Cpu` in `dpl-random`.

mod support;

use std::sync::OnceLock;

use dpl_core::interp::{self, Value};
use dpl_core::pipeline::compile;
use dpl_cuda::sim::SimDriver;
use dpl_testkit::programs as generator;
use support::*;

fn driver() -> &'static SimDriver {
    static D: OnceLock<SimDriver> = OnceLock::new();
    D.get_or_init(SimDriver::default)
}

/// Programs to run: `DPL_RANDOM_PROGRAMS`, 200 by default.
fn programs() -> u64 {
    std::env::var("DPL_RANDOM_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200)
}

/// The interpreter's arguments for program `seed` at length `n`.
fn args(seed: u64, n: usize) -> Vec<Value> {
    let i = generator::inputs(seed, n);
    let rows = Value::seq(i.rows.into_iter().map(seq).collect());
    vec![seq(i.a), seq(i.b), Value::I64(i.k), rows]
}

/// Checks program `seed` on the lengths of [`generator::LENGTHS`]; returns what is wrong.
fn check(seed: u64) -> Result<(), String> {
    let src = generator::program(seed);
    let f = dpl_core::text::parse_named(&src)
        .map_err(|e| format!("the generator wrote a program that does not parse: {e}\n{src}"))?
        .0;
    let c = compile(f).map_err(|d| format!("the pipeline rejects it: {d:?}\n{src}"))?;
    let prog = dpl_cuda::compile(&c.fused)
        .map_err(|e| format!("the GPU code generator rejects it: {e}\n{}", c.fused))?;
    for n in generator::LENGTHS {
        let args = args(seed, n);
        let typed = interp::run(&c.typed, args.clone());
        let normalized = interp::run(&c.normalized, args.clone());
        if normalized != typed {
            return Err(format!(
                "n = {n}: the interpreter on the normalized form gives {normalized:?}, on the typed form {typed:?}\n{src}"
            ));
        }
        // Fusion may change which error a call that breaks several contracts reports (the
        // first one the fused loops meet), never whether it fails or what it returns.
        let want = interp::run(&c.fused, args.clone());
        if want.is_ok() != typed.is_ok() || (want.is_ok() && want != typed) {
            return Err(format!(
                "n = {n}: the interpreter on the fused form gives {want:?}, on the typed form {typed:?}\n{src}"
            ));
        }
        let sim = dpl_cuda::run(&prog, driver(), args);
        let agree = match (&want, &sim) {
            (Ok(w), Ok(s)) => w == s,
            (Err(w), Err(s)) => w.to_run_error(dpl_cuda::UNKNOWN_LOCATION).as_ref() == Some(s),
            _ => false,
        };
        if !agree {
            return Err(format!(
                "n = {n}: the simulator gives {}, the interpreter {}\n{src}",
                match &sim {
                    Ok(v) => short(v),
                    Err(e) => e.to_string(),
                },
                match &want {
                    Ok(v) => short(v),
                    Err(e) => e.to_string(),
                },
            ));
        }
    }
    Ok(())
}

#[test]
fn random_programs_agree_on_every_level_and_the_simulator() {
    let count = programs();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for t in 0..threads {
            let failures = &failures;
            s.spawn(move || {
                for seed in (t..count).step_by(threads as usize) {
                    if let Err(e) = check(seed) {
                        let mut f = failures.lock().unwrap_or_else(|e| e.into_inner());
                        if f.len() < 10 {
                            f.push(format!("program {seed}: {e}"));
                        }
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    eprintln!(
        "random programs: {count} checked, {} failed",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
