//! Golden PTX text and plans (snapshots) of every test program, and the round trip of
//! their embedded (encoded) form.
//!
//! Each program `tests/programs/<group>/<name>.ir` is compiled under the options of each
//! variant that applies to it, and the PTX text followed by the plan is compared with
//! `tests/golden/<group>/<name>[.<variant>].ptx`. `DPL_BLESS=1 cargo test -p dpl-cuda
//! --test golden` rewrites those files (and removes those no program makes); review the
//! diff (`git diff dpl-cuda/tests/golden`) before committing it.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use dpl_cuda::{Inner, Options, Scan};
use support::compiled;
use support::programs::{Program, all};

/// A set of compilation options and the programs it is snapshotted for.
struct Variant {
    /// The file name's suffix (`""` for the default options).
    suffix: &'static str,
    options: Options,
    applies: fn(&Program) -> bool,
}

/// The default options for every program; a warp and a block per element for the
/// nested ones (the thread-, warp- and block-level loops); reduce-then-scan for those
/// with a scan (the other device-wide scan).
const VARIANTS: [Variant; 4] = [
    Variant {
        suffix: "",
        options: Options {
            inner: Inner::Seq,
            block: None,
            scan: Scan::LookBack,
        },
        applies: |_| true,
    },
    Variant {
        suffix: ".warp",
        options: Options {
            inner: Inner::Warp,
            block: None,
            scan: Scan::LookBack,
        },
        applies: Program::nested,
    },
    Variant {
        suffix: ".block",
        options: Options {
            inner: Inner::Block,
            block: None,
            scan: Scan::LookBack,
        },
        applies: Program::nested,
    },
    Variant {
        suffix: ".reduce_then_scan",
        options: Options {
            inner: Inner::Seq,
            block: None,
            scan: Scan::ReduceThenScan,
        },
        applies: |p| p.text.contains("scan("),
    },
];

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// The snapshot text of `p` under `v`: the PTX, then the plan.
fn snapshot(p: &Program, v: &Variant) -> String {
    let c = compiled(&p.text);
    let prog = dpl_cuda::compile_with(&c.fused, &v.options)
        .unwrap_or_else(|e| panic!("{}{}: {e}", p.name, v.suffix));
    // What the macro embeds reads back as the same program.
    let decoded = dpl_cuda::GpuProgram::decode(&prog.encode());
    assert_eq!(
        decoded.as_ref(),
        Ok(&prog),
        "{}{}: encode/decode round trip",
        p.name,
        v.suffix
    );
    format!("{}\n// plan\n{:#?}\n", prog.ptx, prog.plan)
}

/// The `.ptx` files under `dir`, recursively.
fn files_under(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let path = e.expect("a directory entry").path();
        if path.is_dir() {
            files_under(&path, out);
        } else if path.extension().is_some_and(|x| x == "ptx") {
            out.insert(path);
        }
    }
}

#[test]
fn every_program_matches_its_snapshots() {
    let bless = std::env::var_os("DPL_BLESS").is_some();
    let dir = golden_dir();
    let mut stale = BTreeSet::new();
    files_under(&dir, &mut stale);
    let mut failures = Vec::new();
    let mut checked = 0;
    for p in all() {
        for v in VARIANTS.iter().filter(|v| (v.applies)(p)) {
            let path = dir
                .join(p.group)
                .join(format!("{}{}.ptx", p.name, v.suffix));
            stale.remove(&path);
            let text = snapshot(p, v);
            checked += 1;
            if bless {
                std::fs::create_dir_all(path.parent().expect("a parent"))
                    .expect("the golden folder");
                std::fs::write(&path, &text).expect("write the golden file");
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(want) if want == text => {}
                Ok(_) => failures.push(format!("{}: the PTX or the plan changed", path.display())),
                Err(e) => failures.push(format!("{}: {e}", path.display())),
            }
        }
    }
    for path in &stale {
        if bless {
            std::fs::remove_file(path).expect("remove a stale golden file");
        } else {
            failures.push(format!("{}: no program makes it", path.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} snapshots differ (rerun with DPL_BLESS=1 if intended, and review \
         `git diff dpl-cuda/tests/golden`):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
