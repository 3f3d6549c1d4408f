//! The IR programs of the tests (text form at the Prim level, `$name` variables).

pub const SAXPY: &str = "
fn saxpy($alpha: f32, $x: [f32], $y: [f32]) -> [f32] {
  $r: [f32] = map(|$a: f32, $b: f32| [] { $t: f32 = mul $alpha, $a; $u: f32 = add $t, $b; $u }, $x, $y)
  $r
}";

pub const SUM_I64: &str = "
fn sum_i64($x: [i64]) -> i64 {
  $s: i64 = sum($x)
  $s
}";

pub const DOT: &str = "
fn dot($x: [f64], $y: [f64]) -> f64 {
  $p: [f64] = map(|$a: f64, $b: f64| [] { $t: f64 = mul $a, $b; $t }, $x, $y)
  $s: f64 = sum($p)
  $s
}";

pub const SUM_F32: &str = "
fn sum_f32($x: [f32]) -> f32 {
  $s: f32 = sum($x)
  $s
}";

pub const SUM_MAP_GATHER: &str = "
fn sum_map_gather($x: [i64], $idx: [usize]) -> i64 {
  $g: [i64] = gather($x, $idx)
  $sq: [i64] = map(|$v: i64| [] { $vv: i64 = mul $v, $v; $vv }, $g)
  $s: i64 = sum($sq)
  $s
}";

pub const FILTER_OF_MAP: &str = "
fn filter_of_map($x: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c3: i64 = const 3; $t: i64 = mul $a, $c3; $c1: i64 = const 1; $u: i64 = add $t, $c1; $u }, $x)
  $ev: [i64] = filter(|$v: i64| [] { $two: i64 = const 2; $r: i64 = rem $v, $two; $zero: i64 = const 0; $e: bool = eq $r, $zero; $e }, $m)
  $ev
}";

pub const FILTER_NONE_OR_ALL: &str = "
fn filter_threshold($x: [u32], $t: u32) -> [u32] {
  $f: [u32] = filter(|$v: u32| [$t] { $g: bool = ge $v, $t; $g }, $x)
  $f
}";

pub const SCAN_OF_MAP: &str = "
fn scan_of_map($x: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c2: i64 = const 2; $t: i64 = mul $a, $c2; $t }, $x)
  $s: [i64] = scan(|$p: i64, $q: i64| [] { $r: i64 = add $p, $q; $r }, $m)
  $s
}";

pub const EXCLUSIVE_SCAN_MAX: &str = "
fn exclusive_scan_of_map($x: [i64], $z: i64) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c5: i64 = const 5; $t: i64 = sub $a, $c5; $t }, $x)
  $s: [i64] = exclusive_scan(|$p: i64, $q: i64| [] { $r: i64 = max $p, $q; $r }, $m, $z)
  $s
}";

pub const FLOAT_SCAN: &str = "
fn float_scan($x: [f64]) -> [f64] {
  $m: [f64] = map(|$a: f64| [] { $b: f64 = abs $a; $r: f64 = sqrt $b; $r }, $x)
  $s: [f64] = scan(|$p: f64, $q: f64| [] { $t: f64 = add $p, $q; $t }, $m)
  $s
}";

/// Composition of affine maps `x -> a*x + b`: associative, not commutative, so any
/// reordering of a scan shows.
pub const AFFINE_SCAN: &str = "
fn affine_scan($a: [i64], $b: [i64]) -> [(i64, i64)] {
  $p: [(i64, i64)] = zip($a, $b)
  $s: [(i64, i64)] = scan(|$f: (i64, i64), $g: (i64, i64)| [] {
    $fa: i64 = $f.0; $fb: i64 = $f.1; $ga: i64 = $g.0; $gb: i64 = $g.1
    $ra: i64 = mul $fa, $ga
    $t: i64 = mul $fb, $ga
    $rb: i64 = add $t, $gb
    $r: (i64, i64) = tuple($ra, $rb)
    $r
  }, $p)
  $s
}";

pub const AFFINE_EXCLUSIVE_SCAN: &str = "
fn affine_exclusive_scan($a: [i64], $b: [i64], $z: (i64, i64)) -> [(i64, i64)] {
  $p: [(i64, i64)] = zip($a, $b)
  $s: [(i64, i64)] = exclusive_scan(|$f: (i64, i64), $g: (i64, i64)| [] {
    $fa: i64 = $f.0; $fb: i64 = $f.1; $ga: i64 = $g.0; $gb: i64 = $g.1
    $ra: i64 = mul $fa, $ga
    $t: i64 = mul $fb, $ga
    $rb: i64 = add $t, $gb
    $r: (i64, i64) = tuple($ra, $rb)
    $r
  }, $p, $z)
  $s
}";

pub const REDUCE_OF_ZIP: &str = "
fn reduce_of_zip($x: [i64], $y: [i64]) -> (i64, i64) {
  $p: [(i64, i64)] = zip($x, $y)
  $z0: i64 = const 0
  $zm: i64 = const -1000000
  $init: (i64, i64) = tuple($z0, $zm)
  $r: (i64, i64) = reduce(|$acc: (i64, i64), $e: (i64, i64)| [] {
    $a0: i64 = $acc.0; $e0: i64 = $e.0; $s: i64 = add $a0, $e0
    $a1: i64 = $acc.1; $e1: i64 = $e.1; $m: i64 = max $a1, $e1
    $t: (i64, i64) = tuple($s, $m)
    $t
  }, $p, $init)
  $r
}";

pub const MIN_MAX_OF_MAP: &str = "
fn min_max_of_map($x: [i64]) -> (i64, i64) {
  $m1: [i64] = map(|$a: i64| [] { $c: i64 = const 1; $t: i64 = sub $a, $c; $t }, $x)
  $lo: i64 = min($m1)
  $m2: [i64] = map(|$b: i64| [] { $c2: i64 = const 2; $t2: i64 = mul $b, $c2; $t2 }, $x)
  $hi: i64 = max($m2)
  $r: (i64, i64) = tuple($lo, $hi)
  $r
}";

pub const MIN_F64: &str = "
fn min_f64($x: [f64]) -> f64 {
  $lo: f64 = min($x)
  $lo
}";

pub const COUNT_ANY_ALL_PRED: &str = "
fn count_any_all($x: [i64]) -> (usize, bool, bool) {
  $m1: [i64] = map(|$a: i64| [] { $c: i64 = const 7; $t: i64 = sub $a, $c; $t }, $x)
  $n: usize = count(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $m1)
  $m2: [i64] = map(|$b: i64| [] { $c2: i64 = const 2; $t2: i64 = mul $b, $c2; $t2 }, $x)
  $an: bool = any(|$w: i64| [] { $k: i64 = const 1900; $g2: bool = gt $w, $k; $g2 }, $m2)
  $m3: [i64] = map(|$d: i64| [] { $t3: i64 = abs $d; $t3 }, $x)
  $al: bool = all(|$u: i64| [] { $k2: i64 = const 990; $g3: bool = lt $u, $k2; $g3 }, $m3)
  $r: (usize, bool, bool) = tuple($n, $an, $al)
  $r
}";

pub const BOOLS: &str = "
fn bools($x: [i32]) -> ([bool], usize, [bool]) {
  $b: [bool] = map(|$a: i32| [] { $z: i32 = const 0; $g: bool = lt $a, $z; $g }, $x)
  $n: usize = count($b)
  $t: [bool] = filter(|$v: bool| [] { $v }, $b)
  $r: ([bool], usize, [bool]) = tuple($b, $n, $t)
  $r
}";

pub const SCATTER_OF_MAP: &str = "
fn scatter_of_map($src: [i64], $idx: [usize], $dst: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c2: i64 = const 2; $t: i64 = mul $a, $c2; $t }, $src)
  $s: [i64] = scatter($m, $idx, $dst)
  $s
}";

pub const HISTOGRAM: &str = "
fn histogram($src: [i64], $idx: [usize], $dst: [i64]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $c1: i64 = const 1; $t: i64 = add $a, $c1; $t }, $src)
  $s: [i64] = scatter_reduce(|$acc: i64, $v: i64| [] { $r: i64 = add $acc, $v; $r }, $m, $idx, $dst)
  $s
}";

pub const HISTOGRAM_F32: &str = "
fn histogram_f32($src: [f32], $idx: [u32], $dst: [f32]) -> [f32] {
  $s: [f32] = scatter_reduce(|$acc: f32, $v: f32| [] { $r: f32 = add $v, $acc; $r }, $src, $idx, $dst)
  $s
}";

pub const SCATTER_MIN_I32: &str = "
fn scatter_min($src: [i32], $idx: [i64], $dst: [i32]) -> [i32] {
  $s: [i32] = scatter_reduce(|$acc: i32, $v: i32| [] { $r: i32 = min $acc, $v; $r }, $src, $idx, $dst)
  $s
}";

/// Operators without an atomic instruction go through compare-and-swap loops.
pub const SCATTER_CAS: &str = "
fn scatter_cas($src: [u64], $idx: [usize], $dst: [u64], $fsrc: [f64], $fdst: [f64]) -> ([u64], [f64]) {
  $s: [u64] = scatter_reduce(|$acc: u64, $v: u64| [] { $pr: u64 = mul $acc, $v; $pr }, $src, $idx, $dst)
  $f: [f64] = scatter_reduce(|$a: f64, $b: f64| [] { $m: f64 = max $a, $b; $m }, $fsrc, $idx, $fdst)
  $out: ([u64], [f64]) = tuple($s, $f)
  $out
}";

pub const PERMUTE_OF_MAP: &str = "
fn permute_of_map($x: [i64], $perm: [usize]) -> [i64] {
  $m: [i64] = map(|$a: i64| [] { $t: i64 = mul $a, $a; $t }, $x)
  $p: [i64] = permute($m, $perm)
  $p
}";

pub const USER_INDEX: &str = "
fn user_index($x: [i64], $idx: [i64]) -> [i64] {
  $m: [i64] = map(|$j: i64| [$x] { $v: i64 = index(index) $x[$j]; $c: i64 = const 1; $t: i64 = add $v, $c; $t }, $idx)
  $m
}";

pub const NESTED_SUM: &str = "
fn nested_sum($x: [i64], $y: [i64]) -> [i64] {
  $r: [i64] = map(|$a: i64| [] {
    $p: [i64] = map(|$b: i64| [] { $t: i64 = mul $a, $b; $t }, $y)
    $s: i64 = sum($p)
    $s
  }, $x)
  $r
}";

pub const NESTED_MIN: &str = "
fn nested_min($x: [f64], $y: [f64]) -> [f64] {
  $r: [f64] = map(|$a: f64| [] {
    $p: [f64] = map(|$b: f64| [] { $t: f64 = sub $a, $b; $u: f64 = abs $t; $u }, $y)
    $s: f64 = min($p)
    $s
  }, $x)
  $r
}";

pub const NESTED_COUNT_GATHER: &str = "
fn nested_count_gather($x: [i64], $y: [i64], $idx: [usize]) -> [usize] {
  $r: [usize] = map(|$a: i64| [] {
    $g: [i64] = gather($y, $idx)
    $n: usize = count(|$b: i64| [] { $l: bool = lt $b, $a; $l }, $g)
    $n
  }, $x)
  $r
}";

pub const IF_IN_LAMBDA: &str = "
fn if_in_lambda($x: [i64], $y: [i64]) -> [i64] {
  $r: [i64] = map(|$a: i64| [] {
    $z: i64 = const 0
    $pos: bool = gt $a, $z
    $v: i64 = if $pos {
      $c2: i64 = const 2; $t: i64 = mul $a, $c2; $t
    } else {
      $s: i64 = sum($y); $u: i64 = sub $s, $a; $u
    }
    $v
  }, $x)
  $r
}";

pub const REPLICATE_MAP: &str = "
fn replicate_map($x: [i64], $c: i64) -> [i64] {
  $n: usize = len($x)
  $rep: [i64] = replicate($c, $n)
  $r: [i64] = map(|$a: i64, $b: i64| [] { $t: i64 = add $a, $b; $t }, $x, $rep)
  $r
}";

pub const RANGE_SUM: &str = "
fn range_sum($n: usize) -> usize {
  $r: [usize] = range($n)
  $sq: [usize] = map(|$i: usize| [] { $t: usize = mul $i, $i; $t }, $r)
  $s: usize = sum($sq)
  $s
}";

pub const INDICES_MAP: &str = "
fn indices_map($x: [i64]) -> [i64] {
  $ix: [usize] = indices($x)
  $r: [i64] = map(|$i: usize, $a: i64| [] { $w: i64 = cast $i as i64; $t: i64 = mul $a, $w; $t }, $ix, $x)
  $r
}";

pub const GATHER_OF_GATHER: &str = "
fn gather_of_gather($x: [i64], $i1: [usize], $i2: [usize]) -> [i64] {
  $g1: [i64] = gather($x, $i1)
  $g2: [i64] = gather($g1, $i2)
  $g2
}";

pub const INT_OPS: &str = "
fn int_ops($a: [i32], $b: [i32], $c: [u64], $d: [u64]) -> [(i32, i32, i32, i32, u64, u64, u64, bool)] {
  $r: [(i32, i32, i32, i32, u64, u64, u64, bool)] = map(|$x: i32, $y: i32, $u: u64, $v: u64| [] {
    $q: i32 = div $x, $y
    $m: i32 = rem $x, $y
    $sh: i32 = shl $x, $u
    $sr: i32 = shr $x, $y
    $p: u64 = mul $u, $v
    $s: u64 = shr $u, $y
    $w: u64 = xor $u, $v
    $n1: i32 = neg $x
    $n2: i32 = not $n1
    $o: i32 = or $n2, $sh
    $a1: i32 = and $o, $sr
    $lt: bool = lt $x, $y
    $ge: bool = ge $u, $v
    $bx: bool = xor $lt, $ge
    $res: (i32, i32, i32, i32, u64, u64, u64, bool) = tuple($q, $m, $a1, $sr, $p, $s, $w, $bx)
    $res
  }, $a, $b, $c, $d)
  $r
}";

pub const CASTS: &str = "
fn casts($x: [f32], $y: [f64], $i: [i64]) -> [(i32, u32, u64, i64, f32, f64, i32, bool)] {
  $r: [(i32, u32, u64, i64, f32, f64, i32, bool)] = map(|$a: f32, $b: f64, $k: i64| [] {
    $c1: i32 = cast $a as i32
    $c2: u32 = cast $b as u32
    $c3: u64 = cast $a as u64
    $c4: i64 = cast $b as i64
    $c5: f32 = cast $k as f32
    $c6: f64 = cast $k as f64
    $c7: i32 = cast $k as i32
    $z: f64 = const 0.0
    $c8: bool = lt $b, $z
    $c9: i32 = cast $c8 as i32
    $c10: i32 = add $c7, $c9
    $c11: f64 = cast $a as f64
    $c12: f64 = add $c6, $c11
    $c13: f32 = cast $b as f32
    $c14: f32 = add $c5, $c13
    $res: (i32, u32, u64, i64, f32, f64, i32, bool) = tuple($c1, $c2, $c3, $c4, $c14, $c12, $c10, $c8)
    $res
  }, $x, $y, $i)
  $r
}";

pub const MATH: &str = "
fn math($x: [f32], $y: [f64]) -> [(f32, f32, f32, f32, f32, f32, f64, f64, f64, f64, f64, f64)] {
  $r: [(f32, f32, f32, f32, f32, f32, f64, f64, f64, f64, f64, f64)] = map(|$a: f32, $b: f64| [] {
    $a1: f32 = abs $a
    $s: f32 = sqrt $a1
    $fl: f32 = floor $a
    $ce: f32 = ceil $a
    $ro: f32 = round $a
    $tr: f32 = trunc $a
    $mn: f32 = min $a, $s
    $ma: f32 = mul_add $a, $s, $fl
    $r1: f32 = add $ro, $mn
    $r2: f32 = div $ma, $ce
    $b1: f64 = abs $b
    $sb: f64 = sqrt $b1
    $fb: f64 = floor $b
    $cb: f64 = ceil $b
    $rb: f64 = round $b
    $tb: f64 = trunc $b
    $mx: f64 = max $b, $sb
    $mb: f64 = mul_add $b, $sb, $fb
    $dv: f64 = div $mb, $cb
    $res: (f32, f32, f32, f32, f32, f32, f64, f64, f64, f64, f64, f64) = tuple($s, $fl, $r1, $tr, $r2, $ma, $sb, $rb, $tb, $mx, $dv, $cb)
    $res
  }, $x, $y)
  $r
}";

pub const TUPLE_MAP_UNZIP: &str = "
fn tuple_map($x: [u32]) -> ([u32], [f64]) {
  $p: [(u32, f64)] = map(|$a: u32| [] { $c: u32 = const 3; $t: u32 = mul $a, $c; $f: f64 = cast $a as f64; $h: f64 = const 0.5; $g: f64 = mul $f, $h; $r: (u32, f64) = tuple($t, $g); $r }, $x)
  $u: ([u32], [f64]) = unzip($p)
  $u
}";

pub const MEAN: &str = "
fn mean($x: [f64]) -> f64 {
  $s: f64 = sum($x)
  $n: usize = len $x
  $nf: f64 = cast $n as f64
  $m: f64 = div $s, $nf
  $m
}";

pub const HOST_INDEX: &str = "
fn host_index($x: [i64], $i: usize) -> i64 {
  $s: [i64] = scan(|$p: i64, $q: i64| [] { $r: i64 = add $p, $q; $r }, $x)
  $v: i64 = index(index) $s[$i]
  $v
}";

pub const HOST_IF: &str = "
fn host_if($x: [i64], $flag: bool) -> [i64] {
  $r: [i64] = if $flag {
    $a: [i64] = map(|$v: i64| [] { $c: i64 = const 2; $t: i64 = mul $v, $c; $t }, $x)
    $a
  } else {
    $b: [i64] = filter(|$w: i64| [] { $z: i64 = const 0; $g: bool = gt $w, $z; $g }, $x)
    $b
  }
  $r
}";

pub const FILTER_PAIRS: &str = "
fn filter_pairs($x: [i32], $y: [f32]) -> [(i32, f32)] {
  $p: [(i32, f32)] = zip($x, $y)
  $f: [(i32, f32)] = filter(|$e: (i32, f32)| [] { $a: i32 = $e.0; $z: i32 = const 0; $g: bool = gt $a, $z; $g }, $p)
  $f
}";

pub const DIV_IN_REDUCE: &str = "
fn div_in_reduce($x: [u32], $y: [u32]) -> u32 {
  $q: [u32] = map(|$a: u32, $b: u32| [] { $t: u32 = div $a, $b; $t }, $x, $y)
  $s: u32 = sum($q)
  $s
}";

pub const FILTER_THEN_SUM: &str = "
fn sum_filter_map($x: [i64]) -> (i64, usize) {
  $m: [i64] = map(|$a: i64| [] { $c: i64 = const 10; $t: i64 = sub $a, $c; $t }, $x)
  $f: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $m)
  $s: i64 = sum($f)
  $n: usize = len $f
  $r: (i64, usize) = tuple($s, $n)
  $r
}";

pub const SCAN_BOOL_OR: &str = "
fn scan_or($x: [i32]) -> [bool] {
  $b: [bool] = map(|$a: i32| [] { $k: i32 = const 90; $g: bool = gt $a, $k; $g }, $x)
  $s: [bool] = scan(|$p: bool, $q: bool| [] { $r: bool = or $p, $q; $r }, $b)
  $s
}";

// ---- nested data: `[[T]]` parameters and results ----

pub const ROW_SUMS: &str = "
fn row_sums($x: [[f32]]) -> [f32] {
  $r: [f32] = map(|$row: [f32]| [] { $s: f32 = sum($row); $s }, $x)
  $r
}";

pub const SPMV_CSR: &str = "
fn spmv_csr($vals: [[f32]], $cols: [[u32]], $x: [f32]) -> [f32] {
  $r: [f32] = map(|$a: [f32], $c: [u32]| [$x] {
    $g: [f32] = gather($x, $c)
    $p: [f32] = map(|$u: f32, $w: f32| [] { $t: f32 = mul $u, $w; $t }, $a, $g)
    $s: f32 = sum($p)
    $s
  }, $vals, $cols)
  $r
}";

pub const ROW_MIN_MAX: &str = "
fn row_min_max($x: [[i64]]) -> ([i64], [i64]) {
  $lo: [i64] = map(|$row: [i64]| [] { $s: i64 = min($row); $s }, $x)
  $hi: [i64] = map(|$row2: [i64]| [] { $t: i64 = max($row2); $t }, $x)
  $r: ([i64], [i64]) = tuple($lo, $hi)
  $r
}";

pub const ROW_SCAN: &str = "
fn row_scan($x: [[i64]]) -> [[i64]] {
  $r: [[i64]] = map(|$row: [i64]| [] {
    $s: [i64] = scan(|$p: i64, $q: i64| [] { $t: i64 = add $p, $q; $t }, $row)
    $s
  }, $x)
  $r
}";

pub const ROW_EXCLUSIVE_SCAN: &str = "
fn row_exclusive_scan($x: [[u32]], $starts: [u32]) -> [[u32]] {
  $r: [[u32]] = map(|$row: [u32], $z: u32| [] {
    $s: [u32] = exclusive_scan(|$p: u32, $q: u32| [] { $t: u32 = add $p, $q; $t }, $row, $z)
    $s
  }, $x, $starts)
  $r
}";

pub const ROW_FILTER_OF_MAP: &str = "
fn row_filter_of_map($x: [[i64]]) -> [[i64]] {
  $r: [[i64]] = map(|$row: [i64]| [] {
    $m: [i64] = map(|$v: i64| [] { $c7: i64 = const 7; $t: i64 = mul $v, $c7; $c1: i64 = const 1; $u: i64 = add $t, $c1; $u }, $row)
    $f: [i64] = filter(|$w: i64| [] { $c3: i64 = const 3; $m3: i64 = rem $w, $c3; $z: i64 = const 0; $e: bool = eq $m3, $z; $e }, $m)
    $f
  }, $x)
  $r
}";

pub const ROW_MAP_OF_FILTER: &str = "
fn row_map_of_filter($x: [[f32]]) -> [[f32]] {
  $r: [[f32]] = map(|$row: [f32]| [] {
    $f: [f32] = filter(|$v: f32| [] { $z: f32 = const 0.0; $g: bool = gt $v, $z; $g }, $row)
    $m: [f32] = map(|$w: f32| [] { $two: f32 = const 2.0; $t: f32 = mul $w, $two; $t }, $f)
    $m
  }, $x)
  $r
}";

pub const ROW_SUM_OF_FILTER: &str = "
fn row_sum_of_filter($x: [[i32]]) -> ([i32], [usize]) {
  $r: [i32] = map(|$row: [i32]| [] {
    $f: [i32] = filter(|$v: i32| [] { $two: i32 = const 2; $m: i32 = rem $v, $two; $z: i32 = const 0; $o: bool = ne $m, $z; $o }, $row)
    $s: i32 = sum($f)
    $s
  }, $x)
  $l: [usize] = map(|$row2: [i32]| [] {
    $f2: [i32] = filter(|$v2: i32| [] { $z2: i32 = const 0; $p: bool = gt $v2, $z2; $p }, $row2)
    $n: usize = len($f2)
    $n
  }, $x)
  $res: ([i32], [usize]) = tuple($r, $l)
  $res
}";

pub const ROW_NEIGHBOUR_DIFFS: &str = "
fn row_neighbour_diffs($x: [[i32]]) -> [[i32]] {
  $r: [[i32]] = map(|$row: [i32]| [] {
    $ix: [usize] = indices($row)
    $f: [usize] = filter(|$i: usize| [$row] { $one: usize = const 1; $j: usize = add $i, $one; $n: usize = len($row); $l: bool = lt $j, $n; $l }, $ix)
    $d: [i32] = map(|$k: usize| [$row] { $one2: usize = const 1; $k1: usize = add $k, $one2; $a: i32 = index(index) $row[$k1]; $b: i32 = index(index) $row[$k]; $t: i32 = sub $a, $b; $t }, $f)
    $d
  }, $x)
  $r
}";

pub const GATHER_KEPT_INDICES: &str = "
fn gather_kept_indices($idx: [[u32]], $x: [f32]) -> [[f32]] {
  $r: [[f32]] = map(|$row: [u32]| [$x] {
    $ok: [u32] = filter(|$j: u32| [$x] { $n: usize = len($x); $ju: usize = cast $j as usize; $l: bool = lt $ju, $n; $l }, $row)
    $g: [f32] = gather($x, $ok)
    $p: [f32] = filter(|$v: f32| [] { $z: f32 = const 0.0; $gt: bool = gt $v, $z; $gt }, $g)
    $p
  }, $idx)
  $r
}";

pub const PICK_ROWS: &str = "
fn pick_rows($x: [[i32]], $idx: [u32]) -> [[i32]] {
  $g: [[i32]] = gather($x, $idx)
  $g
}";

pub const IDENTITY_NESTED: &str = "
fn identity_nested($x: [[(i32, bool)]]) -> [[(i32, bool)]] {
  $x
}";

pub const ROWS_FROM_COUNTS: &str = "
fn rows_from_counts($counts: [u32]) -> [[u64]] {
  $r: [[u64]] = map(|$k: u32| [] {
    $n: usize = cast $k as usize
    $rg: [usize] = range($n)
    $m: [u64] = map(|$i: usize| [$k] { $sq: usize = mul $i, $i; $a: u64 = cast $sq as u64; $b: u64 = cast $k as u64; $t: u64 = add $a, $b; $t }, $rg)
    $m
  }, $counts)
  $r
}";

pub const ROW_INDEX: &str = "
fn row_index($x: [[i32]], $k: usize) -> [i32] {
  $r: [i32] = map(|$row: [i32]| [$k] { $v: i32 = index(index) $row[$k]; $v }, $x)
  $r
}";

pub const CENTERED_ROWS: &str = "
fn centered_rows($x: [[f64]]) -> [[f64]] {
  $r: [[f64]] = map(|$row: [f64]| [] {
    $s: f64 = sum($row)
    $n: usize = len($row)
    $nf: f64 = cast $n as f64
    $mean: f64 = div $s, $nf
    $m: [f64] = map(|$v: f64| [$mean] { $t: f64 = sub $v, $mean; $t }, $row)
    $m
  }, $x)
  $r
}";

pub const MAT_ROW_AND_COL0: &str = "
fn mat_row_and_col0($m: [[f64]], $i: usize) -> (f64, [f64]) {
  $row: [f64] = index(index) $m[$i]
  $s: f64 = sum($row)
  $c: [f64] = map(|$r: [f64]| [] { $z: usize = const 0; $v: f64 = index(index) $r[$z]; $v }, $m)
  $res: (f64, [f64]) = tuple($s, $c)
  $res
}";

pub const ROW_DOTS: &str = "
fn row_dots($x: [[f64]], $y: [[f64]]) -> [f64] {
  $r: [f64] = map(|$a: [f64], $b: [f64]| [] {
    $p: [f64] = map(|$u: f64, $v: f64| [] { $t: f64 = mul $u, $v; $t }, $a, $b)
    $s: f64 = sum($p)
    $s
  }, $x, $y)
  $r
}";

pub const PAIR_SUMS_PER_ROW: &str = "
fn pair_sums_per_row($x: [[i64]]) -> [i64] {
  $r: [i64] = map(|$row: [i64]| [] {
    $m: [i64] = map(|$v: i64| [$row] {
      $in: [i64] = map(|$w: i64| [$v] { $t: i64 = mul $v, $w; $t }, $row)
      $s: i64 = sum($in)
      $s
    }, $row)
    $s2: i64 = sum($m)
    $s2
  }, $x)
  $r
}";

pub const LAST_OF_ROW_SCAN: &str = "
fn last_of_row_scan($x: [[i64]], $k: usize) -> [i64] {
  $r: [i64] = map(|$row: [i64]| [$k] {
    $s: [i64] = scan(|$p: i64, $q: i64| [] { $t: i64 = max $p, $q; $t }, $row)
    $f: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = ge $v, $z; $g }, $s)
    $a: i64 = index(index) $s[$k]
    $b: i64 = index(index) $f[$k]
    $ab: i64 = add $a, $b
    $ab
  }, $x)
  $r
}";

pub const OFFSETS_OF: &str = "
fn offsets_of($x: [[i32]]) -> [usize] {
  $l: [usize] = map(|$row: [i32]| [] { $n: usize = len($row); $n }, $x)
  $z: usize = const 0
  $o: [usize] = exclusive_scan(|$p: usize, $q: usize| [] { $t: usize = add $p, $q; $t }, $l, $z)
  $o
}";

pub const TRANSCENDENTAL_F32: &str = "
fn transcendental_f32($x: [f32], $y: [f32]) -> [(f32, f32, f32, f32, f32, f32, f32, f32)] {
  $r: [(f32, f32, f32, f32, f32, f32, f32, f32)] = map(|$a: f32, $b: f32| [] {
    $e: f32 = exp $a
    $l: f32 = ln $a
    $l2: f32 = log2 $a
    $s: f32 = sin $a
    $c: f32 = cos $a
    $t: f32 = tanh $a
    $p: f32 = powf $a, $b
    $m: f32 = rem $a, $b
    $res: (f32, f32, f32, f32, f32, f32, f32, f32) = tuple($e, $l, $l2, $s, $c, $t, $p, $m)
    $res
  }, $x, $y)
  $r
}";

pub const TRANSCENDENTAL_F64: &str = "
fn transcendental_f64($x: [f64], $y: [f64]) -> [(f64, f64, f64, f64, f64, f64, f64, f64)] {
  $r: [(f64, f64, f64, f64, f64, f64, f64, f64)] = map(|$a: f64, $b: f64| [] {
    $e: f64 = exp $a
    $l: f64 = ln $a
    $l2: f64 = log2 $a
    $s: f64 = sin $a
    $c: f64 = cos $a
    $t: f64 = tanh $a
    $p: f64 = powf $a, $b
    $m: f64 = rem $a, $b
    $res: (f64, f64, f64, f64, f64, f64, f64, f64) = tuple($e, $l, $l2, $s, $c, $t, $p, $m)
    $res
  }, $x, $y)
  $r
}";

pub const ROW_HISTOGRAMS: &str = "
fn row_histograms($x: [[u32]]) -> [[u32]] {
  $r: [[u32]] = map(|$row: [u32]| [] {
    $n: usize = len($row)
    $one: u32 = const 1
    $ones: [u32] = replicate($one, $n)
    $bins: [u32] = map(|$v: u32| [] { $four: u32 = const 4; $b: u32 = rem $v, $four; $b }, $row)
    $zero: u32 = const 0
    $four2: usize = const 4
    $dst: [u32] = replicate($zero, $four2)
    $h: [u32] = scatter_reduce(|$p: u32, $q: u32| [] { $s: u32 = add $p, $q; $s }, $ones, $bins, $dst)
    $h
  }, $x)
  $r
}";

pub const ROW_PERMUTE_SCATTER: &str = "
fn row_permute_scatter($x: [[i32]], $idx: [[i64]]) -> ([[i32]], [[i32]]) {
  $p: [[i32]] = map(|$row: [i32], $ix: [i64]| [] {
    $q: [i32] = permute($row, $ix)
    $q
  }, $x, $idx)
  $s: [[i32]] = map(|$row2: [i32]| [] {
    $h: [i32] = map(|$v: i32| [] { $two: i32 = const 2; $d: i32 = div $v, $two; $d }, $row2)
    $ii: [usize] = indices($row2)
    $jj: [usize] = map(|$i: usize| [] { $two2: usize = const 2; $a: usize = div $i, $two2; $b: usize = mul $a, $two2; $b }, $ii)
    $sc: [i32] = scatter($h, $jj, $row2)
    $sc
  }, $x)
  $res: ([[i32]], [[i32]]) = tuple($p, $s)
  $res
}";

pub const ROW_ARGMAX: &str = "
fn row_argmax($x: [[f32]]) -> [(f32, usize)] {
  $r: [(f32, usize)] = map(|$row: [f32]| [] {
    $ii: [usize] = indices($row)
    $pairs: [(f32, usize)] = zip($row, $ii)
    $lo: f32 = const -1.0e30
    $z: usize = const 0
    $init: (f32, usize) = tuple($lo, $z)
    $m: (f32, usize) = reduce(|$p: (f32, usize), $q: (f32, usize)| [] {
      $p0: f32 = $p.0; $q0: f32 = $q.0; $p1: usize = $p.1; $q1: usize = $q.1
      $gt: bool = gt $q0, $p0
      $eq: bool = eq $q0, $p0
      $lt: bool = lt $q1, $p1
      $tie: bool = and $eq, $lt
      $take: bool = or $gt, $tie
      $best: (f32, usize) = if $take { $q } else { $p }
      $best
    }, $pairs, $init)
    $m
  }, $x)
  $r
}";

pub const ROWS_LONGER_THAN: &str = "
fn rows_longer_than($x: [[i32]], $k: usize) -> [[i32]] {
  $r: [[i32]] = filter(|$row: [i32]| [$k] { $n: usize = len($row); $g: bool = gt $n, $k; $g }, $x)
  $r
}";

pub const ROW_POSITIVES_AND_SUMS: &str = "
fn row_positives_and_sums($x: [[i32]]) -> ([[i32]], [i32]) {
  $m: [([i32], i32)] = map(|$row: [i32]| [] {
    $f: [i32] = filter(|$v: i32| [] { $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $row)
    $s: i32 = sum($row)
    $t: ([i32], i32) = tuple($f, $s)
    $t
  }, $x)
  $u: ([[i32]], [i32]) = unzip($m)
  $u
}";

pub const SUMS_OF_KEPT_ROWS: &str = "
fn sums_of_kept_rows($x: [[i64]]) -> [i64] {
  $f: [[i64]] = filter(|$row: [i64]| [] {
    $n: usize = len($row)
    $z: usize = const 0
    $ne: bool = gt $n, $z
    $h: bool = if $ne {
      $zi: usize = const 0
      $v: i64 = index(index) $row[$zi]
      $zv: i64 = const 0
      $p: bool = gt $v, $zv
      $p
    } else {
      $no: bool = const false
      $no
    }
    $h
  }, $x)
  $s: [i64] = map(|$r: [i64]| [] { $t: i64 = sum($r); $t }, $f)
  $s
}";

pub const RUNNING_BALANCES: &str = "
fn running_balances($amounts: [[i64]], $opening: [i64]) -> [[i64]] {
  $r: [[i64]] = map(|$row: [i64], $b0: i64| [] {
    $s: [i64] = scan(|$p: i64, $q: i64| [] { $t: i64 = add $p, $q; $t }, $row)
    $m: [i64] = map(|$v: i64| [$b0] { $u: i64 = add $b0, $v; $u }, $s)
    $m
  }, $amounts, $opening)
  $r
}";

pub const TWO_FAILURES_PER_ROW: &str = "
fn two_failures_per_row($x: [[i32]], $y: [i32]) -> [i32] {
  $r: [i32] = map(|$row: [i32]| [$y] {
    $m: [i32] = map(|$v: i32| [$y] {
      $a: i32 = index(index) $y[$v]
      $h: i32 = const 100
      $b: i32 = div $h, $v
      $t: i32 = add $a, $b
      $t
    }, $row)
    $s: i32 = sum($m)
    $s
  }, $x)
  $r
}";

/// Every program, with its name.
pub const ALL: &[(&str, &str)] = &[
    ("saxpy", SAXPY),
    ("sum_i64", SUM_I64),
    ("dot", DOT),
    ("sum_f32", SUM_F32),
    ("sum_map_gather", SUM_MAP_GATHER),
    ("filter_of_map", FILTER_OF_MAP),
    ("filter_none_or_all", FILTER_NONE_OR_ALL),
    ("scan_of_map", SCAN_OF_MAP),
    ("exclusive_scan_max", EXCLUSIVE_SCAN_MAX),
    ("float_scan", FLOAT_SCAN),
    ("affine_scan", AFFINE_SCAN),
    ("affine_exclusive_scan", AFFINE_EXCLUSIVE_SCAN),
    ("reduce_of_zip", REDUCE_OF_ZIP),
    ("min_max_of_map", MIN_MAX_OF_MAP),
    ("min_f64", MIN_F64),
    ("count_any_all_pred", COUNT_ANY_ALL_PRED),
    ("bools", BOOLS),
    ("scatter_of_map", SCATTER_OF_MAP),
    ("histogram", HISTOGRAM),
    ("histogram_f32", HISTOGRAM_F32),
    ("scatter_min_i32", SCATTER_MIN_I32),
    ("scatter_cas", SCATTER_CAS),
    ("permute_of_map", PERMUTE_OF_MAP),
    ("user_index", USER_INDEX),
    ("nested_sum", NESTED_SUM),
    ("nested_min", NESTED_MIN),
    ("nested_count_gather", NESTED_COUNT_GATHER),
    ("if_in_lambda", IF_IN_LAMBDA),
    ("replicate_map", REPLICATE_MAP),
    ("range_sum", RANGE_SUM),
    ("indices_map", INDICES_MAP),
    ("gather_of_gather", GATHER_OF_GATHER),
    ("int_ops", INT_OPS),
    ("casts", CASTS),
    ("math", MATH),
    ("tuple_map_unzip", TUPLE_MAP_UNZIP),
    ("mean", MEAN),
    ("host_index", HOST_INDEX),
    ("host_if", HOST_IF),
    ("filter_pairs", FILTER_PAIRS),
    ("div_in_reduce", DIV_IN_REDUCE),
    ("filter_then_sum", FILTER_THEN_SUM),
    ("scan_bool_or", SCAN_BOOL_OR),
    ("row_sums", ROW_SUMS),
    ("spmv_csr", SPMV_CSR),
    ("row_min_max", ROW_MIN_MAX),
    ("row_scan", ROW_SCAN),
    ("row_exclusive_scan", ROW_EXCLUSIVE_SCAN),
    ("row_filter_of_map", ROW_FILTER_OF_MAP),
    ("row_map_of_filter", ROW_MAP_OF_FILTER),
    ("row_sum_of_filter", ROW_SUM_OF_FILTER),
    ("row_neighbour_diffs", ROW_NEIGHBOUR_DIFFS),
    ("gather_kept_indices", GATHER_KEPT_INDICES),
    ("pick_rows", PICK_ROWS),
    ("identity_nested", IDENTITY_NESTED),
    ("rows_from_counts", ROWS_FROM_COUNTS),
    ("row_index", ROW_INDEX),
    ("centered_rows", CENTERED_ROWS),
    ("mat_row_and_col0", MAT_ROW_AND_COL0),
    ("row_dots", ROW_DOTS),
    ("pair_sums_per_row", PAIR_SUMS_PER_ROW),
    ("last_of_row_scan", LAST_OF_ROW_SCAN),
    ("offsets_of", OFFSETS_OF),
    ("row_histograms", ROW_HISTOGRAMS),
    ("row_permute_scatter", ROW_PERMUTE_SCATTER),
    ("row_argmax", ROW_ARGMAX),
    ("rows_longer_than", ROWS_LONGER_THAN),
    ("row_positives_and_sums", ROW_POSITIVES_AND_SUMS),
    ("sums_of_kept_rows", SUMS_OF_KEPT_ROWS),
    ("running_balances", RUNNING_BALANCES),
    ("two_failures_per_row", TWO_FAILURES_PER_ROW),
    ("transcendental_f32", TRANSCENDENTAL_F32),
    ("transcendental_f64", TRANSCENDENTAL_F64),
];

/// The nested programs (also in [`ALL`]).
pub const NESTED: &[(&str, &str)] = &[
    ("row_sums", ROW_SUMS),
    ("spmv_csr", SPMV_CSR),
    ("row_min_max", ROW_MIN_MAX),
    ("row_scan", ROW_SCAN),
    ("row_exclusive_scan", ROW_EXCLUSIVE_SCAN),
    ("row_filter_of_map", ROW_FILTER_OF_MAP),
    ("row_map_of_filter", ROW_MAP_OF_FILTER),
    ("row_sum_of_filter", ROW_SUM_OF_FILTER),
    ("row_neighbour_diffs", ROW_NEIGHBOUR_DIFFS),
    ("gather_kept_indices", GATHER_KEPT_INDICES),
    ("pick_rows", PICK_ROWS),
    ("identity_nested", IDENTITY_NESTED),
    ("rows_from_counts", ROWS_FROM_COUNTS),
    ("row_index", ROW_INDEX),
    ("centered_rows", CENTERED_ROWS),
    ("mat_row_and_col0", MAT_ROW_AND_COL0),
    ("row_dots", ROW_DOTS),
    ("pair_sums_per_row", PAIR_SUMS_PER_ROW),
    ("last_of_row_scan", LAST_OF_ROW_SCAN),
    ("offsets_of", OFFSETS_OF),
    ("row_histograms", ROW_HISTOGRAMS),
    ("row_permute_scatter", ROW_PERMUTE_SCATTER),
    ("row_argmax", ROW_ARGMAX),
    ("rows_longer_than", ROWS_LONGER_THAN),
    ("row_positives_and_sums", ROW_POSITIVES_AND_SUMS),
    ("sums_of_kept_rows", SUMS_OF_KEPT_ROWS),
    ("running_balances", RUNNING_BALANCES),
    ("two_failures_per_row", TWO_FAILURES_PER_ROW),
];
