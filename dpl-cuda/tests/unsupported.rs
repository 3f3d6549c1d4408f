//! What the GPU backend does not compile yet is a clear `Unsupported`, never a panic or
//! wrong PTX.

mod support;

use support::compiled;

fn message(src: &str) -> String {
    let c = compiled(src);
    match dpl_cuda::compile(&c.fused) {
        Ok(_) => panic!("compiled:\n{}", c.fused),
        Err(e) => e.to_string(),
    }
}

#[test]
fn transcendental_math() {
    let m = message(
        "fn e($x: [f32]) -> [f32] {
          $r: [f32] = map(|$a: f32| [] { $t: f32 = exp $a; $t }, $x)
          $r
        }",
    );
    assert!(m.contains("`exp`"), "{m}");
}

#[test]
fn float_remainder() {
    let m = message(
        "fn fr($x: [f64], $y: [f64]) -> [f64] {
          $r: [f64] = map(|$a: f64, $b: f64| [] { $t: f64 = rem $a, $b; $t }, $x, $y)
          $r
        }",
    );
    assert!(m.contains("`%` on floats"), "{m}");
}

#[test]
fn three_levels_of_nesting() {
    let m = message(
        "fn rows($x: [[[f32]]]) -> [usize] {
          $r: [usize] = map(|$row: [[f32]]| [] { $n: usize = len($row); $n }, $x)
          $r
        }",
    );
    assert!(m.contains("more than two levels"), "{m}");
}

#[test]
fn scatter_inside_elements() {
    let m = message(
        "fn inner($x: [[i64]], $d: [i64]) -> [[i64]] {
          $r: [[i64]] = map(|$row: [i64]| [$d] {
            $ix: [usize] = indices($row)
            $s: [i64] = scatter($row, $ix, $d)
            $s
          }, $x)
          $r
        }",
    );
    assert!(m.contains("nested `scatter`"), "{m}");
}
