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
fn sequences_of_tuples_holding_rows_as_results() {
    let m = message(
        "fn pairs($x: [[i32]]) -> [([i32], usize)] {
          $m: [([i32], usize)] = map(|$row: [i32]| [] { $n: usize = len($row); $t: ([i32], usize) = tuple($row, $n); $t }, $x)
          $m
        }",
    );
    assert!(m.contains("a result of type"), "{m}");
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
