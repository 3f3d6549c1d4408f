//! A static estimate of what one element of a flat `map` costs, to choose where it goes
//! parallel.
//!
//! `rt::map` runs index spaces below `rt::GRAIN` (2^17) on the calling thread: right for
//! the streaming maps it was tuned on (~0.1 ns per element), wrong for an element that
//! holds a loop (a binomial tree, a Mandelbrot escape count) or software arithmetic
//! (`f16`/`bf16` on CPUs without native half-precision, math functions): 4,096 option
//! prices of a thousand steps each ran on one thread. Such *costly* elements go through
//! `heavy::map` instead, whose sequential threshold is in units of work
//! (`heavy::WORK_GRAIN`, about a nanosecond each) and whose many small chunks balance
//! elements of uneven cost. The estimate is in eighths of a nanosecond per element (a
//! simple operation each) on the machine the grains were tuned on, passed to `heavy` in
//! its units of work.

use dpl_core::ir::{Block, Expr, Function, MathFn, SoacKind};

/// The units of [`block`]'s estimate per unit of work of the `heavy` helpers (about a
/// nanosecond): a simple operation is one unit, an eighth of a nanosecond.
pub(super) const PER_WORK: u64 = 8;

/// Elements estimated at this many units or more are costly (see the module docs): about
/// 8 ns, some 80 times a streaming element, so that a map of them pays for a parallel
/// call from about 2^13 elements on (`heavy::WORK_GRAIN` / 8 ns).
pub(super) const COSTLY: u64 = 8 * PER_WORK;

/// The iterations a loop whose trip count is not known is assumed to run.
const LOOP_TRIPS: u64 = 16;

/// An operation computed in software on the CPU: a transcendental math function, or any
/// operation on a 16-bit float (conversions to `f32` and back around it), in units.
const SOFTWARE: u64 = 8 * PER_WORK;

/// The estimated cost of one evaluation of `b`, in units of about an eighth of a
/// nanosecond: one per simple operation (arithmetic, a comparison, a read), more for
/// software arithmetic, loops assumed to run [`LOOP_TRIPS`] times.
pub(super) fn block(f: &Function, b: &Block) -> u64 {
    b.stmts.iter().fold(0u64, |sum, st| {
        let half = f.vars[st.var].ty.scalar().is_some_and(|s| s.is_half());
        let cost = match &st.expr {
            Expr::Math(m, _) => match m {
                MathFn::Abs | MathFn::Min | MathFn::Max => 1,
                MathFn::Floor | MathFn::Ceil | MathFn::Round | MathFn::Trunc => 1,
                MathFn::Sqrt | MathFn::MulAdd => 4,
                _ => 2 * SOFTWARE,
            },
            Expr::Loop(l) => LOOP_TRIPS.saturating_mul(block(f, &l.cond) + block(f, &l.body)),
            Expr::If(_, a, b) => 1 + block(f, a).max(block(f, b)),
            Expr::Const(_) | Expr::Var(_) | Expr::Tuple(_) | Expr::Field(..) => 0,
            e => {
                let mut inner = 0;
                e.for_each_block(&mut |b| inner += block(f, b));
                1 + inner
            }
        };
        sum.saturating_add(if half { cost.max(SOFTWARE) } else { cost })
    })
}

/// Whether `f` does much work per element of its data: a top-level combinator whose
/// element is estimated costly (at least [`COSTLY`]: a loop, software arithmetic), a sort,
/// or a loop at the top level of the body (the same data visited again and again). The
/// default placement on a GPU uses it (`dpl::Place`'s documentation): moving host data to
/// the device and back pays for such a call, not for a streaming one (a `saxpy` moves 12
/// bytes over PCIe for 2 operations).
pub fn compute_bound(f: &Function) -> bool {
    fn top(f: &Function, b: &Block) -> bool {
        b.stmts.iter().any(|st| match &st.expr {
            Expr::Loop(_) => true,
            Expr::Soac(s) => {
                matches!(s.kind, SoacKind::Sort | SoacKind::SortByKey)
                    || block(f, &s.elem.body) >= COSTLY
            }
            Expr::If(_, a, b) => top(f, a) || top(f, b),
            _ => false,
        })
    }
    top(f, &f.body)
}
