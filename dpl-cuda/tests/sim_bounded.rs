//! Bounded code: a sequence built inside an element function and read at several places
//! is stored once its recomputation would be large (`codegen/share.rs`), so the PTX of a
//! recurrence in which each step reads the previous one twice grows linearly with the
//! number of steps instead of doubling at each; the stored form computes what the lazy one
//! did (compared with the reference interpreter under every inner schedule).
#![cfg(feature = "sim")]

mod support;

use dpl_core::interp::{self, Value};
use dpl_cuda::sim::SimDriver;
use dpl_cuda::{Inner, Options};
use support::*;

/// Per row: `a0 = row`, then `steps` times `a{k+1}[i] = a{k}[i] * 0.5 + a{k}[n - 1 - i]`
/// (two reads of the previous step, at different positions) for `i < n`, `n` the row's
/// length (or half of it when `halved`: a length the host cannot bound before the launch,
/// so the steps cannot be stored); the row's result is the sum of the last step.
fn mirrored(steps: usize, halved: bool) -> String {
    let n = if halved {
        "$len: usize = len $row\n    $two: usize = const 2\n    $n: usize = div $len, $two"
    } else {
        "$n: usize = len $row"
    };
    let mut s = format!(
        "fn mirrored($x: [[f32]]) -> [f32] {{\n  $out: [f32] = map(|$row: [f32]| [] {{\n    \
         {n}\n    $rg: [usize] = range($n)\n    \
         $a0: [f32] = map(|$v: f32| [] {{ $v }}, $row)\n",
    );
    for k in 0..steps {
        s += &format!(
            "    $a{}: [f32] = map(|$i{k}: usize| [] {{ $p{k}: f32 = index(index) $a{k}[$i{k}]; \
             $one{k}: usize = const 1; $t{k}: usize = sub $n, $one{k}; $j{k}: usize = sub $t{k}, $i{k}; \
             $q{k}: f32 = index(index) $a{k}[$j{k}]; $h{k}: f32 = const 0.5; $m{k}: f32 = mul $p{k}, $h{k}; \
             $s{k}: f32 = add $m{k}, $q{k}; $s{k} }}, $rg)\n",
            k + 1
        );
    }
    s + &format!("    $total: f32 = sum($a{steps})\n    $total\n  }}, $x)\n  $out\n}}\n")
}

/// Compiles for the GPU under the inner schedule `inner`.
fn compile(c: &dpl_core::pipeline::Compiled, inner: Inner) -> dpl_cuda::GpuProgram {
    let opts = Options {
        inner,
        ..Options::default()
    };
    dpl_cuda::compile_with(&c.fused, &opts)
        .unwrap_or_else(|e| panic!("{} ({inner:?}): {e}", c.fused.name))
}

fn ptx_len(steps: usize) -> usize {
    let c = compiled(&mirrored(steps, false));
    dpl_cuda::compile(&c.fused)
        .unwrap_or_else(|e| panic!("{steps} steps: {e}"))
        .ptx
        .len()
}

#[test]
fn a_recurrence_reading_each_step_twice_has_linear_ptx() {
    let sizes: Vec<(usize, usize)> = [5, 10, 20, 40].map(|n| (n, ptx_len(n))).to_vec();
    for w in sizes.windows(2) {
        let ((n, a), (m, b)) = (w[0], w[1]);
        assert!(
            b * 2 <= a * 5,
            "PTX of {m} steps ({b} bytes) is more than 2.5 times that of {n} steps ({a} bytes): {sizes:?}"
        );
    }
}

#[test]
fn stored_sequences_compute_what_lazy_ones_do() {
    let driver = SimDriver::default();
    // 2 steps stay lazy (small), 12 are past the bound (some steps stored).
    for steps in [2, 12] {
        let c = compiled(&mirrored(steps, false));
        for inner in [Inner::Seq, Inner::Warp, Inner::Block, Inner::Auto] {
            let prog = compile(&c, inner);
            for n in [0, 1, 7, 40] {
                let mut r = Rng::new(0xb0b ^ n as u64);
                let args = vec![ragged(&mut r, n, 20, |r| {
                    Value::F32(r.f64_in(-10.0, 10.0) as f32)
                })];
                let want = interp::run(&c.fused, args.clone());
                let got = dpl_cuda::run(&prog, &driver, args);
                let case = format!("{steps} steps ({inner:?}) at n = {n}");
                assert!(!agree(&want, &got, 1e-4, &case), "{case}: both failed");
            }
        }
    }
}

#[test]
fn code_past_the_limit_is_an_error_naming_the_combinator() {
    // Unbounded lengths: each step is compiled again at both reads of it, 2^40 times over.
    let c = compiled(&mirrored(40, true));
    let e = dpl_cuda::compile(&c.fused).expect_err("2^40 copies of a step compiled");
    assert!(e.too_large.is_some(), "{e:?}");
    for part in [
        "the GPU code of `mirrored` is larger than 8 MiB of PTX",
        "this `map`",
        "split the function",
    ] {
        assert!(e.message.contains(part), "{part:?} not in {:?}", e.message);
    }
    // A few steps stay within the limit, lazily (nothing to store them in).
    let c = compiled(&mirrored(4, true));
    assert!(dpl_cuda::compile(&c.fused).is_ok());
}

/// The kernels that store steps assemble with NVIDIA's ptxas (`DPL_PTX_TOOLS`; skipped
/// without it, as in `ptxas.rs`).
#[test]
fn stored_sequences_assemble() {
    let Some(tools) = ptx_tools() else { return };
    let dir = std::env::temp_dir().join(format!("dpl_sim_bounded_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let c = compiled(&mirrored(12, false));
    for inner in [Inner::Seq, Inner::Warp, Inner::Block] {
        let prog = compile(&c, inner);
        let file = dir.join(format!("mirrored_{inner:?}.ptx"));
        std::fs::write(&file, &prog.ptx).expect("write the PTX");
        let out = std::process::Command::new(tools.join("ptxas"))
            .args(["-arch=sm_70", "-Werror"])
            .arg(&file)
            .arg("-o")
            .arg(dir.join(format!("mirrored_{inner:?}.cubin")))
            .output()
            .expect("run ptxas");
        assert!(
            out.status.success(),
            "{inner:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
