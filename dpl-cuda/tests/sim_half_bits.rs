//! `f16` and `bf16` operations on the simulator give the reference interpreter's bits
//! exactly, NaNs included: `+ - * /`, `neg`, `abs`, `min`, `max`, `floor`, `round`, `sqrt`,
//! `mul_add`, comparisons and a value only moved, on every pair of special operands (signed zeros, subnormals,
//! the extremes of each binade class, infinities, NaNs with and without payloads) and on
//! many random bit patterns (some NaNs and infinities among them) and random close pairs
//! (whose sums and differences round at ties). The interpreter computes in `f32` and
//! rounds once with the `half` crate, every NaN an operation produces canonical, a moved
//! NaN keeping its payload — dpl's contract on every place.

mod support;

use dpl_core::float16::{bf16, f16};
use dpl_core::interp::{self, Value};
use dpl_cuda::sim::SimDriver;
use support::*;

/// Every operation on a pair `(a, b)`, as a tuple per element.
fn program(t: &str) -> String {
    format!(
        "fn ops($x: [{t}], $y: [{t}]) -> [({t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, bool, bool)] {{
  $r: [({t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, bool, bool)] = map(|$a: {t}, $b: {t}| [] {{
    $s: {t} = add $a, $b
    $d: {t} = sub $a, $b
    $p: {t} = mul $a, $b
    $q: {t} = div $a, $b
    $n: {t} = neg $a
    $lo: {t} = min $a, $b
    $hi: {t} = max $a, $b
    $ab: {t} = abs $a
    $fl: {t} = floor $a
    $ro: {t} = round $a
    $sq: {t} = sqrt $a
    $f: {t} = mul_add $a, $b, $b
    $lt: bool = lt $a, $b
    $eq: bool = eq $a, $b
    $res: ({t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, {t}, bool, bool) = tuple($s, $d, $p, $q, $n, $lo, $hi, $ab, $fl, $ro, $sq, $f, $a, $lt, $eq)
    $res
  }}, $x, $y)
  $r
}}"
    )
}

/// Special bit patterns of `f16`.
const F16_SPECIALS: [u16; 22] = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x83ff, 0x0400, 0x8400, 0x3c00, 0xbc00, 0x3c01, 0x3bff,
    0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x7fff, 0x5bff,
];

/// Special bit patterns of `bf16`.
const BF16_SPECIALS: [u16; 22] = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x807f, 0x0080, 0x8080, 0x3f80, 0xbf80, 0x3f81, 0x3f7f,
    0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81, 0xffa5, 0x7fff, 0x4b7f,
];

/// The operand pairs: the specials crossed, random bits, and random pairs one or two
/// binades apart with nearby significands.
fn pairs(specials: &[u16], seed: u64) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    for &a in specials {
        for &b in specials {
            out.push((a, b));
        }
    }
    let mut r = Rng::new(seed);
    for _ in 0..6000 {
        out.push((r.u32() as u16, r.u32() as u16));
    }
    for _ in 0..6000 {
        let a = r.u32() as u16;
        let delta = r.int_in(-0x900..=0x900) as i32;
        let b = (i32::from(a) + delta) as u16 ^ if r.bool() { 0x8000 } else { 0 };
        out.push((a, b));
    }
    out
}

/// The bits of a 16-bit float value, or a `bool`'s 0 or 1.
fn bits(v: &Value) -> u16 {
    match v {
        Value::F16(h) => h.to_bits(),
        Value::BF16(h) => h.to_bits(),
        Value::Bool(b) => u16::from(*b),
        other => panic!("not a 16-bit float or a bool: {other}"),
    }
}

/// Runs the program over `t` on the simulator and in the interpreter and compares every
/// leaf's bits.
fn check(t: &str, specials: &[u16], make: fn(u16) -> Value, seed: u64) {
    const NAMES: [&str; 15] = [
        "add", "sub", "mul", "div", "neg", "min", "max", "abs", "floor", "round", "sqrt",
        "mul_add", "moved", "lt", "eq",
    ];
    let src = program(t);
    let c = compiled(&src);
    let prog = dpl_cuda::compile(&c.fused).unwrap_or_else(|e| panic!("{e}\n{}", c.fused));
    let ps = pairs(specials, seed);
    let x = Value::seq(ps.iter().map(|p| make(p.0)).collect());
    let y = Value::seq(ps.iter().map(|p| make(p.1)).collect());
    let want = interp::run(&c.fused, vec![x.clone(), y.clone()]).expect("the interpreter runs");
    let got = dpl_cuda::run(&prog, &SimDriver::default(), vec![x, y]).expect("the simulator runs");
    let (Value::Seq(w), Value::Seq(g)) = (&want, &got) else {
        panic!("not sequences: {want} / {got}");
    };
    assert_eq!(w.len(), ps.len());
    assert_eq!(g.len(), ps.len());
    let mut wrong = Vec::new();
    for (i, (wt, gt)) in w.iter().zip(g.iter()).enumerate() {
        let (Value::Tuple(wl), Value::Tuple(gl)) = (wt, gt) else {
            panic!("not tuples: {wt} / {gt}");
        };
        for (k, (a, b)) in wl.iter().zip(gl.iter()).enumerate() {
            if bits(a) != bits(b) {
                wrong.push(format!(
                    "{t} {} of {:#06x}, {:#06x}: want {:#06x}, got {:#06x}",
                    NAMES[k],
                    ps[i].0,
                    ps[i].1,
                    bits(a),
                    bits(b)
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} leaves differ, the first: {:#?}",
        wrong.len(),
        &wrong[..wrong.len().min(20)]
    );
}

#[test]
fn f16_operations_give_the_interpreters_bits() {
    check("f16", &F16_SPECIALS, |b| Value::F16(f16::from_bits(b)), 21);
}

#[test]
fn bf16_operations_give_the_interpreters_bits() {
    check(
        "bf16",
        &BF16_SPECIALS,
        |b| Value::BF16(bf16::from_bits(b)),
        22,
    );
}
