//! `CooMatrix::to_csr` on random triplets (duplicates included) against an independent
//! accumulation of the same triplets.

use std::collections::BTreeMap;

use dpl_mm::{CooMatrix, Csr};
use dpl_testkit::SplitMix64;

#[test]
fn to_csr_matches_an_accumulation_of_the_triplets() {
    let mut rng = SplitMix64::new(5);
    let (rows, cols) = (17, 11);
    let entries: Vec<(usize, usize, f64)> = (0..200)
        .map(|_| {
            let r = rng.below(rows);
            let c = rng.below(cols);
            // Small integers: sums are exact whatever the order.
            (r, c, rng.below(9) as f64 - 4.0)
        })
        .collect();
    let mut want: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    for &(r, c, v) in &entries {
        *want.entry((r, c)).or_default() += v;
    }
    let csr = CooMatrix::from_triplets(rows, cols, entries)
        .unwrap()
        .to_csr();
    // Row by row, strictly increasing columns: exactly the accumulated (row, column) keys
    // in order, duplicates summed.
    let got: Vec<((usize, usize), f64)> = (0..csr.rows())
        .flat_map(|r| {
            let (cs, vs) = csr.row(r);
            cs.iter().zip(vs).map(move |(&c, &v)| ((r, c as usize), v))
        })
        .collect();
    assert_eq!(got, want.into_iter().collect::<Vec<_>>());
    assert!(
        Csr::from_parts(
            cols,
            csr.row_offsets().to_vec(),
            csr.col_indices().to_vec(),
            csr.values().to_vec()
        )
        .is_ok()
    );
}
