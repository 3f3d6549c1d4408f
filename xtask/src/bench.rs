//! Benchmark reports: `cargo xtask bench-report` runs the criterion benchmarks (or reads
//! the results of an earlier run) and writes `BENCHMARKS.md` at the repository root, with
//! a plot, `benches/ratios.svg`.
//!
//! # Naming scheme (every benchmark that wants to be in the report follows it)
//!
//! * One criterion **group per case and size**: `group_id = "<case>/<size>"`, e.g.
//!   `reduce_sum_f32/2^20`, `pipe_norm_f32/2^26`, `map_saxpy_f32/1000`. `<case>` is
//!   `snake_case` and names the operation and element type; `<size>` is `2^k` or a plain
//!   element count. Cases of real `#[parallel]` functions (root `benches/`) use the same
//!   scheme, e.g. `spmv_csr_f32/2^20`.
//! * **Function ids** inside a group: `dpl` (the dpl code: a runtime helper called as
//!   generated code calls it, or a `#[parallel]` function), `rayon` (what a user would write
//!   by hand with rayon), `seq` (plain sequential Rust), and for streaming cases
//!   `ceiling` (a hand-tuned kernel of the same memory access pattern: what the machine
//!   allows). Any other id is listed but not compared.
//! * **Throughput** is set per function as `Throughput::Bytes(algorithm bytes)`: inputs
//!   read once plus outputs written once. GB/s then compare across functions, also when a
//!   `ceiling` kernel moves different bytes than the case (it may set its own).
//!
//! The report compares, per group: `rayon / dpl` and `seq / dpl` (time ratios: above 1 means
//! dpl is faster) and `dpl of ceiling` (GB/s of dpl over GB/s of the ceiling). It lists the
//! groups that miss the targets: dpl at least as fast as rayon; streaming cases at 2^26
//! within 10% of the ceiling; 1,000-element cases no slower than `seq` by more than one
//! call's cost ([`CALL_COST_NS`]). Explanations for known shortfalls are kept by hand in
//! `benches/notes.md` as lines ``- `case` ...`` or ``- `case/size` ...`` and copied next to
//! each shortfall.
//!
//! Options: `--no-run` (only read results), `--quick` (sets `DPL_BENCH_QUICK=1`: fewer
//! samples), `--max 2^20` (sets `DPL_BENCH_MAX`: cap the sizes), `--filter REGEX` (passed
//! to criterion), `--package P` (repeatable; default: `dpl-cpu` and `dpl`), `--dir DIR`
//! (criterion's output folder; default `$CARGO_TARGET_DIR/criterion` or
//! `target/criterion`), `--out FILE` (default `BENCHMARKS.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What "one call's cost" is for the 1,000-element target: a function call that does
/// nothing but set up a loop, in nanoseconds.
const CALL_COST_NS: f64 = 100.0;

/// Streaming cases at this size must reach this fraction of their ceiling.
const CEILING_SIZE: &str = "2^26";
const CEILING_FRACTION: f64 = 0.9;

/// The packages whose benchmarks are run.
const PACKAGES: [&str; 2] = ["dpl-cpu", "dpl"];

/// Opens a hand-written section of BENCHMARKS.md that the report keeps as it is (the
/// nested examples timed in interleaved rounds: `cargo run --release --example spmv`,
/// `svm`, ...).
const KEPT_START: &str = "<!-- interleaved:start -->";
/// Closes it.
const KEPT_END: &str = "<!-- interleaved:end -->";
/// Opens the hand-written section of measurements on a real GPU (the demo and the test
/// suite run on a device machine), which the report keeps as it is too.
pub const GPU_START: &str = "<!-- real-gpu:start -->";
/// Closes it.
pub const GPU_END: &str = "<!-- real-gpu:end -->";

/// Runs the benchmarks (unless `--no-run`) and writes BENCHMARKS.md and the plot.
pub fn report(args: &[String]) -> Result<(), String> {
    let opts = Options::parse(args)?;
    let root = repo_root()?;
    if opts.run {
        run_benches(&root, &opts)?;
    }
    let dir = opts.dir.clone().unwrap_or_else(|| criterion_dir(&root));
    let results = collect(&dir)?;
    if results.is_empty() {
        return Err(format!("no criterion results under {}", dir.display()));
    }
    let notes = read_notes(&root.join("benches/notes.md"));
    let groups = group_results(results);
    let svg = plot(&groups);
    std::fs::create_dir_all(root.join("benches")).map_err(|e| e.to_string())?;
    std::fs::write(root.join("benches/ratios.svg"), svg)
        .map_err(|e| format!("writing the plot: {e}"))?;
    let mut md = markdown(&groups, &notes);
    let out = root.join(&opts.out);
    // Keep the hand-written sections: the interleaved measurements of the nested examples,
    // those on a real GPU and the GPU proxy (written by `cargo xtask gpu-report`), in that
    // order.
    let old = std::fs::read_to_string(&out).unwrap_or_default();
    for (start, end) in [
        (KEPT_START, KEPT_END),
        (GPU_START, GPU_END),
        (crate::gpu::START, crate::gpu::END),
        (crate::mpi::START, crate::mpi::END),
    ] {
        if let Some(section) = crate::gpu::section_between(&old, start, end) {
            md = crate::gpu::splice_between(&md, section, start, end);
        }
    }
    std::fs::write(&out, md).map_err(|e| format!("writing {}: {e}", out.display()))?;
    println!(
        "wrote {} and benches/ratios.svg from {} groups",
        out.display(),
        groups.len()
    );
    Ok(())
}

/// Command-line options of `bench-report`.
struct Options {
    run: bool,
    quick: bool,
    max: Option<String>,
    filter: Option<String>,
    packages: Vec<String>,
    dir: Option<PathBuf>,
    out: PathBuf,
}

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            run: true,
            quick: false,
            max: None,
            filter: None,
            packages: Vec::new(),
            dir: None,
            out: "BENCHMARKS.md".into(),
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{name} needs a value"))
            };
            match a.as_str() {
                "--no-run" => o.run = false,
                "--quick" => o.quick = true,
                "--max" => o.max = Some(value("--max")?),
                "--filter" => o.filter = Some(value("--filter")?),
                "--package" | "-p" => o.packages.push(value("--package")?),
                "--dir" => o.dir = Some(value("--dir")?.into()),
                "--out" => o.out = value("--out")?.into(),
                other => {
                    return Err(format!(
                        "unknown option `{other}` (bench-report [--no-run] [--quick] [--max 2^K] [--filter REGEX] [--package P]... [--dir DIR] [--out FILE])"
                    ));
                }
            }
        }
        Ok(o)
    }
}

/// The workspace root: the parent of this crate's folder.
fn repo_root() -> Result<PathBuf, String> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "cannot find the repository root".into())
}

/// Where criterion writes: as criterion itself decides (`CARGO_TARGET_DIR`, else the
/// workspace's `target`).
fn criterion_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(t) => root.join(PathBuf::from(t)).join("criterion"),
        None => root.join("target/criterion"),
    }
}

fn run_benches(root: &Path, opts: &Options) -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).arg("bench");
    if opts.packages.is_empty() {
        for p in PACKAGES {
            cmd.args(["-p", p]);
        }
    } else {
        for p in &opts.packages {
            cmd.args(["-p", p]);
        }
    }
    cmd.arg("--benches").arg("--");
    if let Some(f) = &opts.filter {
        cmd.arg(f);
    }
    if opts.quick {
        cmd.env("DPL_BENCH_QUICK", "1");
    }
    if let Some(m) = &opts.max {
        cmd.env("DPL_BENCH_MAX", m);
    }
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run cargo bench: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo bench failed: {status}"))
    }
}

/// One benchmark's result.
#[derive(Clone, Debug)]
struct Measurement {
    group: String,
    function: String,
    /// Median time per iteration, ns.
    median_ns: f64,
    /// 95% confidence interval of the median, ns.
    low_ns: f64,
    high_ns: f64,
    /// Algorithm bytes per iteration, when declared.
    bytes: Option<f64>,
}

impl Measurement {
    fn gbps(&self) -> Option<f64> {
        self.bytes.map(|b| b / self.median_ns)
    }
}

/// Every `new/benchmark.json` (with its `estimates.json`) under `dir`.
fn collect(dir: &Path) -> Result<Vec<Measurement>, String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "new") {
                    if let Some(m) = read_measurement(&p)? {
                        out.push(m);
                    }
                } else if p.file_name().is_none_or(|n| n != "base" && n != "report") {
                    stack.push(p);
                }
            }
        }
    }
    out.sort_by(|a, b| (&a.group, &a.function).cmp(&(&b.group, &b.function)));
    Ok(out)
}

fn read_measurement(new: &Path) -> Result<Option<Measurement>, String> {
    let read = |name: &str| -> Result<Option<json::Value>, String> {
        let p = new.join(name);
        match std::fs::read_to_string(&p) {
            Ok(text) => json::parse(&text)
                .map(Some)
                .map_err(|e| format!("{}: {e}", p.display())),
            Err(_) => Ok(None),
        }
    };
    let (Some(bench), Some(est)) = (read("benchmark.json")?, read("estimates.json")?) else {
        return Ok(None);
    };
    let text =
        |v: &json::Value, k: &str| v.get(k).and_then(json::Value::as_str).map(str::to_string);
    let (Some(group), Some(function)) = (text(&bench, "group_id"), text(&bench, "function_id"))
    else {
        return Ok(None);
    };
    let median = est.get("median");
    let num = |path: &[&str]| {
        let mut v = median?;
        for k in path {
            v = v.get(k)?;
        }
        v.as_f64()
    };
    let (Some(median_ns), Some(low_ns), Some(high_ns)) = (
        num(&["point_estimate"]),
        num(&["confidence_interval", "lower_bound"]),
        num(&["confidence_interval", "upper_bound"]),
    ) else {
        return Err(format!(
            "{}: estimates.json without a median",
            new.display()
        ));
    };
    let bytes = bench
        .get("throughput")
        .and_then(|t| t.get("Bytes"))
        .and_then(json::Value::as_f64);
    Ok(Some(Measurement {
        group,
        function,
        median_ns,
        low_ns,
        high_ns,
        bytes,
    }))
}

/// The functions of one group, and its case and size.
struct Group {
    case: String,
    size: String,
    fns: BTreeMap<String, Measurement>,
}

impl Group {
    fn time(&self, f: &str) -> Option<f64> {
        self.fns.get(f).map(|m| m.median_ns)
    }
    /// `t(other) / t(dpl)`: above 1, dpl is faster.
    fn speedup(&self, other: &str) -> Option<f64> {
        Some(self.time(other)? / self.time("dpl")?)
    }
    /// GB/s of dpl over GB/s of the ceiling.
    fn of_ceiling(&self) -> Option<f64> {
        Some(self.fns.get("dpl")?.gbps()? / self.fns.get("ceiling")?.gbps()?)
    }
    fn name(&self) -> String {
        format!("{}/{}", self.case, self.size)
    }
}

/// A size label's element count (`2^20`, `1000`), for ordering.
fn size_value(s: &str) -> f64 {
    match s.strip_prefix("2^") {
        Some(k) => k.parse::<f64>().map(|k| k.exp2()).unwrap_or(f64::MAX),
        None => s.parse().unwrap_or(f64::MAX),
    }
}

fn group_results(ms: Vec<Measurement>) -> Vec<Group> {
    let mut by: BTreeMap<String, Group> = BTreeMap::new();
    for m in ms {
        let (case, size) = match m.group.rsplit_once('/') {
            Some((c, s)) => (c.to_string(), s.to_string()),
            None => (m.group.clone(), String::new()),
        };
        by.entry(m.group.clone())
            .or_insert_with(|| Group {
                case,
                size,
                fns: BTreeMap::new(),
            })
            .fns
            .insert(m.function.clone(), m);
    }
    let mut groups: Vec<Group> = by.into_values().collect();
    groups.sort_by(|a, b| {
        a.case
            .cmp(&b.case)
            .then(size_value(&a.size).total_cmp(&size_value(&b.size)))
    });
    groups
}

/// `benches/notes.md`: lines ``- `key` text``, key a case or `case/size`.
fn read_notes(path: &Path) -> BTreeMap<String, String> {
    let mut notes = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return notes;
    };
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("- `") else {
            continue;
        };
        if let Some((key, note)) = rest.split_once('`') {
            notes.insert(
                key.to_string(),
                note.trim_start_matches([':', ' ']).trim().to_string(),
            );
        }
    }
    notes
}

fn note_for<'a>(notes: &'a BTreeMap<String, String>, g: &Group) -> Option<&'a str> {
    notes
        .get(&g.name())
        .or_else(|| notes.get(&g.case))
        .map(String::as_str)
}

fn fmt_time(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map_or_else(|| "-".into(), |r| format!("{r:.2}x"))
}

/// A shortfall: which target, by how much.
fn shortfalls(g: &Group) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(r) = g.speedup("rayon")
        && r < 1.0
    {
        out.push(format!("slower than rayon: {r:.2}x"));
    }
    if g.size == CEILING_SIZE
        && let Some(c) = g.of_ceiling()
        && c < CEILING_FRACTION
    {
        out.push(format!(
            "{:.0}% of the ceiling (target {:.0}%)",
            100.0 * c,
            100.0 * CEILING_FRACTION
        ));
    }
    if size_value(&g.size) <= 1000.0
        && let (Some(d), Some(s)) = (g.time("dpl"), g.time("seq"))
        && d > s + CALL_COST_NS
    {
        out.push(format!(
            "{} slower than sequential ({} vs {})",
            fmt_time(d - s),
            fmt_time(d),
            fmt_time(s)
        ));
    }
    out
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {threads} hardware threads")
}

fn markdown(groups: &[Group], notes: &BTreeMap<String, String>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "Generated by `cargo xtask bench-report` from criterion's results (naming scheme and options: \
         `xtask/src/bench.rs`). Machine: {}. Medians; the machine is shared and noisy (the same figure \
         moves ~15-20% between runs), so compare the ratios, which come from one run, rather than \
         absolute times.\n",
        machine()
    );
    let _ = writeln!(
        md,
        "* **vs rayon**, **vs seq**: time of the hand-written rayon / sequential code divided by dpl's \
         (above 1: dpl is faster).\n\
         * **of ceiling**: dpl's GB/s over the GB/s of a hand-tuned kernel of the same access pattern \
         (chunked multi-accumulator read, chunked copy, triad), run in the same group.\n\
         * **GB/s**: algorithm bytes (inputs read once, outputs written once) per second.\n"
    );
    // Summary.
    let with_rayon: Vec<&Group> = groups
        .iter()
        .filter(|g| g.speedup("rayon").is_some())
        .collect();
    let faster = with_rayon
        .iter()
        .filter(|g| g.speedup("rayon").is_some_and(|r| r >= 1.0))
        .count();
    let ceil: Vec<&Group> = groups
        .iter()
        .filter(|g| g.size == CEILING_SIZE && g.of_ceiling().is_some())
        .collect();
    let near = ceil
        .iter()
        .filter(|g| g.of_ceiling().is_some_and(|c| c >= CEILING_FRACTION))
        .count();
    let geo = |v: Vec<f64>| {
        if v.is_empty() {
            None
        } else {
            Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
        }
    };
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(
        md,
        "* {} groups, {} with a rayon baseline: dpl is at least as fast in {faster}.",
        groups.len(),
        with_rayon.len()
    );
    let _ = writeln!(
        md,
        "* Geometric mean speedup over rayon: {} (all sizes), {} (2^26 only).",
        fmt_ratio(geo(with_rayon
            .iter()
            .filter_map(|g| g.speedup("rayon"))
            .collect())),
        fmt_ratio(geo(with_rayon
            .iter()
            .filter(|g| g.size == CEILING_SIZE)
            .filter_map(|g| g.speedup("rayon"))
            .collect()))
    );
    let _ = writeln!(
        md,
        "* Streaming cases at {CEILING_SIZE} within {:.0}% of their ceiling: {near} of {}.",
        100.0 * (1.0 - CEILING_FRACTION),
        ceil.len()
    );
    let _ = writeln!(
        md,
        "\n![dpl against rayon, sequential code and the ceiling](benches/ratios.svg)\n"
    );
    // Tables, one per case.
    let _ = writeln!(md, "## Results\n");
    let _ = writeln!(
        md,
        "| case | size | dpl | rayon | seq | ceiling | dpl GB/s | vs rayon | vs seq | of ceiling |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for g in groups {
        let t = |f: &str| g.time(f).map_or_else(|| "-".into(), fmt_time);
        let gbps = g
            .fns
            .get("dpl")
            .and_then(Measurement::gbps)
            .map_or_else(|| "-".into(), |v| format!("{v:.1}"));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            g.case,
            g.size,
            t("dpl"),
            t("rayon"),
            t("seq"),
            t("ceiling"),
            gbps,
            fmt_ratio(g.speedup("rayon")),
            fmt_ratio(g.speedup("seq")),
            g.of_ceiling()
                .map_or_else(|| "-".into(), |c| format!("{:.0}%", 100.0 * c)),
        );
    }
    // Shortfalls.
    let _ = writeln!(md, "\n## Targets missed\n");
    let _ = writeln!(
        md,
        "Targets: dpl >= 1.0x rayon everywhere; streaming cases at {CEILING_SIZE} within {:.0}% of the ceiling; \
         1,000-element cases no slower than sequential by more than one call ({CALL_COST_NS:.0} ns). A ratio \
         within the confidence intervals of both medians is listed but marked *(noise)*. Explanations come from \
         `benches/notes.md`.\n",
        100.0 * (1.0 - CEILING_FRACTION)
    );
    let mut any = false;
    for g in groups {
        let misses = shortfalls(g);
        if misses.is_empty() {
            continue;
        }
        any = true;
        let noise =
            if overlaps(g, "rayon") && misses.iter().any(|m| m.starts_with("slower than rayon")) {
                " *(noise)*"
            } else {
                ""
            };
        let why = note_for(notes, g).unwrap_or("no explanation recorded yet");
        let _ = writeln!(md, "* `{}`: {}{noise}. {why}", g.name(), misses.join("; "));
    }
    if !any {
        let _ = writeln!(md, "None.");
    }
    md
}

/// Whether the confidence intervals of dpl and `other` overlap.
fn overlaps(g: &Group, other: &str) -> bool {
    match (g.fns.get("dpl"), g.fns.get(other)) {
        (Some(d), Some(o)) => d.low_ns <= o.high_ns && o.low_ns <= d.high_ns,
        _ => false,
    }
}

/// A plotted ratio: legend, colour, value of a group.
type Series = (&'static str, &'static str, fn(&Group) -> Option<f64>);

/// A horizontal bar chart, one row per group, log scale: dpl's speedup over rayon and over
/// sequential code, and its fraction of the ceiling.
fn plot(groups: &[Group]) -> String {
    let rows: Vec<&Group> = groups.iter().filter(|g| g.time("dpl").is_some()).collect();
    let series: [Series; 3] = [
        ("vs rayon", "#1f77b4", |g| g.speedup("rayon")),
        ("vs seq", "#ff7f0e", |g| g.speedup("seq")),
        ("of ceiling", "#2ca02c", Group::of_ceiling),
    ];
    let (label_w, plot_w, bar_h, row_h, top) = (230.0, 560.0, 5.0, 18.0, 40.0);
    let (lo, hi) = (-3.0f64, 6.0f64); // log2 range: 1/8x .. 64x
    let x = |r: f64| label_w + (r.log2().clamp(lo, hi) - lo) / (hi - lo) * plot_w;
    let height = top + row_h * rows.len() as f64 + 30.0;
    let width = label_w + plot_w + 20.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="10">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    for (k, (name, color, _)) in series.iter().enumerate() {
        let lx = label_w + 150.0 * k as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{lx}" y="8" width="10" height="10" fill="{color}"/><text x="{}" y="17">{name}</text>"#,
            lx + 14.0
        );
    }
    for e in (lo as i32)..=(hi as i32) {
        let r = (e as f64).exp2();
        let px = x(r);
        let stroke = if e == 0 { "#000" } else { "#ddd" };
        let _ = writeln!(
            s,
            r#"<line x1="{px}" y1="{}" x2="{px}" y2="{}" stroke="{stroke}"/>"#,
            top - 6.0,
            height - 24.0
        );
        let label = if e >= 0 {
            format!("{}x", 1u64 << e)
        } else {
            format!("1/{}x", 1u64 << -e)
        };
        let _ = writeln!(
            s,
            r#"<text x="{px}" y="{}" text-anchor="middle">{label}</text>"#,
            height - 10.0
        );
    }
    for (i, g) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            label_w - 6.0,
            y + 11.0,
            g.name()
        );
        for (k, (_, color, value)) in series.iter().enumerate() {
            if let Some(r) = value(g) {
                let (a, b) = (x(1.0), x(r));
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="{}" height="{bar_h}" fill="{color}"><title>{} {:.2}x</title></rect>"#,
                    a.min(b),
                    y + 2.0 + bar_h * k as f64,
                    (b - a).abs().max(0.5),
                    g.name(),
                    r
                );
            }
        }
    }
    let _ = writeln!(s, "</svg>");
    s
}

/// A small JSON reader, enough for criterion's files and cargo's messages.
pub mod json {
    /// A JSON value.
    #[derive(Clone, Debug, PartialEq)]
    pub enum Value {
        Null,
        Bool(bool),
        Num(f64),
        Str(String),
        Arr(Vec<Value>),
        Obj(Vec<(String, Value)>),
    }

    impl Value {
        /// The member `key` of an object.
        pub fn get(&self, key: &str) -> Option<&Value> {
            match self {
                Value::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
                _ => None,
            }
        }
        pub fn as_f64(&self) -> Option<f64> {
            if let Value::Num(n) = self {
                Some(*n)
            } else {
                None
            }
        }
        pub fn as_str(&self) -> Option<&str> {
            if let Value::Str(s) = self {
                Some(s)
            } else {
                None
            }
        }
    }

    /// Parses one JSON document.
    pub fn parse(text: &str) -> Result<Value, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("trailing characters at byte {}", p.i));
        }
        Ok(v)
    }

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
        }
        fn err<T>(&self, what: &str) -> Result<T, String> {
            Err(format!("{what} at byte {}", self.i))
        }
        fn eat(&mut self, lit: &str) -> bool {
            if self.s[self.i..].starts_with(lit.as_bytes()) {
                self.i += lit.len();
                true
            } else {
                false
            }
        }
        fn value(&mut self) -> Result<Value, String> {
            self.ws();
            match self.s.get(self.i) {
                None => self.err("unexpected end"),
                Some(b'{') => {
                    self.i += 1;
                    let mut members = Vec::new();
                    self.ws();
                    if self.eat("}") {
                        return Ok(Value::Obj(members));
                    }
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        if !self.eat(":") {
                            return self.err("expected `:`");
                        }
                        members.push((k, self.value()?));
                        self.ws();
                        if self.eat("}") {
                            return Ok(Value::Obj(members));
                        }
                        if !self.eat(",") {
                            return self.err("expected `,` or `}`");
                        }
                    }
                }
                Some(b'[') => {
                    self.i += 1;
                    let mut items = Vec::new();
                    self.ws();
                    if self.eat("]") {
                        return Ok(Value::Arr(items));
                    }
                    loop {
                        items.push(self.value()?);
                        self.ws();
                        if self.eat("]") {
                            return Ok(Value::Arr(items));
                        }
                        if !self.eat(",") {
                            return self.err("expected `,` or `]`");
                        }
                    }
                }
                Some(b'"') => self.string().map(Value::Str),
                Some(_) if self.eat("null") => Ok(Value::Null),
                Some(_) if self.eat("true") => Ok(Value::Bool(true)),
                Some(_) if self.eat("false") => Ok(Value::Bool(false)),
                Some(_) => {
                    let start = self.i;
                    while self.i < self.s.len()
                        && matches!(
                            self.s[self.i],
                            b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                        )
                    {
                        self.i += 1;
                    }
                    let t =
                        std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
                    t.parse()
                        .map(Value::Num)
                        .or_else(|_| self.err("bad number"))
                }
            }
        }
        fn string(&mut self) -> Result<String, String> {
            if !self.eat("\"") {
                return self.err("expected a string");
            }
            let mut out = String::new();
            loop {
                let Some(&c) = self.s.get(self.i) else {
                    return self.err("unterminated string");
                };
                self.i += 1;
                match c {
                    b'"' => return Ok(out),
                    b'\\' => {
                        let Some(&e) = self.s.get(self.i) else {
                            return self.err("unterminated escape");
                        };
                        self.i += 1;
                        match e {
                            b'n' => out.push('\n'),
                            b't' => out.push('\t'),
                            b'r' => out.push('\r'),
                            b'b' => out.push('\u{8}'),
                            b'f' => out.push('\u{c}'),
                            b'u' => {
                                let hex =
                                    self.s.get(self.i..self.i + 4).ok_or("short \\u escape")?;
                                let code = u32::from_str_radix(
                                    std::str::from_utf8(hex).map_err(|e| e.to_string())?,
                                    16,
                                )
                                .map_err(|e| e.to_string())?;
                                self.i += 4;
                                out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                            }
                            other => out.push(other as char),
                        }
                    }
                    _ => {
                        // Copy the whole UTF-8 sequence that starts here.
                        let start = self.i - 1;
                        while self.i < self.s.len() && (self.s[self.i] & 0xc0) == 0x80 {
                            self.i += 1;
                        }
                        out.push_str(
                            std::str::from_utf8(&self.s[start..self.i])
                                .map_err(|e| e.to_string())?,
                        );
                    }
                }
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn parses_criterion_shapes() {
            let v = parse(r#"{"group_id":"reduce_sum_f32/2^20","function_id":"dpl","throughput":{"Bytes":4194304},"x":[1,-2.5e3,true,null],"s":"a\"b\u00e9"}"#).unwrap();
            assert_eq!(
                v.get("group_id").and_then(Value::as_str),
                Some("reduce_sum_f32/2^20")
            );
            assert_eq!(
                v.get("throughput")
                    .and_then(|t| t.get("Bytes"))
                    .and_then(Value::as_f64),
                Some(4194304.0)
            );
            assert_eq!(
                v.get("x"),
                Some(&Value::Arr(vec![
                    Value::Num(1.0),
                    Value::Num(-2500.0),
                    Value::Bool(true),
                    Value::Null
                ]))
            );
            assert_eq!(v.get("s").and_then(Value::as_str), Some("a\"bé"));
            assert!(parse("{\"a\":}").is_err());
            assert!(parse("[1,2").is_err());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(group: &str, function: &str, ns: f64, bytes: f64) -> Measurement {
        Measurement {
            group: group.into(),
            function: function.into(),
            median_ns: ns,
            low_ns: ns * 0.99,
            high_ns: ns * 1.01,
            bytes: Some(bytes),
        }
    }

    #[test]
    fn pairs_functions_and_finds_shortfalls() {
        let groups = group_results(vec![
            m("reduce_sum_f32/2^26", "dpl", 10e6, 256e6),
            m("reduce_sum_f32/2^26", "rayon", 20e6, 256e6),
            m("reduce_sum_f32/2^26", "ceiling", 8e6, 256e6),
            m("reduce_sum_f32/2^16", "dpl", 10e3, 256e3),
            m("reduce_sum_f32/2^16", "rayon", 9e3, 256e3),
            m("map_saxpy_f32/1000", "dpl", 900.0, 12e3),
            m("map_saxpy_f32/1000", "seq", 700.0, 12e3),
        ]);
        let names: Vec<String> = groups.iter().map(Group::name).collect();
        assert_eq!(
            names,
            [
                "map_saxpy_f32/1000",
                "reduce_sum_f32/2^16",
                "reduce_sum_f32/2^26"
            ]
        );
        assert_eq!(groups[2].speedup("rayon"), Some(2.0));
        assert!((groups[2].of_ceiling().unwrap() - 0.8).abs() < 1e-12);
        assert_eq!(shortfalls(&groups[2]), ["80% of the ceiling (target 90%)"]);
        assert_eq!(shortfalls(&groups[1]), ["slower than rayon: 0.90x"]);
        assert_eq!(shortfalls(&groups[0]).len(), 1);
        let mut notes = BTreeMap::new();
        notes.insert("reduce_sum_f32".to_string(), "because.".to_string());
        let md = markdown(&groups, &notes);
        assert!(md.contains("`reduce_sum_f32/2^26`: 80% of the ceiling (target 90%). because."));
        assert!(plot(&groups).starts_with("<svg"));
    }
}
