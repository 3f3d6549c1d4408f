//! Maps producing rows (ragged results) of the forms a warp or a block per row writes
//! (`inner = "warp"` / `"block"`, see the crate README's "Inner schedules"): elementwise
//! maps over a row, over two rows zipped and gathers from a captured sequence (form 1),
//! inclusive and exclusive scans over a row (form 2), filters over a row (form 3), and
//! compositions, each with a failing variant (division by zero, index out of range);
//! and filters of rows.
//! Run by `tests/sim_rows.rs`, assembled by `tests/ptxas.rs`.

/// Form 1: each row scaled.
pub const SCALE_ROWS: &str = "
fn scale_rows($x: [[f32]], $a: f32) -> [[f32]] {
  $r: [[f32]] = map(|$row: [f32]| [$a] {
    $m: [f32] = map(|$v: f32| [$a] { $t: f32 = mul $v, $a; $t }, $row)
    $m
  }, $x)
  $r
}";

/// Form 1: two rows zipped (rows of different lengths fail the nested `eq_len`).
pub const ADD_ROWS: &str = "
fn add_rows($x: [[i64]], $y: [[i64]]) -> [[i64]] {
  $r: [[i64]] = map(|$a: [i64], $b: [i64]| [] {
    $s: [i64] = map(|$u: i64, $w: i64| [] { $t: i64 = add $u, $w; $t }, $a, $b)
    $s
  }, $x, $y)
  $r
}";

/// Form 1: a gather from a captured sequence per row (an index out of range fails).
pub const GATHER_ROWS: &str = "
fn gather_rows($cols: [[u32]], $x: [f64]) -> [[f64]] {
  $r: [[f64]] = map(|$c: [u32]| [$x] {
    $g: [f64] = gather($x, $c)
    $g
  }, $cols)
  $r
}";

/// Form 1: an integer division per element (a zero fails).
pub const DIV_ROWS: &str = "
fn div_rows($x: [[i32]]) -> [[i32]] {
  $r: [[i32]] = map(|$row: [i32]| [] {
    $m: [i32] = map(|$v: i32| [] { $k: i32 = const 1000; $q: i32 = div $k, $v; $q }, $row)
    $m
  }, $x)
  $r
}";

/// Form 1 with a reduction per element of the row (three loops: each thread sums its
/// element's products with the whole row).
pub const ROW_PRODUCT_SUMS: &str = "
fn row_product_sums($x: [[i64]]) -> [[i64]] {
  $r: [[i64]] = map(|$row: [i64]| [] {
    $m: [i64] = map(|$v: i64| [$row] {
      $in: [i64] = map(|$w: i64| [$v] { $t: i64 = mul $v, $w; $t }, $row)
      $s: i64 = sum($in)
      $s
    }, $row)
    $m
  }, $x)
  $r
}";

/// Form 2: a scan of pairs under the composition of affine maps (associative, not
/// commutative: any reordering shows).
pub const AFFINE_ROWS: &str = "
fn affine_rows($x: [[(i64, i64)]]) -> [[(i64, i64)]] {
  $r: [[(i64, i64)]] = map(|$row: [(i64, i64)]| [] {
    $s: [(i64, i64)] = scan(|$f: (i64, i64), $g: (i64, i64)| [] {
      $fa: i64 = $f.0; $fb: i64 = $f.1; $ga: i64 = $g.0; $gb: i64 = $g.1
      $ra: i64 = mul $fa, $ga
      $t: i64 = mul $fb, $ga
      $rb: i64 = add $t, $gb
      $res: (i64, i64) = tuple($ra, $rb)
      $res
    }, $row)
    $s
  }, $x)
  $r
}";

/// Form 2: an exclusive scan (`max`, from a start value per row) of a map with an integer
/// division (a zero fails).
pub const DIV_EXCLUSIVE_SCAN: &str = "
fn div_exclusive_scan($x: [[i32]], $z: [i32]) -> [[i32]] {
  $r: [[i32]] = map(|$row: [i32], $s0: i32| [] {
    $m: [i32] = map(|$v: i32| [] { $k: i32 = const 1000; $q: i32 = div $k, $v; $q }, $row)
    $s: [i32] = exclusive_scan(|$p: i32, $q2: i32| [] { $t: i32 = max $p, $q2; $t }, $m, $s0)
    $s
  }, $x, $z)
  $r
}";

/// Form 2: a float scan (within rounding of the sequential order).
pub const FLOAT_ROW_SCAN: &str = "
fn float_row_scan($x: [[f64]]) -> [[f64]] {
  $r: [[f64]] = map(|$row: [f64]| [] {
    $s: [f64] = scan(|$p: f64, $q: f64| [] { $t: f64 = add $p, $q; $t }, $row)
    $s
  }, $x)
  $r
}";

/// Form 3: the positive elements of each row.
pub const POSITIVES: &str = "
fn positives($x: [[f32]]) -> [[f32]] {
  $r: [[f32]] = map(|$row: [f32]| [] {
    $f: [f32] = filter(|$v: f32| [] { $z: f32 = const 0.0; $g: bool = gt $v, $z; $g }, $row)
    $f
  }, $x)
  $r
}";

/// Form 3: pairs kept by a predicate with an integer division (a zero fails), in order.
pub const DIV_FILTER: &str = "
fn div_filter($x: [[(i32, bool)]]) -> [[(i32, bool)]] {
  $r: [[(i32, bool)]] = map(|$row: [(i32, bool)]| [] {
    $f: [(i32, bool)] = filter(|$p: (i32, bool)| [] {
      $v: i32 = $p.0; $b: bool = $p.1
      $k: i32 = const 100; $q: i32 = div $k, $v; $three: i32 = const 3
      $big: bool = gt $q, $three
      $keep: bool = or $big, $b
      $keep
    }, $row)
    $f
  }, $x)
  $r
}";

/// Forms 2 and 3 composed: the multiples of 3 among a row's running sums.
pub const FILTER_OF_SCAN: &str = "
fn filter_of_scan($x: [[i64]]) -> [[i64]] {
  $r: [[i64]] = map(|$row: [i64]| [] {
    $s: [i64] = scan(|$p: i64, $q: i64| [] { $t: i64 = add $p, $q; $t }, $row)
    $f: [i64] = filter(|$v: i64| [] { $c3: i64 = const 3; $m: i64 = rem $v, $c3; $z: i64 = const 0; $e: bool = eq $m, $z; $e }, $s)
    $f
  }, $x)
  $r
}";

/// Forms 3 and 2 composed: running sums of the kept elements.
pub const SCAN_OF_FILTER: &str = "
fn scan_of_filter($x: [[i64]]) -> [[i64]] {
  $r: [[i64]] = map(|$row: [i64]| [] {
    $f: [i64] = filter(|$v: i64| [] { $c2: i64 = const 2; $m: i64 = rem $v, $c2; $z: i64 = const 0; $e: bool = ne $m, $z; $e }, $row)
    $s: [i64] = scan(|$p: i64, $q: i64| [] { $t: i64 = add $p, $q; $t }, $f)
    $s
  }, $x)
  $r
}";

/// A filter of rows by their sums (a reduction in the predicate, split across the group).
pub const KEEP_ROWS_BY_SUM: &str = "
fn keep_rows_by_sum($x: [[i64]]) -> [[i64]] {
  $k: [[i64]] = filter(|$row: [i64]| [] { $s: i64 = sum($row); $z: i64 = const 0; $g: bool = gt $s, $z; $g }, $x)
  $k
}";

/// A filter of rows by their second element (a row shorter than 2 fails).
pub const KEEP_ROWS_BY_SECOND: &str = "
fn keep_rows_by_second($x: [[i32]]) -> [[i32]] {
  $k: [[i32]] = filter(|$row: [i32]| [] { $one: usize = const 1; $v: i32 = index(index) $row[$one]; $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $x)
  $k
}";

/// Every program above, with its name.
pub const ROWS: &[(&str, &str)] = &[
    ("scale_rows", SCALE_ROWS),
    ("add_rows", ADD_ROWS),
    ("gather_rows", GATHER_ROWS),
    ("div_rows", DIV_ROWS),
    ("row_product_sums", ROW_PRODUCT_SUMS),
    ("affine_rows", AFFINE_ROWS),
    ("div_exclusive_scan", DIV_EXCLUSIVE_SCAN),
    ("float_row_scan", FLOAT_ROW_SCAN),
    ("positives", POSITIVES),
    ("div_filter", DIV_FILTER),
    ("filter_of_scan", FILTER_OF_SCAN),
    ("scan_of_filter", SCAN_OF_FILTER),
    ("keep_rows_by_sum", KEEP_ROWS_BY_SUM),
    ("keep_rows_by_second", KEEP_ROWS_BY_SECOND),
];
