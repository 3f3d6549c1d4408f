//! Phases and horizontal fusion: reductions of one phase over one index space share a loop,
//! and the merged function computes the same values.

use dpl_core::interp::{self, Value};
use dpl_core::{fuse, phases, pipeline, text};

fn compile(src: &str) -> pipeline::Compiled {
    pipeline::compile(text::parse(src).expect("parses")).expect("compiles")
}

const SUM_AND_COUNT: &str = "fn f(%0 x: [f64]) -> (f64, usize) {
  %1 s: f64 = sum(%0)
  %4 c: usize = count(|%2 v: f64| [] { %5 z: f64 = const 0.0; %3 g: bool = gt %2, %5; %3 }, %0)
  %6 t: (f64, usize) = tuple(%1, %4)
  %6
}";

#[test]
fn independent_reductions_share_one_loop() {
    let c = compile(SUM_AND_COUNT);
    assert_eq!(fuse::stats(&c.normalized).loops, 2);
    assert_eq!(fuse::stats(&c.fused).loops, 1, "{}", text::print(&c.fused));
    assert_eq!(c.phases().len(), 1);
    let x: Vec<f64> = (0..1001).map(|i| ((i * 37) % 101) as f64 - 50.0).collect();
    let want = (
        x.iter().sum::<f64>(),
        x.iter().filter(|v| **v > 0.0).count(),
    );
    for f in [&c.typed, &c.normalized, &c.fused] {
        let got = interp::run(f, vec![Value::from(x.clone())]).expect("runs");
        assert_eq!(got, Value::from((want.0, want.1)));
    }
}

#[test]
fn dependent_reductions_are_two_phases() {
    // The count needs the mean: a global synchronization point between the two loops.
    let c = compile(
        "fn f(%0 x: [f64]) -> usize {
  %1 s: f64 = sum(%0)
  %2 n: usize = len %0
  %3 nf: f64 = cast %2 as f64
  %4 m: f64 = div %1, %3
  %7 c: usize = count(|%5 v: f64| [%4] { %6 g: bool = gt %5, %4; %6 }, %0)
  %7
}",
    );
    assert_eq!(fuse::stats(&c.fused).loops, 2);
    let ph = c.phases();
    assert_eq!(ph.len(), 2, "{ph:?}");
    assert_eq!(ph.iter().map(|p| p.loops).collect::<Vec<_>>(), vec![1, 1]);
}

#[test]
fn completion_of_inputs() {
    let c = compile(
        "fn f(%0 x: [i64], %1 idx: [u32]) -> [i64] {
  %2 g: [i64] = gather(%0, %1)
  %5 s: [i64] = scan(|%3 a: i64, %4 b: i64| [] { %6 r: i64 = add %3, %4; %6 }, %2)
  %5
}",
    );
    let body = &c.fused.body.stmts;
    let scan = body.iter().find(|s| s.var.index() == 5).expect("scan kept");
    // The gather was fused into the scan: the scan reads `x` at data-dependent positions.
    assert_eq!(
        phases::completion(scan, dpl_core::ir::Handle::new(0)),
        phases::Completion::Global
    );
    assert_eq!(
        phases::completion(scan, dpl_core::ir::Handle::new(1)),
        phases::Completion::Local
    );
}
