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
/// report `target/ptx-report.md` is written, the MPI tests run (see [`mpi::test`]), and
/// clippy checks every crate with every feature (warnings and APIs newer than the
/// declared `rust-version` are errors).
fn test(extra: &[String]) -> Result<(), String> {
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
        "dpl/sim,dpl/cuda,dpl/serde,dpl/sprs,dpl/nalgebra-sparse,dpl/faer",
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
    )
}

/// `cargo xtask soak [SECONDS]`: the soak test (`tests/soak.rs`) in a release build for
/// `SECONDS` (180 by default) instead of the normal test command's short slice.
fn soak(rest: &[String]) -> Result<(), String> {
    let seconds = match rest.first() {
        Some(s) => s
            .parse::<u64>()
            .map_err(|_| format!("soak: `{s}` is not a number of seconds"))?,
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
