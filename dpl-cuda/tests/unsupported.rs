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
fn scatter_reduce_of_pairs() {
    let m = message(
        "fn hist($v: [(i64, i64)], $idx: [usize], $d: [(i64, i64)]) -> [(i64, i64)] {
          $r: [(i64, i64)] = scatter_reduce(|$a: (i64, i64), $b: (i64, i64)| [] {
            $a0: i64 = $a.0; $b0: i64 = $b.0; $s0: i64 = add $a0, $b0
            $a1: i64 = $a.1; $b1: i64 = $b.1; $s1: i64 = add $a1, $b1
            $t: (i64, i64) = tuple($s0, $s1)
            $t
          }, $v, $idx, $d)
          $r
        }",
    );
    assert!(m.contains("scatter_reduce of tuples"), "{m}");
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
fn scatter_inside_elements_used_as_an_intermediate() {
    let m = message(
        "fn inner($x: [[i64]], $d: [i64]) -> [i64] {
          $r: [i64] = map(|$row: [i64]| [$d] {
            $ix: [usize] = indices($row)
            $s: [i64] = scatter($row, $ix, $d)
            $t: i64 = sum($s)
            $t
          }, $x)
          $r
        }",
    );
    assert!(
        m.contains("nested `scatter` used other than as the result"),
        "{m}"
    );
}
