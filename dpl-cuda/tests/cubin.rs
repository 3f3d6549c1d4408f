//! Ahead-of-time cubins: the PTX of compiled programs assembles with NVIDIA's ptxas for
//! sm_70, sm_80 and sm_90 through `dpl_cuda::cubin`, the results are CUDA ELF images for
//! the asked architecture (checked with `cuobjdump`) holding every kernel of the program,
//! and they survive `GpuProgram::encode`/`decode`.
//!
//! `DPL_PTX_TOOLS` names the folder holding `ptxas` and `cuobjdump` (`cargo xtask
//! ptx-tools` installs them and prints the folder). Without it the tests are skipped with
//! a message, unless `CI` is set, where they fail.

mod support;

use std::path::Path;
use std::process::Command;

use dpl_cuda::GpuProgram;
use dpl_cuda::cubin::{self, Arch};
use support::compiled;
use support::programs::source;

/// `cuobjdump <flag>` of a cubin written to a temporary file.
fn cuobjdump(tools: &Path, flag: &str, cubin: &[u8], tag: &str) -> String {
    let file =
        std::env::temp_dir().join(format!("dpl-cubin-test-{}-{tag}.cubin", std::process::id()));
    std::fs::write(&file, cubin).expect("write the cubin");
    let out = Command::new(tools.join("cuobjdump"))
        .arg(flag)
        .arg(&file)
        .output()
        .expect("run cuobjdump");
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "cuobjdump {flag} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The entry points listed by `cuobjdump -symbols` (lines `FUNC GLOBAL ... ENTRY name`).
fn entries(symbols: &str) -> Vec<String> {
    let mut v: Vec<String> = symbols
        .lines()
        .filter(|l| l.contains("FUNC") && l.split_whitespace().any(|w| w == "ENTRY"))
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    v.sort();
    v
}

const PROGRAMS: [&str; 5] = [
    "saxpy",
    "sum_i64",
    "sum_map_gather",
    "filter_of_map",
    "scan_of_map",
];

#[test]
fn programs_assemble_into_cubins_holding_their_kernels() {
    let Some(tools) = support::ptx_tools() else {
        return;
    };
    let ptxas = tools.join(cubin::PTXAS_FILE);
    for name in PROGRAMS {
        let prog =
            dpl_cuda::compile(&compiled(source(name)).fused).unwrap_or_else(|e| panic!("{e}"));
        let mut want: Vec<String> = prog.kernels.clone();
        want.sort();
        for arch in ["sm_70", "sm_80", "sm_90"] {
            let bin = cubin::assemble(&ptxas, &prog.ptx, arch)
                .unwrap_or_else(|e| panic!("{name} ({arch}): {e}"));
            assert_eq!(&bin[..4], b"\x7fELF", "{name} ({arch})");
            // e_machine (offset 18, little endian) is EM_CUDA = 190.
            assert_eq!(
                u16::from_le_bytes([bin[18], bin[19]]),
                190,
                "{name} ({arch})"
            );
            let tag = format!("{name}-{arch}");
            let header = cuobjdump(&tools, "-elf", &bin, &tag);
            let sm = arch.trim_start_matches("sm_");
            assert!(
                header.contains(&format!("sm={sm},")),
                "{name} ({arch}): not a cubin for {arch}:\n{}",
                header.lines().take(3).collect::<Vec<_>>().join("\n")
            );
            let got = entries(&cuobjdump(&tools, "-symbols", &bin, &tag));
            assert_eq!(got, want, "{name} ({arch}): kernels in the cubin");
        }
    }
}

#[test]
fn cubins_are_embedded_and_survive_encoding() {
    let Some(tools) = support::ptx_tools() else {
        return;
    };
    let ptxas = tools.join(cubin::PTXAS_FILE);
    let mut prog = dpl_cuda::compile(&compiled(source("filter_of_map")).fused).unwrap();
    assert!(prog.cubins.is_empty(), "compile embeds no cubin");
    let archs = cubin::parse_archs("sm_80, sm_90a, sm_90, sm_70").unwrap();
    prog.cubins = cubin::assemble_all(&ptxas, &prog.ptx, &archs).unwrap();
    // sm_90 is dropped: sm_90a came first with the same number.
    assert_eq!(
        prog.cubins.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        [80, 90, 70]
    );
    assert!(prog.cubins.iter().all(|(_, c)| cubin::is_elf(c)));
    let back = GpuProgram::decode(&prog.encode()).unwrap();
    assert_eq!(back, prog);
    // An sm_86 device takes the sm_80 cubin, an sm_75 one the sm_70 cubin, an sm_100 one
    // the PTX.
    let pick = |cc| cubin::select_entry(&back.cubins, cc).map(|(n, _)| n);
    assert_eq!(
        (pick(86), pick(75), pick(90), pick(100)),
        (Some(80), Some(70), Some(90), None)
    );
}

#[test]
fn ptxas_errors_carry_its_message() {
    let Some(tools) = support::ptx_tools() else {
        return;
    };
    let ptxas = tools.join(cubin::PTXAS_FILE);
    let bad = ".version 7.0\n.target sm_70\n.address_size 64\n\
               .visible .entry k()\n{\n\tnot_an_instruction;\n}\n";
    let e = cubin::assemble(&ptxas, bad, "sm_80").unwrap_err();
    assert!(e.contains("ptxas") && e.contains("sm_80"), "{e}");
    assert!(
        e.contains("not_an_instruction"),
        "ptxas's message is missing: {e}"
    );
    // An invalid architecture name is refused before ptxas runs.
    let e = cubin::assemble(
        &ptxas,
        &dpl_cuda::compile(&compiled(source("saxpy")).fused)
            .unwrap()
            .ptx,
        "sm_6x",
    )
    .unwrap_err();
    assert!(e.contains("invalid GPU architecture `sm_6x`"), "{e}");
    assert_eq!(Arch::parse("sm_90a").unwrap().to_string(), "sm_90a");
}
