//! A CPU-only user (the default features) compiles no GPU or MPI crate: neither the GPU
//! code generator nor its run time, the simulator, cudarc, rsmpi, serde or postcard. The
//! dependency tree comes from `cargo tree`, for the library and for the `#[parallel]` macro
//! it links.

use std::process::Command;

/// The names of the crates in the normal dependency tree of `dpl` with `features` (on top
/// of the default ones).
fn crates(features: &[&str]) -> Vec<String> {
    // Offline first (the index is cached once the tests are built); online if that fails.
    tree(features, true).unwrap_or_else(|offline| {
        tree(features, false).unwrap_or_else(|online| {
            panic!("cargo tree failed offline ({offline}) and online ({online})")
        })
    })
}

/// `cargo tree` of `dpl` with `features`: the crate names, or cargo's error.
fn tree(features: &[&str], offline: bool) -> Result<Vec<String>, String> {
    let mut cmd = Command::new(env!("CARGO"));
    if offline {
        cmd.arg("--offline");
    }
    cmd.current_dir(env!("CARGO_MANIFEST_DIR")).args([
        "tree", "-p", "dpl", "-e", "normal", "--prefix", "none", "--format", "{p}",
    ]);
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
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
