//! dpl next to NVIDIA's CUB on a real GPU: `cargo xtask gpu-bench`, `gpu-pack` and
//! `gpu-record`.
//!
//! * `gpu-bench [--dry-run] [program arguments]` installs a CUDA toolkit from PyPI under
//!   `target/gpu-bench/cuda` (once), compiles `benches/gpu/cub_bench.cu` (CUB's reduce, scan
//!   and radix sort and a triad kernel behind a C interface) into
//!   `target/gpu-bench/libdpl_cub_bench.so`, builds `examples/gpu_bench.rs` (release,
//!   `--features cuda`) and runs it. Without a GPU the program says so and nothing is
//!   measured; `--dry-run` builds it with the simulator too and runs the whole pipeline on
//!   `Place::Sim` at small sizes (plain Rust in CUB's place), which checks everything but
//!   the timings here.
//! * `gpu-pack` builds everything a GPU machine needs into `target/device-pack/` (the
//!   benchmark and its library, the release test binaries with `--features cuda`, the
//!   demo, and `run.sh` from `scripts/gpu-device-run.sh`), small enough to travel with the
//!   working tree (64 MiB in all), and prints the command that runs it there.
//! * `gpu-record <dir>` writes what that run returned (`gpu-bench.md`, `summary.md`,
//!   `demo.txt`) into BENCHMARKS.md's real-GPU section, newest run first, older runs kept.
//!
//! The toolkit: CUDA 13.0's PyPI wheels (`nvidia-cuda-nvcc`, `-crt`, `nvidia-nvvm`,
//! `nvidia-cuda-runtime`, `nvidia-cuda-cccl`). CUDA 12's `nvidia-cuda-nvcc-cu12` wheel holds
//! only ptxas and libnvvm (no `nvcc` driver, no `cicc`), so it cannot compile CUDA C++; the
//! CUDA 13 wheels split the compiler over those five and install into one tree
//! (`nvidia/cu13`). 13.0 is the release of the device machines' driver (580): the library
//! carries sm_90 machine code plus compute_90 PTX, and PTX from a newer toolkit would be
//! too new for that driver to compile. The runtime is linked statically, so the library
//! needs only the driver where it runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::{GPU_END as END, GPU_START as START};
use crate::ptx;

/// Release of the compiler wheels (`nvidia-cuda-nvcc`, `nvidia-cuda-crt`, `nvidia-nvvm`).
const COMPILER_RELEASE: &str = "13.0.88";
/// Release of the runtime wheel (`nvidia-cuda-runtime`).
const RUNTIME_RELEASE: &str = "13.0.96";
/// Release of the CUB/Thrust headers (`nvidia-cuda-cccl`).
const CCCL_RELEASE: &str = "13.0.85";

/// The CUDA source of the baselines, relative to the repository root.
const SOURCE: &str = "benches/gpu/cub_bench.cu";
/// The library's file name (what `examples/gpu_bench.rs` loads).
const LIBRARY: &str = "libdpl_cub_bench.so";
/// The device script, relative to the repository root.
const DEVICE_SCRIPT: &str = "scripts/gpu-device-run.sh";

/// nvcc's arguments besides the include and library folders: a shared library with the
/// runtime inside, exporting only the `dcb_*` entry points, with sm_90 (H100, H200)
/// machine code and compute_90 PTX that newer GPUs' drivers compile.
const NVCC_FLAGS: &[&str] = &[
    "-O3",
    "-std=c++17",
    "-shared",
    "-Xcompiler",
    "-fPIC,-fvisibility=hidden",
    "-cudart",
    "static",
    "-gencode",
    "arch=compute_90,code=sm_90",
    "-gencode",
    "arch=compute_90,code=compute_90",
];

/// Suites whose GPU variants run with `--ignored gpu` (one `gpu` test per check).
const GPU_SUITES: &[&str] = &[
    "conformance",
    "conformance_nested",
    "sort",
    "stencil",
    "sim_forms",
    "errors_runtime",
];

/// Suites that loop over `available_places()`, run whole with the GPU among the places
/// (`DPL_TEST_GPU=1`). (`gpu_residency`, `gpu_io` and `gpu_io_nested` test `Place::Sim`
/// only: nothing of them runs on a device.)
const PLACE_SUITES: &[&str] = &[
    "errors_runtime",
    "gpu_fallback",
    "index_bounds",
    "nested_smoke",
    "differential",
    "differential_nested",
    "example_pcg",
    "example_spmv",
    "example_svm",
    "example_ragged",
    "example_mandelbrot",
    "differential_types",
    "sparse_rows",
    "structure_nested",
    "reproducible",
];

/// What travels to the device machine at most: the working tree and the carried paths.
const TRAVEL_LIMIT: u64 = 64 << 20;

/// `cargo xtask gpu-bench [--dry-run] [program arguments]`.
pub fn bench(args: &[String]) -> Result<(), String> {
    let root = ptx::repo_root();
    let dry_run = args.iter().any(|a| a == "--dry-run");
    let features = if dry_run { "cuda,sim" } else { "cuda" };
    if !dry_run {
        library(&root)?;
    }
    let program = build_program(&root, features)?;
    println!("xtask: running {}", program.display());
    let status = Command::new(&program)
        .args(args)
        .current_dir(&root)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    match status.code() {
        Some(0) => Ok(()),
        Some(2) if !dry_run => {
            println!(
                "xtask: built {} and target/gpu-bench/{LIBRARY}, but they cannot run here (see \
                 above): nothing was measured. `cargo xtask gpu-bench --dry-run` runs the \
                 pipeline on the simulated GPU; `cargo xtask gpu-pack` prepares the run for a \
                 GPU machine.",
                program.display()
            );
            Ok(())
        }
        _ => Err(format!("{} failed ({status})", program.display())),
    }
}

/// `cargo xtask gpu-pack`: builds and packs the device run into `target/device-pack`.
pub fn pack(args: &[String]) -> Result<(), String> {
    if let Some(a) = args.first() {
        return Err(format!("gpu-pack takes no arguments (got `{a}`)"));
    }
    let root = ptx::repo_root();
    let lib = library(&root)?;
    let bench = build_program(&root, "cuda")?;
    let demo = build_example(&root, "demo", "cuda", None)?;
    let mut suites: Vec<&str> = GPU_SUITES.to_vec();
    suites.extend(PLACE_SUITES.iter().filter(|s| !GPU_SUITES.contains(s)));
    let mut tests = test_binaries(&root, &["-p", "dpl", "--features", "cuda"], &suites)?;
    tests.extend(test_binaries(
        &root,
        &["-p", "dpl-cuda", "--features", "cuda"],
        &["cuda_driver"],
    )?);

    let pack = root.join("target").join("device-pack");
    ptx::remove_if_present(&pack)?;
    let bin = pack.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    copy(&lib, &bin.join(LIBRARY))?;
    // Stripped and compressed (run.sh decompresses them): what travels is about a quarter.
    for (name, exe) in [("gpu_bench", &bench), ("demo", &demo)]
        .into_iter()
        .chain(tests.iter().map(|(n, p)| (n.as_str(), p)))
    {
        let dest = bin.join(name);
        copy(exe, &dest)?;
        run(Command::new("strip").arg("--strip-all").arg(&dest))?;
        run(Command::new("xz").args(["-6", "-T0", "--force"]).arg(&dest))?;
    }
    copy(&root.join(DEVICE_SCRIPT), &pack.join("run.sh"))?;
    write(&pack.join("gpu-tests.txt"), &lines(GPU_SUITES))?;
    write(&pack.join("place-tests.txt"), &lines(PLACE_SUITES))?;

    let tree = working_tree_bytes(&root)?;
    let size = folder_bytes(&pack)?;
    if tree + size > TRAVEL_LIMIT {
        return Err(format!(
            "the pack ({} MiB) and the working tree ({} MiB) exceed the {} MiB that travel",
            size >> 20,
            tree >> 20,
            TRAVEL_LIMIT >> 20
        ));
    }
    let manifest = format!(
        "dpl device pack, commit {}\n\nRun on the GPU machine (from the repository root; the \
         folder target/device-pack carried):\n\n    bash target/device-pack/run.sh\n\n\
         with OUT set to the folder for the results. Files:\n{}",
        commit(&root),
        listing(&pack)?
    );
    write(&pack.join("MANIFEST.txt"), &manifest)?;
    println!("{manifest}");
    println!(
        "xtask: packed {} MiB into {} (the working tree adds {} MiB; {} MiB travel at most)",
        size >> 20,
        pack.display(),
        tree >> 20,
        TRAVEL_LIMIT >> 20
    );
    Ok(())
}

/// `cargo xtask gpu-record <dir>`: the results of a device run into BENCHMARKS.md.
pub fn record(args: &[String]) -> Result<(), String> {
    let [dir] = args else {
        return Err("usage: cargo xtask gpu-record <folder holding gpu-bench.md>".into());
    };
    let dir = Path::new(dir);
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
    let bench = read("gpu-bench.md").ok_or(format!(
        "{} holds no gpu-bench.md: give the folder the device run's files came back to",
        dir.display()
    ))?;
    let run = run_section(
        &bench,
        read("summary.md").as_deref(),
        read("demo.txt").as_deref(),
    )?;
    let path = ptx::repo_root().join("BENCHMARKS.md");
    let old = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let new = insert_run(&old, &run)?;
    std::fs::write(&path, new).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("xtask: recorded the run in {}", path.display());
    Ok(())
}

/// Closes one recorded run inside the section.
const RUN_END: &str = "<!-- gpu-run:end -->";

/// One recorded run: a heading with the date and device, the benchmark's report, the
/// steps' summary and the demo's resident programs. The report's first line (`<!--
/// gpu-bench DATE COMMIT DEVICE -->`) identifies the run.
fn run_section(bench: &str, summary: Option<&str>, demo: Option<&str>) -> Result<String, String> {
    let (id, body) = bench
        .split_once('\n')
        .filter(|(first, _)| first.starts_with("<!-- gpu-bench ") && first.ends_with(" -->"))
        .ok_or(
            "gpu-bench.md does not start with its `<!-- gpu-bench DATE COMMIT DEVICE -->` line",
        )?;
    let mut words = id["<!-- gpu-bench ".len()..id.len() - " -->".len()].split_whitespace();
    let date = words.next().unwrap_or_default();
    let _commit = words.next();
    let device = words.collect::<Vec<_>>().join(" ");
    if device.contains("(dry run)") {
        return Err("gpu-bench.md is a dry run's (on the simulator): nothing to record".into());
    }
    let mut out = format!(
        "{id}\n### {date}, {device}: dpl next to CUB (`cargo xtask gpu-pack`, recorded by \
         `cargo xtask gpu-record`)\n\n{}\n",
        body.trim()
    );
    if let Some(summary) = summary {
        out.push_str(&format!(
            "\n**The device run's steps** (`target/device-pack/run.sh`: the GPU variants of \
             the tests, the suites with the GPU among their places, the CUDA driver's tests, \
             the demo):\n\n{}\n",
            summary.trim()
        ));
    }
    if let Some(lines) = demo.and_then(resident_lines) {
        out.push_str(&format!(
            "\n**Demo** (`DEMO_N=2^24`), data kept on the device:\n\n```text\n{lines}\n```\n"
        ));
    }
    out.push_str(RUN_END);
    out.push('\n');
    Ok(out)
}

/// The demo's lines about programs on device-resident data (its block that begins "On
/// Gpu(..) with the data kept on the device").
fn resident_lines(demo: &str) -> Option<String> {
    let mut lines = demo
        .lines()
        .skip_while(|l| !l.contains("data kept on the device"));
    let first = lines.next()?;
    let rest: Vec<&str> = lines.take_while(|l| !l.trim().is_empty()).collect();
    Some(
        std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// BENCHMARKS.md with `run` at the top of the real-GPU section (after its heading), or in
/// place of the run with the same first line recorded before.
fn insert_run(old: &str, run: &str) -> Result<String, String> {
    let id = run.lines().next().unwrap_or_default();
    let (s, e) = match (old.find(START), old.find(END)) {
        (Some(s), Some(e)) if e > s => (s, e),
        _ => return Err(format!("BENCHMARKS.md has no {START} ... {END} section")),
    };
    let section = &old[s..e];
    if let Some(at) = section.find(id) {
        let stop = section[at..]
            .find(RUN_END)
            .map(|k| at + k + RUN_END.len())
            .ok_or(format!("the recorded run `{id}` has no {RUN_END}"))?;
        let stop = stop + usize::from(section[stop..].starts_with('\n'));
        return Ok(format!("{}{run}{}", &old[..s + at], &old[s + stop..]));
    }
    // After the section's heading line and the paragraph under it.
    let heading_end = section
        .find("\n## ")
        .map(|h| h + 1)
        .and_then(|h| section[h..].find("\n\n").map(|k| h + k + 2))
        .and_then(|p| section[p..].find("\n\n").map(|k| p + k + 2))
        .ok_or("the real-GPU section has no `## ` heading followed by a paragraph")?;
    Ok(format!(
        "{}{run}\n{}",
        &old[..s + heading_end],
        &old[s + heading_end..]
    ))
}

/// Installs the toolkit (once) and compiles the library when its source is newer (or the
/// flags changed); returns the library's path.
fn library(root: &Path) -> Result<PathBuf, String> {
    let cuda = toolkit(root)?;
    let out_dir = root.join("target").join("gpu-bench");
    let lib = out_dir.join(LIBRARY);
    let source = root.join(SOURCE);
    let args: Vec<String> = NVCC_FLAGS
        .iter()
        .map(|s| s.to_string())
        .chain([
            format!("-I{}", cuda.join("include").display()),
            "-isystem".into(),
            cuda.join("include").join("cccl").display().to_string(),
            format!("-L{}", cuda.join("lib").display()),
            "-o".into(),
            lib.display().to_string(),
            source.display().to_string(),
        ])
        .collect();
    let stamp = out_dir.join("nvcc-command.txt");
    let command = args.join(" ");
    let modified = |p: &Path| p.metadata().and_then(|m| m.modified()).ok();
    let fresh = matches!((modified(&lib), modified(&source)), (Some(l), Some(s)) if l >= s)
        && std::fs::read_to_string(&stamp).is_ok_and(|c| c == command);
    if fresh {
        return Ok(lib);
    }
    let nvcc = cuda.join("bin").join("nvcc");
    println!("xtask: compiling {SOURCE} with CUB (a minute or two)");
    let output = Command::new(&nvcc)
        .args(&args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    if !output.status.success() {
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let hint = if log.contains("failed to preprocess host compiler properties")
            || log.contains("g++: not found")
            || log.contains("No such file or directory")
        {
            "\n(nvcc compiles the host code with g++: install it, e.g. `apt-get install g++`)"
        } else {
            ""
        };
        return Err(format!("nvcc failed on {SOURCE}:\n{log}{hint}"));
    }
    write(&stamp, &command)?;
    Ok(lib)
}

/// The toolkit's folder (`nvidia/cu13` of the installed wheels), installed if needed.
fn toolkit(root: &Path) -> Result<PathBuf, String> {
    let parent = root.join("target").join("gpu-bench");
    let cuda = parent.join("cuda").join("nvidia").join("cu13");
    let complete = |cuda: &Path| {
        let nvcc = Command::new(cuda.join("bin").join("nvcc"))
            .arg("--version")
            .output();
        let release = COMPILER_RELEASE.rsplit_once('.').map_or("", |(r, _)| r);
        nvcc.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(&format!("V{release}")))
            && cuda.join("nvvm").join("bin").join("cicc").exists()
            && cuda.join("lib").join("libcudart_static.a").exists()
            && cuda
                .join("include")
                .join("cccl")
                .join("cub")
                .join("cub.cuh")
                .exists()
    };
    if complete(&cuda) {
        return Ok(cuda);
    }
    let packages = [
        format!("nvidia-cuda-nvcc=={COMPILER_RELEASE}"),
        format!("nvidia-cuda-crt=={COMPILER_RELEASE}"),
        format!("nvidia-nvvm=={COMPILER_RELEASE}"),
        format!("nvidia-cuda-runtime=={RUNTIME_RELEASE}"),
        format!("nvidia-cuda-cccl=={CCCL_RELEASE}"),
    ];
    ptx::pip_install(
        &parent,
        "cuda",
        &packages,
        "The CUB baselines cannot be built without these wheels.",
    )?;
    if complete(&cuda) {
        Ok(cuda)
    } else {
        Err(format!(
            "installed {} but {} does not hold a working nvcc {COMPILER_RELEASE}, cicc, the \
             static runtime and CUB",
            packages.join(" "),
            cuda.display()
        ))
    }
}

/// Builds `examples/gpu_bench.rs` with `features`, stamped with the commit.
fn build_program(root: &Path, features: &str) -> Result<PathBuf, String> {
    build_example(root, "gpu_bench", features, Some(&commit(root)))
}

/// Builds an example in release; returns the executable.
fn build_example(
    root: &Path,
    name: &str,
    features: &str,
    commit: Option<&str>,
) -> Result<PathBuf, String> {
    let mut command = cargo(root);
    command.args([
        "build",
        "--release",
        "--features",
        features,
        "--example",
        name,
    ]);
    if let Some(c) = commit {
        command.env("DPL_BENCH_COMMIT", c);
    }
    run(&mut command)?;
    Ok(root
        .join("target")
        .join("release")
        .join("examples")
        .join(name))
}

/// Builds the test targets `names` of the package selected by `selection` (release, no
/// run) and returns each one's name and executable, from cargo's JSON messages.
fn test_binaries(
    root: &Path,
    selection: &[&str],
    names: &[&str],
) -> Result<Vec<(String, PathBuf)>, String> {
    let mut command = cargo(root);
    command
        .args([
            "test",
            "--release",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .args(selection);
    for n in names {
        command.args(["--test", n]);
    }
    let output = command
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("building the tests {names:?} failed"));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let found = test_executables(&stdout);
    let mut out = Vec::new();
    for n in names {
        let exe = found
            .iter()
            .find(|(name, _)| name == n)
            .ok_or(format!("cargo built no executable for the test `{n}`"))?;
        out.push((exe.0.clone(), PathBuf::from(&exe.1)));
    }
    Ok(out)
}

/// The (target name, executable) of every test artifact in cargo's JSON messages.
fn test_executables(json_lines: &str) -> Vec<(String, String)> {
    json_lines
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let target = m.get("target")?;
            let is_test = target["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "test"));
            let name = target.get("name")?.as_str()?;
            let exe = m.get("executable")?.as_str()?;
            is_test.then(|| (name.to_string(), exe.to_string()))
        })
        .collect()
}

/// `cargo` (the one running xtask) in the repository root.
fn cargo(root: &Path) -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root);
    c
}

/// Runs `command`, an error when it fails.
fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed ({status})"))
    }
}

/// The short commit hash of HEAD, with `-dirty` when the tree has changes.
fn commit(root: &Path) -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(root)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let hash = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    if dirty { format!("{hash}-dirty") } else { hash }
}

/// The bytes of the files that travel with the working tree (tracked, and untracked but
/// not ignored).
fn working_tree_bytes(root: &Path) -> Result<u64, String> {
    let output = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    Ok(output
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| {
            root.join(String::from_utf8_lossy(p).as_ref())
                .metadata()
                .ok()
        })
        .map(|m| m.len())
        .sum())
}

/// The bytes of the files under `dir`.
fn folder_bytes(dir: &Path) -> Result<u64, String> {
    Ok(files(dir)?.iter().map(|(_, len)| len).sum())
}

/// Every file under `dir` with its size, sorted by path.
fn files(dir: &Path) -> Result<Vec<(PathBuf, u64)>, String> {
    let mut out = Vec::new();
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            out.extend(files(&path)?);
        } else {
            let len = path.metadata().map_err(|e| e.to_string())?.len();
            out.push((path, len));
        }
    }
    out.sort();
    Ok(out)
}

/// `dir`'s files and sizes, one a line.
fn listing(dir: &Path) -> Result<String, String> {
    Ok(files(dir)?
        .iter()
        .map(|(p, len)| {
            let rel = p.strip_prefix(dir).unwrap_or(p);
            format!(
                "  {:>8.1} MiB  {}\n",
                *len as f64 / f64::from(1 << 20),
                rel.display()
            )
        })
        .collect())
}

fn lines(items: &[&str]) -> String {
    items.iter().map(|s| format!("{s}\n")).collect()
}

fn copy(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BENCH: &str = "<!-- gpu-bench 2026-11-27 abc1234 NVIDIA H200 -->\n\
        **dpl next to CUB** (2026-11-27; `examples/gpu_bench.rs`, commit abc1234). NVIDIA \
        H200: compute capability 9.0, 132 multiprocessors.\n\n| operation | n |\n|---|---:|\n";

    #[test]
    fn test_executables_are_read_from_cargo_messages() {
        let json = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///r#dpl@0.1.0","#,
            r#""target":{"kind":["test"],"crate_types":["bin"],"name":"sort","src_path":"/r/tests/sort.rs"},"#,
            r#""executable":"/r/target/release/deps/sort-0a1b","fresh":true}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"dpl"},"executable":null}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(
            test_executables(json),
            vec![(
                "sort".to_string(),
                "/r/target/release/deps/sort-0a1b".to_string()
            )]
        );
    }

    #[test]
    fn a_run_is_recorded_newest_first_and_replaced_when_recorded_again() {
        let old = format!(
            "# B\n\n{START}\n## On a real GPU\n\nIntro paragraph.\n\n### 2026-11-22, NVIDIA \
             H100\n\nold run\n{END}\ntail\n"
        );
        let demo = "dpl demonstration\n\nOn Gpu(0) with the data kept on the device:\nsaxpy  ok  \
                    129 us\nsum  ok  99 us\n\nlater\n";
        let run = run_section(BENCH, Some("| step | status |\n"), Some(demo)).unwrap();
        assert!(
            run.contains("### 2026-11-27, NVIDIA H200: dpl next to CUB"),
            "{run}"
        );
        assert!(
            run.contains("saxpy  ok  129 us\nsum  ok  99 us\n```"),
            "{run}"
        );
        assert!(!run.contains("later"), "{run}");
        let once = insert_run(&old, &run).unwrap();
        let at_new = once.find("### 2026-11-27").unwrap();
        assert!(once.find("Intro paragraph.").unwrap() < at_new);
        assert!(at_new < once.find("### 2026-11-22").unwrap());
        assert!(once.ends_with(&format!("old run\n{END}\ntail\n")), "{once}");
        // Recording the same run again replaces it.
        let again = insert_run(&once, &run.replace("99 us", "98 us")).unwrap();
        assert_eq!(again.matches("### 2026-11-27").count(), 1, "{again}");
        assert!(
            again.contains("98 us") && !again.contains("99 us"),
            "{again}"
        );
        assert_eq!(again.len(), once.len());
    }

    #[test]
    fn a_report_without_its_first_line_or_of_a_dry_run_is_refused() {
        assert!(run_section("| table |\n", None, None).is_err());
        let dry = "<!-- gpu-bench 2026-11-27 abc1234 the simulated GPU (dry run) -->\n| t |\n";
        assert!(run_section(dry, None, None).is_err());
        assert!(insert_run("# B\n", "x\n").is_err());
    }
}
