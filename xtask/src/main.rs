//! Developer commands for dpl: `cargo xtask help` lists them.
//!
//! `cargo xtask test` is the one command that runs the whole test suite on a fresh machine:
//! it installs NVIDIA's PTX tools from PyPI into `target/ptx-tools` (once), then runs every
//! test of the workspace with them available (`DPL_PTX_TOOLS`).

mod bench;
mod gpu;
mod gpu_bench;
mod mpi;
mod ptx;

use std::process::Command;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  test             install the PTX tools (once), run the whole test suite (also on the
                   simulated GPU), then assemble every generated kernel with ptxas; then
                   install OpenMPI if mpirun is missing and run the Place::Mpi tests under
                   mpirun with 1, 2, 3 and 4 ranks
  demo             run the demonstration (release build): flagship programs, checked, timed,
                   then the MPI examples on 2 ranks
  ptx-tools        install ptxas/cuobjdump (PyPI wheels) under target/, print the folder
  check-fixtures   assemble every PTX fixture of dpl-sim with ptxas
  bench-report     run the benchmarks and write BENCHMARKS.md
  gpu-report       run the GPU performance proxy on the simulator (section of BENCHMARKS.md)
  gpu-bench        build dpl-next-to-CUB (examples/gpu_bench.rs) and run it; --dry-run: on
                   the simulator, without a GPU
  gpu-pack         build and pack a GPU machine's run (benchmark, GPU tests, demo) into
                   target/device-pack
  gpu-record DIR   write a device run's results (DIR/gpu-bench.md, ...) into BENCHMARKS.md
  mpi-report       run the MPI examples and traffic counts (section of BENCHMARKS.md)
  fuzz [CASES]     mutations of every #[parallel] program of the tests and examples
                   through the macro (default 10^6, release build, GPU and MPI code
                   generation included): no panic, no internal error, errors spanned;
                   then `fuzz-programs CASES/100`
  fuzz-programs [N]
                   N random programs (default 10^4; loops and nested forms included) on
                   the interpreter at every level and the simulator, then compiled as Rust
                   in batches and run on Place::Seq and Place::Cpu (pools of 1, 2, 3 and
                   5 threads): exact agreement with the interpreter
  soak [SECONDS]   16 threads of mixed calls on Seq, Cpu and Sim for SECONDS (default
                   180, release build): results checked, memory must stay flat";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rest = args.get(1..).unwrap_or(&[]);
    let result = match args.first().map(String::as_str) {
        Some("test") => test(rest),
        Some("demo") => cargo(
            &["run", "--release", "--features", "sim", "--example", "demo"],
            &[],
        )
        .and_then(|()| mpi::demo()),
        Some("ptx-tools") => ptx::install_tools().map(|dir| println!("{}", dir.display())),
        Some("check-fixtures") => ptx::check_fixtures(rest),
        Some("bench-report") => bench::report(rest),
        Some("gpu-report") => gpu::report(),
        Some("gpu-bench") => gpu_bench::bench(rest),
        Some("gpu-pack") => gpu_bench::pack(rest),
        Some("gpu-record") => gpu_bench::record(rest),
        Some("mpi-report") => mpi::report(rest),
        Some("soak") => soak(rest),
        Some("fuzz") => fuzz(rest),
        Some("fuzz-programs") => fuzz_programs(rest),
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            Ok(())
        }
        _ => {
            eprintln!("{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}

/// Installs the PTX tools, then runs `cargo test --workspace --features dpl/sim,dpl/cuda`
/// (extra arguments are passed on to cargo test): every test also runs on the simulated
/// GPU (and `Place::Gpu` falls back to the CPU when there is no device), and the GPU code
/// of every `#[parallel]` function is dumped (`DPL_DUMP`) while the tests are built. The
/// place-error tests run once more without the GPU features. Then every dumped kernel is
/// assembled with ptxas for sm_70/80/90 (warnings and spills are errors) and the register
/// report `target/ptx-report.md` is written, the MPI tests run (see [`mpi::test`]),
/// clippy checks every crate with every feature (warnings and APIs newer than the
/// declared `rust-version` are errors), and every crate of the workspace is packaged as
/// `cargo publish` would (`cargo package --workspace`: a version on every path dependency,
/// each package built alone from its `.crate` file).
fn test(extra: &[String]) -> Result<(), String> {
    lean_builds();
    let tools = ptx::install_tools()?;
    let tools = tools.to_string_lossy().into_owned();
    println!("xtask: PTX tools in {tools}");
    let root = ptx::repo_root();
    let dump = root.join("target").join("dpl-dump");
    let dump_text = dump.to_string_lossy().into_owned();
    let env = [
        ("DPL_PTX_TOOLS", tools.as_str()),
        ("DPL_DUMP", dump_text.as_str()),
    ];
    let mut args = vec![
        "test",
        "--workspace",
        "--no-fail-fast",
        "--features",
        "dpl/sim,dpl/cuda,dpl/serde,dpl/sprs,dpl/nalgebra-sparse,dpl/faer,dpl/ndarray",
    ];
    args.extend(extra.iter().map(String::as_str));
    cargo(&args, &env)?;
    // Without the GPU features, asking for a GPU place must be a clear error.
    let mut args = vec!["test", "-p", "dpl", "--test", "errors_runtime"];
    args.extend(extra.iter().map(String::as_str));
    cargo(&args, &env)?;
    ptx::check_dump(&dump, &root.join("target").join("ptx-report.md"))?;
    mpi::test(extra)?;
    // Lints with every feature, warnings as errors; `incompatible_msrv` catches a use of
    // a standard-library API newer than the declared `rust-version`.
    cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
            "-D",
            "clippy::incompatible_msrv",
        ],
        &env,
    )?;
    // `--allow-dirty`: a run on a working tree with uncommitted changes packages them too.
    cargo(&["package", "--workspace", "--allow-dirty"], &env)
}

/// Makes every build of the test command lean on disk: no incremental caches, and debug
/// information reduced to line tables (panics and backtraces still name files and lines).
/// The whole suite builds some 1,700 test, example and dependency artifacts; with full
/// debug information and incremental caches they took 21 GB, more than a fresh CI machine
/// had free; with these settings 6.7 GB (measured on a fresh clone). Set in xtask's own
/// environment so that every cargo it starts (the MPI runs' too) inherits them; a variable
/// the caller set is kept.
fn lean_builds() {
    for (key, value) in [
        ("CARGO_INCREMENTAL", "0"),
        ("CARGO_PROFILE_DEV_DEBUG", "line-tables-only"),
        ("CARGO_PROFILE_TEST_DEBUG", "line-tables-only"),
    ] {
        if std::env::var_os(key).is_none() {
            // SAFETY: called first thing in `test`, before xtask starts any thread, so no
            // other thread can be reading the environment.
            unsafe { std::env::set_var(key, value) };
        }
    }
}

/// `cargo xtask soak [SECONDS]`: the soak test (`tests/soak.rs`) in a release build for
/// `SECONDS` (180 by default) instead of the normal test command's short slice.
fn soak(rest: &[String]) -> Result<(), String> {
    let seconds = match rest.first() {
        Some(s) => number(s, "soak", "seconds")?,
        None => 180,
    };
    let seconds = seconds.to_string();
    cargo(
        &[
            "test",
            "--release",
            "--features",
            "sim",
            "--test",
            "soak",
            "--",
            "--nocapture",
        ],
        &[("DPL_SOAK_SECONDS", &seconds)],
    )
}

/// `cargo xtask fuzz [CASES]`: in release builds, the mutation fuzzer of the macro
/// (`dpl-macros/src/front/fuzz.rs`, with GPU and MPI code generation) for `CASES`
/// mutations (10^6 by default), then [`fuzz_programs`] with CASES / 100 programs (at
/// least 100); the normal test command runs 3,000 mutations and a slice of the programs.
fn fuzz(rest: &[String]) -> Result<(), String> {
    let cases = match rest.first() {
        Some(s) => number(s, "fuzz", "cases")?,
        None => 1_000_000,
    };
    let programs = (cases / 100).max(100).to_string();
    let cases = cases.to_string();
    let mutations = cargo(
        &[
            "test",
            "--release",
            "-p",
            "dpl-macros",
            "--features",
            "gpu,mpi",
            "--lib",
            "mutations_of_the_test_programs",
            "--",
            "--nocapture",
        ],
        &[("DPL_FUZZ_CASES", &cases)],
    );
    mutations.and(fuzz_programs(&[programs]))
}

/// Programs per batch of `fuzz-programs` on the CPU places: one build of `dpl-random` each.
/// A batch takes about 5 minutes on a busy 2-core machine (0.7 s of compiler time per
/// program, nearly all of it in code generation: checking takes 0.1 s), so 10^4
/// programs take hours there; the run prints its progress after each batch.
const RUST_BATCH: u64 = 250;

/// `cargo xtask fuzz-programs [N]`: the random programs `0..N` (10^4 by default) of
/// `dpl_testkit::programs` on the interpreter at every level and the simulator
/// (`dpl-cuda/tests/sim_random_programs.rs`, release build), then compiled as Rust by
/// `dpl-random`'s build script in batches of [`RUST_BATCH`] and run on `Place::Seq` and
/// `Place::Cpu` (`dpl-random/tests/seq_cpu.rs`). The batches build in a profile of their
/// own (`random-fuzz`, in `target/random-fuzz`): dependencies optimized, the generated
/// code without optimization or debug information, which compiles fastest.
fn fuzz_programs(rest: &[String]) -> Result<(), String> {
    let n = match rest.first() {
        Some(s) => number(s, "fuzz-programs", "programs")?,
        None => 10_000,
    };
    let start = std::time::Instant::now();
    let programs = n.to_string();
    cargo(
        &[
            "test",
            "--release",
            "-p",
            "dpl-cuda",
            "--features",
            "sim",
            "--test",
            "sim_random_programs",
            "--",
            "--nocapture",
        ],
        &[("DPL_RANDOM_PROGRAMS", &programs)],
    )?;
    println!(
        "xtask: {n} random programs on the interpreter and the simulator in {:.0?}",
        start.elapsed()
    );
    let start = std::time::Instant::now();
    let profile = [
        "--config",
        "profile.random-fuzz.inherits=\"dev\"",
        "--config",
        "profile.random-fuzz.debug=0",
        "--config",
        "profile.random-fuzz.package.\"*\".opt-level=3",
        "--config",
        "profile.random-fuzz.package.dpl-core.opt-level=3",
        "--config",
        "profile.random-fuzz.package.dpl-cpu.opt-level=3",
        "--config",
        "profile.random-fuzz.package.dpl-testkit.opt-level=3",
        "--config",
        "profile.random-fuzz.package.dpl.opt-level=3",
    ];
    let mut first = 0;
    while first < n {
        let count = RUST_BATCH.min(n - first);
        let (first_text, count_text) = (first.to_string(), count.to_string());
        let mut args = vec!["test", "--profile", "random-fuzz"];
        args.extend(profile);
        args.extend(["-p", "dpl-random", "--test", "seq_cpu", "--", "--nocapture"]);
        cargo(
            &args,
            &[
                ("DPL_RANDOM_RUST_FIRST", &first_text),
                ("DPL_RANDOM_RUST_PROGRAMS", &count_text),
            ],
        )?;
        first += count;
        println!(
            "xtask: random programs 0..{first} of {n} on Place::Seq and Place::Cpu, {:.0?}",
            start.elapsed()
        );
    }
    Ok(())
}

/// `text` as a number of `what`, for the error of command `command`.
fn number(text: &str, command: &str, what: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .map_err(|_| format!("{command}: `{text}` is not a number of {what}"))
}

fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(&cargo)
        .args(args)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}
