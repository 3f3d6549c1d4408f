//! Random typed IR programs for differential testing: [`program`] writes program number
//! `seed` in the IR text form (`dpl_core::text::parse_named`), [`inputs`] its inputs for a
//! length. One generator serves every place: the interpreter-against-simulator test of
//! dpl-cuda (`tests/sim_random_programs.rs`) and the programs compiled as Rust for
//! `Place::Seq` and `Place::Cpu` (the `dpl-random` crate).
//!
//! A program chains the primitives at random over `i64` data, so that every result is
//! exact: element-wise maps of one or two sequences (and of zipped pairs) with captured
//! scalars, filters, inclusive and exclusive scans, reductions (`reduce`, `sum`, `min`,
//! `max`, `count`, `any`, `all`), gathers through computed indices, permutations and
//! scatters through rotations and reversals, `sort`, `sort_by_key`, `scatter_reduce`
//! histograms, and nested forms over rows (`[[i64]]`): per-row reductions, scans, filters,
//! maps and loops, and rows built from ranges. Element functions contain loops with
//! loop-carried `i64` variables: counted loops (`for i in 0..n`), while-loops that stop on
//! a condition (`break`), loops that carry two values and read both, loops nested in loops
//! and in `if` branches, and loops reading a row or a captured sequence by index. Every
//! trip count is bounded (at most 15, 7 inside another loop), so programs terminate. One
//! program in four ends with a loop at the top level of its body that carries a sequence
//! (replaced at each of up to 4 iterations by a map, a filter or a scan of it) and a sum. Division and
//! remainder by zero, reductions without a start value of empty sequences and indices out
//! of range are possible: errors to agree on.
//!
//! Every value a program makes is used: the sequences and scalars no later statement
//! reads are summed into the scalar it returns.

use crate::SplitMix64 as Rng;
use std::fmt::Write as _;

/// The program's signature: `fn random<seed>($a: [i64], $b: [i64], $k: i64, $rows:
/// [[i64]]) -> ([i64], i64)`; `$a`, `$b` and `$rows` have one length.
pub const PARAMS: &str = "$a: [i64], $b: [i64], $k: i64, $rows: [[i64]]";

/// The lengths of the inputs each program is checked on.
pub const LENGTHS: [usize; 4] = [0, 1, 33, 1000];

/// A sequence value of the program being generated: its name and its length class (two
/// sequences of one class have the same length whatever the inputs).
#[derive(Clone)]
struct SeqVal {
    name: String,
    class: usize,
}

/// The program being generated.
struct Gen<'r> {
    rng: &'r mut Rng,
    body: String,
    /// Flat sequences (`[i64]`).
    seqs: Vec<SeqVal>,
    /// Nested sequences (`[[i64]]`); the class is that of the number of rows.
    nested: Vec<SeqVal>,
    scalars: Vec<String>,
    fresh: usize,
    classes: usize,
}

/// How many times variable `name` occurs in `text` (not counting longer names it starts).
fn occurrences(text: &str, name: &str) -> usize {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name)
        .filter(|(i, _)| !text[i + name.len()..].starts_with(ident))
        .count()
}

/// The binary operators of element functions.
const OPS: [&str; 11] = [
    "add", "sub", "mul", "xor", "and", "or", "max", "min", "div", "rem", "shr",
];

/// The associative operators of reductions and scans.
const ASSOC: [&str; 5] = ["add", "max", "min", "xor", "or"];

/// Comparisons.
const CMPS: [&str; 6] = ["gt", "lt", "ne", "ge", "le", "eq"];

impl Gen<'_> {
    fn name(&mut self, stem: &str) -> String {
        self.fresh += 1;
        format!("${stem}{}", self.fresh)
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.rng.below(xs.len())]
    }

    /// Whether a statement reads `name`, a variable defined by the body.
    fn is_read(&self, name: &str) -> bool {
        occurrences(&self.body, name) > 1
    }

    fn seq(&mut self) -> SeqVal {
        self.seqs[self.rng.below(self.seqs.len())].clone()
    }

    /// A flat sequence of the class of `x`.
    fn seq_like(&mut self, x: &SeqVal) -> SeqVal {
        let same: Vec<SeqVal> = self
            .seqs
            .iter()
            .filter(|s| s.class == x.class)
            .cloned()
            .collect();
        self.pick(&same).clone()
    }

    fn nested(&mut self) -> SeqVal {
        self.nested[self.rng.below(self.nested.len())].clone()
    }

    fn scalar(&mut self) -> String {
        self.scalars[self.rng.below(self.scalars.len())].clone()
    }

    /// A small constant, sometimes zero (a divisor of zero is an error to agree on).
    fn constant(&mut self) -> i64 {
        *self.pick(&[0, 1, 2, 3, 7, -5, 64, 1 << 40, i64::MIN, i64::MAX])
    }

    fn line(&mut self, text: &str) {
        self.body.push_str("  ");
        self.body.push_str(text);
        self.body.push('\n');
    }

    /// A new flat sequence (of a new length class when `class` is `None`).
    fn push_seq(&mut self, name: String, class: Option<usize>) {
        let class = class.unwrap_or_else(|| {
            self.classes += 1;
            self.classes
        });
        self.seqs.push(SeqVal { name, class });
    }

    /// Statements of an element function computing `out` (an `i64`) from `inputs` (`i64`
    /// variables in scope), 1 to 3 steps; `loops`: how deep loops may still nest here.
    fn elem_body(&mut self, inputs: &[String], out: &str, loops: u32) -> String {
        let mut text = String::new();
        let mut avail: Vec<String> = inputs.to_vec();
        let steps = self.rng.int_in(1..=3);
        for s in 0..steps {
            let r = if s + 1 == steps {
                out.to_string()
            } else {
                self.name("t")
            };
            match self.rng.below(10) {
                0 | 1 if loops > 0 => self.loop_step(&mut text, &avail, &r, loops),
                2 if loops > 0 => self.if_step(&mut text, &avail, &r, loops - 1),
                _ => self.op_step(&mut text, &avail, &r),
            }
            avail.push(r);
        }
        text
    }

    /// `r = a op b` (or `op c` with a constant).
    fn op_step(&mut self, text: &mut String, avail: &[String], r: &str) {
        let a = self.pick(avail).clone();
        let op = *self.pick(&OPS);
        let b = if self.rng.bool() || op == "shr" {
            let c = self.name("c");
            let k = if op == "shr" {
                self.rng.int_in(0..=63)
            } else {
                self.constant()
            };
            write!(text, "{c}: i64 = const {k}; ").unwrap();
            c
        } else {
            self.pick(avail).clone()
        };
        if op == "shr" {
            // The shift amount as the IR wants it: a `u32` below 64.
            let k = self.name("k");
            write!(
                text,
                "{k}: u32 = cast {b} as u32; {r}: i64 = shr {a}, {k}; "
            )
            .unwrap();
        } else {
            write!(text, "{r}: i64 = {op} {a}, {b}; ").unwrap();
        }
    }

    /// `c = a cmp b` (a `bool`), `b` a variable or a constant.
    fn condition(&mut self, text: &mut String, avail: &[String]) -> String {
        let a = self.pick(avail).clone();
        let b = if self.rng.bool() {
            let k = self.name("th");
            let v = self.rng.int_in(-100..=100);
            write!(text, "{k}: i64 = const {v}; ").unwrap();
            k
        } else {
            self.pick(avail).clone()
        };
        let (c, cmp) = (self.name("cond"), *self.pick(&CMPS));
        write!(text, "{c}: bool = {cmp} {a}, {b}; ").unwrap();
        c
    }

    /// `r = if c { .. } else { .. }`, each branch an element body of its own.
    fn if_step(&mut self, text: &mut String, avail: &[String], r: &str, loops: u32) {
        let c = self.condition(text, avail);
        let (x, y) = (self.name("x"), self.name("y"));
        let then = self.elem_body(avail, &x, loops);
        let other = self.elem_body(avail, &y, loops);
        write!(
            text,
            "{r}: i64 = if {c} {{ {then}{x} }} else {{ {other}{y} }}; "
        )
        .unwrap();
    }

    /// A trip count (`i64`): a constant or the low bits of a variable, at most 15 for an
    /// outer loop (`outer`) and 7 for a loop inside another.
    fn trip(&mut self, text: &mut String, avail: &[String], outer: bool) -> String {
        let (n, max) = (self.name("n"), if outer { 15 } else { 7 });
        if self.rng.bool() {
            let v = self.rng.int_in(0..=max - 3);
            write!(text, "{n}: i64 = const {v}; ").unwrap();
        } else {
            let (a, m) = (self.pick(avail).clone(), self.name("mask"));
            write!(text, "{m}: i64 = const {max}; {n}: i64 = and {a}, {m}; ").unwrap();
        }
        n
    }

    /// `r` computed by a loop: counted (`for i in 0..n`), stopping early on a condition
    /// (`while` / `break`), or carrying two values that the body reads both of.
    fn loop_step(&mut self, text: &mut String, avail: &[String], r: &str, loops: u32) {
        let (i, s, lp, z, one, i1, s1, next) = (
            self.name("i"),
            self.name("s"),
            self.name("lp"),
            self.name("z"),
            self.name("one"),
            self.name("i"),
            self.name("s"),
            self.name("next"),
        );
        let init = self.pick(avail).clone();
        let n = self.trip(text, avail, loops >= 2);
        write!(text, "{z}: i64 = const 0; ").unwrap();
        let mut inner: Vec<String> = avail.to_vec();
        inner.extend([i.clone(), s.clone()]);
        let carried = self.rng.below(3);
        match carried {
            0 => {
                // for i in 0..n { s = f(s, i, ..) }
                let body = self.elem_body(&inner, &s1, loops - 1);
                write!(
                    text,
                    "{lp}: (i64, i64) = loop({i}: i64 = {z}, {s}: i64 = {init}) while {{ \
                     {r}more: bool = lt {i}, {n}; {r}more }} do {{ {body}\
                     {one}: i64 = const 1; {i1}: i64 = add {i}, {one}; \
                     {next}: (i64, i64) = tuple({i1}, {s1}); {next} }}; "
                )
                .unwrap();
            }
            1 => {
                // while i < n && go { s = f(s, i, ..); if cond(s) { break } }
                let (go, go0, go1) = (self.name("go"), self.name("go"), self.name("go"));
                let mut body = self.elem_body(&inner, &s1, loops - 1);
                let mut after = inner.clone();
                after.push(s1.clone());
                let c = self.condition(&mut body, &after);
                write!(
                    text,
                    "{go0}: bool = const true; \
                     {lp}: (i64, i64, bool) = loop({i}: i64 = {z}, {s}: i64 = {init}, {go}: bool = {go0}) while {{ \
                     {r}more: bool = lt {i}, {n}; {r}both: bool = and {r}more, {go}; {r}both }} do {{ {body}\
                     {go1}: bool = not {c}; \
                     {one}: i64 = const 1; {i1}: i64 = add {i}, {one}; \
                     {next}: (i64, i64, bool) = tuple({i1}, {s1}, {go1}); {next} }}; "
                )
                .unwrap();
            }
            _ => {
                // (s, t) = (t, f(s, t, i, ..)): the next values must not overwrite each other.
                debug_assert_eq!(carried, 2);
                let (t, t0) = (self.name("u"), self.pick(avail).clone());
                inner.push(t.clone());
                let body = self.elem_body(&inner, &s1, loops - 1);
                write!(
                    text,
                    "{lp}: (i64, i64, i64) = loop({i}: i64 = {z}, {s}: i64 = {init}, {t}: i64 = {t0}) while {{ \
                     {r}more: bool = lt {i}, {n}; {r}more }} do {{ {body}\
                     {one}: i64 = const 1; {i1}: i64 = add {i}, {one}; \
                     {next}: (i64, i64, i64) = tuple({i1}, {t}, {s1}); {next} }}; "
                )
                .unwrap();
            }
        }
        // Mostly the value computed; sometimes the counter, or the other carried value.
        let field = match self.rng.below(6) {
            0 => 0,
            1 if carried == 2 => 2,
            _ => 1,
        };
        write!(text, "{r}: i64 = {lp}.{field}; ").unwrap();
    }

    /// Captured scalars for an element function: none, or one of the program's.
    fn captures(&mut self) -> Vec<String> {
        if self.rng.below(3) == 0 {
            vec![self.scalar()]
        } else {
            Vec::new()
        }
    }

    /// An associative operator as a lambda.
    fn op_lambda(&mut self) -> String {
        let (a, b, r) = (self.name("a"), self.name("b"), self.name("r"));
        let op = *self.pick(&ASSOC);
        format!("|{a}: i64, {b}: i64| [] {{ {r}: i64 = {op} {a}, {b}; {r} }}")
    }

    /// A predicate over `i64`s as a lambda.
    fn predicate(&mut self) -> String {
        let (v, k, c) = (self.name("v"), self.name("k"), self.name("c"));
        let threshold = self.rng.int_in(-100..=100);
        let cmp = *self.pick(&CMPS);
        format!("|{v}: i64| [] {{ {k}: i64 = const {threshold}; {c}: bool = {cmp} {v}, {k}; {c} }}")
    }

    /// A map over one flat sequence: `|v| f(v, captures)`, with loops nested up to
    /// `loops` deep.
    fn map1(&mut self, x: &SeqVal, loops: u32) -> String {
        let (v, r, out) = (self.name("v"), self.name("r"), self.name("m"));
        let mut inputs = vec![v.clone()];
        inputs.extend(self.captures());
        let body = self.elem_body(&inputs, &r, loops);
        self.line(&format!(
            "{out}: [i64] = map(|{v}: i64| [] {{ {body}{r} }}, {})",
            x.name
        ));
        out
    }

    /// The reversal (`len - 1 - i`) or a rotation (`(i + c) % len`) of the indices of `x`:
    /// a permutation of them.
    fn permutation(&mut self, x: &SeqVal) -> String {
        let (ix, l, i, p, c, r) = (
            self.name("ix"),
            self.name("l"),
            self.name("i"),
            self.name("p"),
            self.name("c"),
            self.name("perm"),
        );
        self.line(&format!("{ix}: [usize] = indices({})", x.name));
        self.line(&format!("{l}: usize = len {}", x.name));
        let f = if self.rng.bool() {
            let one = self.name("one");
            format!(
                "{one}: usize = const 1; {c}: usize = sub {l}, {one}; {p}: usize = sub {c}, {i}; {p}"
            )
        } else {
            let shift = self.rng.int_in(0..=40);
            let q = self.name("q");
            format!(
                "{c}: usize = const {shift}; {q}: usize = add {i}, {c}; {p}: usize = rem {q}, {l}; {p}"
            )
        };
        self.line(&format!(
            "{r}: [usize] = map(|{i}: usize| [] {{ {f} }}, {ix})"
        ));
        r
    }

    /// A scalar `i64` from a `bool`.
    fn bool_to_i64(&mut self, b: &str, out: &str) {
        let (one, zero) = (self.name("one"), self.name("zero"));
        self.line(&format!(
            "{out}: i64 = if {b} {{ {one}: i64 = const 1; {one} }} else {{ {zero}: i64 = const -1; {zero} }}"
        ));
    }

    /// One more statement (or a few that make one value).
    fn step(&mut self) {
        match self.rng.below(22) {
            0..=2 => {
                let x = self.seq();
                let out = self.map1(&x, 2);
                self.push_seq(out, Some(x.class));
            }
            3 => {
                // A map over two sequences of one length class.
                let x = self.seq();
                let y = self.seq_like(&x);
                let (p, q, r, out) = (
                    self.name("p"),
                    self.name("q"),
                    self.name("r"),
                    self.name("z"),
                );
                let mut inputs = vec![p.clone(), q.clone()];
                inputs.extend(self.captures());
                let body = self.elem_body(&inputs, &r, 2);
                self.line(&format!(
                    "{out}: [i64] = map(|{p}: i64, {q}: i64| [] {{ {body}{r} }}, {}, {})",
                    x.name, y.name
                ));
                self.push_seq(out, Some(x.class));
            }
            4 => {
                // zip, a map over the pairs giving pairs, unzip.
                let x = self.seq();
                let y = self.seq_like(&x);
                let (zp, p, p0, p1, r0, r1, t, m, u, u0, u1) = (
                    self.name("zp"),
                    self.name("p"),
                    self.name("p"),
                    self.name("p"),
                    self.name("r"),
                    self.name("r"),
                    self.name("t"),
                    self.name("mz"),
                    self.name("u"),
                    self.name("u"),
                    self.name("u"),
                );
                let inputs = vec![p0.clone(), p1.clone()];
                let f0 = self.elem_body(&inputs, &r0, 1);
                let f1 = self.elem_body(&inputs, &r1, 0);
                self.line(&format!("{zp}: [(i64, i64)] = zip({}, {})", x.name, y.name));
                self.line(&format!(
                    "{m}: [(i64, i64)] = map(|{p}: (i64, i64)| [] {{ {p0}: i64 = {p}.0; {p1}: i64 = {p}.1; {f0}{f1}{t}: (i64, i64) = tuple({r0}, {r1}); {t} }}, {zp})"
                ));
                self.line(&format!("{u}: ([i64], [i64]) = unzip({m})"));
                self.line(&format!("{u0}: [i64] = {u}.0"));
                self.line(&format!("{u1}: [i64] = {u}.1"));
                self.push_seq(u0, Some(x.class));
                self.push_seq(u1, Some(x.class));
            }
            5 => {
                // filter: a new length class.
                let x = self.seq();
                let (pred, out) = (self.predicate(), self.name("f"));
                self.line(&format!("{out}: [i64] = filter({pred}, {})", x.name));
                self.push_seq(out, None);
            }
            6 => {
                // An inclusive or exclusive scan.
                let x = self.seq();
                let (lambda, out) = (self.op_lambda(), self.name("s"));
                if self.rng.bool() {
                    self.line(&format!("{out}: [i64] = scan({lambda}, {})", x.name));
                } else {
                    let (init, k) = (self.name("i"), self.constant());
                    self.line(&format!("{init}: i64 = const {k}"));
                    self.line(&format!(
                        "{out}: [i64] = exclusive_scan({lambda}, {}, {init})",
                        x.name
                    ));
                }
                self.push_seq(out, Some(x.class));
            }
            7 => {
                // A reduction with a start value, or sum, min, max (the last two fail on
                // an empty sequence).
                let x = self.seq();
                let out = self.name("red");
                match self.rng.below(4) {
                    0 => {
                        let (lambda, init, k) = (self.op_lambda(), self.name("i"), self.constant());
                        self.line(&format!("{init}: i64 = const {k}"));
                        self.line(&format!(
                            "{out}: i64 = reduce({lambda}, {}, {init})",
                            x.name
                        ));
                    }
                    w => {
                        let prim = ["sum", "min", "max"][w - 1];
                        self.line(&format!("{out}: i64 = {prim}({})", x.name));
                    }
                }
                self.scalars.push(out);
            }
            8 => {
                // count, any, all of a predicate.
                let x = self.seq();
                let (pred, c, out) = (self.predicate(), self.name("cnt"), self.name("red"));
                match self.rng.below(3) {
                    0 => {
                        self.line(&format!("{c}: usize = count({pred}, {})", x.name));
                        self.line(&format!("{out}: i64 = cast {c} as i64"));
                    }
                    w => {
                        let prim = ["any", "all"][w - 1];
                        self.line(&format!("{c}: bool = {prim}({pred}, {})", x.name));
                        self.bool_to_i64(&c, &out);
                    }
                }
                self.scalars.push(out);
            }
            9 => {
                // A gather through indices computed from another sequence (modulo the
                // length: an empty source makes the remainder an error to agree on).
                let x = self.seq();
                let src = self.seq();
                let (l, v, u, r, idx, out) = (
                    self.name("l"),
                    self.name("v"),
                    self.name("u"),
                    self.name("r"),
                    self.name("idx"),
                    self.name("g"),
                );
                self.line(&format!("{l}: usize = len {}", x.name));
                self.line(&format!(
                    "{idx}: [usize] = map(|{v}: i64| [] {{ {u}: usize = cast {v} as usize; {r}: usize = rem {u}, {l}; {r} }}, {})",
                    src.name
                ));
                self.line(&format!("{out}: [i64] = gather({}, {idx})", x.name));
                self.push_seq(out, Some(src.class));
            }
            10 => {
                // permute or scatter through a permutation of the indices.
                let x = self.seq();
                let perm = self.permutation(&x);
                let out = self.name("pm");
                if self.rng.bool() {
                    self.line(&format!("{out}: [i64] = permute({}, {perm})", x.name));
                } else {
                    let dst = self.seq_like(&x);
                    self.line(&format!(
                        "{out}: [i64] = scatter({}, {perm}, {})",
                        x.name, dst.name
                    ));
                }
                self.push_seq(out, Some(x.class));
            }
            11 => {
                let x = self.seq();
                let out = self.name("o");
                if self.rng.bool() {
                    self.line(&format!("{out}: [i64] = sort({})", x.name));
                } else {
                    let keys = self.seq_like(&x);
                    self.line(&format!(
                        "{out}: [i64] = sort_by_key({}, {})",
                        keys.name, x.name
                    ));
                }
                self.push_seq(out, Some(x.class));
            }
            12 => {
                // A histogram of 1 to 40 bins of a sequence's values.
                let x = self.seq();
                let bins = self.rng.int_in(1..=40);
                let (nb, z, zeros, one, v, w, u, m, k, idx, ones, out) = (
                    self.name("nb"),
                    self.name("z"),
                    self.name("zeros"),
                    self.name("one"),
                    self.name("v"),
                    self.name("w"),
                    self.name("u"),
                    self.name("m"),
                    self.name("k"),
                    self.name("hidx"),
                    self.name("ones"),
                    self.name("h"),
                );
                let op = self.op_lambda();
                self.line(&format!("{nb}: usize = const {bins}"));
                self.line(&format!("{z}: i64 = const 0"));
                self.line(&format!("{zeros}: [i64] = replicate({z}, {nb})"));
                self.line(&format!(
                    "{idx}: [usize] = map(|{v}: i64| [] {{ {u}: usize = cast {v} as usize; {m}: usize = const {bins}; {k}: usize = rem {u}, {m}; {k} }}, {})",
                    x.name
                ));
                let vals = if self.rng.bool() {
                    self.line(&format!(
                        "{ones}: [i64] = map(|{w}: i64| [] {{ {one}: i64 = const 1; {one} }}, {})",
                        x.name
                    ));
                    ones
                } else {
                    x.name.clone()
                };
                self.line(&format!(
                    "{out}: [i64] = scatter_reduce({op}, {vals}, {idx}, {zeros})"
                ));
                self.push_seq(out, None);
            }
            13 => {
                // A loop in each element reading a captured sequence by index, at most 15
                // steps.
                let x = self.seq();
                let src = self.seq();
                let (v, len, mask, lo, trip, bound, z, i, s, lp, e, ev, s1, one, i1, next, r, out) = (
                    self.name("v"),
                    self.name("len"),
                    self.name("mask"),
                    self.name("lo"),
                    self.name("trip"),
                    self.name("bound"),
                    self.name("z"),
                    self.name("i"),
                    self.name("s"),
                    self.name("lp"),
                    self.name("e"),
                    self.name("ev"),
                    self.name("s"),
                    self.name("one"),
                    self.name("i"),
                    self.name("next"),
                    self.name("r"),
                    self.name("w"),
                );
                let mut inputs = vec![v.clone(), s.clone(), e.clone()];
                inputs.extend(self.captures());
                let body = self.elem_body(&inputs, &s1, 1);
                // Within the length, or (one in four) not: an index out of range to agree on.
                let limit = if self.rng.below(4) == 0 {
                    trip.clone()
                } else {
                    format!("min {trip}, {len}")
                };
                self.line(&format!(
                    "{out}: [i64] = map(|{v}: i64| [] {{ {len}: usize = len {src}; {mask}: i64 = const 15; \
                     {lo}: i64 = and {v}, {mask}; {trip}: usize = cast {lo} as usize; {bound}: usize = {limit}; \
                     {z}: usize = const 0; \
                     {lp}: (usize, i64) = loop({i}: usize = {z}, {s}: i64 = {v}) while {{ {ev}: bool = lt {i}, {bound}; {ev} }} do {{ \
                     {e}: i64 = index(index) {src}[{i}]; {body}\
                     {one}: usize = const 1; {i1}: usize = add {i}, {one}; {next}: (usize, i64) = tuple({i1}, {s1}); {next} }}; \
                     {r}: i64 = {lp}.1; {r} }}, {})",
                    x.name,
                    src = src.name
                ));
                self.push_seq(out, Some(x.class));
            }
            14 | 15 => self.row_reduction(),
            16 => {
                // Rows mapped element by element.
                let x = self.nested();
                let (row, v, r, m, out) = (
                    self.name("row"),
                    self.name("v"),
                    self.name("r"),
                    self.name("rm"),
                    self.name("nm"),
                );
                let mut inputs = vec![v.clone()];
                inputs.extend(self.captures());
                let body = self.elem_body(&inputs, &r, 2);
                self.line(&format!(
                    "{out}: [[i64]] = map(|{row}: [i64]| [] {{ {m}: [i64] = map(|{v}: i64| [] {{ {body}{r} }}, {row}); {m} }}, {})",
                    x.name
                ));
                self.nested.push(SeqVal {
                    name: out,
                    class: x.class,
                });
            }
            17 => {
                // Each row scanned or filtered.
                let x = self.nested();
                let (row, m, out) = (self.name("row"), self.name("rs"), self.name("ns"));
                let inner = if self.rng.bool() {
                    let op = self.op_lambda();
                    format!("{m}: [i64] = scan({op}, {row})")
                } else {
                    let pred = self.predicate();
                    format!("{m}: [i64] = filter({pred}, {row})")
                };
                self.line(&format!(
                    "{out}: [[i64]] = map(|{row}: [i64]| [] {{ {inner}; {m} }}, {})",
                    x.name
                ));
                self.nested.push(SeqVal {
                    name: out,
                    class: x.class,
                });
            }
            18 => {
                // Rows built from each element: `v & 7` values from a range.
                let x = self.seq();
                let (v, seven, c, n, rg, j, w, r, m, out) = (
                    self.name("v"),
                    self.name("seven"),
                    self.name("c"),
                    self.name("n"),
                    self.name("rg"),
                    self.name("j"),
                    self.name("w"),
                    self.name("r"),
                    self.name("rm"),
                    self.name("nr"),
                );
                let body = self.elem_body(&[w.clone(), v.clone()], &r, 1);
                self.line(&format!(
                    "{out}: [[i64]] = map(|{v}: i64| [] {{ {seven}: i64 = const 7; {c}: i64 = and {v}, {seven}; \
                     {n}: usize = cast {c} as usize; {rg}: [usize] = range({n}); \
                     {m}: [i64] = map(|{j}: usize| [] {{ {w}: i64 = cast {j} as i64; {body}{r} }}, {rg}); {m} }}, {})",
                    x.name
                ));
                self.nested.push(SeqVal {
                    name: out,
                    class: x.class,
                });
            }
            _ => {
                // A map without loops, as before loops existed (the common case of user
                // programs).
                let x = self.seq();
                let out = self.map1(&x, 0);
                self.push_seq(out, Some(x.class));
            }
        }
    }

    /// A value per row: a reduction with a start value, `sum`/`min`/`max` (`min` and
    /// `max` fail on an empty row), or a loop over the row's elements by index; then an
    /// element function of it.
    fn row_reduction(&mut self) {
        let x = self.nested();
        let (row, s, r, out) = (
            self.name("row"),
            self.name("rr"),
            self.name("r"),
            self.name("rv"),
        );
        let reduce = match self.rng.below(4) {
            0 => {
                let (op, init, k) = (self.op_lambda(), self.name("i"), self.constant());
                format!("{init}: i64 = const {k}; {s}: i64 = reduce({op}, {row}, {init}); ")
            }
            1 => {
                let prim = *self.pick(&["sum", "min", "max"]);
                format!("{s}: i64 = {prim}({row}); ")
            }
            _ => {
                // for e in row { acc = f(acc, e) }
                let (len, z, i, acc, lp, e, ev, a1, one, i1, next, init) = (
                    self.name("len"),
                    self.name("z"),
                    self.name("i"),
                    self.name("acc"),
                    self.name("lp"),
                    self.name("e"),
                    self.name("ev"),
                    self.name("acc"),
                    self.name("one"),
                    self.name("i"),
                    self.name("next"),
                    self.name("init"),
                );
                let k = self.rng.int_in(-3..=3);
                let body = self.elem_body(&[acc.clone(), e.clone()], &a1, 1);
                format!(
                    "{len}: usize = len {row}; {z}: usize = const 0; {init}: i64 = const {k}; \
                     {lp}: (usize, i64) = loop({i}: usize = {z}, {acc}: i64 = {init}) while {{ {ev}: bool = lt {i}, {len}; {ev} }} do {{ \
                     {e}: i64 = index(index) {row}[{i}]; {body}\
                     {one}: usize = const 1; {i1}: usize = add {i}, {one}; {next}: (usize, i64) = tuple({i1}, {a1}); {next} }}; \
                     {s}: i64 = {lp}.1; "
                )
            }
        };
        let mut inputs = vec![s.clone()];
        inputs.extend(self.captures());
        let after = self.elem_body(&inputs, &r, 0);
        self.line(&format!(
            "{out}: [i64] = map(|{row}: [i64]| [] {{ {reduce}{after}{r} }}, {})",
            x.name
        ));
        self.push_seq(out, Some(x.class));
    }

    /// A loop at the top level of the body: `trip` (0 to 4) iterations, each replacing the
    /// carried sequence by a map, a filter (its length changes) or a scan of it, and adding
    /// the new sequence's sum to a carried scalar. The final sequence (of a new length
    /// class) and scalar join the program's values.
    fn top_loop(&mut self) {
        let x = self.seq();
        let acc0 = self.scalar();
        let (zero, trip, lp, v, i, acc, c) = (
            self.name("lz"),
            self.name("trip"),
            self.name("lp"),
            self.name("lv"),
            self.name("li"),
            self.name("lacc"),
            self.name("lc"),
        );
        let t = self.rng.int_in(0..=4);
        self.line(&format!("{zero}: i64 = const 0"));
        self.line(&format!("{trip}: i64 = const {t}"));
        self.line(&format!(
            "{lp}: ([i64], i64, i64) = loop({v}: [i64] = {}, {i}: i64 = {zero}, {acc}: i64 = {acc0}) while {{ {c}: bool = lt {i}, {trip}; {c} }} do {{",
            x.name
        ));
        // What the body defines is not visible after the loop.
        let (seqs, scalars) = (self.seqs.clone(), self.scalars.clone());
        self.push_seq(v.clone(), None);
        let carried = self.seqs.last().cloned().expect("just pushed");
        let next = match self.rng.below(3) {
            0 => self.map1(&carried, 1),
            1 => {
                let (pred, out) = (self.predicate(), self.name("f"));
                self.line(&format!("{out}: [i64] = filter({pred}, {v})"));
                out
            }
            _ => {
                let (lambda, out) = (self.op_lambda(), self.name("s"));
                self.line(&format!("{out}: [i64] = scan({lambda}, {v})"));
                out
            }
        };
        let (sum, acc1, one, i1, nx) = (
            self.name("ls"),
            self.name("lacc"),
            self.name("one"),
            self.name("li"),
            self.name("lnext"),
        );
        self.line(&format!("{sum}: i64 = sum({next})"));
        self.line(&format!("{acc1}: i64 = add {acc}, {sum}"));
        self.line(&format!("{one}: i64 = const 1"));
        self.line(&format!("{i1}: i64 = add {i}, {one}"));
        self.line(&format!(
            "{nx}: ([i64], i64, i64) = tuple({next}, {i1}, {acc1})"
        ));
        self.line(&nx);
        self.line("}");
        (self.seqs, self.scalars) = (seqs, scalars);
        let (out, total) = (self.name("lout"), self.name("ltotal"));
        self.line(&format!("{out}: [i64] = {lp}.0"));
        self.line(&format!("{total}: i64 = {lp}.2"));
        self.push_seq(out, None);
        self.scalars.push(total);
    }

    /// The result: the last flat sequence made, and the sum of every scalar and flat
    /// sequence and the row sums of every nested one that no statement read (`$k` when
    /// there are none).
    fn finish(mut self, seed: u64) -> String {
        let last = self.seqs.last().expect("the inputs at least").name.clone();
        let inputs = ["$a", "$b", "$k", "$rows"];
        let unread =
            |g: &Self, name: &str| name != last && !inputs.contains(&name) && !g.is_read(name);
        let mut parts = Vec::new();
        for x in self.nested.clone() {
            if unread(&self, &x.name) {
                let (row, s, out) = (self.name("row"), self.name("rs"), self.name("fin"));
                self.line(&format!(
                    "{out}: [i64] = map(|{row}: [i64]| [] {{ {s}: i64 = sum({row}); {s} }}, {})",
                    x.name
                ));
                self.push_seq(out, Some(x.class));
            }
        }
        for x in self.seqs.clone() {
            if unread(&self, &x.name) {
                let out = self.name("fin");
                self.line(&format!("{out}: i64 = sum({})", x.name));
                parts.push(out);
            }
        }
        for x in self.scalars.clone() {
            if unread(&self, &x) {
                parts.push(x);
            }
        }
        let mut scalar = parts.first().cloned().unwrap_or_else(|| "$k".to_string());
        for p in parts.iter().skip(1) {
            let out = self.name("fin");
            self.line(&format!("{out}: i64 = add {scalar}, {p}"));
            scalar = out;
        }
        let mut text = format!("fn random{seed}({PARAMS}) -> ([i64], i64) {{\n");
        text.push_str(&self.body);
        let _ = writeln!(text, "  $result: ([i64], i64) = tuple({last}, {scalar})");
        text.push_str("  $result\n}\n");
        text
    }
}

/// Random program number `seed`, named `random<seed>`: over the inputs of [`PARAMS`], 2
/// to 7 steps.
///
/// ```
/// let p = dpl_testkit::programs::program(3);
/// assert!(p.starts_with("fn random3($a: [i64]"));
/// assert_eq!(p, dpl_testkit::programs::program(3));
/// ```
pub fn program(seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let steps = rng.int_in(2..=7);
    let mut g = Gen {
        rng: &mut rng,
        body: String::new(),
        seqs: vec![
            SeqVal {
                name: "$a".into(),
                class: 0,
            },
            SeqVal {
                name: "$b".into(),
                class: 0,
            },
        ],
        nested: vec![SeqVal {
            name: "$rows".into(),
            class: 0,
        }],
        scalars: vec!["$k".into()],
        fresh: 0,
        classes: 0,
    };
    for _ in 0..steps {
        g.step();
    }
    // One program in four ends with a loop at the top level (after the other steps, so
    // that the programs before it are unchanged).
    if seed % 4 == 3 {
        g.top_loop();
    }
    g.finish(seed)
}

/// The inputs of a program for length `n`.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// `$a`, `n` values.
    pub a: Vec<i64>,
    /// `$b`, `n` values.
    pub b: Vec<i64>,
    /// `$k`.
    pub k: i64,
    /// `$rows`, `n` rows of 0 to 7 values (about one in five empty).
    pub rows: Vec<Vec<i64>>,
}

/// The inputs of program `seed` for length `n`: values of mixed magnitudes (small ones, so
/// that filters keep some and histograms fill, and extreme ones, so that arithmetic wraps).
pub fn inputs(seed: u64, n: usize) -> Inputs {
    let mut r = Rng::new(seed ^ ((n as u64) << 32));
    let value = |r: &mut Rng| match r.below(10) {
        0 => r.i64(),
        _ => r.int_in(-1000..=1000),
    };
    let a = r.vec(n, value);
    let b = r.vec(n, value);
    let k = r.int_in(-50..=50);
    let rows = (0..n)
        .map(|_| {
            let len = if r.chance(20) { 0 } else { r.below(8) };
            r.vec(len, value)
        })
        .collect();
    Inputs { a, b, k, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every primitive and form the generator knows appears within the first programs.
    #[test]
    fn the_generator_covers_its_primitives() {
        let text: String = (0..300).map(program).collect();
        for needle in [
            "= map(",
            "zip(",
            "unzip(",
            "filter(",
            "= scan(",
            "exclusive_scan(",
            "reduce(",
            "= sum(",
            "= min(",
            "= max(",
            "count(",
            "any(",
            "all(",
            "gather(",
            "permute(",
            "scatter(",
            "sort(",
            "sort_by_key(",
            "scatter_reduce(",
            "range(",
            "[[i64]] = map(",
            "index(index)",
            "loop(",
            "bool = not",
            "(i64, i64, i64) = loop(",
            "if $cond",
            "div ",
            "rem ",
            "shr ",
        ] {
            assert!(text.contains(needle), "no `{needle}` in 300 programs");
        }
    }

    /// One program in four has a loop at the top level carrying a sequence.
    #[test]
    fn top_level_loops_carry_sequences() {
        let with: Vec<u64> = (0..300)
            .filter(|&s| program(s).contains("= loop($lv"))
            .collect();
        assert_eq!(with.len(), 75);
        assert!(with.iter().all(|s| s % 4 == 3));
    }

    /// Loops nest: a loop inside the body of another.
    #[test]
    fn loops_nest() {
        let nested = (0..300).map(program).any(|p| {
            p.lines()
                .any(|l| l.matches("loop(").count() >= 2 && l.contains("do {"))
        });
        assert!(nested);
    }

    /// Every variable a top-level statement defines is read (by a later statement or the
    /// result).
    #[test]
    fn every_value_is_read() {
        for seed in 0..300 {
            let p = program(seed);
            for line in p.lines().filter(|l| l.starts_with("  $")) {
                let name = line.trim().split(':').next().unwrap();
                assert!(occurrences(&p, name) > 1, "{name} unread in\n{p}");
            }
        }
    }

    #[test]
    fn inputs_have_the_length_asked_for() {
        for n in LENGTHS {
            let i = inputs(7, n);
            assert_eq!((i.a.len(), i.b.len(), i.rows.len()), (n, n, n));
            assert!(i.rows.iter().all(|r| r.len() < 8));
        }
    }
}
