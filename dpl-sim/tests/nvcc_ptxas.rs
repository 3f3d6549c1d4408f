//! Every PTX fixture must assemble with NVIDIA's ptxas for sm_80, the fixtures' target.
//!
//! Needs the tools folder that `cargo xtask ptx-tools` installs and prints, passed as
//! `DPL_PTX_TOOLS=<folder>`. The fixtures are PTX ISA 9.5 (nvcc 13.5), so the folder's
//! `ptxas-cuda13` assembles them when it is there; otherwise its `ptxas` (which must then be
//! a CUDA 13.5 or later assembler). Without `DPL_PTX_TOOLS` the test says it is skipped,
//! unless `CI` is set: CI must run it, so there a missing folder is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The PTX ISA major version a fixture declares.
fn isa_major(ptx: &str) -> Option<u32> {
    let line = ptx
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(".version"))?;
    line.trim_start_matches(".version")
        .trim()
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn assembler_for(tools: &Path, ptx: &str) -> PathBuf {
    let cuda13 = tools.join("ptxas-cuda13");
    if isa_major(ptx).is_some_and(|m| m >= 9) && cuda13.exists() {
        cuda13
    } else {
        tools.join("ptxas")
    }
}

#[test]
fn every_fixture_assembles_with_ptxas_for_sm_80() {
    let Some(tools) = std::env::var_os("DPL_PTX_TOOLS").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but DPL_PTX_TOOLS is not: run `cargo xtask ptx-tools` and set \
             DPL_PTX_TOOLS to the folder it prints"
        );
        eprintln!("skipped: set DPL_PTX_TOOLS to the folder printed by `cargo xtask ptx-tools`");
        return;
    };
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("dpl-sim/fixtures is readable")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    fixtures.sort();
    assert!(
        fixtures.len() >= 10,
        "expected the PTX fixtures in {}",
        fixtures_dir().display()
    );

    let out_dir = std::env::temp_dir().join(format!("dpl-sim-nvcc-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("temporary folder");
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let ptx = std::fs::read_to_string(fixture).expect("fixture is readable");
        let ptxas = assembler_for(&tools, &ptx);
        let cubin = out_dir.join(
            fixture
                .with_extension("cubin")
                .file_name()
                .expect("file name"),
        );
        let output = Command::new(&ptxas)
            .arg("-arch=sm_80")
            .arg("-o")
            .arg(&cubin)
            .arg(fixture)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", ptxas.display()));
        if !output.status.success() {
            failures.push(format!(
                "{} -arch=sm_80 {}:\n{}{}",
                ptxas.display(),
                fixture.display(),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
        } else {
            let size = std::fs::metadata(&cubin).map(|m| m.len()).unwrap_or(0);
            assert!(
                size > 0,
                "{} produced an empty cubin for {}",
                ptxas.display(),
                fixture.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(
        failures.is_empty(),
        "{} fixtures did not assemble:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every `.cu` has its `.ptx` and the other way round, every `.ptx` is nvcc 13.5's output
/// for sm_80 (what README.md documents), and every kernel is launched by some test.
#[test]
fn fixtures_are_complete_and_every_kernel_is_tested() {
    let dir = fixtures_dir();
    let names = |ext: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .expect("dpl-sim/fixtures is readable")
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        names("cu"),
        names("ptx"),
        "each .cu needs its generated .ptx (run fixtures/regen.sh)"
    );

    let tests_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let test_sources: String = std::fs::read_dir(&tests_dir)
        .expect("tests folder")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("nvcc_") && name.ends_with(".rs")
        })
        .map(|p| std::fs::read_to_string(p).expect("test source"))
        .collect();

    let mut untested = Vec::new();
    let mut kernels = 0;
    for stem in names("ptx") {
        let ptx = std::fs::read_to_string(dir.join(format!("{stem}.ptx"))).expect("fixture");
        assert!(
            ptx.contains("Cuda compilation tools, release 13.5, V13.5.37"),
            "{stem}.ptx was not generated by nvcc 13.5.37 (see README.md)"
        );
        assert!(
            ptx.lines()
                .any(|l| l.trim() == ".target sm_80" || l.trim() == ".target sm_80, debug"),
            "{stem}.ptx does not target sm_80"
        );
        for line in ptx.lines() {
            if let Some(rest) = line.trim().strip_prefix(".visible .entry ") {
                let kernel = rest.split('(').next().unwrap_or(rest).trim();
                kernels += 1;
                if !test_sources.contains(&format!("\"{kernel}\"")) {
                    untested.push(format!("{stem}.ptx: {kernel}"));
                }
            }
        }
    }
    assert!(
        kernels >= 50,
        "found only {kernels} kernels in the fixtures"
    );
    assert!(
        untested.is_empty(),
        "kernels no nvcc_*.rs test launches: {untested:?}"
    );
}
