//! A CPU-only user (the default features) compiles no GPU or MPI crate: neither the GPU
//! code generator nor its run time, the simulator, cudarc, rsmpi, serde or postcard. The
//! dependency tree comes from `cargo tree`, for the library and for the `#[parallel]` macro
//! it links.

use std::process::Command;

/// The names of the crates in the normal dependency tree of `dpl` with `features`
/// (`--no-default-features` and `default` as given).
fn crates(features: &[&str]) -> Vec<String> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "tree",
        "--offline",
        "-p",
        "dpl",
        "-e",
        "normal",
        "--prefix",
        "none",
        "--format",
        "{p}",
    ]);
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

const GPU_AND_MPI: [&str; 8] = [
    "dpl-cuda",
    "dpl-sim",
    "dpl-mpi",
    "cudarc",
    "libloading",
    "mpi",
    "serde",
    "postcard",
];

#[test]
fn default_features_link_no_gpu_or_mpi_crate() {
    let names = crates(&[]);
    assert!(names.iter().any(|n| n == "dpl-cpu"), "{names:?}");
    let found: Vec<&str> = GPU_AND_MPI
        .into_iter()
        .filter(|c| names.iter().any(|n| n == c))
        .collect();
    assert!(found.is_empty(), "the default features pull in {found:?}");
}

#[test]
fn the_gpu_features_bring_the_gpu_crates() {
    let names = crates(&["sim"]);
    for c in ["dpl-cuda", "dpl-sim", "serde", "postcard"] {
        assert!(names.iter().any(|n| n == c), "`sim` does not pull in {c}");
    }
}
