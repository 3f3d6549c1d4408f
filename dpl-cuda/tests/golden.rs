//! Golden PTX text and plans for four programs (a map, a fused reduction, a filter, a
//! scan with decoupled look-back), and
//! the round trip of their embedded (encoded) form.
//! `DPL_BLESS=1 cargo test -p dpl-cuda --test golden` rewrites the files in
//! `tests/golden/`.

mod support;

use std::path::PathBuf;

use support::compiled;
use support::programs::{FILTER_OF_MAP, SAXPY, SCAN_OF_MAP, SUM_MAP_GATHER};

fn golden(name: &str, src: &str) {
    let c = compiled(src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = format!("{}\n// plan\n{:#?}\n", prog.ptx, prog.plan);
    // What the macro embeds reads back as the same program.
    let decoded = dpl_cuda::GpuProgram::decode(&prog.encode());
    assert_eq!(
        decoded.as_ref(),
        Ok(&prog),
        "{name}: encode/decode round trip"
    );
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.ptx"));
    if std::env::var_os("DPL_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the golden folder");
        std::fs::write(&path, &text).expect("write the golden file");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with DPL_BLESS=1 to create it)",
            path.display()
        )
    });
    assert!(
        want == text,
        "{name}: the generated PTX or plan changed; rerun with DPL_BLESS=1 if intended:\n{text}"
    );
}

#[test]
fn saxpy() {
    golden("saxpy", SAXPY);
}

#[test]
fn sum_map_gather() {
    golden("sum_map_gather", SUM_MAP_GATHER);
}

#[test]
fn filter_of_map() {
    golden("filter_of_map", FILTER_OF_MAP);
}

#[test]
fn scan_of_map() {
    golden("scan_of_map", SCAN_OF_MAP);
}
