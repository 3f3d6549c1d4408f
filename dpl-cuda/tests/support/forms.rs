//! Programs of the forms `tests/sim_forms.rs` runs on the simulator (also assembled by
//! `tests/ptxas.rs`): top-level `scatter_reduce` of `bool`s and of tuples; per-element
//! `scatter`/`scatter_reduce`/`permute` results read again inside the element function;
//! per-element sequences chosen by an `if`; a per-element `scatter` into a per-row
//! `filter` or into a sequence an `if` chooses, read again (their temporaries sized by
//! the longest row); a tuple holding a sequence chosen by an `if` per element, read.

pub const BOOL_OPS: &str = "
fn bool_ops($v: [bool], $idx: [usize], $d: [bool]) -> ([bool], [bool], [bool], [bool]) {
  $o: [bool] = scatter_reduce(|$a: bool, $b: bool| [] { $x1: bool = or $a, $b; $x1 }, $v, $idx, $d)
  $n: [bool] = scatter_reduce(|$a2: bool, $b2: bool| [] { $x2: bool = and $b2, $a2; $x2 }, $v, $idx, $d)
  $x: [bool] = scatter_reduce(|$a3: bool, $b3: bool| [] { $x3: bool = xor $a3, $b3; $x3 }, $v, $idx, $d)
  $e: [bool] = scatter_reduce(|$a4: bool, $b4: bool| [] { $x4: bool = eq $a4, $b4; $x4 }, $v, $idx, $d)
  $r: ([bool], [bool], [bool], [bool]) = tuple($o, $n, $x, $e)
  $r
}";

pub const PAIR_LEAFWISE: &str = "
fn pair_leafwise($v: [(i64, (u32, bool))], $idx: [usize], $d: [(i64, (u32, bool))]) -> [(i64, (u32, bool))] {
  $r: [(i64, (u32, bool))] = scatter_reduce(|$a: (i64, (u32, bool)), $b: (i64, (u32, bool))| [] {
    $a0: i64 = $a.0; $b0: i64 = $b.0; $s0: i64 = add $b0, $a0
    $a1: (u32, bool) = $a.1; $b1: (u32, bool) = $b.1
    $a10: u32 = $a1.0; $b10: u32 = $b1.0; $m: u32 = max $a10, $b10
    $a11: bool = $a1.1; $b11: bool = $b1.1; $o: bool = and $a11, $b11
    $in: (u32, bool) = tuple($m, $o)
    $t: (i64, (u32, bool)) = tuple($s0, $in)
    $t
  }, $v, $idx, $d)
  $r
}";

pub const SUM_AND_COUNT: &str = "
fn sum_and_count($v: [(f64, u64)], $idx: [i32], $d: [(f64, u64)]) -> [(f64, u64)] {
  $r: [(f64, u64)] = scatter_reduce(|$a: (f64, u64), $b: (f64, u64)| [] {
    $a0: f64 = $a.0; $b0: f64 = $b.0; $s0: f64 = add $a0, $b0
    $a1: u64 = $a.1; $b1: u64 = $b.1; $s1: u64 = add $a1, $b1
    $t: (f64, u64) = tuple($s0, $s1)
    $t
  }, $v, $idx, $d)
  $r
}";

pub const ARGMIN_BY_SLOT: &str = "
fn argmin_by_slot($v: [(f64, usize)], $idx: [usize], $d: [(f64, usize)]) -> [(f64, usize)] {
  $r: [(f64, usize)] = scatter_reduce(|$p: (f64, usize), $q: (f64, usize)| [] {
    $p0: f64 = $p.0; $q0: f64 = $q.0; $p1: usize = $p.1; $q1: usize = $q.1
    $lt: bool = lt $q0, $p0
    $eq: bool = eq $q0, $p0
    $first: bool = lt $q1, $p1
    $tie: bool = and $eq, $first
    $take: bool = or $lt, $tie
    $best: (f64, usize) = if $take { $q } else { $p }
    $best
  }, $v, $idx, $d)
  $r
}";

pub const BOOL_PAIRS: &str = "
fn bool_pairs($v: [(bool, i32)], $idx: [usize], $d: [(bool, i32)]) -> [(bool, i32)] {
  $r: [(bool, i32)] = scatter_reduce(|$p: (bool, i32), $q: (bool, i32)| [] {
    $p0: bool = $p.0; $q0: bool = $q.0; $p1: i32 = $p.1; $q1: i32 = $q.1
    $both: bool = and $p0, $q0
    $s: i32 = add $p1, $q1
    $one: i32 = const 1
    $s1: i32 = add $s, $one
    $t: (bool, i32) = tuple($both, $s1)
    $t
  }, $v, $idx, $d)
  $r
}";

pub const ROW_SCATTER_SUM: &str = "
fn row_scatter_sum($x: [[i64]], $d: [i64]) -> [i64] {
  $r: [i64] = map(|$row: [i64]| [$d] {
    $ix: [usize] = indices($row)
    $s: [i64] = scatter($row, $ix, $d)
    $t: i64 = sum($s)
    $t
  }, $x)
  $r
}";

pub const ROW_HISTOGRAM_READ: &str = "
fn row_histogram_read($x: [[u32]], $k: usize) -> [(u32, u32, usize)] {
  $r: [(u32, u32, usize)] = map(|$row: [u32]| [$k] {
    $n: usize = len($row)
    $one: u32 = const 1
    $ones: [u32] = replicate($one, $n)
    $bins: [usize] = map(|$v: u32| [] { $four: u32 = const 4; $b: u32 = rem $v, $four; $bu: usize = cast $b as usize; $bu }, $row)
    $zero: u32 = const 0
    $four2: usize = const 4
    $dst: [u32] = replicate($zero, $four2)
    $h: [u32] = scatter_reduce(|$p: u32, $q: u32| [] { $s: u32 = add $p, $q; $s }, $ones, $bins, $dst)
    $m: u32 = max($h)
    $hk: u32 = index(index) $h[$k]
    $nz: usize = count(|$c: u32| [] { $z: u32 = const 0; $g: bool = gt $c, $z; $g }, $h)
    $t: (u32, u32, usize) = tuple($m, $hk, $nz)
    $t
  }, $x)
  $r
}";

pub const PERMUTED_LOOKUPS: &str = "
fn permuted_lookups($ks: [usize], $v: [(i64, bool)], $perm: [usize]) -> [(i64, bool)] {
  $r: [(i64, bool)] = map(|$k: usize| [$v, $perm] {
    $q: [(i64, bool)] = permute($v, $perm)
    $e: (i64, bool) = index(index) $q[$k]
    $e
  }, $ks)
  $r
}";

pub const ROW_IF_SEQ: &str = "
fn row_if_seq($x: [[i32]]) -> [[i32]] {
  $r: [[i32]] = map(|$row: [i32]| [] {
    $n: usize = len($row)
    $two: usize = const 2
    $long: bool = gt $n, $two
    $s: [i32] = if $long {
      $f: [i32] = filter(|$v: i32| [] { $z: i32 = const 0; $g: bool = gt $v, $z; $g }, $row)
      $f
    } else {
      $m: [i32] = map(|$w: i32| [] { $t: i32 = const 2; $d: i32 = mul $w, $t; $d }, $row)
      $m
    }
    $s
  }, $x)
  $r
}";

pub const ROW_IF_SEQ_READ: &str = "
fn row_if_seq_read($x: [[i64]], $y: [i64]) -> [(i64, usize, i64)] {
  $r: [(i64, usize, i64)] = map(|$row: [i64]| [$y] {
    $n: usize = len($row)
    $three: usize = const 3
    $short: bool = lt $n, $three
    $s: [i64] = if $short {
      $y
    } else {
      $sc: [i64] = scan(|$a: i64, $b: i64| [] { $ab: i64 = add $a, $b; $ab }, $row)
      $sc
    }
    $t: i64 = sum($s)
    $l: usize = len($s)
    $z: usize = const 0
    $first: i64 = index(index) $s[$z]
    $res: (i64, usize, i64) = tuple($t, $l, $first)
    $res
  }, $x)
  $r
}";

pub const ROW_PERMUTE_READ: &str = "
fn row_permute_read($x: [[i64]], $idx: [[usize]]) -> [(i64, i64)] {
  $r: [(i64, i64)] = map(|$row: [i64], $ix: [usize]| [] {
    $q: [i64] = permute($row, $ix)
    $qi: [usize] = indices($q)
    $w: [i64] = map(|$j: usize| [$q] { $e: i64 = index(index) $q[$j]; $jj: i64 = cast $j as i64; $m: i64 = mul $e, $jj; $m }, $qi)
    $ws: i64 = sum($w)
    $h: [i64] = map(|$v: i64| [] { $two: i64 = const 2; $d: i64 = div $v, $two; $d }, $row)
    $ii: [usize] = indices($row)
    $half: [usize] = map(|$i: usize| [] { $two2: usize = const 2; $a: usize = div $i, $two2; $a }, $ii)
    $sc: [i64] = scatter($h, $half, $row)
    $si: [usize] = indices($sc)
    $w2: [i64] = map(|$k: usize| [$sc] { $e2: i64 = index(index) $sc[$k]; $kk: i64 = cast $k as i64; $m2: i64 = mul $e2, $kk; $m2 }, $si)
    $ws2: i64 = sum($w2)
    $t: (i64, i64) = tuple($ws, $ws2)
    $t
  }, $x, $idx)
  $r
}";

pub const FILTER_SCATTER_READ: &str = "
fn filter_scatter_read($x: [[i64]], $idx: [[usize]]) -> [(i64, usize, i64, i64)] {
  $r: [(i64, usize, i64, i64)] = map(|$row: [i64], $ix: [usize]| [] {
    $f: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $row)
    $jx: [usize] = indices($ix)
    $vals: [i64] = map(|$j: usize| [] { $ji: i64 = cast $j as i64; $ten: i64 = const 10; $m: i64 = mul $ji, $ten; $one: i64 = const 1; $m1: i64 = add $m, $one; $m1 }, $jx)
    $s: [i64] = scatter($vals, $ix, $f)
    $si: [usize] = indices($s)
    $w: [i64] = map(|$k: usize| [$s] { $e: i64 = index(index) $s[$k]; $kk: i64 = cast $k as i64; $p: i64 = mul $e, $kk; $p }, $si)
    $ws: i64 = sum($w)
    $l: usize = len($s)
    $fi: [usize] = indices($f)
    $s2: [i64] = scatter($f, $fi, $f)
    $t2: i64 = sum($s2)
    $n: usize = len($row)
    $five: usize = const 5
    $short: bool = lt $n, $five
    $c: [i64] = if $short { $row } else { $f }
    $ci: [usize] = indices($c)
    $cr: [usize] = map(|$q: usize| [] { $two: usize = const 2; $h: usize = div $q, $two; $h }, $ci)
    $s3: [i64] = scatter($c, $cr, $c)
    $ci3: [usize] = indices($s3)
    $w3: [i64] = map(|$k3: usize| [$s3] { $e3: i64 = index(index) $s3[$k3]; $kk3: i64 = cast $k3 as i64; $p3: i64 = mul $e3, $kk3; $p3 }, $ci3)
    $t3: i64 = sum($w3)
    $res: (i64, usize, i64, i64) = tuple($ws, $l, $t2, $t3)
    $res
  }, $x, $idx)
  $r
}";

pub const ROW_IF_PAIR_READ: &str = "
fn row_if_pair_read($x: [[i64]], $y: [i64]) -> [(i64, usize, i64, i64)] {
  $r: [(i64, usize, i64, i64)] = map(|$row: [i64]| [$y] {
    $n: usize = len($row)
    $four: usize = const 4
    $long: bool = gt $n, $four
    $p: (i64, ([i64], usize)) = if $long {
      $f: [i64] = filter(|$v: i64| [] { $z: i64 = const 0; $g: bool = gt $v, $z; $g }, $row)
      $fs: i64 = sum($row)
      $fn: usize = len($f)
      $fin: ([i64], usize) = tuple($f, $fn)
      $pt: (i64, ([i64], usize)) = tuple($fs, $fin)
      $pt
    } else {
      $sc: [i64] = scan(|$a: i64, $b: i64| [] { $ab: i64 = add $a, $b; $ab }, $y)
      $two: i64 = const 2
      $yn: usize = len($y)
      $yin: ([i64], usize) = tuple($sc, $yn)
      $py: (i64, ([i64], usize)) = tuple($two, $yin)
      $py
    }
    $pa: i64 = $p.0
    $q: ([i64], usize) = $p.1
    $s: [i64] = $q.0
    $m: usize = $q.1
    $t: i64 = sum($s)
    $l: usize = len($s)
    $z2: usize = const 0
    $first: i64 = index(index) $s[$z2]
    $lm: usize = add $l, $m
    $res: (i64, usize, i64, i64) = tuple($t, $lm, $pa, $first)
    $res
  }, $x)
  $r
}";

/// Every program above, by name.
pub const FORMS: &[(&str, &str)] = &[
    ("bool_ops", BOOL_OPS),
    ("pair_leafwise", PAIR_LEAFWISE),
    ("sum_and_count", SUM_AND_COUNT),
    ("argmin_by_slot", ARGMIN_BY_SLOT),
    ("bool_pairs", BOOL_PAIRS),
    ("row_scatter_sum", ROW_SCATTER_SUM),
    ("row_histogram_read", ROW_HISTOGRAM_READ),
    ("permuted_lookups", PERMUTED_LOOKUPS),
    ("row_if_seq", ROW_IF_SEQ),
    ("row_if_seq_read", ROW_IF_SEQ_READ),
    ("row_permute_read", ROW_PERMUTE_READ),
    ("filter_scatter_read", FILTER_SCATTER_READ),
    ("row_if_pair_read", ROW_IF_PAIR_READ),
];

/// The programs above with a `[[T]]` parameter, also compiled with a warp and a block per
/// element.
pub const FORMS_NESTED: &[(&str, &str)] = &[
    ("row_scatter_sum", ROW_SCATTER_SUM),
    ("row_histogram_read", ROW_HISTOGRAM_READ),
    ("row_if_seq", ROW_IF_SEQ),
    ("row_if_seq_read", ROW_IF_SEQ_READ),
    ("row_permute_read", ROW_PERMUTE_READ),
    ("filter_scatter_read", FILTER_SCATTER_READ),
    ("row_if_pair_read", ROW_IF_PAIR_READ),
];
