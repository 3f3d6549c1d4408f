//! `dpl-build`: the build-script step of dpl's GPU backend.
//!
//! With dpl's `cuda` feature, every `#[parallel]` function is compiled to PTX while the
//! crate compiles and the PTX is embedded in the binary; the CUDA driver compiles it for
//! the GPU (JIT) the first time each module is loaded. A crate can instead ship machine
//! code (cubins) for the GPUs it targets, so nothing is compiled at run time, by calling
//! [`cubins`] from its `build.rs`:
//!
//! ```no_run
//! // In build.rs, inside `fn main`:
//! dpl_build::cubins(&["sm_80", "sm_90"]);
//! ```
//!
//! with `dpl-build` among the `[build-dependencies]`. When NVIDIA's `ptxas` is available
//! the step tells the compiler (through `cargo:rustc-env`) which assembler to use and for
//! which architectures (`DPL_PTXAS`, `DPL_CUBIN_ARCHS`); `#[parallel]` then assembles
//! each function's kernels for each of them (`dpl_cuda::cubin::embed`) and embeds the
//! cubins next to the PTX. (`DPL_PTXAS` set in the environment alone asks for nothing:
//! only `DPL_CUBIN_ARCHS`, which this step sets for the crate being built, does.) At run time the driver loads the cubin built
//! for the device's compute capability (or an older one of the same major version, which
//! is binary compatible) and falls back to the PTX on any other GPU. Without `ptxas` the
//! step prints a cargo warning and the PTX is embedded as is.
//!
//! `ptxas` is looked for, in this order:
//!
//! 1. `DPL_PTXAS`: the path of the assembler;
//! 2. `DPL_PTX_TOOLS`: a folder holding `ptxas` (what `cargo xtask ptx-tools` prints in
//!    dpl's repository);
//! 3. `ptx-tools/bin/ptxas` in the target folder (`CARGO_TARGET_DIR`, or any folder above
//!    the build script's `OUT_DIR`), and `target/ptx-tools/bin/ptxas` in the crate's
//!    folder or any folder above it (the workspace root): where `cargo xtask ptx-tools`
//!    installs it.
//!
//! Any `ptxas` of CUDA 11.1 or newer reads dpl's PTX (ISA 7.0); the one of the PyPI wheel
//! `nvidia-cuda-nvcc-cu12` needs neither a GPU nor the CUDA toolkit. Architectures are
//! `sm_70` (Volta) and newer, written `sm_NN` or `sm_NNa` (architecture-specific
//! variants, whose cubins run only on exactly that compute capability).
//!
//! The step prints `cargo:rerun-if-env-changed` for the variables it reads, which tells
//! cargo to run the build script again only when one of them changes: a build script
//! doing more than this step should print its own `cargo:rerun-if-changed` lines.
#![deny(missing_docs)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use dpl_cuda::cubin::{Arch, ENV_CUBIN_ARCHS, ENV_PTX_TOOLS, ENV_PTXAS, PTXAS_FILE};

/// The environment variables the step reads (it asks cargo to rerun it when they change).
pub const READS: [&str; 4] = [ENV_PTXAS, ENV_PTX_TOOLS, "CARGO_TARGET_DIR", "OUT_DIR"];

/// Configures ahead-of-time cubins for `archs` (e.g. `&["sm_80", "sm_90"]`); call it from
/// `build.rs`. Prints cargo directives on standard output (see the crate documentation).
///
/// # Panics
///
/// When an architecture name is invalid or the list is empty (a mistake in `build.rs`,
/// reported as a build failure with the accepted forms), or when standard output cannot be
/// written.
pub fn cubins(archs: &[&str]) {
    let env = |name: &str| std::env::var_os(name);
    let is_file = |p: &Path| p.is_file();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Err(e) = cubins_to(archs, &env, &is_file, &mut out) {
        panic!("dpl_build::cubins: {e}");
    }
}

/// What [`cubins`] does, with the environment, the file test and the output given: checks
/// `archs`, looks for `ptxas` and writes the cargo directives to `out`. Returns the
/// assembler found (`None`: the PTX will be embedded as is).
pub fn cubins_to(
    archs: &[&str],
    env: &dyn Fn(&str) -> Option<OsString>,
    is_file: &dyn Fn(&Path) -> bool,
    out: &mut dyn Write,
) -> Result<Option<PathBuf>, String> {
    let archs = parse_archs(archs)?;
    let (found, notes) = find_ptxas(env, is_file);
    let write = |out: &mut dyn Write, line: String| {
        writeln!(out, "{line}").map_err(|e| format!("cannot write the cargo directives: {e}"))
    };
    for var in READS {
        write(out, format!("cargo:rerun-if-env-changed={var}"))?;
    }
    for note in notes {
        write(out, format!("cargo:warning=dpl-build: {note}"))?;
    }
    let usable = found.and_then(|p| {
        let p = std::path::absolute(&p).unwrap_or(p);
        match p.to_str() {
            Some(s) if !s.contains('\n') => Some((p.clone(), s.to_string())),
            _ => None,
        }
    });
    let Some((path, text)) = usable else {
        write(
            out,
            format!(
                "cargo:warning=dpl-build: no usable ptxas (set {ENV_PTXAS}=/path/to/ptxas or \
                 {ENV_PTX_TOOLS}=<folder holding ptxas>; the PyPI wheel nvidia-cuda-nvcc-cu12 \
                 provides one): the PTX of the #[parallel] functions is embedded as is and \
                 the CUDA driver compiles it at first launch"
            ),
        )?;
        return Ok(None);
    };
    let list = archs
        .iter()
        .map(Arch::to_string)
        .collect::<Vec<_>>()
        .join(",");
    write(out, format!("cargo:rerun-if-changed={text}"))?;
    write(out, format!("cargo:rustc-env={ENV_PTXAS}={text}"))?;
    write(out, format!("cargo:rustc-env={ENV_CUBIN_ARCHS}={list}"))?;
    Ok(Some(path))
}

/// Checks architecture names (`sm_70` and newer, `sm_NN` or `sm_NNa`), dropping repeated
/// ones. Fails on an empty list or an invalid name, with the accepted forms.
pub fn parse_archs(archs: &[&str]) -> Result<Vec<Arch>, String> {
    if archs.is_empty() {
        return Err(
            "no GPU architecture given: list at least one, e.g. `dpl_build::cubins(&[\"sm_80\"])`"
                .into(),
        );
    }
    let mut out: Vec<Arch> = Vec::new();
    for a in archs {
        let arch = Arch::parse(a.trim())?;
        if !out.contains(&arch) {
            out.push(arch);
        }
    }
    Ok(out)
}

/// Looks for `ptxas` (see the crate documentation for the order). Returns the path found
/// and notes about variables that name no file.
pub fn find_ptxas(
    env: &dyn Fn(&str) -> Option<OsString>,
    is_file: &dyn Fn(&Path) -> bool,
) -> (Option<PathBuf>, Vec<String>) {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    let mut notes = Vec::new();
    if let Some(p) = set(ENV_PTXAS).map(PathBuf::from) {
        if is_file(&p) {
            return (Some(p), notes);
        }
        notes.push(format!("{ENV_PTXAS}={} names no file", p.display()));
    }
    if let Some(dir) = set(ENV_PTX_TOOLS).map(PathBuf::from) {
        let p = dir.join(PTXAS_FILE);
        if is_file(&p) {
            return (Some(p), notes);
        }
        notes.push(format!(
            "{ENV_PTX_TOOLS}={} holds no {PTXAS_FILE}",
            dir.display()
        ));
    }
    let tools = |target: &Path| target.join("ptx-tools").join("bin").join(PTXAS_FILE);
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(t) = set("CARGO_TARGET_DIR") {
        candidates.push(tools(Path::new(&t)));
    }
    if let Some(out_dir) = set("OUT_DIR") {
        candidates.extend(Path::new(&out_dir).ancestors().skip(1).map(tools));
    }
    if let Some(manifest) = set("CARGO_MANIFEST_DIR") {
        candidates.extend(
            Path::new(&manifest)
                .ancestors()
                .map(|a| tools(&a.join("target"))),
        );
    }
    (candidates.into_iter().find(|p| is_file(p)), notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An environment of fixed variables and a fixed set of existing files.
    struct World {
        vars: Vec<(&'static str, &'static str)>,
        files: Vec<&'static str>,
    }

    impl World {
        fn run(&self, archs: &[&str]) -> (Result<Option<PathBuf>, String>, String) {
            let env = |name: &str| {
                self.vars
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            };
            let is_file = |p: &Path| self.files.iter().any(|f| Path::new(f) == p);
            let mut out = Vec::new();
            let r = cubins_to(archs, &env, &is_file, &mut out);
            (r, String::from_utf8(out).unwrap())
        }
    }

    const RERUN: &str = "cargo:rerun-if-env-changed=DPL_PTXAS\n\
                         cargo:rerun-if-env-changed=DPL_PTX_TOOLS\n\
                         cargo:rerun-if-env-changed=CARGO_TARGET_DIR\n\
                         cargo:rerun-if-env-changed=OUT_DIR\n";

    #[test]
    fn dpl_ptxas_is_used_and_announced_to_the_compiler() {
        let w = World {
            vars: vec![
                ("DPL_PTXAS", "/opt/cuda/bin/ptxas"),
                ("DPL_PTX_TOOLS", "/t"),
            ],
            files: vec!["/opt/cuda/bin/ptxas", "/t/ptxas"],
        };
        let (r, out) = w.run(&["sm_80", "sm_90a", "sm_80"]);
        assert_eq!(r.unwrap(), Some(PathBuf::from("/opt/cuda/bin/ptxas")));
        assert_eq!(
            out,
            format!(
                "{RERUN}cargo:rerun-if-changed=/opt/cuda/bin/ptxas\n\
                 cargo:rustc-env=DPL_PTXAS=/opt/cuda/bin/ptxas\n\
                 cargo:rustc-env=DPL_CUBIN_ARCHS=sm_80,sm_90a\n"
            )
        );
    }

    #[test]
    fn the_tools_folder_comes_next_and_a_wrong_path_is_a_warning() {
        let w = World {
            vars: vec![("DPL_PTXAS", "/nowhere/ptxas"), ("DPL_PTX_TOOLS", "/t/bin")],
            files: vec!["/t/bin/ptxas"],
        };
        let (r, out) = w.run(&["sm_70"]);
        assert_eq!(r.unwrap(), Some(PathBuf::from("/t/bin/ptxas")));
        assert_eq!(
            out,
            format!(
                "{RERUN}cargo:warning=dpl-build: DPL_PTXAS=/nowhere/ptxas names no file\n\
                 cargo:rerun-if-changed=/t/bin/ptxas\n\
                 cargo:rustc-env=DPL_PTXAS=/t/bin/ptxas\n\
                 cargo:rustc-env=DPL_CUBIN_ARCHS=sm_70\n"
            )
        );
    }

    #[test]
    fn the_installed_tools_are_found_from_the_target_and_crate_folders() {
        // From OUT_DIR (inside the target folder).
        let w = World {
            vars: vec![
                ("OUT_DIR", "/ws/target/debug/build/app-1234/out"),
                ("CARGO_MANIFEST_DIR", "/ws/app"),
            ],
            files: vec!["/ws/target/ptx-tools/bin/ptxas"],
        };
        assert_eq!(
            w.run(&["sm_80"]).0.unwrap(),
            Some(PathBuf::from("/ws/target/ptx-tools/bin/ptxas"))
        );
        // From CARGO_TARGET_DIR.
        let w = World {
            vars: vec![
                ("CARGO_TARGET_DIR", "/tgt"),
                ("CARGO_MANIFEST_DIR", "/ws/app"),
            ],
            files: vec!["/tgt/ptx-tools/bin/ptxas", "/ws/target/ptx-tools/bin/ptxas"],
        };
        assert_eq!(
            w.run(&["sm_80"]).0.unwrap(),
            Some(PathBuf::from("/tgt/ptx-tools/bin/ptxas"))
        );
        // From the workspace root above the crate, with the target folder elsewhere.
        let w = World {
            vars: vec![
                ("OUT_DIR", "/elsewhere/debug/build/app-1/out"),
                ("CARGO_MANIFEST_DIR", "/ws/crates/app"),
            ],
            files: vec!["/ws/target/ptx-tools/bin/ptxas"],
        };
        assert_eq!(
            w.run(&["sm_80"]).0.unwrap(),
            Some(PathBuf::from("/ws/target/ptx-tools/bin/ptxas"))
        );
    }

    #[test]
    fn without_ptxas_only_a_warning_is_printed() {
        let w = World {
            vars: vec![
                ("DPL_PTX_TOOLS", "/empty"),
                ("OUT_DIR", "/ws/target/debug/build/app-1/out"),
                ("CARGO_MANIFEST_DIR", "/ws/app"),
            ],
            files: vec!["/ws/target/ptx-tools/bin/cuobjdump"],
        };
        let (r, out) = w.run(&["sm_80"]);
        assert_eq!(r.unwrap(), None);
        assert!(out.starts_with(RERUN), "{out}");
        let rest: Vec<&str> = out[RERUN.len()..].lines().collect();
        assert_eq!(rest.len(), 2, "{out}");
        assert_eq!(
            rest[0],
            "cargo:warning=dpl-build: DPL_PTX_TOOLS=/empty holds no ptxas"
        );
        assert!(
            rest[1].starts_with("cargo:warning=dpl-build: no usable ptxas")
                && rest[1].contains("embedded as is"),
            "{}",
            rest[1]
        );
        assert!(!out.contains("rustc-env"), "{out}");
    }

    #[test]
    fn architectures_are_checked_before_anything_is_printed() {
        let w = World {
            vars: vec![("DPL_PTXAS", "/p/ptxas")],
            files: vec!["/p/ptxas"],
        };
        for (archs, why) in [
            (&["sm_61"][..], "sm_70 or newer"),
            (&["sm_80", "compute_80"][..], "`compute_80`"),
            (&["sm_80,sm_90"][..], "2 or 3 digits"),
            (&[][..], "no GPU architecture given"),
        ] {
            let (r, out) = w.run(archs);
            let e = r.unwrap_err();
            assert!(e.contains(why), "{archs:?}: {e}");
            assert!(out.is_empty(), "{out}");
        }
        assert_eq!(
            parse_archs(&[" sm_86 ", "sm_120", "sm_86"])
                .unwrap()
                .iter()
                .map(Arch::number)
                .collect::<Vec<_>>(),
            [86, 120]
        );
    }

    #[test]
    #[should_panic(expected = "dpl_build::cubins: invalid GPU architecture `sm_52`")]
    fn cubins_panics_on_a_bad_architecture() {
        cubins(&["sm_80", "sm_52"]);
    }
}
