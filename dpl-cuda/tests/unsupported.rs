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

#[test]
fn scatter_into_a_sequence_of_a_computed_length_read_again() {
    // Read again, a per-element scatter is stored per thread, which needs a bound on its
    // length before the launch: a length read from the element's data has none.
    let m = message(
        "fn inner($x: [[usize]]) -> [u32] {
          $r: [u32] = map(|$row: [usize]| [] {
            $z: usize = const 0
            $n: usize = index(index) $row[$z]
            $zero: u32 = const 0
            $d: [u32] = replicate($zero, $n)
            $k: usize = len($row)
            $one: u32 = const 1
            $ones: [u32] = replicate($one, $k)
            $s: [u32] = scatter($ones, $row, $d)
            $t: u32 = sum($s)
            $t
          }, $x)
          $r
        }",
    );
    assert!(
        m.contains("nested `scatter` used other than as the result")
            && m.contains("not known before the launch"),
        "{m}"
    );
}

#[test]
fn sorts_of_unbounded_length_per_element() {
    let m = message(
        "fn f($x: [u32]) -> [u64] {
          $r: [u64] = map(|$v: u32| [] {
            $n: usize = cast $v as usize
            $q: [usize] = range($n)
            $w: [u64] = map(|$i: usize| [] { $t: u64 = cast $i as u64; $t }, $q)
            $s: [u64] = sort($w)
            $total: u64 = sum($s)
            $total
          }, $x)
          $r
        }",
    );
    assert!(
        m.contains("`sort` inside an element function") && m.contains("no bound"),
        "{m}"
    );
}
