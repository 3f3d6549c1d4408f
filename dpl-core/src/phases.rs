//! Completion analysis and phases (Copperhead section 4.3).
//!
//! After fusion, every combinator left at the top level of a function is one parallel loop.
//! A loop that reads the result of another loop needs that result *complete*: every
//! element of a sequence (or the final value of a reduction) must exist before it starts,
//! which on a parallel machine is a global synchronization point (a kernel boundary on a
//! GPU, the end of a rayon call on the CPU). Loops that do not depend on each other can run
//! in the same phase.
//!
//! [`phases`] assigns each top-level statement the earliest phase in which everything it
//! reads is complete (as-soon-as-possible scheduling over the dependence graph), and
//! [`horizontal`] uses it: reductions over the same index space that can run in the same
//! phase are merged into one loop computing a tuple, so that the data they read is
//! traversed once (`(sum(x), count(p, x))` reads `x` once). Maps of scalars over index
//! spaces of the same length in the same phase are merged likewise into one map of pairs
//! followed by its two projections (`unzip(map(f))`), which a backend can write as one loop
//! with two outputs (Copperhead's Figure 6: `precondition` becomes one loop).

use crate::captures::fix_captures;
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// How a loop needs one of its inputs to be complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Completion {
    /// Not needed at all.
    None,
    /// Element `i` is read only by iteration `i` (the producer could have been fused).
    Local,
    /// Elements are read at other positions, or the value as a whole: the producer must have
    /// finished.
    Global,
}

/// One phase: top-level statements (indices into `body.stmts`) that can run once
/// everything of the earlier phases is complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// The statements of the phase, in program order.
    pub stmts: Vec<usize>,
    /// How many of them are loops (combinators).
    pub loops: usize,
}

/// Splits the top level of a (fused) function into phases.
pub fn phases(f: &Function) -> Vec<Phase> {
    let levels = levels(f);
    let max = levels.iter().copied().max().unwrap_or(0);
    let mut out: Vec<Phase> = (0..=max)
        .map(|_| Phase {
            stmts: Vec::new(),
            loops: 0,
        })
        .collect();
    for (k, (s, level)) in f.body.stmts.iter().zip(&levels).enumerate() {
        out[*level].stmts.push(k);
        if matches!(s.expr, Expr::Soac(_)) {
            out[*level].loops += 1;
        }
    }
    out.retain(|p| !p.stmts.is_empty());
    out
}

/// The completion a top-level loop `s` needs of variable `v` (a sequence or a reduction
/// result defined earlier).
pub fn completion(s: &Stmt, v: VarId) -> Completion {
    let Expr::Soac(soac) = &s.expr else {
        return if s.expr.operands().contains(&v) {
            Completion::Global
        } else {
            Completion::None
        };
    };
    let index = soac.elem.params[0];
    let mut c = if s.expr.operands().contains(&v) {
        Completion::Global
    } else {
        Completion::None
    };
    let visit = |b: &Block, c: &mut Completion| {
        b.walk(&mut |st| {
            let here = match &st.expr {
                Expr::Index { seq, index: i, .. } if *seq == v => {
                    if *i == index {
                        Completion::Local
                    } else {
                        Completion::Global
                    }
                }
                e if e.operands().contains(&v) => Completion::Global,
                _ => Completion::None,
            };
            *c = (*c).max(here);
        });
    };
    visit(&soac.elem.body, &mut c);
    for l in soac.kind.lambdas() {
        visit(&l.body, &mut c);
    }
    c
}

/// The phase of each top-level statement: loops start a new phase after every loop whose
/// result they read; other statements run as soon as their inputs exist.
fn levels(f: &Function) -> Vec<usize> {
    let mut level_of: HashMap<VarId, usize> = HashMap::new();
    let mut is_loop: HashSet<VarId> = HashSet::new();
    let mut out = Vec::with_capacity(f.body.stmts.len());
    for s in &f.body.stmts {
        let mut uses = s.expr.operands();
        s.expr.for_each_lambda(&mut |l| uses.extend(&l.captures));
        s.expr
            .for_each_block(&mut |b| b.walk(&mut |st| uses.extend(st.expr.operands())));
        let mut level = 0;
        for u in uses {
            if let Some(&l) = level_of.get(&u) {
                let after_loop = matches!(s.expr, Expr::Soac(_)) && is_loop.contains(&u);
                level = level.max(if after_loop { l + 1 } else { l });
            }
        }
        level_of.insert(s.var, level);
        if let Expr::Soac(_) = s.expr {
            is_loop.insert(s.var);
        } else if uses_loop_result(s, &is_loop) {
            // A scalar computed from a loop's result is a loop result for its readers too.
            is_loop.insert(s.var);
        }
        out.push(level);
    }
    out
}

fn uses_loop_result(s: &Stmt, loops: &HashSet<VarId>) -> bool {
    s.expr.operands().iter().any(|v| loops.contains(v))
}

/// Merges reductions with start values over the same index space that run in the same
/// phase into one reduction of a tuple.
///
/// The blocks of the top level's `if`s and loops are top levels of their own (their
/// statements run as phases of the host code too): they are merged the same way.
pub fn horizontal(f: &Function) -> Function {
    let mut out = f.clone();
    horizontal_host(&mut out);
    fix_captures(&mut out);
    out
}

/// An empty block (a placeholder while a block is moved out).
fn empty() -> Block {
    Block {
        stmts: Vec::new(),
        result: VarId::new(0),
    }
}

/// Moves a block out, leaving [`empty`].
fn take(b: &mut Block) -> Block {
    std::mem::replace(b, empty())
}

/// [`horizontal`] in `f.body`, then in each block of its `if`s and loops, each in turn
/// made the body (the statements of a block see the enclosing ones as complete).
fn horizontal_host(f: &mut Function) {
    while let Some((a, b)) = merge_candidate(f) {
        merge(f, a, b);
    }
    while let Some((a, b)) = map_merge_candidate(f) {
        merge_maps(f, a, b);
    }
    for k in 0..f.body.stmts.len() {
        let blocks = match &mut f.body.stmts[k].expr {
            Expr::If(_, t, e) => vec![take(t), take(e)],
            Expr::Loop(l) => vec![take(&mut l.cond), take(&mut l.body)],
            _ => continue,
        };
        let mut done = Vec::new();
        for b in blocks {
            let outer = std::mem::replace(&mut f.body, b);
            horizontal_host(f);
            done.push(std::mem::replace(&mut f.body, outer));
        }
        let mut done = done.into_iter();
        let mut next = || done.next().unwrap_or_else(empty);
        match &mut f.body.stmts[k].expr {
            Expr::If(_, t, e) => (*t, *e) = (next(), next()),
            Expr::Loop(l) => (l.cond, l.body) = (next(), next()),
            _ => {}
        }
    }
}

/// Two top-level reductions `a < b` (statement indices) with the same length variable and
/// start values, in the same phase, where nothing between them uses `a`'s result.
fn merge_candidate(f: &Function) -> Option<(usize, usize)> {
    let levels = levels(f);
    let stmts = &f.body.stmts;
    for b in 0..stmts.len() {
        let Expr::Soac(sb) = &stmts[b].expr else {
            continue;
        };
        let SoacKind::Reduce { init: Some(_), .. } = sb.kind else {
            continue;
        };
        for a in 0..b {
            let Expr::Soac(sa) = &stmts[a].expr else {
                continue;
            };
            let SoacKind::Reduce { init: Some(_), .. } = sa.kind else {
                continue;
            };
            if sa.len != sb.len || levels[a] != levels[b] {
                continue;
            }
            let va = stmts[a].var;
            let used_between = stmts[a + 1..=b].iter().any(|s| {
                let mut uses = s.expr.operands();
                s.expr
                    .for_each_block(&mut |blk| blk.walk(&mut |st| uses.extend(st.expr.operands())));
                s.expr.for_each_block(&mut |blk| uses.push(blk.result));
                uses.contains(&va)
            });
            if !used_between {
                return Some((a, b));
            }
        }
    }
    None
}

fn merge(f: &mut Function, a: usize, b: usize) {
    let sb = f.body.stmts.remove(b);
    let sa = f.body.stmts.remove(a);
    let (Expr::Soac(ra), Expr::Soac(rb)) = (sa.expr, sb.expr) else {
        unreachable!("merge_candidate checked")
    };
    let (
        SoacKind::Reduce {
            op: op_a,
            init: Some(init_a),
        },
        SoacKind::Reduce {
            op: op_b,
            init: Some(init_b),
        },
    ) = (ra.kind, rb.kind)
    else {
        unreachable!("merge_candidate checked")
    };
    let (ta, tb) = (f.vars[sa.var].ty.clone(), f.vars[sb.var].ty.clone());
    let pair = Type::Tuple(vec![ta.clone(), tb.clone()]);
    let span = sb.span;
    let var = |f: &mut Function, name: &str, ty: &Type| f.new_var(name, ty.clone(), span);

    // Element function: |i| (elem_a(i), elem_b(i)).
    let i = var(f, "i", &Type::usize());
    let mut stmts = vec![
        Stmt {
            var: ra.elem.params[0],
            expr: Expr::Var(i),
            span,
        },
        Stmt {
            var: rb.elem.params[0],
            expr: Expr::Var(i),
            span,
        },
    ];
    stmts.extend(ra.elem.body.stmts);
    stmts.extend(rb.elem.body.stmts);
    let e = var(f, "both", &pair);
    stmts.push(Stmt {
        var: e,
        expr: Expr::Tuple(vec![ra.elem.body.result, rb.elem.body.result]),
        span,
    });
    let elem = Lambda {
        params: vec![i],
        captures: Vec::new(),
        body: Block { stmts, result: e },
    };

    // Operator: |p, q| (op_a(p.0, q.0), op_b(p.1, q.1)).
    let (p, q) = (var(f, "p", &pair), var(f, "q", &pair));
    let mut stmts = vec![
        Stmt {
            var: op_a.params[0],
            expr: Expr::Field(p, 0),
            span,
        },
        Stmt {
            var: op_a.params[1],
            expr: Expr::Field(q, 0),
            span,
        },
        Stmt {
            var: op_b.params[0],
            expr: Expr::Field(p, 1),
            span,
        },
        Stmt {
            var: op_b.params[1],
            expr: Expr::Field(q, 1),
            span,
        },
    ];
    stmts.extend(op_a.body.stmts);
    stmts.extend(op_b.body.stmts);
    let r = var(f, "both", &pair);
    stmts.push(Stmt {
        var: r,
        expr: Expr::Tuple(vec![op_a.body.result, op_b.body.result]),
        span,
    });
    let op = Lambda {
        params: vec![p, q],
        captures: Vec::new(),
        body: Block { stmts, result: r },
    };

    let init = var(f, "init", &pair);
    let t = var(f, "reduced", &pair);
    let merged = vec![
        Stmt {
            var: init,
            expr: Expr::Tuple(vec![init_a, init_b]),
            span,
        },
        Stmt {
            var: t,
            expr: Expr::Soac(Box::new(Soac {
                kind: SoacKind::Reduce {
                    op,
                    init: Some(init),
                },
                len: rb.len,
                elem,
            })),
            span,
        },
        Stmt {
            var: sa.var,
            expr: Expr::Field(t, 0),
            span: sa.span,
        },
        Stmt {
            var: sb.var,
            expr: Expr::Field(t, 1),
            span,
        },
    ];
    // Everything `a` and `b` read is defined before `b`'s old position (now `b - 1`).
    let at = b - 1;
    f.body.stmts.splice(at..at, merged);
}

/// Two top-level maps `a < b` (statement indices) producing scalars, in the same phase,
/// whose lengths are equal (the same variable, lengths of the same sequence, or equated by
/// the length assertions before `b`), where nothing between them uses `a`'s result and
/// `a`'s element function cannot raise an error. The merged map runs at `b`'s place, so
/// `a` moves later: past statements that might raise, which is why `a` itself must not
/// (then the first error is the one the unmerged program raises).
fn map_merge_candidate(f: &Function) -> Option<(usize, usize)> {
    let levels = levels(f);
    let stmts = &f.body.stmts;
    let mergeable = |s: &Stmt| match &s.expr {
        Expr::Soac(m) => {
            m.kind == SoacKind::Map
                && matches!(&f.vars[s.var].ty, Type::Seq(e) if matches!(**e, Type::Scalar(_)))
                && m.projection().is_none()
        }
        _ => false,
    };
    let mut lens = LenClasses::default();
    for b in 0..stmts.len() {
        if mergeable(&stmts[b]) {
            let Expr::Soac(sb) = &stmts[b].expr else {
                unreachable!()
            };
            for a in 0..b {
                let Expr::Soac(sa) = &stmts[a].expr else {
                    continue;
                };
                if !mergeable(&stmts[a])
                    || levels[a] != levels[b]
                    || !lens.same(sa.len, sb.len)
                    || can_raise(f, &sa.elem)
                {
                    continue;
                }
                let va = stmts[a].var;
                let used_between = stmts[a + 1..=b].iter().any(|s| {
                    let mut uses = s.expr.operands();
                    s.expr.for_each_block(&mut |blk| {
                        blk.walk(&mut |st| uses.extend(st.expr.operands()));
                        uses.push(blk.result);
                    });
                    uses.contains(&va)
                });
                if !used_between {
                    return Some((a, b));
                }
            }
        }
        lens.add(&stmts[b]);
    }
    None
}

/// Which `usize` variables of the top level are known to be equal: lengths of the same
/// sequence, copies, and the operands of `eq_len` assertions already passed.
#[derive(Default)]
struct LenClasses {
    parent: HashMap<VarId, VarId>,
    len_of: HashMap<VarId, VarId>,
}

impl LenClasses {
    fn find(&self, mut v: VarId) -> VarId {
        while let Some(&p) = self.parent.get(&v) {
            v = p;
        }
        v
    }

    fn union(&mut self, a: VarId, b: VarId) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
        }
    }

    fn same(&self, a: VarId, b: VarId) -> bool {
        self.find(a) == self.find(b)
    }

    /// Records what top-level statement `s` says about lengths.
    fn add(&mut self, s: &Stmt) {
        match &s.expr {
            Expr::Len(x) => match self.len_of.get(x) {
                Some(&l) => self.union(s.var, l),
                None => {
                    self.len_of.insert(*x, s.var);
                }
            },
            Expr::Var(w) => self.union(s.var, *w),
            Expr::Assert(Assertion::EqLen { a, b, .. }) => self.union(*a, *b),
            _ => {}
        }
    }
}

/// Whether evaluating `l`'s body may raise an error: a checked read, an integer division,
/// an assertion, or a loop (conservatively).
fn can_raise(f: &Function, l: &Lambda) -> bool {
    let mut raises = false;
    l.body.walk(&mut |s| {
        raises |= match &s.expr {
            Expr::Index { checked, .. } => checked.is_some(),
            Expr::Binary(BinOp::Div | BinOp::Rem, a, _) => {
                f.vars[*a].ty.scalar().is_some_and(|t| t.is_int())
            }
            Expr::Assert(_) | Expr::Soac(_) | Expr::Prim { .. } => true,
            _ => false,
        };
    });
    raises
}

/// Replaces maps `a < b` by `m = map(|i| (elem_a(i), elem_b(i)))` and the projections
/// `a = map(|i| m[i].0)`, `b = map(|i| m[i].1)` at `b`'s place.
fn merge_maps(f: &mut Function, a: usize, b: usize) {
    let sb = f.body.stmts.remove(b);
    let sa = f.body.stmts.remove(a);
    let (Expr::Soac(ma), Expr::Soac(mb)) = (sa.expr, sb.expr) else {
        unreachable!("map_merge_candidate checked")
    };
    let elem_ty = |f: &Function, v: VarId| match &f.vars[v].ty {
        Type::Seq(e) => (**e).clone(),
        _ => unreachable!("map_merge_candidate checked"),
    };
    let (ta, tb) = (elem_ty(f, sa.var), elem_ty(f, sb.var));
    let pair = Type::Tuple(vec![ta.clone(), tb.clone()]);
    let span = sb.span;
    let len = mb.len;

    // Element function: |i| (elem_a(i), elem_b(i)).
    let i = f.new_var("i", Type::usize(), span);
    let mut stmts = vec![
        Stmt {
            var: ma.elem.params[0],
            expr: Expr::Var(i),
            span,
        },
        Stmt {
            var: mb.elem.params[0],
            expr: Expr::Var(i),
            span,
        },
    ];
    stmts.extend(ma.elem.body.stmts);
    stmts.extend(mb.elem.body.stmts);
    let both = f.new_var("both", pair.clone(), span);
    stmts.push(Stmt {
        var: both,
        expr: Expr::Tuple(vec![ma.elem.body.result, mb.elem.body.result]),
        span,
    });
    let m = f.new_var("both", Type::Seq(Box::new(pair.clone())), span);
    let mut merged = vec![Stmt {
        var: m,
        expr: Expr::Soac(Box::new(Soac {
            kind: SoacKind::Map,
            len,
            elem: Lambda {
                params: vec![i],
                captures: Vec::new(),
                body: Block {
                    stmts,
                    result: both,
                },
            },
        })),
        span,
    }];
    // The projections.
    for (k, (var, ty, span)) in [(sa.var, ta, sa.span), (sb.var, tb, sb.span)]
        .into_iter()
        .enumerate()
    {
        let j = f.new_var("i", Type::usize(), span);
        let t = f.new_var("both_i", pair.clone(), span);
        let x = f.new_var("part", ty, span);
        merged.push(Stmt {
            var,
            expr: Expr::Soac(Box::new(Soac {
                kind: SoacKind::Map,
                len,
                elem: Lambda {
                    params: vec![j],
                    captures: Vec::new(),
                    body: Block {
                        stmts: vec![
                            Stmt {
                                var: t,
                                expr: Expr::Index {
                                    seq: m,
                                    index: j,
                                    checked: None,
                                },
                                span,
                            },
                            Stmt {
                                var: x,
                                expr: Expr::Field(t, k as u32),
                                span,
                            },
                        ],
                        result: x,
                    },
                },
            })),
            span,
        });
    }
    // Everything `a` and `b` read is defined before `b`'s old position (now `b - 1`).
    let at = b - 1;
    f.body.stmts.splice(at..at, merged);
}
