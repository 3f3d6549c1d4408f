//! `Place::Mpi` in the developer commands: installing OpenMPI, the MPI tests under
//! `mpirun` with 1-4 ranks, the distributed part of the demo, and `mpi-report` (the
//! measured section of BENCHMARKS.md).
//!
//! Every run is on loopback, oversubscribed (more ranks than cores is fine), and under
//! `timeout`, so that a rank that never reaches a collective fails the run instead of
//! hanging it.

use crate::ptx::repo_root;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `mpirun` with the options for one machine: shared memory and loopback only, as root
/// too (CI runs as root), more ranks than cores allowed.
const MPIRUN: &[&str] = &[
    "mpirun",
    "--mca",
    "btl",
    "self,vader",
    "--mca",
    "oob_tcp_if_include",
    "lo",
    "--oversubscribe",
    "--allow-run-as-root",
];

/// Seconds one `mpirun` of the test program may take.
const TEST_TIMEOUT: &str = "1200";

/// The rank counts the tests run with.
const RANKS: [usize; 4] = [1, 2, 3, 4];

/// Installs OpenMPI (and libclang, which the `mpi` crate's build needs) with apt when
/// `mpirun` is missing: as root, or in CI; otherwise says what to run.
pub fn ensure_openmpi() -> Result<(), String> {
    if Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root {
        return Err("mpirun is missing: install OpenMPI first (as root: apt-get install -y libopenmpi-dev openmpi-bin libclang-dev)".into());
    }
    println!("xtask: mpirun is missing; installing OpenMPI with apt-get");
    let apt = |args: &[&str]| -> Result<(), String> {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .status()
            .map_err(|e| format!("cannot run apt-get: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("`apt-get {}` failed ({status})", args.join(" ")))
        }
    };
    apt(&["update"])?;
    apt(&[
        "install",
        "-y",
        "libopenmpi-dev",
        "openmpi-bin",
        "libclang-dev",
    ])
}

/// `cargo test` of the facade with the `mpi` feature (the test targets follow).
const DPL_MPI_TEST: &[&str] = &["test", "-p", "dpl", "--features", "mpi"];

/// The MPI tests: dpl-mpi's unit tests, the structure and place tests with the `mpi`
/// feature, then the test program `tests/mpi` under `mpirun` with 1, 2, 3 and 4 ranks, and
/// a run in which one rank panics, which must end the job (not hang it) with the message.
pub fn test(extra: &[String]) -> Result<(), String> {
    ensure_openmpi()?;
    let mut args = vec!["test", "-p", "dpl-mpi", "--features", "runtime,codegen"];
    args.extend(extra.iter().map(String::as_str));
    crate::cargo(&args, &[])?;
    let mut args = [
        DPL_MPI_TEST,
        &["--test", "mpi_structure", "--test", "mpi_place"],
    ]
    .concat();
    args.extend(extra.iter().map(String::as_str));
    crate::cargo(&args, &[])?;
    let exe = build_test_program()?;
    for n in RANKS {
        println!("xtask: the MPI tests on {n} rank(s)");
        let status = mpirun(n, &exe, &[], TEST_TIMEOUT)
            .status()
            .map_err(|e| format!("cannot run mpirun: {e}"))?;
        if !status.success() {
            return Err(format!("the MPI tests failed on {n} rank(s) ({status})"));
        }
    }
    println!("xtask: a panic on one rank must abort the job with its message");
    let out = mpirun(3, &exe, &["abort"], "60")
        .output()
        .map_err(|e| format!("cannot run mpirun: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    // `timeout` exits with 124 when it had to stop a hanging job.
    if out.status.success()
        || out.status.code() == Some(124)
        || !stderr.contains("deliberate panic on rank 2 of 3")
    {
        return Err(format!(
            "a rank's panic did not end the job with its message ({}):\n{stderr}",
            out.status
        ));
    }
    Ok(())
}

/// Builds the test program `tests/mpi` and returns its path.
fn build_test_program() -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(DPL_MPI_TEST)
        .args(["--test", "mpi", "--no-run", "--message-format=json"])
        .current_dir(repo_root())
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "building the MPI tests failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["target"]["name"] == "mpi" && m["profile"]["test"] == true)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo did not report the MPI test program".into())
}

/// `timeout <secs> mpirun -n <ranks> <exe> <args>`.
fn mpirun(ranks: usize, exe: &Path, args: &[&str], secs: &str) -> Command {
    let mut c = Command::new("timeout");
    c.arg(secs)
        .args(MPIRUN)
        .arg("-n")
        .arg(ranks.to_string())
        .arg(exe)
        .args(args);
    c
}

/// The distributed part of `cargo xtask demo`: the four MPI examples on two ranks.
pub fn demo() -> Result<(), String> {
    ensure_openmpi()?;
    let names = ["mpi_triad", "mpi_cg", "mpi_sort", "mpi_histogram"];
    build_examples(&names)?;
    println!(
        "\nThe same #[parallel] functions on Place::Mpi, 2 ranks on this machine (mpirun -n 2):"
    );
    for (name, size) in names.iter().zip(["2^24", "400", "2^24", "2^24"]) {
        let exe = example(name);
        let status = mpirun(2, &exe, &[size], "600")
            .env("RAYON_NUM_THREADS", "1")
            .status()
            .map_err(|e| format!("cannot run mpirun: {e}"))?;
        if !status.success() {
            return Err(format!("{name} failed on 2 ranks ({status})"));
        }
    }
    Ok(())
}

fn build_examples(names: &[&str]) -> Result<(), String> {
    let mut args = vec!["build", "--release", "--features", "mpi"];
    for n in names {
        args.extend(["--example", n]);
    }
    crate::cargo(&args, &[])
}

fn example(name: &str) -> PathBuf {
    repo_root()
        .join("target")
        .join("release")
        .join("examples")
        .join(name)
}

/// `cargo xtask mpi-report`: runs the MPI examples (1 rank x 2 threads against 2 ranks x 1
/// thread, and `Place::Mpi` against `Place::Cpu` on one rank) and the traffic program,
/// and writes their figures between the `mpi` markers of BENCHMARKS.md.
pub fn report(extra: &[String]) -> Result<(), String> {
    ensure_openmpi()?;
    let runs: [(&str, &str); 4] = [
        ("mpi_triad", "2^25"),
        ("mpi_cg", "500"),
        ("mpi_sort", "2^26"),
        ("mpi_histogram", "2^26"),
    ];
    let names: Vec<&str> = runs.iter().map(|r| r.0).chain(["mpi_traffic"]).collect();
    build_examples(&names)?;
    let rounds: usize = extra.first().and_then(|r| r.parse().ok()).unwrap_or(3);
    let mut rows = Vec::new();
    for (name, size) in runs {
        let (mut one, mut two, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        // Alternate the two configurations, so that load on the machine hits both alike.
        for _ in 0..rounds {
            let a = measure(name, size, 1, 2)?;
            let b = measure(name, size, 2, 1)?;
            for (key, t) in &a {
                if key.ends_with(" time") {
                    one.push((key.clone(), *t));
                } else if key.ends_with(" mpi_over_cpu") {
                    ratio.push((key.clone(), *t));
                }
            }
            two.extend(b.into_iter().filter(|(k, _)| k.ends_with(" time")));
        }
        for (key, _) in one
            .iter()
            .filter(|(k, _)| k.ends_with(" time"))
            .take(one.len() / rounds)
        {
            let best = |v: &[(String, f64)], k: &str| {
                v.iter()
                    .filter(|(x, _)| x == k)
                    .map(|(_, t)| *t)
                    .fold(f64::INFINITY, f64::min)
            };
            let what = key.trim_end_matches(" time").to_string();
            let r = best(&ratio, &format!("{what} mpi_over_cpu"));
            rows.push((what, size, best(&one, key), best(&two, key), r));
        }
    }
    let mut traffic_text = String::new();
    for ranks in [2usize, 4] {
        let out = mpirun(ranks, &example("mpi_traffic"), &[], "600")
            .output()
            .map_err(|e| format!("cannot run mpirun: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mpi_traffic failed on {ranks} ranks:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        traffic_text.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    let mut section = String::from(
        "Measured by `cargo xtask mpi-report` on this 2-core machine (OpenMPI 4.1, shared memory), the\n\
         best of the rounds. \"1 x 2\" is one rank with two rayon threads, \"2 x 1\" two ranks with one\n\
         thread each; \"Mpi / Cpu\" is `Place::Mpi` against `Place::Cpu` on one rank, in one process, in\n\
         interleaved rounds.\n\n\
         | example | size | 1 x 2 (ms) | 2 x 1 (ms) | 2 x 1 / 1 x 2 | Mpi / Cpu, 1 rank |\n|---|---|---|---|---|---|\n",
    );
    for (what, size, one, two, r) in &rows {
        section.push_str(&format!(
            "| {what} | {size} | {one:.2} | {two:.2} | {:.3} | {r:.3} |\n",
            two / one
        ));
    }
    section.push('\n');
    section.push_str(&traffic_text);
    write_section(&section)
}

/// One run of an example on `ranks` ranks of `threads` threads: its `mpi-report` lines as
/// `("<example> <what>", value)`.
fn measure(
    name: &str,
    size: &str,
    ranks: usize,
    threads: usize,
) -> Result<Vec<(String, f64)>, String> {
    let out = mpirun(ranks, &example(name), &[size], "1200")
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .map_err(|e| format!("cannot run mpirun: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{name} failed on {ranks} rank(s):\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("mpi-report: "))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((
                format!("{} {}", w.first()?, w.get(1)?),
                w.get(2)?.parse().ok()?,
            ))
        })
        .collect())
}

/// Opens the MPI section of BENCHMARKS.md (prose written by hand, kept by `bench-report`).
pub const START: &str = "<!-- mpi:start -->";
/// Closes it.
pub const END: &str = "<!-- mpi:end -->";
/// Inside the section, the figures `mpi-report` writes.
const FIGURES_START: &str = "<!-- mpi:figures:start -->";
const FIGURES_END: &str = "<!-- mpi:figures:end -->";

/// Replaces the figures inside the MPI section of BENCHMARKS.md.
fn write_section(body: &str) -> Result<(), String> {
    let path = repo_root().join("BENCHMARKS.md");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if crate::gpu::section_between(&text, START, END).is_none() {
        return Err(format!(
            "{} has no {START} ... {END} section",
            path.display()
        ));
    }
    let figures = format!("{FIGURES_START}\n{body}{FIGURES_END}\n");
    let new = crate::gpu::splice_between(&text, &figures, FIGURES_START, FIGURES_END);
    std::fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("xtask: wrote the MPI figures of {}", path.display());
    Ok(())
}
