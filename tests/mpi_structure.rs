//! The program each rank runs on `Place::Mpi` keeps the CPU's fused loops: the same
//! number of loops as the fused function (plus one per gather, the loop that computes its
//! indices), the same statements in their element functions (down to the IR variables),
//! the same dpl-cpu helpers in the generated Rust, and communication only where the
//! crate README says: checked on `dpl::inspect!` (no MPI needed).

use dpl::prelude::*;

#[path = "programs/indexed.rs"]
mod indexed;
#[path = "programs/stencil.rs"]
mod stencil;

#[parallel]
fn saxpy(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    map(|xi, yi| a * xi + yi, x, y)
}

#[parallel]
fn sq_dist(x: &[f64], y: &[f64]) -> f64 {
    sum(map(|v| v * v, map(|a, b| a - b, x, y)))
}

#[parallel]
fn centred(x: &[f64]) -> Vec<f64> {
    let m = sum(x) / (len(x) as f64);
    map(|v| v - m, x)
}

#[parallel]
fn gathered_energy(x: &[f32], idx: &[u32]) -> f64 {
    sum(map(|v| (v * v) as f64, gather(x, idx)))
}

#[parallel]
fn prefix(x: &[i64]) -> Vec<i64> {
    scan(|a, b| a + b, map(|v| v * 2, x))
}

#[parallel]
fn kept(x: &[i32]) -> Vec<i32> {
    filter(|v| v > 0, map(|v| v - 1, x))
}

#[parallel]
fn sorted(x: &[f32]) -> Vec<f32> {
    sort(map(|v| -v, x))
}

#[parallel]
fn row_sums(rows: &Nested<f64>) -> Vec<f64> {
    map(|r| sum(map(|v| v * v, r)), rows)
}

#[parallel]
fn all_pairs(x: &[i32], y: &[i32]) -> Vec<usize> {
    map(|a| count(|b| b < a, y), x)
}

#[parallel]
fn csr(vals: &Nested<f64>, cols: &Nested<u32>, x: &[f64]) -> Vec<f64> {
    map(
        |a, c| sum(map(|aij, xj| aij * xj, a, gather(x, c))),
        vals,
        cols,
    )
}

#[parallel]
fn quotients(x: &[i32], d: &[i32]) -> Vec<i32> {
    map(|a, b| a / b, x, d)
}

#[parallel]
fn quotient_sum_if(x: &[i32], d: &[i32], up: bool) -> i32 {
    let q = map(|a, b| a / b, x, d);
    if up { sum(q) } else { 0 }
}

#[parallel]
fn modular_prefix(x: &[u32], m: u32) -> Vec<u32> {
    scan(|a, b| (a + b) % m, x)
}

#[parallel(replicated(y))]
fn all_pairs_replicated(x: &[i32], y: &[i32]) -> Vec<usize> {
    map(|a| count(|b| b < a, y), x)
}

/// A loop at the top level of the body: the power iteration's form, a carried vector.
#[parallel]
fn normalized_steps(x: &[f64], steps: usize) -> (Vec<f64>, f64) {
    let mut v = x.to_vec();
    let mut norm = 0.0;
    for _ in 0..steps {
        let w = map(|e| e * 0.5 + 1.0, v);
        norm = sum(map(|e| e * e, w)).sqrt();
        v = map(|e| e / norm, w);
    }
    (v, norm)
}

/// Top-level loops of an IR text (`soac` statements at the first indentation level).
fn loops(ir: &str) -> usize {
    ir.lines()
        .filter(|l| l.starts_with("  %") && l.contains(" = soac "))
        .count()
}

/// The communication lines of an `mpi_ir` (what follows `communication:`), without the
/// rank and size.
fn comms(ir: &str) -> Vec<String> {
    let at = ir.find("communication:").expect("a communication section");
    ir[at..]
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("  %"))
        .map(|l| l.split(": ").nth(1).unwrap_or("").to_string())
        .filter(|w| w != "rank" && w != "size")
        .collect()
}

/// Checks `f`: loops as fused (plus `extra`), every computing statement of the fused
/// function in the rank's program verbatim, the communication `expected` (substrings, in
/// order of the program's variables), and no sequence all-gathered.
#[track_caller]
fn check(f: dpl::Inspect, extra: usize, expected: &[&str]) {
    assert!(
        f.mpi_not_compiled.is_empty(),
        "{}: {}",
        f.name,
        f.mpi_not_compiled
    );
    assert_eq!(
        loops(f.mpi_ir),
        loops(f.fused_ir) + extra,
        "{}: loops\n{}",
        f.name,
        f.mpi_ir
    );
    for line in f.fused_ir.lines() {
        let computes = line.contains(" = ")
            && !line.contains(" = index(")
            && !line.contains(" = len ")
            && !line.contains(" = soac ")
            && !line.contains(" = assert(");
        // A statement bound by a removed loop index, or a read it replaced, is rewritten.
        if computes {
            assert!(
                f.mpi_ir.contains(line.trim_start()),
                "{}: `{}` is not in the rank's program\n{}",
                f.name,
                line.trim(),
                f.mpi_ir
            );
        }
    }
    let got = comms(f.mpi_ir);
    assert_eq!(
        got.len(),
        expected.len(),
        "{}: communication {got:?}",
        f.name
    );
    for (g, e) in got.iter().zip(expected) {
        assert!(
            g.contains(e),
            "{}: `{g}` is not `{e}` (all: {got:?})",
            f.name
        );
    }
    assert!(
        !f.mpi_rust.contains("all_gather"),
        "{}: a sequence is all-gathered",
        f.name
    );
}

/// How many times the generated Rust calls a dpl-cpu helper (`rt :: name (`).
fn helper_calls(rust: &str, name: &str) -> usize {
    rust.matches(&format!("rt :: {name} (")).count()
}

#[test]
fn element_wise_chains_stay_local() {
    check(
        dpl::inspect!(saxpy),
        0,
        &["layouts of %1 x, %2 y", "window of %2 y"],
    );
    check(
        dpl::inspect!(sq_dist),
        0,
        &["reduce", "layouts", "window of %1 y"],
    );
    check(dpl::inspect!(centred), 0, &["reduce", "layouts of %0 x"]);
    let f = dpl::inspect!(saxpy);
    assert_eq!(
        helper_calls(f.mpi_rust, "map"),
        helper_calls(f.cpu_rust, "map")
    );
    let f = dpl::inspect!(sq_dist);
    assert_eq!(
        helper_calls(f.mpi_rust, "reduce"),
        helper_calls(f.cpu_rust, "reduce")
    );
}

/// A loop at the top level: the rank runs it over its blocks; each iteration's
/// communication is its reduction's exchange (the carried vector keeps its layout, so
/// nothing is realigned), and the loop's body holds the fused loops of the function.
#[test]
fn a_top_level_loop_runs_over_the_blocks() {
    let f = dpl::inspect!(normalized_steps);
    assert_eq!(f.mpi_not_compiled, "");
    let got = comms(f.mpi_ir);
    let windows = got.iter().filter(|c| c.starts_with("window")).count();
    let reduces = got.iter().filter(|c| c.starts_with("reduce")).count();
    assert_eq!(reduces, 1, "{got:?}\n{}", f.mpi_ir);
    assert!(
        got.iter().all(|c| c.starts_with("window")
            || c.starts_with("reduce")
            || c.starts_with("layouts")),
        "{got:?}"
    );
    // Reads of the carried vector at the loop index with its own layout: windows of equal
    // layouts (borrowed at run time, no message), one per loop that reads another's block.
    assert!(windows <= 2, "{got:?}\n{}", f.mpi_ir);
    assert!(!f.mpi_rust.contains("all_gather"), "{}", f.mpi_rust);
    // The fused loops inside the loop's body, each once.
    let inner = |ir: &str| ir.matches(" = soac ").count();
    assert_eq!(
        inner(f.mpi_ir),
        inner(f.fused_ir),
        "{}\n{}",
        f.fused_ir,
        f.mpi_ir
    );
}

#[test]
fn halos_gathers_and_scatters() {
    check(
        dpl::inspect!(stencil::blur3),
        0,
        &["layouts", "window of %0 x"],
    );
    check(
        dpl::inspect!(gathered_energy),
        1,
        &["reduce", "layouts of %0 x, %1 idx", "gather from %0 x"],
    );
    check(
        dpl::inspect!(indexed::histogram),
        0,
        &["scatter", "layouts of %0 keys", "balanced layout"],
    );
}

#[test]
fn scans_filters_sorts() {
    check(dpl::inspect!(prefix), 0, &["scan", "layouts"]);
    check(dpl::inspect!(kept), 0, &["layouts of %0 x", "layout of"]);
    check(dpl::inspect!(sorted), 0, &["sample sort", "layouts"]);
}

#[test]
fn rows_stay_local() {
    check(dpl::inspect!(row_sums), 0, &["layouts of %0 rows"]);
    let f = dpl::inspect!(row_sums);
    assert_eq!(
        helper_calls(f.mpi_rust, "map"),
        helper_calls(f.cpu_rust, "map")
    );
}

#[test]
fn sparse_products_fetch_the_columns_they_name() {
    check(
        dpl::inspect!(csr),
        0,
        &[
            "layouts of %0 vals, %1 cols, %2 x",
            "window of %1 cols",
            "elements of %2 x named by the rows",
        ],
    );
}

#[test]
fn reads_inside_inner_loops_gather_the_sequence_unless_replicated() {
    let f = dpl::inspect!(all_pairs);
    assert!(f.mpi_ir.contains("all-gather of %1 y"), "{}", f.mpi_ir);
    assert!(
        f.mpi_ir.contains("note: `y` is all-gathered"),
        "{}",
        f.mpi_ir
    );
    check(dpl::inspect!(all_pairs_replicated), 0, &["layouts of %0 x"]);
}

/// Whether the call ends with an agreement (`Plan::final_agreement` in the generated Rust).
fn final_agreement(f: dpl::Inspect) -> bool {
    let yes = f.mpi_rust.contains("final_agreement : true");
    assert!(
        yes || f.mpi_rust.contains("final_agreement : false"),
        "{}: no plan in\n{}",
        f.name,
        f.mpi_rust
    );
    yes
}

#[test]
fn calls_end_with_an_agreement_only_when_something_after_their_last_can_fail() {
    // A reduction, the last point, which agrees; a gather's checked reads, made in the
    // gather, which agrees.
    assert!(!final_agreement(dpl::inspect!(sq_dist)));
    assert!(!final_agreement(dpl::inspect!(gathered_energy)));
    // A map that makes a block of a sequence allocates it, which can fail on one rank
    // (`OutOfMemory`), even where nothing else can.
    assert!(final_agreement(dpl::inspect!(saxpy)));
    // An integer division after the last agreement can fail on one rank.
    assert!(final_agreement(dpl::inspect!(quotients)));
    // A reduction inside a branch may not run: the division before it still needs one.
    assert!(final_agreement(dpl::inspect!(quotient_sum_if)));
    // A scan's operator runs again on the carry after its exchange.
    assert!(final_agreement(dpl::inspect!(modular_prefix)));
}
