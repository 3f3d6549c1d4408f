//! NVIDIA's PTX tools from PyPI wheels, and checking PTX with them.
//!
//! The development and CI machines have no CUDA toolkit, but NVIDIA publishes its PTX
//! assembler and binary dumper as plain Python wheels, so `pip install --target` gives us
//! working binaries without root and without CUDA:
//!
//! | binary | wheel | used for |
//! |---|---|---|
//! | `ptxas` (CUDA 12.9) | `nvidia-cuda-nvcc-cu12` | dpl's own kernels: sm_70, sm_80, sm_90 |
//! | `ptxas-cuda13` (CUDA 13.5) | `nvidia-cuda-nvcc` | the dpl-sim fixtures (PTX ISA 9.5 from nvcc 13.5) |
//! | `cuobjdump` (CUDA 13.5) | `nvidia-cuda-cuobjdump` | `-res-usage`: registers, local memory |
//!
//! Two assemblers are needed because each CUDA release reads only the PTX ISA versions up
//! to its own: CUDA 12.9's ptxas stops at PTX 8.8 and rejects the `.version 9.5` that nvcc
//! 13.5 writes, while CUDA 13 no longer assembles for sm_70. [`ptxas_for`] picks the one
//! that can read a given PTX text from its `.version` line.
//!
//! Everything lands in `<repo>/target/ptx-tools/`: the unpacked wheels under `wheels/`
//! and links to the three binaries under `bin/` (the folder [`install_tools`] returns).
//! Setting `DPL_PTXAS=/path/to/ptxas` skips the installation and uses that assembler's
//! folder instead (a ptxas of CUDA 13.x or later then also reads the fixtures).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Release of the CUDA 12 wheels (`ptxas` for sm_70/80/90).
const CUDA12_RELEASE: &str = "12.9.86";
/// Release of the CUDA 13 wheels (`ptxas-cuda13` and `cuobjdump`).
const CUDA13_RELEASE: &str = "13.5.37";

/// Name of the CUDA 12 assembler in the tools folder.
const PTXAS: &str = "ptxas";
/// Name of the CUDA 13 assembler in the tools folder.
const PTXAS_CUDA13: &str = "ptxas-cuda13";
/// Name of the binary dumper in the tools folder.
const CUOBJDUMP: &str = "cuobjdump";

/// Root of the repository (the parent of the `xtask` package).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Installs the tools (once) and returns the folder holding `ptxas`.
///
/// Idempotent: when `target/ptx-tools/bin` already holds working binaries of the expected
/// releases nothing is downloaded. With `DPL_PTXAS` set, returns that file's folder after
/// checking that it runs.
pub fn install_tools() -> Result<PathBuf, String> {
    if let Some(ptxas) = std::env::var_os("DPL_PTXAS") {
        let ptxas = PathBuf::from(ptxas);
        let version = tool_version(&ptxas)
            .map_err(|e| format!("DPL_PTXAS={} does not run: {e}", ptxas.display()))?;
        let folder = ptxas.parent().map(Path::to_path_buf).unwrap_or_default();
        eprintln!("xtask: using DPL_PTXAS={} ({version})", ptxas.display());
        return Ok(folder);
    }
    let tools = repo_root().join("target").join("ptx-tools");
    let bin = tools.join("bin");
    if tools_present(&bin) {
        return Ok(bin);
    }
    install_wheels(&tools)?;
    link_binaries(&tools, &bin)?;
    if !tools_present(&bin) {
        return Err(format!(
            "installed the wheels into {} but the tools in {} do not report releases {CUDA12_RELEASE} / {CUDA13_RELEASE}",
            tools.display(),
            bin.display()
        ));
    }
    Ok(bin)
}

/// The installed tools folder, computed once per process.
fn tools_folder() -> Result<PathBuf, String> {
    static FOLDER: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOLDER.get_or_init(install_tools).clone()
}

/// Whether `bin` holds the three binaries of the pinned releases.
fn tools_present(bin: &Path) -> bool {
    let reports = |name: &str, release: &str| {
        tool_version(&bin.join(name)).is_ok_and(|v| v.contains(&format!("V{release}")))
    };
    reports(PTXAS, CUDA12_RELEASE)
        && reports(PTXAS_CUDA13, CUDA13_RELEASE)
        && reports(CUOBJDUMP, CUDA13_RELEASE)
}

/// The last line of `tool --version` that names the release ("Cuda compilation tools, ...").
fn tool_version(tool: &Path) -> Result<String, String> {
    let output = Command::new(tool)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!("{} --version failed: {text}", tool.display()));
    }
    text.lines()
        .rev()
        .find(|l| l.contains("release"))
        .map(|l| l.trim().to_string())
        .ok_or_else(|| format!("{} --version printed no release: {text}", tool.display()))
}

/// Installs the three wheels into `tools/wheels`.
fn install_wheels(tools: &Path) -> Result<(), String> {
    let packages = [
        format!("nvidia-cuda-nvcc-cu12=={CUDA12_RELEASE}"),
        format!("nvidia-cuda-nvcc=={CUDA13_RELEASE}"),
        format!("nvidia-cuda-cuobjdump=={CUDA13_RELEASE}"),
    ];
    pip_install(
        tools,
        "wheels",
        &packages,
        "Alternatively point DPL_PTXAS at an existing ptxas.",
    )
}

/// Installs `packages` (pinned wheels, without their dependencies) into `parent/name` with
/// `pip install --target`, through a staging folder so an interrupted download never leaves
/// a half-installed tree behind; `alternative` ends the error messages (what else to do).
pub fn pip_install(
    parent: &Path,
    name: &str,
    packages: &[String],
    alternative: &str,
) -> Result<(), String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let probe = Command::new(&python).arg("--version").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        return Err(format!(
            "`{python}` was not found: the wheels are installed from PyPI with pip, so \
             install Python 3 with pip (or set PYTHON=/path/to/python3). {alternative}"
        ));
    }
    let pip = Command::new(&python)
        .args(["-m", "pip", "--version"])
        .output();
    if !pip.is_ok_and(|o| o.status.success()) {
        return Err(format!(
            "`{python} -m pip` is not available: install pip (e.g. `apt-get install \
             python3-pip` or `{python} -m ensurepip --user`). {alternative}"
        ));
    }
    let staging = parent.join("staging");
    let wheels = parent.join(name);
    remove_if_present(&staging)?;
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    eprintln!(
        "xtask: installing {} into {}",
        packages.join(" "),
        wheels.display()
    );
    let output = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--disable-pip-version-check",
            "--quiet",
        ])
        .arg("--target")
        .arg(&staging)
        .args(packages)
        .output()
        .map_err(|e| format!("cannot run `{python} -m pip`: {e}"))?;
    if !output.status.success() {
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let hint = if log.contains("No matching distribution")
            || log.contains("Could not find a version")
            || log.contains("NewConnectionError")
            || log.contains("Failed to establish")
            || log.contains("Temporary failure in name resolution")
            || log.contains("Network is unreachable")
            || log.contains("timed out")
        {
            format!(
                "pip could not download the wheels from PyPI: is the network (or a \
                 PIP_INDEX_URL mirror) reachable? {alternative}"
            )
        } else {
            "pip failed to install the wheels".to_string()
        };
        let tail: Vec<&str> = log.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!("{hint}\npip said:\n{}", tail.join("\n")));
    }
    remove_if_present(&wheels)?;
    std::fs::rename(&staging, &wheels).map_err(|e| {
        format!(
            "cannot move {} to {}: {e}",
            staging.display(),
            wheels.display()
        )
    })
}

/// Removes the folder `dir` and everything in it, if it exists.
pub fn remove_if_present(dir: &Path) -> Result<(), String> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Finds the binaries in the unpacked wheels, makes them executable and links them into
/// `bin` under fixed names.
fn link_binaries(tools: &Path, bin: &Path) -> Result<(), String> {
    let wheels = tools.join("wheels");
    let mut found = Vec::new();
    collect_files(&wheels, &mut |p| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == PTXAS || name == CUOBJDUMP {
            found.push(p.to_path_buf());
        }
    })?;
    remove_if_present(bin)?;
    std::fs::create_dir_all(bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    let mut linked = Vec::new();
    for path in &found {
        make_executable(path)?;
        // Relative links keep the tools folder movable (e.g. copied to another machine).
        let relative = Path::new("..").join(path.strip_prefix(tools).unwrap_or(path));
        let version = tool_version(path)?;
        let is_ptxas = path.file_name().is_some_and(|n| n == PTXAS);
        let name = match (is_ptxas, version.contains(&format!("V{CUDA12_RELEASE}"))) {
            (true, true) => PTXAS,
            (true, false) => PTXAS_CUDA13,
            (false, _) => CUOBJDUMP,
        };
        link(&relative, &bin.join(name))?;
        linked.push(name);
    }
    for name in [PTXAS, PTXAS_CUDA13, CUOBJDUMP] {
        if !linked.contains(&name) {
            return Err(format!(
                "the wheels installed in {} hold no {name} (found: {found:?})",
                wheels.display()
            ));
        }
    }
    Ok(())
}

/// Calls `visit` on every regular file below `dir`.
fn collect_files(dir: &Path, visit: &mut dyn FnMut(&Path)) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", entry.path().display()))?;
        if kind.is_dir() {
            collect_files(&entry.path(), visit)?;
        } else if kind.is_file() {
            visit(&entry.path());
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), String> {
    Ok(())
}

#[cfg(unix)]
fn link(target: &Path, link: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, link).map_err(|e| {
        format!(
            "cannot link {} to {}: {e}",
            link.display(),
            target.display()
        )
    })
}

#[cfg(not(unix))]
fn link(target: &Path, link: &Path) -> Result<(), String> {
    let target = link.parent().unwrap_or(link).join(target);
    std::fs::copy(&target, link).map(|_| ()).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            target.display(),
            link.display()
        )
    })
}

/// The PTX ISA version a PTX text declares (`.version 9.5` gives `(9, 5)`).
fn ptx_isa_version(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(".version"))?;
    let (major, minor) = line.trim_start_matches(".version").trim().split_once('.')?;
    Some((major.parse().ok()?, minor.trim().parse().ok()?))
}

/// The assembler in `folder` that reads `ptx`: PTX ISA 9.x and later needs a CUDA 13
/// ptxas (`ptxas-cuda13` when the folder has one), anything older the CUDA 12 `ptxas`.
pub fn ptxas_for(folder: &Path, ptx: &str) -> PathBuf {
    let cuda13 = folder.join(PTXAS_CUDA13);
    match ptx_isa_version(ptx) {
        Some((major, _)) if major >= 9 && cuda13.exists() => cuda13,
        _ => folder.join(PTXAS),
    }
}

/// Assembles `ptx_file` with ptxas for `arch` (e.g. `"sm_80"`), adding `extra_args`
/// (e.g. `["-Werror", "--warn-on-spills", "-v"]`).
///
/// Installs the tools first if needed. Returns everything ptxas printed when it succeeds,
/// and an error carrying ptxas's output when it does not.
pub fn ptxas_check(ptx_file: &Path, arch: &str, extra_args: &[&str]) -> Result<String, String> {
    let cubin = temp_cubin(ptx_file);
    let result = assemble(ptx_file, arch, extra_args, &cubin);
    let _ = std::fs::remove_file(&cubin);
    result
}

/// Assembles `ptx_file` for `arch` and returns what `cuobjdump -res-usage` says about the
/// cubin: registers, stack, shared, local and constant memory of every kernel.
pub fn resource_usage(ptx_file: &Path, arch: &str) -> Result<String, String> {
    let cubin = temp_cubin(ptx_file);
    let result = assemble(ptx_file, arch, &[], &cubin).and_then(|_| {
        let cuobjdump = tools_folder()?.join(CUOBJDUMP);
        let output = Command::new(&cuobjdump)
            .arg("-res-usage")
            .arg(&cubin)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", cuobjdump.display()))?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        if output.status.success() {
            Ok(text)
        } else {
            Err(format!(
                "`{} -res-usage` failed on {}:\n{text}",
                cuobjdump.display(),
                ptx_file.display()
            ))
        }
    });
    let _ = std::fs::remove_file(&cubin);
    result
}

/// A per-process temporary cubin path for `ptx_file`.
fn temp_cubin(ptx_file: &Path) -> PathBuf {
    std::env::temp_dir().join(format!(
        "dpl-ptxas-{}-{}.cubin",
        std::process::id(),
        ptx_file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("kernel")
    ))
}

/// Runs the right ptxas on `ptx_file`, writing `cubin`; returns ptxas's output.
fn assemble(
    ptx_file: &Path,
    arch: &str,
    extra_args: &[&str],
    cubin: &Path,
) -> Result<String, String> {
    let folder = tools_folder()?;
    let ptx = std::fs::read_to_string(ptx_file)
        .map_err(|e| format!("cannot read {}: {e}", ptx_file.display()))?;
    let ptxas = ptxas_for(&folder, &ptx);
    let output = Command::new(&ptxas)
        .arg(format!("-arch={arch}"))
        .args(extra_args)
        .arg("-o")
        .arg(cubin)
        .arg(ptx_file)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() {
        return Ok(log);
    }
    let mut command = format!("{} -arch={arch}", ptxas.display());
    for arg in extra_args {
        command.push(' ');
        command.push_str(arg);
    }
    let mut message = format!("`{command}` rejected {}:\n{log}", ptx_file.display());
    if log.contains("Unsupported .version") {
        message.push_str(
            "(this ptxas is older than the PTX ISA version of the file; the fixtures need \
             a CUDA 13.5 or later ptxas: run `cargo xtask ptx-tools` without DPL_PTXAS)\n",
        );
    }
    Err(message)
}

/// Folder of the PTX fixtures of dpl-sim.
fn fixtures_dir() -> PathBuf {
    repo_root().join("dpl-sim").join("fixtures")
}

/// Assembles the PTX fixtures (every `dpl-sim/fixtures/*.ptx`, or the files given as
/// arguments) with `ptxas -arch=sm_80`, and fails with ptxas's output for each one that
/// does not assemble. With `--res-usage`, also prints `cuobjdump -res-usage` of each.
pub fn check_fixtures(args: &[String]) -> Result<(), String> {
    let res_usage = args.iter().any(|a| a == "--res-usage");
    let args: Vec<&String> = args.iter().filter(|a| *a != "--res-usage").collect();
    if let Some(flag) = args.iter().find(|a| a.starts_with('-')) {
        return Err(format!(
            "check-fixtures: unknown option {flag} (usage: cargo xtask check-fixtures \
             [--res-usage] [FILE.ptx ...])"
        ));
    }
    let files: Vec<PathBuf> = if args.is_empty() {
        let dir = fixtures_dir();
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(format!("no .ptx fixtures in {}", dir.display()));
        }
        files
    } else {
        args.iter().map(PathBuf::from).collect()
    };
    let mut failures = Vec::new();
    for file in &files {
        match ptxas_check(file, "sm_80", &[]) {
            Ok(_) if res_usage => {
                println!("ok      {}", file.display());
                print!("{}", resource_usage(file, "sm_80")?);
            }
            Ok(_) => println!("ok      {}", file.display()),
            Err(e) => {
                println!("FAILED  {}", file.display());
                failures.push(e);
            }
        }
    }
    if failures.is_empty() {
        println!("ptxas assembled all {} fixtures for sm_80", files.len());
        Ok(())
    } else {
        Err(format!(
            "{} of {} fixtures did not assemble:\n\n{}",
            failures.len(),
            files.len(),
            failures.join("\n")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_ptx_isa_version() {
        assert_eq!(
            ptx_isa_version("//\n.version 9.5\n.target sm_80\n"),
            Some((9, 5))
        );
        assert_eq!(ptx_isa_version("  .version 8.0 \n"), Some((8, 0)));
        assert_eq!(ptx_isa_version(".target sm_80\n"), None);
        assert_eq!(ptx_isa_version(".version nine\n"), None);
    }

    #[test]
    fn picks_the_assembler_by_isa_version() {
        let dir = std::env::temp_dir().join(format!("dpl-xtask-ptxas-for-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(ptxas_for(&dir, ".version 9.5"), dir.join(PTXAS));
        std::fs::write(dir.join(PTXAS_CUDA13), b"").unwrap();
        assert_eq!(ptxas_for(&dir, ".version 9.5"), dir.join(PTXAS_CUDA13));
        assert_eq!(ptxas_for(&dir, ".version 8.8"), dir.join(PTXAS));
        assert_eq!(ptxas_for(&dir, "no version"), dir.join(PTXAS));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// The architectures every generated kernel is assembled for.
pub const ARCHS: [&str; 3] = ["sm_70", "sm_80", "sm_90"];

/// What ptxas reports about one kernel for one architecture.
#[derive(Clone, Debug, Default)]
pub struct KernelUsage {
    pub registers: u32,
    pub spill_bytes: u32,
    pub shared_bytes: u32,
}

/// Parses `ptxas -v` output: `Compiling entry function 'k' for 'sm_80'` followed by
/// `Used N registers, ...` and `N bytes spill stores, N bytes spill loads`.
pub fn parse_usage(log: &str) -> Vec<(String, KernelUsage)> {
    let mut out: Vec<(String, KernelUsage)> = Vec::new();
    let number_before = |line: &str, unit: &str| -> Option<u32> {
        let at = line.find(unit)?;
        line[..at].split_whitespace().last()?.parse().ok()
    };
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            out.push((name, KernelUsage::default()));
        } else if let Some((_, u)) = out.last_mut() {
            if line.contains("Used") {
                u.registers = number_before(line, " registers").unwrap_or(0);
                u.shared_bytes = number_before(line, " bytes smem").unwrap_or(0);
            }
            if line.contains("spill stores") {
                u.spill_bytes = number_before(line, " bytes spill stores").unwrap_or(0)
                    + number_before(line, " bytes spill loads").unwrap_or(0);
            }
        }
    }
    out
}

/// Assembles every PTX file `DPL_DUMP` left under `dump` (one folder per crate, one file
/// per `#[parallel]` function) for [`ARCHS`] with
/// `-Werror --warn-on-spills -v`, and writes the register
/// report `report` (Markdown: one row per kernel). Fails listing every file ptxas rejects.
pub fn check_dump(dump: &Path, report: &Path) -> Result<(), String> {
    let (mut files, mut not_compiled) = (Vec::new(), Vec::new());
    if dump.exists() {
        collect_files(dump, &mut |p| {
            if p.extension().is_some_and(|e| e == "ptx") {
                files.push(p.to_path_buf());
            } else if p.to_string_lossy().ends_with(".not-compiled.txt") {
                not_compiled.push(p.to_path_buf());
            }
        })?;
    }
    files.sort();
    not_compiled.sort();
    if files.is_empty() {
        return Err(format!(
            "no generated PTX under {} (was the test build made with DPL_DUMP and the `sim` feature?)",
            dump.display()
        ));
    }
    let mut failures = Vec::new();
    let mut rows = Vec::new();
    for f in &files {
        let mut per_arch = Vec::new();
        for arch in ARCHS {
            match ptxas_check(f, arch, &["-Werror", "--warn-on-spills", "-v"]) {
                Ok(log) => per_arch.push(parse_usage(&log)),
                Err(e) => {
                    failures.push(e);
                    per_arch.push(Vec::new());
                }
            }
        }
        let rel = f.strip_prefix(dump).unwrap_or(f).display().to_string();
        for (k, (kernel, u70)) in per_arch[0].iter().enumerate() {
            let regs = |a: usize| {
                per_arch[a]
                    .iter()
                    .find(|(n, _)| n == kernel)
                    .map_or_else(|| "-".to_string(), |(_, u)| u.registers.to_string())
            };
            rows.push(format!(
                "| {} | `{kernel}` | {} | {} | {} | {} | {} |",
                if k == 0 { rel.as_str() } else { "" },
                u70.registers,
                regs(1),
                regs(2),
                u70.shared_bytes,
                u70.spill_bytes
            ));
        }
    }
    let kernels = rows.len();
    let mut text = format!(
        "# Generated kernels: ptxas report\n\n\
         Written by `cargo xtask test` (from the PTX that `DPL_DUMP` wrote while the test \
         suite was built). Every kernel is assembled for {} with `-Werror --warn-on-spills \
         -v` (local memory only where declared: a thread's lanes of an ordered reduction). {} files, {kernels} kernels, {} rejected.\n\n\
         | function | kernel | regs sm_70 | regs sm_80 | regs sm_90 | smem bytes (sm_70) | spill bytes (sm_70) |\n\
         |---|---|---|---|---|---|---|\n",
        ARCHS.join(", "),
        files.len(),
        failures.len()
    );
    for r in rows {
        text.push_str(&r);
        text.push('\n');
    }
    text.push_str(&not_compiled_section(dump, &not_compiled)?);
    std::fs::write(report, text).map_err(|e| format!("cannot write {}: {e}", report.display()))?;
    println!(
        "xtask: ptxas accepted {} of {} generated PTX files ({kernels} kernels) for {}; report in {}",
        files.len() - failures.len().min(files.len()),
        files.len(),
        ARCHS.join(", "),
        report.display()
    );
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

/// The report's list of the functions the GPU backend did not compile (their calls on a GPU
/// place run on the CPU), one row per function with the reason `DPL_DUMP` recorded.
fn not_compiled_section(dump: &Path, files: &[PathBuf]) -> Result<String, String> {
    let mut text = format!(
        "\n## Functions not compiled for the GPU\n\n\
         {} function(s) of the test build run on the CPU when a GPU place is asked for; \
         each says why.\n\n",
        files.len()
    );
    if files.is_empty() {
        return Ok(text);
    }
    text.push_str("| function | reason |\n|---|---|\n");
    for f in files {
        let reason =
            std::fs::read_to_string(f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        let rel = f.strip_prefix(dump).unwrap_or(f).display().to_string();
        let name = rel.trim_end_matches(".not-compiled.txt");
        text.push_str(&format!(
            "| {name} | {} |\n",
            reason.replace('|', "\\|").replace('\n', " ")
        ));
    }
    Ok(text)
}

#[cfg(test)]
mod usage_tests {
    use super::*;

    #[test]
    fn parses_ptxas_verbose_output() {
        let log = "ptxas info    : 0 bytes gmem\n\
                   ptxas info    : Compiling entry function 'dpl_f_k0_map' for 'sm_80'\n\
                   ptxas info    : Function properties for dpl_f_k0_map\n\
                   \x20   0 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n\
                   ptxas info    : Used 12 registers, 1024 bytes smem, 380 bytes cmem[0]\n\
                   ptxas info    : Compiling entry function 'dpl_f_k1_reduce' for 'sm_80'\n\
                   ptxas info    : Used 30 registers, 372 bytes cmem[0]\n";
        let u = parse_usage(log);
        assert_eq!(u.len(), 2);
        assert_eq!(u[0].0, "dpl_f_k0_map");
        assert_eq!(
            (u[0].1.registers, u[0].1.spill_bytes, u[0].1.shared_bytes),
            (12, 12, 1024)
        );
        assert_eq!((u[1].0.as_str(), u[1].1.registers), ("dpl_f_k1_reduce", 30));
    }
}
