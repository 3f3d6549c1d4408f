//! Device-wide scans (`scan`, `exclusive_scan`) and the offsets of ragged results: a
//! single pass with decoupled look-back ([`lookback`]) or reduce-then-scan
//! ([`reduce_then_scan`]), both over tiles staged in shared memory ([`tiles`]).

use super::*;

mod lookback;
mod reduce_then_scan;
pub(super) mod tiles;

impl<'f> Gen<'f> {
    /// [`Gen::exclusive_offsets`], then the total (`offs[n]`) read back into a numeric
    /// temporary; returns both temporaries.
    pub(in crate::codegen) fn offsets(
        &mut self,
        sizes: u32,
        n_count: &Count,
        steps: &mut Vec<Step>,
    ) -> R<(u32, u32)> {
        let offs = self.exclusive_offsets(sizes, n_count, steps)?;
        let total = self.temp();
        steps.push(Step::ReadCount {
            temp: total,
            src: Buf::Temp(offs),
            index: n_count.clone(),
            guard: Count::Const(1),
        });
        Ok((offs, total))
    }

    /// The element source of a scan's tile: the element function at the index.
    pub(super) fn scan_elem<'b>(
        c: &'b Common,
        soac: &'b Soac,
        n: &'b Reg,
    ) -> impl FnMut(&mut Self, &mut Kernel, &mut Env, &Reg, &Label) -> R<Vec<Reg>> + 'b {
        move |g: &mut Self, k: &mut Kernel, env: &mut Env, idx: &Reg, fail: &Label| {
            Ok(g.elem_at(k, c, env, soac, None, n, idx, fail)?.0)
        }
    }

    /// The store of a tile's results: leaf `j` at the index of buffer `ptrs[j]`.
    pub(super) fn leaf_store<'b>(
        ptrs: &'b [Reg],
    ) -> impl FnMut(&mut Self, &mut Kernel, &Reg, &[Reg]) -> R<()> + 'b {
        move |g: &mut Self, k: &mut Kernel, idx: &Reg, v: &[Reg]| {
            for (r, p) in v.iter().zip(ptrs) {
                g.store(k, p, idx, r);
            }
            Ok(())
        }
    }
}
