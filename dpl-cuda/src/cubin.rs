//! Ahead-of-time assembly of the generated PTX into cubins with NVIDIA's `ptxas`.
//!
//! A [`GpuProgram`](crate::GpuProgram) always carries its PTX text, which the CUDA driver
//! compiles (JIT) for the device the first time a module is loaded. When `ptxas` is
//! available at build time, the kernels can also be assembled for the architectures a
//! user lists (`dpl_build::cubins(&["sm_80", "sm_90"])` in a `build.rs`), and the cubins
//! embedded next to the PTX in [`GpuProgram::cubins`](crate::GpuProgram::cubins); the real
//! driver then loads the cubin matching the device and skips the JIT.
//!
//! Nothing here needs a GPU or the CUDA toolkit: `ptxas` is found through environment
//! variables ([`find_ptxas`]), e.g. the PyPI build that `cargo xtask ptx-tools` installs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::arch::{Arch, parse_archs};

/// Environment variable naming the `ptxas` executable itself.
pub const ENV_PTXAS: &str = "DPL_PTXAS";
/// Environment variable naming a folder that holds `ptxas` (what `cargo xtask ptx-tools`
/// prints).
pub const ENV_PTX_TOOLS: &str = "DPL_PTX_TOOLS";
/// Environment variable listing the architectures to assemble for, comma-separated
/// (`sm_80,sm_90`), as `dpl_build::cubins` sets it for the compiler.
pub const ENV_CUBIN_ARCHS: &str = "DPL_CUBIN_ARCHS";

/// The file name of the assembler on this platform.
pub const PTXAS_FILE: &str = if cfg!(windows) { "ptxas.exe" } else { "ptxas" };

/// Finds `ptxas` from the environment: `DPL_PTXAS` (the executable's path) first, then
/// `DPL_PTX_TOOLS` (a folder holding it). Returns `None` when neither is set (an empty
/// value counts as unset). The path is not checked: [`assemble`] reports a missing or
/// broken assembler.
pub fn find_ptxas() -> Option<PathBuf> {
    find_ptxas_in(|name| std::env::var_os(name))
}

/// [`find_ptxas`] over an arbitrary environment lookup (for build scripts and tests).
pub fn find_ptxas_in(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(p) = set(ENV_PTXAS) {
        return Some(PathBuf::from(p));
    }
    set(ENV_PTX_TOOLS).map(|dir| PathBuf::from(dir).join(PTXAS_FILE))
}

/// Assembles a PTX module for `arch` (`"sm_80"`, validated by [`Arch::parse`]) with the
/// `ptxas` at `ptxas`, returning the cubin (an ELF image).
///
/// The PTX goes through a temporary file (removed afterwards). Errors name the
/// assembler and carry its output when it fails.
pub fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> Result<Vec<u8>, String> {
    run_ptxas(ptxas, ptx, arch, false).map(|(cubin, _)| cubin)
}

/// Assembles `ptx` for `arch` with `ptxas -v` and returns its resource report per kernel:
/// `(kernel, registers per thread, static shared memory bytes)` (see
/// [`parse_ptxas_report`]). Fails as [`assemble`] does, or when a
/// kernel of the module is missing from the report.
pub fn resources(ptxas: &Path, ptx: &str, arch: &str) -> Result<Vec<(String, u32, u32)>, String> {
    let (_, report) = run_ptxas(ptxas, ptx, arch, true)?;
    let found = parse_ptxas_report(&report);
    for line in ptx.lines() {
        if let Some(rest) = line.strip_prefix(".visible .entry ") {
            let name = rest.trim_end_matches('(');
            if !found.iter().any(|(k, _, _)| k == name) {
                return Err(format!(
                    "ptxas -v ({}) reported no register count for `{name}` on {arch}:\n{report}",
                    ptxas.display()
                ));
            }
        }
    }
    Ok(found)
}

/// Runs `ptxas` (with `-v` when `verbose`) on `ptx` for `arch`: the cubin and what the
/// assembler printed.
fn run_ptxas(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
    verbose: bool,
) -> Result<(Vec<u8>, String), String> {
    let arch = Arch::parse(arch)?;
    let dir = TempDir::new()?;
    let input = dir.path.join("module.ptx");
    let output = dir.path.join("module.cubin");
    std::fs::write(&input, ptx)
        .map_err(|e| format!("cannot write the PTX to {}: {e}", input.display()))?;
    let out = Command::new(ptxas)
        .args(verbose.then_some("-v"))
        .arg(format!("-arch={arch}"))
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| {
            format!(
                "cannot run ptxas ({}): {e} (set {ENV_PTXAS} to the assembler or \
                 {ENV_PTX_TOOLS} to its folder; `cargo xtask ptx-tools` installs one)",
                ptxas.display()
            )
        })?;
    if !out.status.success() {
        return Err(format!(
            "ptxas ({}) failed for {arch} ({}):\n{}{}",
            ptxas.display(),
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let cubin = std::fs::read(&output).map_err(|e| {
        format!(
            "ptxas ({}) succeeded for {arch} but its output {} cannot be read: {e}",
            ptxas.display(),
            output.display()
        )
    })?;
    if !is_elf(&cubin) {
        return Err(format!(
            "ptxas ({}) wrote something that is not an ELF cubin for {arch} ({} bytes)",
            ptxas.display(),
            cubin.len()
        ));
    }
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok((cubin, report))
}

/// Parses the `ptxas -v` report: `(kernel, registers, shared bytes)` per kernel.
pub fn parse_ptxas_report(text: &str) -> Vec<(String, u32, u32)> {
    let mut out: Vec<(String, u32, u32)> = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            current = rest.split('\'').next().map(str::to_string);
            continue;
        }
        if let (Some(name), Some(rest)) = (&current, line.split("Used ").nth(1)) {
            let regs = rest
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u32>().ok());
            let smem = line
                .split(", ")
                .find(|p| p.ends_with("bytes smem"))
                .and_then(|p| p.split_whitespace().next())
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(0);
            if let Some(regs) = regs {
                out.push((name.clone(), regs, smem));
                current = None;
            }
        }
    }
    out
}

/// Assembles `ptx` for each architecture of `archs`, returning the
/// [`GpuProgram::cubins`](crate::GpuProgram::cubins) entries (compute capability number,
/// cubin). Two names with the same number (`sm_90`, `sm_90a`) keep the first.
pub fn assemble_all(
    ptxas: &Path,
    ptx: &str,
    archs: &[Arch],
) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let mut out: Vec<(u32, Vec<u8>)> = Vec::new();
    for a in archs {
        if out.iter().any(|(n, _)| *n == a.number()) {
            continue;
        }
        out.push((a.number(), assemble(ptxas, ptx, &a.to_string())?));
    }
    Ok(out)
}

/// The ahead-of-time configuration a build script left for the compiler
/// (`dpl_build::cubins` sets `DPL_CUBIN_ARCHS` and `DPL_PTXAS` with `cargo:rustc-env`):
/// the assembler and the architectures, or `None` when `DPL_CUBIN_ARCHS` is unset or empty
/// (no cubins: the PTX alone is embedded). `DPL_PTXAS` alone, e.g. set in a developer's
/// shell, does not ask for cubins. Fails when the architectures are invalid or
/// `DPL_CUBIN_ARCHS` is set without `DPL_PTXAS`.
pub fn configured() -> Result<Option<(PathBuf, Vec<Arch>)>, String> {
    configured_in(|name| std::env::var_os(name))
}

/// [`configured`] over an arbitrary environment lookup.
pub fn configured_in(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<Option<(PathBuf, Vec<Arch>)>, String> {
    let Some(list) = env(ENV_CUBIN_ARCHS).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let list = list.into_string().map_err(|v| {
        format!(
            "{ENV_CUBIN_ARCHS}={} is not valid text",
            v.to_string_lossy()
        )
    })?;
    let archs = parse_archs(&list).map_err(|e| format!("{ENV_CUBIN_ARCHS}: {e}"))?;
    if archs.is_empty() {
        return Ok(None);
    }
    let ptxas = env(ENV_PTXAS).filter(|v| !v.is_empty()).ok_or_else(|| {
        format!("{ENV_CUBIN_ARCHS}={list} asks for cubins but {ENV_PTXAS} names no assembler")
    })?;
    Ok(Some((PathBuf::from(ptxas), archs)))
}

/// Assembles `program`'s PTX into the cubins [`configured`] asks for and stores them in
/// [`GpuProgram::cubins`](crate::GpuProgram::cubins); does nothing when no cubins are
/// configured. For the `#[parallel]` macro, at expansion time.
pub fn embed(program: &mut crate::GpuProgram) -> Result<(), String> {
    if let Some((ptxas, archs)) = configured()? {
        program.cubins = assemble_all(&ptxas, &program.ptx, &archs)
            .map_err(|e| format!("`{}`: {e}", program.name))?;
    }
    Ok(())
}

/// Whether `bytes` start with the ELF magic number (what a cubin is).
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// Picks the cubin to load on a device of compute capability `cc` (`10 * major +
/// minor`): the one built for exactly `cc`, else the newest one of the same major version
/// and a lower minor (binary compatible), else none (the driver then compiles the PTX).
pub fn select(cubins: &[(u32, Vec<u8>)], cc: u32) -> Option<&[u8]> {
    select_entry(cubins, cc).map(|(_, c)| c)
}

/// [`select`], also giving the chosen cubin's compute capability.
pub fn select_entry(cubins: &[(u32, Vec<u8>)], cc: u32) -> Option<(u32, &[u8])> {
    let exact = cubins.iter().find(|(n, _)| *n == cc);
    exact
        .or_else(|| {
            cubins
                .iter()
                .filter(|(n, _)| n / 10 == cc / 10 && *n <= cc)
                .max_by_key(|(n, _)| *n)
        })
        .map(|(n, c)| (*n, c.as_slice()))
}

/// A fresh folder under the system's temporary directory, removed on drop.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = std::env::temp_dir().join(format!(
            "dpl-cubin-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create the temporary folder {}: {e}", path.display()))?;
        Ok(TempDir { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    #[test]
    fn ptxas_is_found_from_the_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(find_ptxas_in(env(&[])), None);
        assert_eq!(
            find_ptxas_in(env(&[(ENV_PTX_TOOLS, "/t/bin")])),
            Some(Path::new("/t/bin").join(PTXAS_FILE))
        );
        assert_eq!(
            find_ptxas_in(env(&[
                (ENV_PTX_TOOLS, "/t/bin"),
                (ENV_PTXAS, "/x/ptxas-12")
            ])),
            Some(PathBuf::from("/x/ptxas-12"))
        );
        assert_eq!(
            find_ptxas_in(env(&[(ENV_PTXAS, ""), (ENV_PTX_TOOLS, "/t")])),
            Some(Path::new("/t").join(PTXAS_FILE))
        );
    }

    #[test]
    fn the_build_configuration_needs_the_arch_list() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(configured_in(env(&[])), Ok(None));
        // DPL_PTXAS alone (a developer's shell) asks for nothing.
        assert_eq!(configured_in(env(&[(ENV_PTXAS, "/p/ptxas")])), Ok(None));
        assert_eq!(
            configured_in(env(&[(ENV_PTXAS, "/p/ptxas"), (ENV_CUBIN_ARCHS, "")])),
            Ok(None)
        );
        let (p, archs) = configured_in(env(&[
            (ENV_PTXAS, "/p/ptxas"),
            (ENV_CUBIN_ARCHS, "sm_80,sm_90a"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(p, PathBuf::from("/p/ptxas"));
        assert_eq!(archs.iter().map(Arch::number).collect::<Vec<_>>(), [80, 90]);
        let e = configured_in(env(&[(ENV_CUBIN_ARCHS, "sm_80")])).unwrap_err();
        assert!(e.contains("names no assembler"), "{e}");
        let e =
            configured_in(env(&[(ENV_PTXAS, "/p"), (ENV_CUBIN_ARCHS, "sm_80,sm_50")])).unwrap_err();
        assert!(
            e.starts_with("DPL_CUBIN_ARCHS: ") && e.contains("`sm_50`"),
            "{e}"
        );
    }

    #[test]
    fn cubin_selection_prefers_the_exact_then_the_compatible_arch() {
        let c = |n: u32| (n, vec![n as u8]);
        let set = vec![c(70), c(80), c(86), c(90)];
        assert_eq!(select(&set, 80), Some(&[80u8][..]));
        assert_eq!(select(&set, 86), Some(&[86u8][..]));
        assert_eq!(select(&set, 89), Some(&[86u8][..]));
        assert_eq!(select(&set, 87), Some(&[86u8][..]));
        assert_eq!(select(&set, 75), Some(&[70u8][..]));
        assert_eq!(select_entry(&set, 89).map(|(n, _)| n), Some(86));
        assert_eq!(select(&set, 90), Some(&[90u8][..]));
        // Other majors are not binary compatible: the PTX is used.
        assert_eq!(select(&set, 100), None);
        assert_eq!(select(&[c(80)], 75), None);
        assert_eq!(select(&[c(86)], 80), None);
        assert_eq!(select(&[], 80), None);
    }

    #[test]
    fn a_missing_assembler_is_a_clear_error() {
        let e = assemble(
            Path::new("/nonexistent/dpl/ptxas"),
            ".version 7.0\n",
            "sm_80",
        )
        .unwrap_err();
        assert!(
            e.contains("cannot run ptxas") && e.contains("/nonexistent/dpl/ptxas"),
            "{e}"
        );
        let e = assemble(Path::new("/nonexistent/dpl/ptxas"), "", "sm_61").unwrap_err();
        assert!(e.contains("sm_70 or newer"), "{e}");
    }

    #[test]
    fn elf_magic() {
        assert!(is_elf(b"\x7fELF\x02\x01"));
        assert!(!is_elf(b"\x7fEL"));
        assert!(!is_elf(b".version 7.0"));
    }

    #[test]
    fn ptxas_reports_are_parsed() {
        let text = "ptxas info    : 0 bytes gmem\n\
            ptxas info    : Compiling entry function 'dpl_f_k0_map' for 'sm_80'\n\
            ptxas info    : Function properties for dpl_f_k0_map\n\
            \x20   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
            ptxas info    : Used 18 registers, 392 bytes cmem[0]\n\
            ptxas info    : Compiling entry function 'dpl_f_k1_reduce' for 'sm_80'\n\
            ptxas info    : Function properties for dpl_f_k1_reduce\n\
            ptxas info    : Used 40 registers, 128 bytes smem, 380 bytes cmem[0]\n";
        assert_eq!(
            parse_ptxas_report(text),
            vec![
                ("dpl_f_k0_map".to_string(), 18, 0),
                ("dpl_f_k1_reduce".to_string(), 40, 128)
            ]
        );
    }
}
