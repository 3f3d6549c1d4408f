//! The canonical NaN: the one bit pattern of every NaN that a dpl float operation
//! produces, on every place.
//!
//! It is the NaN that NVIDIA GPUs give for every single-precision operation (sign clear,
//! every significand bit set: `0x7fff_ffff`), and its `f64` counterpart
//! `0x7fff_ffff_ffff_ffff`. x86 CPUs produce the negative "default NaN" instead
//! (`0xffc0_0000` for `0.0 / 0.0`) and pass the payload of a NaN operand through, and GPUs
//! keep payloads in `f64` arithmetic; so the CPU code, the interpreter and the generated
//! `f64` GPU code replace every NaN an operation produces by this one (see the README's
//! contract on floats for which operations those are). Sorting by IEEE `totalOrder` then
//! puts every produced NaN last, on every place. The 16-bit floats have theirs too
//! (`0x7fff` for `f16` and `bf16`: the canonical `f32` NaN rounded).

use std::collections::{HashMap, HashSet};

use crate::float16::{Half, bf16, f16};
use crate::ir::{Block, Expr, Function, Loop, Stmt, VarId};

/// The bits of the canonical `f32` NaN.
pub const F32_BITS: u32 = 0x7fff_ffff;

/// The bits of the canonical `f64` NaN.
pub const F64_BITS: u64 = 0x7fff_ffff_ffff_ffff;

/// `x`, or the canonical NaN if `x` is a NaN.
///
/// The test is on the bits, not `x.is_nan()`: LLVM treats the NaNs an operation makes as
/// interchangeable, and in optimized builds it turned `if s.is_nan() { canonical } else
/// { s }` for an `f32` square root `s` into `s` itself, keeping x86's `0xffc0_0000` (caught
/// by the release build of the conformance suite on a GPU machine: the GPU gave the
/// canonical NaN, the test's own expectation did not). An integer comparison of the bits
/// is not a float operation, so nothing is folded.
#[inline(always)]
pub fn canon_f32(x: f32) -> f32 {
    let b = x.to_bits();
    f32::from_bits(if b & !(1 << 31) > 0x7f80_0000 {
        F32_BITS
    } else {
        b
    })
}

/// `x`, or the canonical NaN if `x` is a NaN (tested on the bits, as [`canon_f32`]).
#[inline(always)]
pub fn canon_f64(x: f64) -> f64 {
    let b = x.to_bits();
    f64::from_bits(if b & !(1 << 63) > 0x7ff0_0000_0000_0000 {
        F64_BITS
    } else {
        b
    })
}

/// The bits of the canonical `f16` NaN.
pub const F16_BITS: u16 = <f16 as Half>::NAN_BITS;

/// The bits of the canonical `bf16` NaN.
pub const BF16_BITS: u16 = <bf16 as Half>::NAN_BITS;

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_f16(x: f16) -> f16 {
    if x.is_nan() {
        f16::from_bits(F16_BITS)
    } else {
        x
    }
}

/// `x`, or the canonical NaN if `x` is a NaN.
#[inline(always)]
pub fn canon_bf16(x: bf16) -> bf16 {
    if x.is_nan() {
        bf16::from_bits(BF16_BITS)
    } else {
        x
    }
}

/// The floats whose NaNs a loop may store as the arithmetic made them and make canonical
/// afterwards (see `dpl-cpu`'s `rt::map_canon`): checking a stored run for NaNs costs less
/// than choosing the canonical NaN at every element.
pub trait Canonical: Copy {
    /// Whether `self` is a NaN.
    fn is_nan(self) -> bool;
    /// `self`, or the canonical NaN if `self` is a NaN.
    fn canonical(self) -> Self;
}

impl Canonical for f32 {
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    #[inline(always)]
    fn canonical(self) -> Self {
        canon_f32(self)
    }
}

impl Canonical for f64 {
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    #[inline(always)]
    fn canonical(self) -> Self {
        canon_f64(self)
    }
}

/// The variables of `f` whose NaN bits can be seen: all those read other than as an operand
/// of an operator, a math function or a cast, or that are the value of a block.
///
/// Those operations give a NaN, or the same number, whatever the bits of a NaN operand
/// (`min`/`max` of a NaN and a number give the number; comparisons of NaNs are false; a
/// NaN cast to an integer is 0). So a backend that makes their NaN results canonical need
/// only do it for the variables listed here: a NaN read only by such operations reaches
/// no result with its own bits.
///
/// This counts every value a loop carries as seen (its start value and its next values
/// are read by the loop); [`plan`] refines it for loops.
pub fn observed(f: &Function) -> HashSet<VarId> {
    observed_except(f, &HashSet::new())
}

/// Where NaNs must be made canonical in `f`: [`observed`], refined for the float values
/// loops carry (`Plan::loop_outputs`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The variables whose NaN bits can be seen: those of [`observed`], less the values
    /// moved (by copies, `if`s, tuples and fields) only into the next value of a carried
    /// param of `loop_outputs`.
    pub observed: HashSet<VarId>,
    /// For the variable of each loop statement that has some, the positions of its params
    /// whose next values are not made canonical at each iteration: the backend makes those
    /// positions of the loop's value canonical once, after the loop, instead.
    pub loop_outputs: HashMap<VarId, Vec<usize>>,
}

/// [`observed`], with the NaNs a loop carries made canonical once after the loop instead of
/// at every iteration where that gives the same bits.
///
/// A float scalar param `p` of a loop is deferred when
///
/// * its next value is, through copies, `if`s, tuples and fields made in the loop's body,
///   either `p` itself or the result of an operation (operator, math function, cast or
///   literal), whose NaN the reference semantics make canonical;
/// * its start value is such a result too, or a deferred output of another loop, so that
///   the loop's final value of `p` is always canonical in the reference semantics;
/// * `p` is read only by operations in the loop's condition and body, and none of the
///   values moved into its next value is read otherwise than by operations or that move.
///
/// Then a NaN `p` carries with other bits than the canonical ones reaches only
/// operations, which give the same numbers whatever its bits, and the loop's final value
/// of `p`, which the backend makes canonical: the same bits as making every iteration's
/// value canonical.
pub fn plan(f: &Function) -> Plan {
    let mut a = Analysis {
        defs: HashMap::new(),
        loops: Vec::new(),
    };
    a.collect(&f.body);
    // The candidates, each with the reads of its chain of moves and the moved values.
    let mut cands: Vec<(VarId, usize, Chain)> = Vec::new();
    for &(lv, l) in &a.loops {
        for (k, &p) in l.params.iter().enumerate() {
            if !f.vars[p].ty.scalar().is_some_and(|t| t.is_float()) {
                continue;
            }
            let Some(chain) = a.chain(l, k) else {
                continue;
            };
            if a.canonical(l.inits[k], 0) {
                cands.push((lv, k, chain));
            }
        }
    }
    // Dropping a candidate puts its reads back, which can make others' values seen.
    loop {
        let excluded: HashSet<(VarId, usize)> = cands
            .iter()
            .flat_map(|c| c.2.reads.iter().copied())
            .collect();
        let seen = reads_except(f, &excluded);
        let before = cands.len();
        cands.retain(|(lv, k, chain)| {
            let p = a.param(*lv, *k);
            let unseen = |&(v, part): &(VarId, Option<usize>)| match part {
                None => !seen.vars.contains(&v),
                Some(j) => !seen.whole.contains(&v) && !seen.fields.contains(&(v, j)),
            };
            !seen.vars.contains(&p) && chain.moved.iter().all(unseen)
        });
        if cands.len() == before {
            let mut loop_outputs: HashMap<VarId, Vec<usize>> = HashMap::new();
            for (lv, k, _) in &cands {
                loop_outputs.entry(*lv).or_default().push(*k);
            }
            return Plan {
                observed: seen.vars,
                loop_outputs,
            };
        }
    }
}

/// The variables read other than by operations, not counting the reads in `excluded`:
/// `(statement variable, operand position)`, and for an `if` `(its variable, 0 or 1)` for
/// the value of its first or second block.
fn observed_except(f: &Function, excluded: &HashSet<(VarId, usize)>) -> HashSet<VarId> {
    reads_except(f, excluded).vars
}

/// The reads [`observed_except`] counts.
#[derive(Default)]
struct Seen {
    /// The variables read.
    vars: HashSet<VarId>,
    /// Those read other than by a field access.
    whole: HashSet<VarId>,
    /// The fields read: `(tuple, position)`.
    fields: HashSet<(VarId, usize)>,
}

/// The reads other than by operations, not counting the reads in `excluded` (see
/// [`observed_except`]).
fn reads_except(f: &Function, excluded: &HashSet<(VarId, usize)>) -> Seen {
    fn walk(b: &Block, counted: bool, ex: &HashSet<(VarId, usize)>, out: &mut Seen) {
        if counted {
            out.vars.insert(b.result);
            out.whole.insert(b.result);
        }
        for s in &b.stmts {
            let consumes = matches!(
                s.expr,
                Expr::Unary(..) | Expr::Binary(..) | Expr::Math(..) | Expr::Cast(..)
            );
            if !consumes {
                for (i, x) in s.expr.operands().into_iter().enumerate() {
                    if !ex.contains(&(s.var, i)) {
                        out.vars.insert(x);
                        match s.expr {
                            Expr::Field(_, k) => out.fields.insert((x, k as usize)),
                            _ => out.whole.insert(x),
                        };
                    }
                }
            }
            if let Expr::If(_, a, b) = &s.expr {
                walk(a, !ex.contains(&(s.var, 0)), ex, out);
                walk(b, !ex.contains(&(s.var, 1)), ex, out);
            } else {
                s.expr.for_each_block(&mut |blk| walk(blk, true, ex, out));
            }
        }
    }
    let mut out = Seen::default();
    walk(&f.body, true, excluded, &mut out);
    out
}

/// How many times `v` is read in `b` (operands and block values, nested blocks included).
fn reads(b: &Block, v: VarId) -> usize {
    let mut n = usize::from(b.result == v);
    for s in &b.stmts {
        n += s.expr.operands().iter().filter(|&&x| x == v).count();
        s.expr.for_each_block(&mut |blk| n += reads(blk, v));
    }
    n
}

/// How deep [`Analysis`] follows moves before it gives up (a bound on its work).
const MAX_DEPTH: usize = 64;

/// The moves from the values of a loop's body into the next value of one of its params.
struct Chain {
    /// The reads that move a value along the chain (see [`observed_except`]).
    reads: Vec<(VarId, usize)>,
    /// The values on the chain other than its ends (copies, `if`s, fields), and the tuples
    /// with the position of the value moved through them.
    moved: Vec<(VarId, Option<usize>)>,
}

/// Where each variable of a function is defined, for [`plan`].
struct Analysis<'a> {
    /// The statement defining each variable (not the params of loops and lambdas).
    defs: HashMap<VarId, &'a Stmt>,
    /// Every loop statement: its variable and the loop.
    loops: Vec<(VarId, &'a Loop)>,
}

impl<'a> Analysis<'a> {
    fn collect(&mut self, b: &'a Block) {
        for s in &b.stmts {
            self.defs.insert(s.var, s);
            if let Expr::Loop(l) = &s.expr {
                self.loops.push((s.var, l));
            }
            s.expr.for_each_block(&mut |blk| self.collect(blk));
        }
    }

    /// Param `k` of the loop of the statement with variable `lv`.
    fn param(&self, lv: VarId, k: usize) -> VarId {
        let l = self.loops.iter().find(|(v, _)| *v == lv).map(|(_, l)| l);
        l.expect("a loop statement").params[k]
    }

    fn stmt(&self, v: VarId) -> Option<&'a Stmt> {
        self.defs.get(&v).copied()
    }

    /// The chain of moves into the next value of param `k` of `l`, if every value it moves
    /// is the param itself or the result of an operation.
    fn chain(&self, l: &Loop, k: usize) -> Option<Chain> {
        let mut c = Chain {
            reads: Vec::new(),
            moved: Vec::new(),
        };
        let ok = self.part(l.body.result, k, l.params[k], &mut c, 0);
        // The tuple of next values is the body's value, which the loop reads: when nothing
        // else reads it, it moves only into the params.
        if reads(&l.body, l.body.result) == 1 {
            c.moved.retain(|&(v, _)| v != l.body.result);
        }
        ok.then_some(c)
    }

    /// Follows the value `v`.
    fn value(&self, v: VarId, p: VarId, c: &mut Chain, depth: usize) -> bool {
        if v == p {
            return true;
        }
        let Some(s) = self.stmt(v) else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        match &s.expr {
            Expr::Const(_)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Math(..)
            | Expr::Cast(..) => true,
            Expr::Var(w) => {
                c.moved.push((v, None));
                c.reads.push((v, 0));
                self.value(*w, p, c, depth + 1)
            }
            Expr::If(_, a, b) => {
                c.moved.push((v, None));
                c.reads.extend([(v, 0), (v, 1)]);
                self.value(a.result, p, c, depth + 1) && self.value(b.result, p, c, depth + 1)
            }
            Expr::Field(t, j) => {
                c.moved.push((v, None));
                c.reads.push((v, 0));
                self.part(*t, *j as usize, p, c, depth + 1)
            }
            _ => false,
        }
    }

    /// Follows field `j` of the tuple `t`.
    fn part(&self, t: VarId, j: usize, p: VarId, c: &mut Chain, depth: usize) -> bool {
        let Some(s) = self.stmt(t) else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        match &s.expr {
            Expr::Tuple(vs) if j < vs.len() => {
                c.moved.push((t, Some(j)));
                c.reads.push((t, j));
                self.value(vs[j], p, c, depth + 1)
            }
            Expr::Var(w) => {
                c.moved.push((t, Some(j)));
                c.reads.push((t, 0));
                self.part(*w, j, p, c, depth + 1)
            }
            Expr::If(_, a, b) => {
                c.moved.push((t, Some(j)));
                c.reads.extend([(t, 0), (t, 1)]);
                self.part(a.result, j, p, c, depth + 1) && self.part(b.result, j, p, c, depth + 1)
            }
            _ => false,
        }
    }

    /// Whether the value of `v` is always canonical in the reference semantics (a NaN only
    /// as the canonical NaN): the result of an operation, a deferrable output of a loop, or
    /// moved from those.
    fn canonical(&self, v: VarId, depth: usize) -> bool {
        let Some(s) = self.stmt(v) else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        match &s.expr {
            Expr::Const(_)
            | Expr::Unary(..)
            | Expr::Binary(..)
            | Expr::Math(..)
            | Expr::Cast(..) => true,
            Expr::Var(w) => self.canonical(*w, depth + 1),
            Expr::If(_, a, b) => {
                self.canonical(a.result, depth + 1) && self.canonical(b.result, depth + 1)
            }
            Expr::Field(t, j) => self.canonical_part(*t, *j as usize, depth + 1),
            _ => false,
        }
    }

    /// Whether field `j` of the tuple `t` is always canonical (see [`Analysis::canonical`]).
    fn canonical_part(&self, t: VarId, j: usize, depth: usize) -> bool {
        let Some(s) = self.stmt(t) else {
            return false;
        };
        if depth > MAX_DEPTH {
            return false;
        }
        match &s.expr {
            Expr::Tuple(vs) => vs.get(j).is_some_and(|v| self.canonical(*v, depth + 1)),
            Expr::Var(w) => self.canonical_part(*w, j, depth + 1),
            Expr::If(_, a, b) => {
                self.canonical_part(a.result, j, depth + 1)
                    && self.canonical_part(b.result, j, depth + 1)
            }
            // Its final value is its start value or a next value (the param itself again,
            // or an operation's result).
            Expr::Loop(l) => {
                j < l.params.len()
                    && self.chain(l, j).is_some()
                    && self.canonical(l.inits[j], depth + 1)
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinOp, Lambda, MathFn, Scalar, Soac, SoacKind, Span, Stmt, Type};

    #[test]
    fn operands_of_operations_are_not_observed_results_and_other_reads_are() {
        let st = |var, expr| Stmt {
            var,
            expr,
            span: Span::NONE,
        };
        let f32t = Type::Scalar(Scalar::F32);
        let mut f = Function::new("f", f32t.clone());
        let v = |f: &mut Function, name: &str, ty: &Type| f.new_var(name, ty.clone(), Span::NONE);
        let (x, y) = (v(&mut f, "x", &f32t), v(&mut f, "y", &f32t));
        f.params = vec![x, y];
        let (p, q) = (v(&mut f, "p", &f32t), v(&mut f, "q", &f32t));
        let t = v(&mut f, "t", &Type::Tuple(vec![f32t.clone(), f32t.clone()]));
        let r = v(&mut f, "r", &f32t);
        f.body.stmts = vec![
            st(p, Expr::Binary(BinOp::Mul, x, y)),
            st(q, Expr::Math(MathFn::Min, vec![p, y])),
            st(t, Expr::Tuple(vec![q, x])),
            st(r, Expr::Field(t, 0)),
        ];
        f.body.result = r;
        let seen = observed(&f);
        assert!(!seen.contains(&p), "read only by `min`");
        assert!(!seen.contains(&y), "read only by `*` and `min`");
        assert!(seen.contains(&q) && seen.contains(&x), "in a tuple");
        assert!(
            seen.contains(&t) && seen.contains(&r),
            "a field, the result"
        );
        // In a lambda: its result is observed, its operands are not.
        let mut g = Function::new("g", Type::seq(f32t.clone()));
        let n = v(&mut g, "n", &Type::usize());
        let i = v(&mut g, "i", &Type::usize());
        let c = v(&mut g, "c", &f32t);
        let m = v(&mut g, "m", &Type::seq(f32t.clone()));
        g.params = vec![n];
        let elem = Lambda {
            params: vec![i],
            captures: vec![],
            body: Block {
                stmts: vec![st(c, Expr::Cast(i, Scalar::F32))],
                result: c,
            },
        };
        let soac = Soac {
            kind: SoacKind::Map,
            len: n,
            elem,
        };
        g.body.stmts = vec![st(m, Expr::Soac(Box::new(soac)))];
        g.body.result = m;
        let seen = observed(&g);
        assert!(seen.contains(&c) && seen.contains(&n) && !seen.contains(&i));
    }

    #[test]
    fn canonical_nans_are_quiet_positive_nans_and_other_values_pass() {
        let n32 = canon_f32(f32::from_bits(0xffc0_0001));
        assert!(n32.is_nan() && n32.is_sign_positive());
        assert_eq!(n32.to_bits(), 0x7fff_ffff);
        let n64 = canon_f64(f64::from_bits(0xfff8_0000_0000_0001));
        assert!(n64.is_nan() && n64.is_sign_positive());
        assert_eq!(n64.to_bits(), 0x7fff_ffff_ffff_ffff);
        // Quiet: the top significand bit is set.
        assert_ne!(F32_BITS & (1 << 22), 0);
        assert_ne!(F64_BITS & (1 << 51), 0);
        for x in [
            0.0f32,
            -0.0,
            1.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
        ] {
            assert_eq!(canon_f32(x).to_bits(), x.to_bits());
            assert_eq!(canon_f64(f64::from(x)).to_bits(), f64::from(x).to_bits());
        }
    }

    /// `x * x` carried by a loop: `p = p * x` while `i < n`, and its value read by `read`.
    fn carried(read: impl FnOnce(&mut Function, VarId, VarId) -> Vec<Stmt>) -> (Function, Ids) {
        use crate::ir::{Loop, Scalar, Span, Type};
        let st = |var, expr| Stmt {
            var,
            expr,
            span: Span::NONE,
        };
        let f64t = Type::Scalar(Scalar::F64);
        let u32t = Type::Scalar(Scalar::U32);
        let mut f = Function::new("f", f64t.clone());
        let mut v = |name: &str, ty: &Type| f.new_var(name, ty.clone(), Span::NONE);
        let (x, n) = (v("x", &f64t), v("n", &u32t));
        let (init, zero, one) = (v("init", &f64t), v("zero", &u32t), v("one", &u32t));
        let (p, i, go, q, i2) = (
            v("p", &f64t),
            v("i", &u32t),
            v("go", &Type::bool()),
            v("q", &f64t),
            v("i2", &u32t),
        );
        let pair = Type::Tuple(vec![f64t.clone(), u32t.clone()]);
        let (next, lv, out) = (v("next", &pair), v("loop", &pair), v("out", &f64t));
        f.params = vec![x, n];
        let l = Loop {
            params: vec![p, i],
            inits: vec![init, zero],
            cond: Block {
                stmts: vec![st(go, Expr::Binary(BinOp::Lt, i, n))],
                result: go,
            },
            body: Block {
                stmts: vec![
                    st(q, Expr::Binary(BinOp::Mul, p, x)),
                    st(i2, Expr::Binary(BinOp::Add, i, one)),
                    st(next, Expr::Tuple(vec![q, i2])),
                ],
                result: next,
            },
        };
        f.body.stmts = vec![
            st(init, Expr::Binary(BinOp::Mul, x, x)),
            st(zero, Expr::Const(crate::ir::Const::Int(0))),
            st(one, Expr::Const(crate::ir::Const::Int(1))),
            st(lv, Expr::Loop(Box::new(l))),
            st(out, Expr::Field(lv, 0)),
        ];
        f.body.result = out;
        let extra = read(&mut f, p, q);
        f.body.stmts[3].expr = match std::mem::replace(
            &mut f.body.stmts[3].expr,
            Expr::Const(crate::ir::Const::Int(0)),
        ) {
            Expr::Loop(mut l) => {
                let last = l.body.stmts.pop().expect("the tuple");
                l.body.stmts.extend(extra);
                l.body.stmts.push(last);
                Expr::Loop(l)
            }
            e => e,
        };
        (f, Ids { lv, p, q, init })
    }

    struct Ids {
        lv: VarId,
        p: VarId,
        q: VarId,
        init: VarId,
    }

    #[test]
    fn a_carried_float_read_only_by_operations_is_made_canonical_after_its_loop() {
        let (f, ids) = carried(|_, _, _| vec![]);
        assert!(
            observed(&f).contains(&ids.q),
            "the base rule: in the next tuple"
        );
        let plan = super::plan(&f);
        assert_eq!(plan.loop_outputs.get(&ids.lv), Some(&vec![0]), "{plan:?}");
        assert!(!plan.observed.contains(&ids.q) && !plan.observed.contains(&ids.p));
        assert!(
            plan.observed.contains(&ids.init),
            "the start value still is"
        );
    }

    #[test]
    fn a_carried_float_seen_in_its_loop_stays_canonical_at_every_iteration() {
        use crate::ir::{Span, Type};
        // `p` in a tuple (read other than by an operation) inside the body.
        let (f, ids) = carried(|f, p, _| {
            let t = f.new_var("t", Type::Tuple(vec![f.vars[p].ty.clone()]), Span::NONE);
            vec![Stmt {
                var: t,
                expr: Expr::Tuple(vec![p]),
                span: Span::NONE,
            }]
        });
        let plan = super::plan(&f);
        assert!(plan.loop_outputs.is_empty(), "{plan:?}");
        assert!(plan.observed.contains(&ids.q));
        // The next value also read by something else than the loop.
        let (f, ids) = carried(|f, _, q| {
            let c = f.new_var("c", f.vars[q].ty.clone(), Span::NONE);
            vec![Stmt {
                var: c,
                expr: Expr::Tuple(vec![q]),
                span: Span::NONE,
            }]
        });
        // `q` is then made canonical where it is made, at every iteration; `p` need not be.
        let plan = super::plan(&f);
        assert!(plan.observed.contains(&ids.q), "{plan:?}");
    }
}
