//! Float-to-integer `cvt` on NaNs, infinities and out-of-range values: the simulator
//! against a table measured on an NVIDIA H100 (`tests/hardware/cvt_h100.txt`, written by this
//! test's `print_table` run on the device machine with the `sim` and `cuda` features). Hardware gives
//! 0 for a NaN only from an `f32` to a 32-bit integer; from an `f64`, or to a 64-bit
//! integer, it gives the top bit alone (`i32::MIN`, `2^31`, `i64::MIN`, `2^63`), where
//! Rust's `as` gives 0 — so the code generator sets NaNs apart (`Gen::cast`), and the
//! simulator must behave as the hardware does for a missing guard to show in its tests.
//! With the `cuda` feature and a device, the device is checked against the table too.

use dpl_cuda::{Driver, LaunchArg};

/// The inputs, in this order in every row of the table.
const VALUES: [f64; 8] = [
    f64::NAN,
    -f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    3e10,
    -3e10,
    2.7,
    -2.7,
];
const SOURCES: [&str; 2] = ["f32", "f64"];
const DESTINATIONS: [(&str, usize); 4] = [("s32", 4), ("u32", 4), ("s64", 8), ("u64", 8)];
const MODES: [&str; 3] = ["rzi.sat", "rzi", "rni.sat"];

/// One kernel per (source, destination, rounding): thread `t` converts element `t`.
fn module() -> String {
    let mut s = String::from(dpl_cuda::PTX_HEADER);
    for src in SOURCES {
        let (sreg, ssize) = if src == "f32" {
            ("%f1", 4)
        } else {
            ("%fd1", 8)
        };
        for (dst, dsize) in DESTINATIONS {
            let dreg = if dsize == 4 { "%r1" } else { "%rd3" };
            for rnd in MODES {
                s += &format!(
                    ".visible .entry {name}(.param .u64 a, .param .u64 b)\n{{\n\
                     \t.reg .b32 %r<3>;\n\t.reg .b64 %rd<6>;\n\t.reg .f32 %f<2>;\n\t.reg .f64 %fd<2>;\n\
                     \tld.param.u64 %rd1, [a];\n\tld.param.u64 %rd2, [b];\n\
                     \tcvta.to.global.u64 %rd1, %rd1;\n\tcvta.to.global.u64 %rd2, %rd2;\n\
                     \tmov.u32 %r2, %tid.x;\n\
                     \tmad.wide.u32 %rd4, %r2, {ssize}, %rd1;\n\tld.global.{src} {sreg}, [%rd4];\n\
                     \tcvt.{rnd}.{dst}.{src} {dreg}, {sreg};\n\
                     \tmad.wide.u32 %rd5, %r2, {dsize}, %rd2;\n\tst.global.{dst} [%rd5], {dreg};\n\
                     \tret;\n}}\n",
                    name = kernel(src, dst, rnd),
                );
            }
        }
    }
    s
}

fn kernel(src: &str, dst: &str, rnd: &str) -> String {
    format!("k_{src}_{dst}_{}", rnd.replace('.', "_"))
}

/// The table's rows (`cvt.<rnd>.<dst>.<src>: <8 results>`) as `driver` computes them.
fn table<D: Driver>(d: &D) -> Vec<String> {
    let m = d.load(&module()).expect("the module loads");
    let mut rows = Vec::new();
    for src in SOURCES {
        let input: Vec<u8> = if src == "f32" {
            VALUES
                .iter()
                .flat_map(|v| (*v as f32).to_le_bytes())
                .collect()
        } else {
            VALUES.iter().flat_map(|v| v.to_le_bytes()).collect()
        };
        let a = d.alloc_zeroed(input.len()).unwrap();
        d.write(a, &input).unwrap();
        for (dst, size) in DESTINATIONS {
            for rnd in MODES {
                let b = d.alloc_zeroed(VALUES.len() * size).unwrap();
                let args = [LaunchArg::U64(a), LaunchArg::U64(b)];
                d.launch(&m, &kernel(src, dst, rnd), 1, VALUES.len() as u32, &args)
                    .unwrap();
                let mut out = vec![0u8; VALUES.len() * size];
                d.read(b, &mut out).unwrap();
                d.free(b).unwrap();
                let vals: Vec<String> = out
                    .chunks(size)
                    .map(|c| match dst {
                        "s32" => i32::from_le_bytes(c.try_into().unwrap()).to_string(),
                        "u32" => u32::from_le_bytes(c.try_into().unwrap()).to_string(),
                        "s64" => i64::from_le_bytes(c.try_into().unwrap()).to_string(),
                        _ => u64::from_le_bytes(c.try_into().unwrap()).to_string(),
                    })
                    .collect();
                rows.push(format!("cvt.{rnd}.{dst}.{src}: {}", vals.join(" ")));
            }
        }
        d.free(a).unwrap();
    }
    rows
}

/// The rows measured on the H100.
fn measured() -> Vec<String> {
    include_str!("hardware/cvt_h100.txt")
        .lines()
        .filter(|l| l.starts_with("cvt."))
        .map(str::to_string)
        .collect()
}

#[cfg(feature = "sim")]
#[test]
fn the_simulator_converts_as_the_h100_does() {
    let want = measured();
    assert_eq!(want.len(), SOURCES.len() * DESTINATIONS.len() * MODES.len());
    let got = table(&dpl_cuda::sim::SimDriver::default());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "simulator vs H100");
    }
}

/// On a device: the table (printed with `--nocapture`, the source of
/// `tests/hardware/cvt_h100.txt`), checked against the H100's when the device is one.
#[cfg(feature = "cuda")]
#[test]
fn print_table() {
    let Ok(d) = dpl_cuda::cuda::CudaDriver::new(0) else {
        eprintln!("skipped: no CUDA device");
        return;
    };
    println!("values: {VALUES:?}");
    let rows = table(&d);
    for r in &rows {
        println!("{r}");
    }
    if std::env::var_os("DPL_CVT_CHECK").is_some() {
        assert_eq!(rows, measured(), "this device vs the H100's table");
    }
}
