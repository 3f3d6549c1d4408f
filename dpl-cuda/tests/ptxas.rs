//! Every kernel generated for the test programs (the nested ones under each inner
//! schedule) assembles with NVIDIA's ptxas for sm_70,
//! sm_80 and sm_90 with `-Werror --warn-on-spills --warn-on-local-memory-usage`.
//!
//! `DPL_PTX_TOOLS` names the folder holding `ptxas` (`cargo xtask ptx-tools` installs it
//! and prints the folder). Without it the test is skipped with a message, unless `CI` is
//! set, where it fails.

mod support;

use std::path::PathBuf;
use std::process::Command;

use dpl_cuda::{Inner, Options};
use support::compiled;
use support::programs::{ALL, NESTED};

fn ptxas() -> Option<PathBuf> {
    match std::env::var_os("DPL_PTX_TOOLS") {
        Some(dir) => Some(PathBuf::from(dir).join("ptxas")),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "DPL_PTX_TOOLS is not set on CI: run `cargo xtask ptx-tools` and export the folder it prints"
            );
            eprintln!(
                "skipped: DPL_PTX_TOOLS is not set (`cargo xtask ptx-tools` prints the folder)"
            );
            None
        }
    }
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
    let grouped = NESTED
        .iter()
        .flat_map(|p| [(p, Inner::Warp), (p, Inner::Block)]);
    for ((name, src), inner) in ALL.iter().map(|p| (p, Inner::Seq)).chain(grouped) {
        let c = compiled(src);
        let prog = match dpl_cuda::compile_with(&c.fused, &Options { inner }) {
            Ok(p) => p,
            Err(e) => panic!("{name}: {e}"),
        };
        let name = format!("{name}_{inner:?}");
        kernels += prog.kernels.len();
        let file = dir.join(format!("{name}.ptx"));
        std::fs::write(&file, &prog.ptx).expect("write the PTX");
        for arch in ["sm_70", "sm_80", "sm_90"] {
            let out = Command::new(&ptxas)
                .arg(format!("-arch={arch}"))
                .args([
                    "-Werror",
                    "--warn-on-spills",
                    "--warn-on-local-memory-usage",
                ])
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
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(kernels >= ALL.len(), "{kernels} kernels");
}
