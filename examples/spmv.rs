//! Sparse matrix-vector product (SpMV) in dpl: Copperhead's `spmv_csr` with three schedules
//! and an ELLPACK variant, on generated and real matrices, checked against plain Rust and
//! timed against hand-written rayon.
//!
//! ```text
//! cargo run --release --example spmv                 # generated + shared real matrices
//! cargo run --release --example spmv -- a.mtx b.mtx  # your Matrix Market files instead
//! cargo run --release --example spmv -- --inspect    # also print the generated Rust
//! cargo run --release --example spmv -- --small      # the small matrices of the tests
//! cargo run --release --example spmv -- --only csr   # one variant (csr, block, auto, ell)
//! cargo run --release --example spmv -- --rounds 40  # more timing rounds (default 15)
//! ```
//!
//! The kernels are in `examples/spmv/kernels.rs` (the `#[parallel]` functions), the
//! reference, the baselines and the matrices in `examples/spmv/plain.rs`. Every variant runs
//! on every place of this build; every result is checked against a sequential `f64`
//! reference with a per-row error bound (any `f32` summation order stays within it). The
//! hand-written baselines and the variants on `Place::Cpu` are then timed in interleaved
//! rounds (`--rounds N`, default 15: each round calls each once), so that load on a shared
//! machine hits all of them alike; the minimum of each is compared. The ratio printed is
//! `rayon time / dpl time` (above 1: dpl faster), against the hand-written rayon CSR SpMV
//! (contiguous row chunks balanced by entries, unchecked inner loop).
//!
//! Generated matrices: uniform random (1M rows, 10 entries per row), the 5-point Laplacian
//! of a 1000x1000 grid, a power-law matrix (1M rows, a few rows with tens of thousands of
//! entries among many with 4 to 10), and a matrix with one row of 4M entries after 250K
//! rows of 8 (where `inner = "auto"` parallelizes inside rows). ELL is skipped where its
//! padding would store more than 8 times the entries (the two skewed matrices).

#[path = "spmv/kernels.rs"]
mod kernels;
#[path = "spmv/plain.rs"]
mod plain;
#[path = "shared/timing.rs"]
mod timing;

use std::path::Path;

use dpl::mm::Csr;
use dpl::prelude::*;
use plain::CsrF32;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!(
            "usage: spmv [--inspect] [--small] [--shared-ab] [--rounds N] [--only csr|block|auto|ell] [MATRIX.mtx ...]"
        );
        return;
    }
    let only = args.iter().position(|a| a == "--only").map(|i| {
        match args.get(i + 1).map(String::as_str) {
            Some(v @ ("csr" | "block" | "auto" | "ell")) => v.to_string(),
            other => {
                eprintln!("spmv: --only takes csr, block, auto or ell, not {other:?}");
                std::process::exit(2);
            }
        }
    });
    let scale = if args.iter().any(|a| a == "--small") {
        plain::Scale::Small
    } else {
        plain::Scale::Full
    };
    let rounds = match args.iter().position(|a| a == "--rounds") {
        None => 15,
        Some(i) => match args.get(i + 1).and_then(|n| n.parse().ok()) {
            Some(n) if n > 0 => n,
            _ => {
                eprintln!("spmv: --rounds takes a positive number");
                std::process::exit(2);
            }
        },
    };
    if args.iter().any(|a| a == "--inspect") {
        inspect();
    }
    if args.iter().any(|a| a == "--shared-ab") {
        shared_ab(scale);
        return;
    }
    let files: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|&(i, a)| {
            !a.starts_with("--")
                && (i == 0 || !matches!(args[i - 1].as_str(), "--only" | "--rounds"))
        })
        .map(|(_, a)| a)
        .collect();

    let mut matrices: Vec<(String, Csr)> = Vec::new();
    if files.is_empty() {
        println!("generating matrices ...");
        matrices.extend(plain::generated(scale));
        match plain::shared_matrices() {
            Ok(real) => matrices.extend(real),
            Err(why) => println!("skipping the real matrices: {why}"),
        }
    } else {
        for f in files {
            match plain::read_matrix(Path::new(f)) {
                Ok(a) => matrices.push((plain::stem(Path::new(f)), a)),
                Err(e) => {
                    eprintln!("spmv: {e}");
                    std::process::exit(2);
                }
            }
        }
    }

    println!(
        "SpMV y = A x in f32, {} rayon threads; ratio = rayon time / dpl time on Place::Cpu\n",
        rayon::current_num_threads()
    );
    let mut failures = 0;
    for (name, a) in &matrices {
        failures += run_matrix(name, a, only.as_deref(), rounds);
    }
    println!();
    if failures == 0 {
        println!("all results within the error bound of the f64 reference: ok");
    } else {
        println!("{failures} result(s) WRONG");
        std::process::exit(1);
    }
}

/// Runs every variant on every place for one matrix and checks it; then times the
/// hand-written baselines and every variant on `Place::Cpu` in interleaved rounds (see
/// [`timing::interleaved`]). Returns the number of wrong results.
fn run_matrix(name: &str, a: &Csr, only: Option<&str>, rounds: usize) -> usize {
    let (rows, nnz, longest) = plain::shape(a);
    let csr = CsrF32::new(a);
    let x_owned = plain::vector(a.cols());
    let x: &[f32] = &x_owned;
    let want = plain::reference(&csr, x);
    let (vals, cols) = a.to_nested();
    let ell = plain::ell_fits(a).then(|| a.to_ell());
    // The rule `inner = "auto"` applies (dpl's documented heuristic), for display only.
    let auto_inner = dpl::__private::heavy::parallel_inner(rows, nnz, longest);
    println!(
        "{name}: {rows} x {} , {nnz} entries, longest row {longest} (auto picks inner {})",
        a.cols(),
        if auto_inner { "parallel" } else { "sequential" }
    );

    type Variant<'a> = (&'static str, &'static str, Box<dyn Fn() -> Vec<f32> + 'a>);
    let mut variants: Vec<Variant<'_>> = vec![
        (
            "csr",
            "csr",
            Box::new(|| kernels::spmv_csr(&vals, &cols, x)),
        ),
        (
            "block",
            "csr inner=block",
            Box::new(|| kernels::spmv_csr_block(&vals, &cols, x)),
        ),
        (
            "auto",
            "csr inner=auto",
            Box::new(|| kernels::spmv_csr_auto(&vals, &cols, x)),
        ),
    ];
    match &ell {
        Some((ev, ec)) => {
            variants.push(("ell", "ell", Box::new(move || kernels::spmv_ell(ev, ec, x))))
        }
        None if only.is_none_or(|o| o == "ell") => println!(
            "  ell                skipped: {rows} rows x {longest} padded = {:.0}x the entries",
            (rows as f64 * longest as f64) / nnz.max(1) as f64
        ),
        None => {}
    }
    variants.retain(|(key, _, _)| only.is_none_or(|o| o == *key));

    let mut failures = 0;
    let mut report = |label: &str, place: &str, r: Result<(), String>| {
        if let Err(e) = r {
            println!("  {label:<18} {place}: WRONG\n    {e}");
            failures += 1;
        }
    };
    report(
        "seq (hand-written)",
        "-",
        plain::check(&plain::spmv_seq(&csr, x), &want),
    );
    report(
        "rayon (hand-written)",
        "-",
        plain::check(&plain::spmv_rayon(&csr, x), &want),
    );
    for (_, label, f) in &variants {
        for place in dpl::available_places() {
            report(
                label,
                &place.to_string(),
                with_place(place, || plain::check(&f(), &want)),
            );
        }
    }

    type Timed<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let mut timed: Vec<Timed<'_>> = vec![
        (
            "seq (hand-written)",
            Box::new(|| drop(plain::spmv_seq(&csr, x))),
        ),
        (
            "rayon (hand-written)",
            Box::new(|| drop(plain::spmv_rayon(&csr, x))),
        ),
    ];
    for (_, label, f) in &variants {
        timed.push((label, Box::new(move || drop(with_place(Place::Cpu, f)))));
    }
    let fs: Vec<&dyn Fn()> = timed.iter().map(|(_, f)| &**f).collect();
    let times = timing::interleaved(&fs, rounds);
    let rayon_t = times[1].0;
    for (i, ((label, _), (min, med))) in timed.iter().zip(&times).enumerate() {
        let mut line = format!(
            "  {label:<20} min {:>10}  median {:>10}",
            timing::fmt(*min),
            timing::fmt(*med)
        );
        if i >= 2 {
            line += &format!(
                "  rayon/dpl {:.2}x",
                rayon_t.as_secs_f64() / min.as_secs_f64()
            );
        }
        println!("{line}");
    }
    println!();
    failures
}

/// Prints the fused IR and the generated Rust of every kernel.
/// `--shared-ab`: the scalar CSR kernel on `to_nested`'s pair (values and columns sharing
/// one offsets array: the generated variant reading one array) against the same data with
/// the columns' offsets copied (the general variant), alternating in one process; prints
/// the minimum of each over 15 rounds.
fn shared_ab(scale: plain::Scale) {
    for (name, csr) in plain::generated(scale) {
        let (vals, cols) = csr.to_nested();
        let apart = Nested::from_parts(cols.values().to_vec(), cols.offsets().to_vec())
            .expect("a copy of valid parts");
        assert!(vals.same_offsets(&cols) && !vals.same_offsets(&apart));
        let x: Vec<f32> = (0..csr.cols()).map(|k| (k % 7) as f32 - 3.0).collect();
        assert_eq!(
            kernels::spmv_csr(&vals, &cols, &x),
            kernels::spmv_csr(&vals, &apart, &x),
            "{name}: shared and general variants differ"
        );
        let t = timing::interleaved(
            &[&|| drop(kernels::spmv_csr(&vals, &cols, &x)), &|| {
                drop(kernels::spmv_csr(&vals, &apart, &x))
            }],
            15,
        );
        let (shared, general) = (t[0].0, t[1].0);
        println!(
            "{name:12} shared offsets {shared:>10.2?}  own offsets {general:>10.2?}  general/shared {:.2}x",
            general.as_secs_f64() / shared.as_secs_f64()
        );
    }
}

fn inspect() {
    for i in [
        dpl::inspect!(kernels::spmv_csr),
        dpl::inspect!(kernels::spmv_csr_block),
        dpl::inspect!(kernels::spmv_csr_auto),
        dpl::inspect!(kernels::spmv_ell),
    ] {
        println!(
            "===== {}: {} loop(s), {} temporaries after fusion\n{}\n----- generated Rust (Place::Cpu)\n{}\n",
            i.name, i.loops, i.temporaries, i.fused_ir, i.cpu_rust
        );
    }
}
