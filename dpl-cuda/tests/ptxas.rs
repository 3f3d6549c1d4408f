//! Every kernel generated for the test programs of `tests/programs` (the nested ones
//! under each inner schedule) assembles with NVIDIA's ptxas for sm_70,
//! sm_80 and sm_90 with `-Werror --warn-on-spills` (no register spills; the only local
//! memory is what the code declares: the lanes of a reduction inside an element function
//! run by one thread, `codegen/elem/ordered.rs`); so do
//! the kernels with other block sizes (`Options::block`) and with block sizes chosen from
//! register counts (`compile_tuned`).
//!
//! `DPL_PTX_TOOLS` names the folder holding `ptxas` (`cargo xtask ptx-tools` installs it
//! and prints the folder). Without it the test is skipped with a message, unless `CI` is
//! set, where it fails.

mod support;

use std::path::PathBuf;
use std::process::Command;

use dpl_cuda::{Inner, Options, Scan, cubin::Arch};
use support::compiled;
use support::programs::{Program, all};

/// `ptxas` in the tools folder, or `None` (skip).
fn ptxas() -> Option<PathBuf> {
    support::ptx_tools().map(|dir| dir.join("ptxas"))
}

const ARCHS: [&str; 3] = ["sm_70", "sm_80", "sm_90"];

/// Assembles `ptx` (written to `dir/name.ptx`) for each of `archs` with warnings as
/// errors; failures are pushed with ptxas's output.
fn assemble(
    ptxas: &PathBuf,
    dir: &std::path::Path,
    name: &str,
    ptx: &str,
    archs: &[&str],
    failures: &mut Vec<String>,
) {
    let file = dir.join(format!("{name}.ptx"));
    std::fs::write(&file, ptx).expect("write the PTX");
    for arch in archs {
        let out = Command::new(ptxas)
            .arg(format!("-arch={arch}"))
            .args(["-Werror", "--warn-on-spills"])
            .arg(&file)
            .arg("-o")
            .arg(dir.join(format!("{name}_{arch}.cubin")))
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", ptxas.display()));
        if !out.status.success() {
            failures.push(format!(
                "{name} ({arch}):\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
}

fn assert_clean(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The programs but those of `tests/programs/rows` (maps producing rows, made for the
/// warp and block schedules).
fn not_rows() -> impl Iterator<Item = &'static Program> {
    all().iter().filter(|p| p.group != "rows")
}

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dpl-cuda-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// Every program with 64 and 1024 threads per block (the nested ones also with a block
/// per row), for sm_70 and sm_90: `.maxntid 1024` leaves ptxas 64 registers per thread;
/// and every program with reduce-then-scan instead of the look-back scan.
#[test]
fn other_block_sizes_and_scans_assemble() {
    let Some(ptxas) = ptxas() else { return };
    let dir = temp_dir("ptxas-blocks");
    let mut failures = Vec::new();
    let grouped = all()
        .iter()
        .filter(|p| p.nested())
        .map(|p| (p, Inner::Block, Some(1024), Scan::LookBack));
    let plain = not_rows().flat_map(|p| {
        [
            (p, Inner::Seq, Some(64), Scan::LookBack),
            (p, Inner::Seq, Some(1024), Scan::LookBack),
            (p, Inner::Seq, None, Scan::ReduceThenScan),
        ]
    });
    for (p, inner, block, scan) in plain.chain(grouped) {
        let (name, c) = (&p.name, compiled(&p.text));
        let opts = Options { inner, block, scan };
        let prog =
            dpl_cuda::compile_with(&c.fused, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let name = format!("{name}_{inner:?}_{block:?}_{scan:?}");
        assemble(
            &ptxas,
            &dir,
            &name,
            &prog.ptx,
            &["sm_70", "sm_90"],
            &mut failures,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_clean(&failures);
}

/// Block sizes chosen from `ptxas -v` register counts: every kernel gets a candidate size
/// with the reason, the plan launches it with that size, and the module assembles.
#[test]
fn tuned_block_sizes() {
    let Some(ptxas) = ptxas() else { return };
    let dir = temp_dir("ptxas-tuned");
    let archs: Vec<Arch> = ARCHS
        .iter()
        .map(|a| Arch::parse(a).expect("an arch"))
        .collect();
    let mut failures = Vec::new();
    let mut chosen = Vec::new();
    for p in not_rows() {
        let (name, c) = (&p.name, compiled(&p.text));
        let prog = dpl_cuda::compile_tuned(&c.fused, &Options::default(), &ptxas, &archs)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(prog.blocks.len(), prog.kernels.len(), "{name}");
        for (k, b) in prog.kernels.iter().zip(&prog.blocks) {
            if b.why.starts_with("fixed by the algorithm") {
                // A warp per tile of the ordered float scans: no register counts apply.
                continue;
            }
            assert!([128, 256, 512].contains(&b.block), "{name} {k}: {b:?}");
            assert!(
                b.why.contains("registers per thread"),
                "{name} {k}: {}",
                b.why
            );
            assert!(
                prog.ptx.contains(&format!(
                    "// {k}: {} threads per block (chosen from ptxas",
                    b.block
                )),
                "{name} {k}"
            );
            chosen.push(b.block);
        }
        for s in &prog.plan.steps {
            if let dpl_cuda::plan::Step::Launch(l) = s {
                assert_eq!(l.block, prog.blocks[l.kernel as usize].block, "{name}");
            }
        }
        assemble(&ptxas, &dir, name, &prog.ptx, &ARCHS, &mut failures);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_clean(&failures);
    eprintln!(
        "tuned block sizes: {} kernels at 128, {} at 256, {} at 512",
        chosen.iter().filter(|&&b| b == 128).count(),
        chosen.iter().filter(|&&b| b == 256).count(),
        chosen.iter().filter(|&&b| b == 512).count()
    );
}

#[test]
fn every_kernel_assembles_for_sm70_sm80_sm90() {
    let Some(ptxas) = ptxas() else { return };
    let dir = std::env::temp_dir().join(format!("dpl-cuda-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let mut failures = Vec::new();
    let mut kernels = 0;
    // Every program with the default schedule, the nested ones with a warp and a block
    // per row too.
    let grouped = all()
        .iter()
        .filter(|p| p.nested())
        .flat_map(|p| [(p, Inner::Warp), (p, Inner::Block)]);
    for (p, inner) in all().iter().map(|p| (p, Inner::Seq)).chain(grouped) {
        let (name, c) = (&p.name, compiled(&p.text));
        let prog = match dpl_cuda::compile_with(
            &c.fused,
            &Options {
                inner,
                ..Options::default()
            },
        ) {
            Ok(p) => p,
            Err(e) => panic!("{name}: {e}"),
        };
        let name = format!("{name}_{inner:?}");
        kernels += prog.kernels.len();
        assemble(&ptxas, &dir, &name, &prog.ptx, &ARCHS, &mut failures);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_clean(&failures);
    assert!(kernels >= all().len(), "{kernels} kernels");
}
