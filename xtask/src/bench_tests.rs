//! Tests of the benchmark report (`bench.rs`): grouping per primitive, explanations per
//! case, kept sections, the plot and criterion's files.

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

/// Every case of the benchmarks (`dpl-cpu/benches/rt.rs`, `benches/*.rs`) and of
/// BENCHMARKS.md.
const KNOWN: &[&str] = &[
    "check_indices_u32",
    "count_f32",
    "exclusive_scan_i32",
    "filter_f32",
    "gather_random_f32",
    "histogram_u32",
    "map_copy_f32",
    "map_saxpy_f32",
    "pcg_apply_f32",
    "pcg_axpy_f32",
    "pcg_dot_f32",
    "pcg_optical_flow_f32",
    "pcg_precondition_f32",
    "pcg_solve_one_call_f32",
    "permute_f32",
    "pipe_filter_map_f32",
    "pipe_norm_f32",
    "pipe_saxpy_sum_f32",
    "pipe_scan_map_f32",
    "pipe_sum_sq_gather_f32",
    "ragged_account_summary_i64",
    "ragged_balances_i64",
    "ragged_filter_i64",
    "ragged_prefix_sum_i64",
    "ragged_sum_max_i64",
    "reduce_dot_f32",
    "reduce_max_f32",
    "reduce_min_i32",
    "reduce_sum_f32",
    "reduce_sum_f64",
    "scan_sum_f32",
    "scatter_add_f32",
    "scatter_f32",
    "sort_u32",
    "sort_f32",
    "sort_by_key_u32",
    "stencil_blur3_f32",
    "stencil_laplacian_f64",
    "generic_dot_f32",
    "generic_saxpy_f16",
    "generic_clamp_u8",
    "iter_binomial_f64",
    "iter_newton_f64",
    "iter_power_f64",
    "iter_jacobi_f64",
    "spmv_csr_f32_random",
    "spmv_csr_f32_1138_bus",
    "spmv_csr_auto_f32_laplace2d",
    "spmv_csr_block_f32_onelongrow",
    "spmv_ell_f32_ani4",
    "spmv_schedule_f32_powerlaw",
    "svm_kernel_row_d32_f32",
    "svm_smo_100it_f32",
];

#[test]
fn every_case_has_a_section_and_a_title() {
    let keys: Vec<&str> = SECTIONS.iter().map(|s| s.0).collect();
    for case in KNOWN {
        let c = classify(case);
        assert_ne!(c.section, "other", "{case} has no section");
        assert!(c.rank < CASES.len(), "{case} is not in CASES");
        assert_ne!(&c.title, case, "{case} has no title");
    }
    for (pattern, section, _) in CASES {
        assert!(
            keys.contains(section),
            "{pattern}: unknown section {section}"
        );
    }
    for (prefix, section) in PREFIXES {
        assert!(
            keys.contains(section),
            "{prefix}: unknown section {section}"
        );
    }
    let c = classify("spmv_csr_f32_ani4");
    assert_eq!(
        (c.section, c.case.as_str(), c.input.as_deref()),
        ("sparse", "spmv_csr_f32", Some("ani4"))
    );
    assert_eq!(classify("histogram_u32").title, "256-bin histogram");
    assert_eq!(classify("histogram_u32").section, "scatter_reduce");
    // A new case goes by its prefix, an unknown one to "other".
    assert_eq!(classify("scatter_add_i64").section, "scatter_reduce");
    assert_eq!(classify("reduce_prod_u64").section, "reduce");
    assert_eq!(classify("mystery").section, "other");
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
        m("stencil_laplacian_f64/1024x1024", "dpl", 1e6, 1e6),
        m("stencil_laplacian_f64/1024x1024", "rayon", 2e6, 1e6),
        m("spmv_schedule_f32_random/1000000", "auto", 2e6, 1e6),
    ]);
    let names: Vec<String> = groups.iter().map(Group::name).collect();
    assert_eq!(
        names,
        [
            "map_saxpy_f32/1000",
            "reduce_sum_f32/2^16",
            "reduce_sum_f32/2^26",
            "spmv_schedule_f32_random/1000000",
            "stencil_laplacian_f64/1024x1024",
        ]
    );
    assert_eq!(size_value("1024x1024"), 1024.0 * 1024.0);
    assert_eq!(groups[2].speedup("rayon"), Some(2.0));
    assert!((groups[2].of_ceiling().unwrap() - 0.8).abs() < 1e-12);
    assert_eq!(below_ceiling(&groups[2]), Some(0.8));
    assert_eq!(below_rayon(&groups[1]), Some(0.9));
    assert_eq!(above_seq(&groups[0]), Some((900.0, 700.0)));
    let mut notes = BTreeMap::new();
    notes.insert("reduce_sum_f32".to_string(), "Because.".to_string());
    let md = markdown(&groups, &notes);
    assert!(md.contains(
        "* **sum (f32)** (`reduce_sum_f32`): slower than rayon at 2^16 (0.90x); 80% of the \
         hand-tuned loop's speed at 2^26 (target: 90%). Because."
    ));
    assert!(md.contains(
        "* **a * x + y (f32)** (`map_saxpy_f32`): 200 ns slower than the sequential loop at \
         1000 (900 ns against 700 ns; target: at most 100 ns more). No explanation"
    ));
    // Sections in the order of SECTIONS, each with its table; empty columns left out.
    let at = |h: &str| md.find(h).unwrap_or_else(|| panic!("no {h}"));
    assert!(at("## map\n") < at("## reduce and count\n"));
    assert!(at("## reduce and count\n") < at("## stencil\n"));
    assert!(at("## stencil\n") < at("## Sparse matrix-vector products"));
    assert!(md.contains("| case | size | dpl | sequential | dpl GB/s | vs sequential |\n"));
    assert!(md.contains("| random (1000000) | auto 2.00 ms |"));
    assert!(
        md.contains("| 5-point Laplacian, 2-D grid (f64) (`stencil_laplacian_f64`) | 1024x1024 |")
    );
    assert!(md.contains("Every case here meets its targets."));
    assert!(md.contains("| [reduce and count](#reduce-and-count) | 2 | 2 | 1 | 1.34x |"));
    assert!(!md.contains("ceiling"), "internal jargon in:\n{md}");
}

/// The paragraph of one case: one, whatever the number of sizes that miss.
#[test]
fn one_explanation_per_case_with_its_sizes() {
    let mut ms = Vec::new();
    for (size, dpl, rayon, seq) in [
        ("1000", 6.9e3, None, 2.4e3),
        ("2^16", 1.14e6, Some(0.6434e6), 0.44e6),
        ("2^20", 53.88e6, Some(40.67e6), 46.39e6),
        ("2^24", 4.33e9, Some(3.0e9), 2.66e9),
    ] {
        let group = format!("permute_f32/{size}");
        ms.push(m(&group, "dpl", dpl, 1.0));
        ms.push(m(&group, "seq", seq, 1.0));
        if let Some(r) = rayon {
            ms.push(m(&group, "rayon", r, 1.0));
        }
    }
    for (matrix, rows, dpl, rayon) in [
        ("1138_bus", 1138, 40.4e3, 6.6e3),
        ("2dcyl1", 1784, 59.9e3, 26.5e3),
        ("laplace2d", 1000000, 11.7e6, 12.19e6),
    ] {
        let group = format!("spmv_ell_f32_{matrix}/{rows}");
        ms.push(m(&group, "dpl", dpl, 1.0));
        ms.push(m(&group, "rayon", rayon, 1.0));
    }
    let groups = group_results(ms);
    let mut notes = BTreeMap::new();
    for (k, v) in [
        ("permute_f32", "Checks the permutation."),
        ("permute_f32/1000", "The loop trusts its indices."),
        ("permute_f32/2^20", "Checks the permutation."),
        ("spmv_ell_f32", "Padding."),
        ("spmv_ell_f32_1138_bus", "18 slots per row."),
        ("spmv_ell_f32_laplace2d", "Not printed: no miss."),
    ] {
        notes.insert(k.to_string(), v.to_string());
    }
    let md = markdown(&groups, &notes);
    let bullets: Vec<&str> = md.lines().filter(|l| l.contains("** (`")).collect();
    assert_eq!(
        bullets,
        [
            "* **random permutation (f32)** (`permute_f32`): slower than rayon at 2^16-2^24 \
             (0.56-0.75x); 4.5 us slower than the sequential loop at 1000 (6.9 us against \
             2.4 us; target: at most 100 ns more). Checks the permutation. At 1000: The loop \
             trusts its indices.",
            "* **ELLPACK (rows padded to one length)** (`spmv_ell_f32`): slower than rayon on \
             1138_bus (1138) and 2dcyl1 (1784) (0.16-0.44x). Padding. On 1138_bus: 18 slots \
             per row.",
        ]
    );
    // Each case's rows are one table; its title is on its first row only.
    assert_eq!(md.matches("(`permute_f32`) |").count(), 1);
    assert!(md.contains("|  | 2^16 |"));
    // The whole family at every size, and noise.
    let labels: Vec<String> = ["1000", "2^16", "2^20"].map(String::from).to_vec();
    assert_eq!(which(&[0, 1, 2], 3, &labels, false), "at every size");
    assert_eq!(which(&[0, 2], 3, &labels, false), "at 1000 and 2^20");
    assert_eq!(which(&[1], 3, &labels, false), "at 2^16");
    let mut ms = Vec::new();
    for (size, dpl, low, rayon) in [
        ("2^16", 10.0, 9.0, 8.0),
        ("2^20", 10.0, 9.9, 11.0),
        ("2^24", 10.0, 9.0, 9.5),
        ("2^26", 10.0, 9.9, 5.0),
    ] {
        let group = format!("reduce_sum_f32/{size}");
        let mut d = m(&group, "dpl", dpl, 1.0);
        d.low_ns = low;
        ms.push(d);
        ms.push(m(&group, "rayon", rayon, 1.0));
    }
    let md = markdown(&group_results(ms), &BTreeMap::new());
    assert!(
        md.contains(
            "slower than rayon at 2^16, 2^24 and 2^26 (0.50-0.95x; within the measurement \
             noise at 2^24)."
        ),
        "{md}"
    );
}

#[test]
fn keeps_the_hand_written_sections() {
    let old = format!(
        "# Benchmarks\nold table\n{KEPT_START}\n## Nested, by hand\n| a | b |\n{KEPT_END}\n\n\
         {GPU_START}\n## On a real GPU\ntext\n{GPU_END}\n\n## Unmarked, by hand\n\nkept too\n\n\
         {}\n## MPI\n{}\n",
        crate::mpi::START,
        crate::mpi::END
    );
    let md = keep_sections("# Benchmarks\nnew table\n".into(), &old);
    assert!(md.starts_with("# Benchmarks\nnew table\n"));
    assert!(!md.contains("old table"));
    for (start, end) in [(KEPT_START, KEPT_END), (GPU_START, GPU_END)] {
        assert_eq!(
            crate::gpu::section_between(&md, start, end),
            crate::gpu::section_between(&old, start, end)
        );
    }
    assert!(md.find(KEPT_START) < md.find(GPU_START));
    // A hand-written section outside the markers, between kept ones, is kept too.
    assert!(md.contains(&format!(
        "{GPU_END}\n\n## Unmarked, by hand\n\nkept too\n\n"
    )));
    assert!(md.ends_with(&format!("{}\n", crate::mpi::END)));
    // Without kept sections, only the generated part.
    assert_eq!(keep_sections("# B\n".into(), "# B\nold\n"), "# B\n");
    // Kept again unchanged when regenerated from the new file.
    assert_eq!(keep_sections("# Benchmarks\nnew table\n".into(), &md), md);
}

#[test]
fn the_plot_is_labelled_and_grouped() {
    let groups = group_results(vec![
        m("reduce_sum_f32/2^26", "dpl", 10e6, 256e6),
        m("reduce_sum_f32/2^26", "rayon", 20e6, 256e6),
        m("reduce_sum_f32/2^26", "ceiling", 8e6, 256e6),
        m("histogram_u32/2^20", "dpl", 4.52e6, 4.0),
        m("histogram_u32/2^20", "rayon", 2.24e6, 4.0),
        m("spmv_schedule_f32_random/1000000", "auto", 2e6, 1e6),
    ]);
    let svg = plot(&groups);
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for text in [
        PLOT_TITLE,
        X_LABEL,
        Y_LABEL,
        "1.0x: as fast as rayon",
        ">1/8x<",
        ">64x<",
        ">reduce and count<",
        ">scatter_reduce<",
        "256-bin histogram, 2^20",
        "vs rayon",
        "of the hand-tuned loop",
    ] {
        assert!(svg.contains(text), "no {text} in the plot");
    }
    // No row without dpl (nothing to compare), no empty group.
    assert!(!svg.contains("Sparse"));
    assert!(svg.find(">reduce and count<") < svg.find(">scatter_reduce<"));
    // Every element closed: as many opening as closing tags of each kind.
    for tag in ["text", "title", "svg"] {
        assert_eq!(
            svg.matches(&format!("<{tag}")).count(),
            svg.matches(&format!("</{tag}>")).count(),
            "<{tag}>"
        );
    }
    assert_eq!(xml("a<b & \"c\">"), "a&lt;b &amp; &quot;c&quot;&gt;");
}

#[test]
fn reads_criterion_files() {
    let dir = std::env::temp_dir().join(format!("xtask-bench-{}", std::process::id()));
    let new = dir.join("reduce_sum_f32_2^20/dpl/new");
    let base = dir.join("reduce_sum_f32_2^20/dpl/base");
    for d in [&new, &base] {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(
            d.join("benchmark.json"),
            r#"{"group_id":"reduce_sum_f32/2^20","function_id":"dpl","value_str":null,"throughput":{"Bytes":4194304},"full_id":"reduce_sum_f32/2^20/dpl","directory_name":"reduce_sum_f32_2^20/dpl","title":"reduce_sum_f32/2^20/dpl"}"#,
        )
        .unwrap();
        std::fs::write(
            d.join("estimates.json"),
            r#"{"mean":{"confidence_interval":{"confidence_level":0.95,"lower_bound":790.5,"upper_bound":810.0},"point_estimate":800.0,"standard_error":5.0},"median":{"confidence_interval":{"confidence_level":0.95,"lower_bound":795.0,"upper_bound":805.5},"point_estimate":798.0,"standard_error":2.0}}"#,
        )
        .unwrap();
    }
    let ms = collect(&dir).unwrap();
    std::fs::write(new.join("estimates.json"), r#"{"mean":{}}"#).unwrap();
    let bad = collect(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(ms.len(), 1, "base/ is not read");
    let m = &ms[0];
    assert_eq!(
        (m.group.as_str(), m.function.as_str()),
        ("reduce_sum_f32/2^20", "dpl")
    );
    assert_eq!((m.median_ns, m.low_ns, m.high_ns), (798.0, 795.0, 805.5));
    assert_eq!(m.bytes, Some(4194304.0));
    assert!(bad.unwrap_err().contains("without a median"));
}
