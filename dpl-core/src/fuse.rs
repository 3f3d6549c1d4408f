//! Fusion at the Soac level, and dead-code elimination.
//!
//! A producer `p = soac map n |i| body` whose value is only ever read element-wise
//! (`p[j]`, and `len(p)`) at a single place is *inlined* there: the read becomes the
//! producer's body with `i := j` (preceded by a bounds check against `n` when the read was
//! checked), and `len(p)` becomes `n`. Because every combinator reads its inputs through its
//! element function, this one rule fuses map into map, reduce, scan, filter and scatter,
//! gathers of maps, zips and unzips, and chains of them; the temporaries disappear. It is
//! repeated until nothing changes, then statements whose value is unused are removed
//! (assertions are kept: they are the program's checks).
//!
//! A producer whose element function can fail (an integer division, a checked index, ...)
//! is inlined only where every one of its elements is read (`reads_all`): inlined into a
//! gather, its unread elements would never be computed and their errors never raised.

use crate::captures::{fix_captures, rename_uses, visit_blocks_mut};
use crate::ir::*;
use std::collections::{HashMap, HashSet};

/// Fuses producers into consumers and removes dead statements.
pub fn fuse(f: &Function) -> Function {
    let mut out = f.clone();
    forward_copies(&mut out);
    dead_code(&mut out);
    while let Some(p) = candidate(&out) {
        inline_producer(&mut out, p);
    }
    // Inlining binds each producer's index parameter by a copy; forward those too.
    forward_copies(&mut out);
    dead_code(&mut out);
    fix_captures(&mut out);
    out
}

/// How a variable is used.
#[derive(Default, Debug)]
struct Uses {
    /// `Index { seq: v }` reads.
    reads: usize,
    /// `Len(v)` uses.
    lens: usize,
    /// Any other use (operand of another expression, a block result).
    other: usize,
}

fn count_uses(f: &Function) -> HashMap<VarId, Uses> {
    let mut uses: HashMap<VarId, Uses> = HashMap::new();
    fn block(b: &Block, uses: &mut HashMap<VarId, Uses>) {
        for s in &b.stmts {
            match &s.expr {
                Expr::Index { seq, index, .. } => {
                    uses.entry(*seq).or_default().reads += 1;
                    uses.entry(*index).or_default().other += 1;
                }
                Expr::Len(v) => uses.entry(*v).or_default().lens += 1,
                e => {
                    for v in e.operands() {
                        uses.entry(v).or_default().other += 1;
                    }
                }
            }
            s.expr.for_each_block(&mut |b| block(b, uses));
        }
        uses.entry(b.result).or_default().other += 1;
    }
    block(&f.body, &mut uses);
    uses
}

/// Lambda nesting depth of each statement's definition and of each variable's reads.
fn depths(f: &Function) -> (HashMap<VarId, usize>, HashMap<VarId, usize>) {
    fn block(
        b: &Block,
        d: usize,
        defs: &mut HashMap<VarId, usize>,
        reads: &mut HashMap<VarId, usize>,
    ) {
        for s in &b.stmts {
            defs.insert(s.var, d);
            if let Expr::Index { seq, .. } = &s.expr {
                let e = reads.entry(*seq).or_insert(d);
                *e = (*e).max(d);
            }
            match &s.expr {
                Expr::If(_, x, y) => {
                    block(x, d, defs, reads);
                    block(y, d, defs, reads);
                }
                // A loop's blocks run once per iteration: one level deeper, like a lambda's.
                Expr::Loop(l) => {
                    block(&l.cond, d + 1, defs, reads);
                    block(&l.body, d + 1, defs, reads);
                }
                e => e.for_each_lambda(&mut |l| block(&l.body, d + 1, defs, reads)),
            }
        }
    }
    let (mut defs, mut reads) = (HashMap::new(), HashMap::new());
    block(&f.body, 0, &mut defs, &mut reads);
    (defs, reads)
}

/// The first fusable producer in program order: a `map` combinator read element-wise at
/// exactly one place, at most one loop level deeper than itself (deeper reads would
/// recompute each element once per iteration of the loops in between).
fn candidate(f: &Function) -> Option<VarId> {
    let uses = count_uses(f);
    let (defs, reads) = depths(f);
    let mut found = None;
    f.body.walk(&mut |s| {
        if found.is_some() {
            return;
        }
        if let Expr::Soac(soac) = &s.expr
            && matches!(soac.kind, SoacKind::Map)
            && let Some(u) = uses.get(&s.var)
        {
            let near = match (defs.get(&s.var), reads.get(&s.var)) {
                (Some(d), Some(r)) => *r <= *d + 1,
                _ => false,
            };
            let fusable = u.reads == 1 || (u.reads > 1 && cheap(&soac.elem));
            if u.other == 0
                && fusable
                && near
                && (!may_fail(f, &s.expr) || reads_all(f, s.var, soac.len))
            {
                found = Some(s.var);
            }
        }
    });
    found
}

/// Whether every read of `p` (a `map` over `p_len` elements) is that of a loop over all of
/// its elements: `p[i]` where `i` is the index of a combinator whose length is known to
/// equal `p_len` (the same variable, `len(p)`, or lengths asserted equal, transitively).
/// A producer that can fail is inlined only then: inlined where only some of its elements
/// are read (a gather, a loop over a shorter sequence), the others would never be computed
/// and their errors never raised, so the fused program could succeed where the program as
/// written fails (found by `dpl-cuda/tests/sim_random_programs.rs`).
fn reads_all(f: &Function, p: VarId, p_len: VarId) -> bool {
    // Classes of length variables known to be equal: `n = len(p)` is `p_len`; two `len`s
    // of one sequence are one length; `assert eq_len(a, b)` makes `a` and `b` one.
    let mut parent: HashMap<VarId, VarId> = HashMap::new();
    fn root(parent: &HashMap<VarId, VarId>, mut v: VarId) -> VarId {
        while let Some(&w) = parent.get(&v) {
            v = w;
        }
        v
    }
    let union = |parent: &mut HashMap<VarId, VarId>, a: VarId, b: VarId| {
        let (ra, rb) = (root(parent, a), root(parent, b));
        if ra != rb {
            parent.insert(ra, rb);
        }
    };
    let mut len_of_seq: HashMap<VarId, VarId> = HashMap::new();
    f.body.walk(&mut |s| match &s.expr {
        Expr::Len(q) if *q == p => union(&mut parent, s.var, p_len),
        Expr::Len(q) => match len_of_seq.get(q) {
            Some(&n) => union(&mut parent, s.var, n),
            None => {
                len_of_seq.insert(*q, s.var);
            }
        },
        Expr::Assert(Assertion::EqLen { a, b, .. }) => union(&mut parent, *a, *b),
        _ => {}
    });
    /// Whether every read of `p` in `b` (not inside the combinators nested in it, which
    /// are visited on their own) is `p[i]`, with `i` given and the loop over all of `p`.
    fn reads_in(b: &Block, p: VarId, i: Option<VarId>) -> bool {
        b.stmts.iter().all(|t| match &t.expr {
            Expr::Index { seq, index, .. } if *seq == p => Some(*index) == i,
            Expr::Soac(_) => true,
            e => {
                let mut ok = true;
                e.for_each_block(&mut |inner| ok &= reads_in(inner, p, i));
                ok
            }
        })
    }
    let p_class = root(&parent, p_len);
    let mut all = true;
    f.body.walk(&mut |s| {
        let Expr::Soac(soac) = &s.expr else { return };
        let full = root(&parent, soac.len) == p_class;
        let i = soac.elem.params.first().copied().filter(|_| full);
        all &= reads_in(&soac.elem.body, p, i);
        for l in soac.kind.lambdas() {
            all &= reads_in(&l.body, p, None);
        }
    });
    // Reads outside any combinator (the top level) read one element.
    all && reads_in(&f.body, p, None)
}

/// Element functions small enough to be recomputed at each of several reads rather than
/// materialized: a few statements, no nested loop, no check that could fail.
fn cheap(l: &Lambda) -> bool {
    l.body.stmts.len() <= 6
        && l.body.stmts.iter().all(|s| {
            !matches!(
                s.expr,
                Expr::Soac(_) | Expr::Prim { .. } | Expr::If(..) | Expr::Assert(_) | Expr::Loop(_)
            ) && !matches!(
                s.expr,
                Expr::Index {
                    checked: Some(_),
                    ..
                }
            )
        })
}

/// A copy of `l` in which every variable it defines (parameters, statements, nested
/// lambdas' parameters) is replaced by a fresh one, so the copy can live beside the original.
fn clone_fresh(vars: &mut Arena<Var>, l: &Lambda) -> Lambda {
    let mut defined = Vec::new();
    fn collect(b: &Block, out: &mut Vec<VarId>) {
        for s in &b.stmts {
            out.push(s.var);
            s.expr.for_each_lambda(&mut |l| out.extend(&l.params));
            if let Expr::Loop(l) = &s.expr {
                out.extend(&l.params);
            }
            s.expr.for_each_block(&mut |b| collect(b, out));
        }
    }
    defined.extend(&l.params);
    collect(&l.body, &mut defined);
    let map: HashMap<VarId, VarId> = defined
        .into_iter()
        .map(|v| {
            let copy = vars[v].clone();
            (v, vars.push(copy))
        })
        .collect();
    let mut out = l.clone();
    out.params = out.params.iter().map(|p| map[p]).collect();
    visit_blocks_mut(&mut out.body, &mut |b| {
        for s in &mut b.stmts {
            if let Some(&n) = map.get(&s.var) {
                s.var = n;
            }
            if let Expr::Loop(l) = &mut s.expr {
                for p in &mut l.params {
                    if let Some(&n) = map.get(p) {
                        *p = n;
                    }
                }
            }
            crate::captures::for_each_block_mut(&mut s.expr, &mut |_, kind| {
                if let crate::captures::BlockKind::Lambda(inner) = kind {
                    for p in &mut inner.params {
                        if let Some(&n) = map.get(p) {
                            *p = n;
                        }
                    }
                }
            });
        }
    });
    rename_uses(&mut out.body, &map);
    out
}

/// Removes the producer statement of `p` and inlines it at each of its reads (a fresh copy
/// for all but the last).
fn inline_producer(f: &mut Function, p: VarId) {
    let mut producer: Option<(Soac, Span)> = None;
    visit_blocks_mut(&mut f.body, &mut |b| {
        if producer.is_some() {
            return;
        }
        if let Some(pos) = b.stmts.iter().position(|s| s.var == p) {
            let s = b.stmts.remove(pos);
            if let Expr::Soac(soac) = s.expr {
                producer = Some((*soac, s.span));
            }
        }
    });
    let Some((soac, _)) = producer else { return };
    let n = soac.len;
    let mut elem = Some(soac.elem);
    let mut remaining = count_uses(f).get(&p).map_or(0, |u| u.reads);
    let vars = &mut f.vars;
    visit_blocks_mut(&mut f.body, &mut |b| {
        let mut k = 0;
        while k < b.stmts.len() {
            match &b.stmts[k].expr {
                Expr::Len(v) if *v == p => {
                    b.stmts[k].expr = Expr::Var(n);
                    k += 1;
                }
                Expr::Index {
                    seq,
                    index,
                    checked,
                } if *seq == p => {
                    let (index, checked) = (*index, *checked);
                    remaining -= 1;
                    let Some(l) = (if remaining == 0 {
                        elem.take()
                    } else {
                        elem.as_ref().map(|e| clone_fresh(vars, e))
                    }) else {
                        k += 1;
                        continue;
                    };
                    let Stmt { var, span, .. } = b.stmts.remove(k);
                    let mut new = Vec::new();
                    if let Some(origin) = checked {
                        let c = vars.push(Var {
                            name: "check".into(),
                            ty: Type::unit(),
                            span,
                        });
                        new.push(Stmt {
                            var: c,
                            expr: Expr::Assert(Assertion::InBounds {
                                origin,
                                index,
                                len: n,
                            }),
                            span,
                        });
                    }
                    let i = l.params[0];
                    let bind = if vars[index].ty == Type::usize() {
                        Expr::Var(index)
                    } else {
                        Expr::Cast(index, Scalar::Usize)
                    };
                    new.push(Stmt {
                        var: i,
                        expr: bind,
                        span,
                    });
                    new.extend(l.body.stmts);
                    new.push(Stmt {
                        var,
                        expr: Expr::Var(l.body.result),
                        span,
                    });
                    let added = new.len();
                    b.stmts.splice(k..k, new);
                    k += added;
                }
                _ => k += 1,
            }
        }
    });
}

/// Copy propagation: uses of `c = a` and of `c = t.k` where `t = (.., a, ..)` are replaced
/// by `a`, so that a tuple built only to be taken apart (what `unzip` and tuple patterns
/// produce) is no barrier to fusion. The bypassed statements become dead.
fn forward_copies(f: &mut Function) {
    let mut tuples: HashMap<VarId, Vec<VarId>> = HashMap::new();
    let mut map: HashMap<VarId, VarId> = HashMap::new();
    f.body.walk(&mut |s| match &s.expr {
        Expr::Tuple(vs) => {
            tuples.insert(s.var, vs.clone());
        }
        Expr::Var(a) => {
            map.insert(s.var, *a);
        }
        _ => {}
    });
    // Fields of known tuples (after resolving copies of the tuple itself).
    f.body.walk(&mut |s| {
        if let Expr::Field(t, k) = &s.expr {
            let mut t = *t;
            while let Some(&w) = map.get(&t) {
                t = w;
            }
            if let Some(parts) = tuples.get(&t)
                && let Some(&a) = parts.get(*k as usize)
            {
                map.insert(s.var, a);
            }
        }
    });
    // Parameters of element functions are bound by copies too (`i = j`); keep those
    // definitions, only their uses are redirected.
    rename_uses(&mut f.body, &map);
}

/// True when evaluating `e` may raise a contract violation (a checked index, an assertion,
/// an integer division, a reduction without start value, a scatter or permutation), here or
/// in a nested block. Such statements are kept even when their value is unused, so that
/// every place reports the same errors; and an in-place write of a `&mut` parameter on the
/// CPU is allowed only when nothing after it may fail (the parameter is left unchanged by
/// a failing call). Running out of memory is not counted.
pub fn may_fail(f: &Function, e: &Expr) -> bool {
    let here = match e {
        Expr::Assert(_)
        | Expr::Index {
            checked: Some(_), ..
        } => true,
        Expr::Binary(BinOp::Div | BinOp::Rem, a, _) => {
            f.vars[*a].ty.scalar().is_some_and(Scalar::is_int)
        }
        Expr::Soac(s) => matches!(
            s.kind,
            SoacKind::Reduce { init: None, .. }
                | SoacKind::Scatter { .. }
                | SoacKind::ScatterReduce { .. }
                | SoacKind::Permute
        ),
        Expr::Prim { .. } => true,
        _ => false,
    };
    let mut nested = false;
    e.for_each_block(&mut |b| nested |= b.stmts.iter().any(|s| may_fail(f, &s.expr)));
    here || nested
}

/// Removes statements whose value is never used and that cannot fail, to a fixpoint.
fn dead_code(f: &mut Function) {
    loop {
        let uses = count_uses(f);
        let used: HashSet<VarId> = uses
            .iter()
            .filter(|(_, u)| u.reads + u.lens + u.other > 0)
            .map(|(v, _)| *v)
            .collect();
        let mut removed = false;
        let keep: HashSet<VarId> = {
            let mut k = HashSet::new();
            f.body.walk(&mut |s| {
                if used.contains(&s.var) || may_fail(f, &s.expr) {
                    k.insert(s.var);
                }
            });
            k
        };
        visit_blocks_mut(&mut f.body, &mut |b| {
            let before = b.stmts.len();
            b.stmts.retain(|s| keep.contains(&s.var));
            removed |= b.stmts.len() != before;
        });
        if !removed {
            break;
        }
    }
}

/// Counts of loops and temporaries, for structure tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stats {
    /// Combinators (each is one loop over its index space), nested ones included.
    pub loops: usize,
    /// Sequences materialized by a combinator that are not (part of) the function's result.
    /// The rows of a ragged result (the `map`, `scan`, `exclusive_scan` or `filter` that
    /// computes each row of a `map` that is part of the result) are part of it: the CPU
    /// backend writes them into the result's flat buffer.
    pub temporaries: usize,
    /// Combinators at the top level of the body.
    pub top_level_loops: usize,
}

/// Counts loops and temporaries of a Soac-level function.
pub fn stats(f: &Function) -> Stats {
    let mut results: HashSet<VarId> = HashSet::new();
    let mut pending = vec![f.body.result];
    while let Some(v) = pending.pop() {
        if results.insert(v) {
            for s in &f.body.stmts {
                if s.var == v {
                    match &s.expr {
                        Expr::Tuple(vs) => pending.extend(vs),
                        Expr::Var(w) => pending.push(*w),
                        _ => {}
                    }
                }
            }
        }
    }
    // The rows of ragged results: what the element function of a result `map` returns,
    // when a combinator that the CPU backend writes into the result computes it.
    let mut rows: HashSet<VarId> = HashSet::new();
    for s in &f.body.stmts {
        if let Expr::Soac(m) = &s.expr {
            if m.kind != SoacKind::Map || !results.contains(&s.var) {
                continue;
            }
            let r = m.elem.body.result;
            let row_loop = m.elem.body.stmts.iter().any(|st| {
                st.var == r
                    && matches!(&st.expr, Expr::Soac(k) if matches!(
                        k.kind,
                        SoacKind::Map
                            | SoacKind::Scan { .. }
                            | SoacKind::ExclusiveScan { .. }
                            | SoacKind::Filter { .. }
                    ))
            });
            if row_loop {
                rows.insert(r);
            }
        }
    }
    let top_level_loops = f
        .body
        .stmts
        .iter()
        .filter(|s| matches!(s.expr, Expr::Soac(_)))
        .count();
    let mut st = Stats {
        top_level_loops,
        ..Stats::default()
    };
    f.body.walk(&mut |s| {
        if let Expr::Soac(soac) = &s.expr {
            st.loops += 1;
            let materializes = !matches!(soac.kind, SoacKind::Reduce { .. });
            if materializes && !results.contains(&s.var) && !rows.contains(&s.var) {
                st.temporaries += 1;
            }
        }
    });
    st
}
