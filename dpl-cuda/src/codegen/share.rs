//! Which sequences built inside an element function are stored rather than recomputed at
//! each read.
//!
//! A combinator inside an element function is not built: it stays lazy ([`KVal::Lazy`]),
//! and each place that reads an element of it compiles its element function there (see
//! [`Gen::inner_soac`]). That is what fusion does, and it is right for a sequence read
//! once or cheap to recompute. But a sequence read at several places is compiled once per
//! read, together with the lazy sequences its element function reads in turn, so a chain
//! of such sequences doubles the kernel at each step (a recurrence in which each step
//! reads the previous one twice: 2^n copies of the first step's code after n steps).
//!
//! So a lazy `map` read at two places or more whose element function, with the lazy
//! sequences it reads expanded, exceeds [`INLINE_BOUND`] statements is stored once per
//! element in per-thread scratch memory ([`Gen::materialize`]) and read from there, which
//! bounds each read's code and keeps the kernel linear in the body. Smaller ones, and
//! those read once, stay fused as before.

use super::*;

/// Statements (after expanding the lazy sequences read) past which a lazy `map` read at
/// several places is stored rather than compiled again at each read.
pub(super) const INLINE_BOUND: usize = 48;

/// The sequences defined inside element functions that are stored instead of recomputed
/// at each read (see the module documentation).
pub(super) fn stored_seqs(f: &Function) -> HashSet<VarId> {
    let mut reads: HashMap<VarId, usize> = HashMap::new();
    let mut count = |v: VarId| *reads.entry(v).or_default() += 1;
    f.body.walk(&mut |s| {
        if !matches!(s.expr, Expr::Len(_)) {
            s.expr.operands().into_iter().for_each(&mut count);
        }
        s.expr.for_each_block(&mut |b| count(b.result));
    });
    let mut s = Sizes {
        reads,
        cost: HashMap::new(),
        stored: HashSet::new(),
    };
    s.top(&f.body);
    s.stored
}

/// The state of [`stored_seqs`].
struct Sizes {
    /// Uses of each variable (other than its length).
    reads: HashMap<VarId, usize>,
    /// The statements compiled where an element of a lazy sequence is read.
    cost: HashMap<VarId, usize>,
    stored: HashSet<VarId>,
}

impl Sizes {
    /// A top-level block (host code: its combinators are kernels, stored in memory).
    fn top(&mut self, b: &Block) {
        for st in &b.stmts {
            match &st.expr {
                Expr::If(..) | Expr::Loop(_) => st.expr.for_each_block(&mut |b| self.top(b)),
                e => e.for_each_block(&mut |b| self.inner(b)),
            }
        }
    }

    /// A block inside a kernel: its sequence combinators are lazy.
    fn inner(&mut self, b: &Block) {
        for st in &b.stmts {
            st.expr.for_each_block(&mut |b| self.inner(b));
            if let Expr::Soac(soac) = &st.expr
                && matches!(soac.kind, SoacKind::Map)
            {
                let size = self.expanded(&soac.elem.body);
                let reads = self.reads.get(&st.var).copied().unwrap_or(0);
                if reads > 1 && size > INLINE_BOUND {
                    self.stored.insert(st.var);
                } else {
                    self.cost.insert(st.var, size);
                }
            }
        }
    }

    /// The statements compiled for a block, reads of lazy sequences expanded.
    fn expanded(&self, b: &Block) -> usize {
        b.stmts
            .iter()
            .map(|st| {
                let read = match &st.expr {
                    Expr::Index { seq, .. } => self.cost.get(seq).copied().unwrap_or(0),
                    _ => 0,
                };
                let mut inside = 0;
                st.expr.for_each_block(&mut |b| inside += self.expanded(b));
                1 + read + inside
            })
            .sum()
    }
}
