//! The ragged example (`examples/ragged.rs`): its segmented `#[parallel]` functions and its
//! hand-written rayon baselines against plain Rust written here, on every place, for 0, 1,
//! an odd number and many rows, with empty rows, skewed rows and wrapping sums.

#[path = "../examples/ragged.rs"]
#[allow(dead_code)]
mod ragged;

use dpl::prelude::*;
use dpl_testkit::SplitMix64;
use ragged::hand;

fn each_place(mut f: impl FnMut(Place)) {
    let places = dpl::available_places();
    assert!(places.contains(&Place::Seq) && places.contains(&Place::Cpu));
    for p in places {
        with_place(p, || f(p));
    }
}

/// `rows` rows; about a third empty, the rest of length up to `max_len`, values in
/// `-range..range`.
fn random_rows(rows: usize, max_len: u64, range: i64, seed: u64) -> Vec<Vec<i64>> {
    let mut rng = SplitMix64::new(seed);
    (0..rows)
        .map(|_| {
            let len = if rng.below(3) == 0 {
                0
            } else {
                rng.below(max_len as usize + 1)
            };
            (0..len)
                .map(|_| rng.below(2 * range as usize) as i64 - range)
                .collect()
        })
        .collect()
}

/// The test inputs: 0, 1, an odd number and many rows; all empty; one long row among short
/// ones; values whose sums wrap.
fn cases() -> Vec<(String, Vec<Vec<i64>>)> {
    let mut skewed = random_rows(999, 5, 100, 3);
    skewed[500] = (0..100_000).map(|i| (i % 7) - 3).collect();
    vec![
        ("0 rows".into(), vec![]),
        ("1 empty row".into(), vec![vec![]]),
        ("1 row".into(), vec![vec![5, -3, 0, 7]]),
        ("7 rows".into(), random_rows(7, 6, 10, 1)),
        ("101 empty rows".into(), vec![vec![]; 101]),
        ("1001 rows".into(), random_rows(1001, 40, 1000, 2)),
        ("skewed".into(), skewed),
        (
            "wrapping".into(),
            vec![
                vec![i64::MAX, 1, i64::MAX, i64::MIN],
                vec![],
                vec![i64::MIN, -1],
            ],
        ),
        ("200000 rows".into(), random_rows(200_000, 30, 1_000_000, 4)),
    ]
}

fn prefix(r: &[i64], start: i64) -> Vec<i64> {
    let mut out = Vec::with_capacity(r.len());
    let mut acc = start;
    for &v in r {
        acc = acc.wrapping_add(v);
        out.push(acc);
    }
    out
}

#[test]
fn segmented_scan_filter_sum_max() {
    for (name, rows) in cases() {
        let n = Nested::from(rows.clone());
        let want_scan: Vec<Vec<i64>> = rows.iter().map(|r| prefix(r, 0)).collect();
        let want_pos: Vec<Vec<i64>> = rows
            .iter()
            .map(|r| r.iter().copied().filter(|&v| v > 0).collect())
            .collect();
        let want_sums: Vec<i64> = rows
            .iter()
            .map(|r| r.iter().fold(0i64, |a, &b| a.wrapping_add(b)))
            .collect();
        let want_max: Vec<i64> = rows
            .iter()
            .map(|r| r.iter().copied().max().unwrap_or(i64::MIN))
            .collect();
        each_place(|p| {
            let scanned = ragged::row_prefix_sums(&n);
            assert_eq!(scanned.len(), rows.len(), "{p} {name}");
            assert_eq!(scanned.to_vecs(), want_scan, "{p} {name}: prefix sums");
            assert_eq!(
                ragged::row_positives(&n).to_vecs(),
                want_pos,
                "{p} {name}: filter"
            );
            assert_eq!(
                ragged::row_sums_and_maxima(&n),
                (want_sums.clone(), want_max.clone()),
                "{p} {name}: sum/max"
            );
        });
        assert_eq!(hand::prefix_sums(&n).to_vecs(), want_scan, "rayon {name}");
        assert_eq!(
            hand::filter(&n, |v| v > 0).to_vecs(),
            want_pos,
            "rayon {name}"
        );
        assert_eq!(
            hand::sums_and_maxima(&n),
            (want_sums, want_max),
            "rayon {name}"
        );
    }
}

#[test]
fn running_balances_and_summaries() {
    for (name, rows) in cases() {
        let n = Nested::from(rows.clone());
        let mut rng = SplitMix64::new(9);
        let opening: Vec<i64> = (0..rows.len())
            .map(|_| rng.below(2000) as i64 - 500)
            .collect();
        let want_bal: Vec<Vec<i64>> = rows
            .iter()
            .zip(&opening)
            .map(|(r, &b0)| prefix(r, b0))
            .collect();
        let want_closing: Vec<i64> = want_bal
            .iter()
            .zip(&opening)
            .map(|(b, &b0)| b.last().copied().unwrap_or(b0))
            .collect();
        let want_lowest: Vec<i64> = want_bal
            .iter()
            .zip(&opening)
            .map(|(b, &b0)| b.iter().copied().fold(b0, i64::min))
            .collect();
        let want_over: Vec<usize> = want_bal
            .iter()
            .map(|b| b.iter().filter(|&&v| v < 0).count())
            .collect();
        let want_summary = (want_closing, want_lowest, want_over);
        let limit = 150;
        let want_large: Vec<Vec<i64>> = rows
            .iter()
            .map(|r| r.iter().copied().filter(|&v| v < -limit).collect())
            .collect();
        each_place(|p| {
            assert_eq!(
                ragged::running_balances(&n, &opening).to_vecs(),
                want_bal,
                "{p} {name}: balances"
            );
            assert_eq!(
                ragged::account_summary(&n, &opening),
                want_summary,
                "{p} {name}: summary"
            );
            assert_eq!(
                ragged::large_withdrawals(&n, limit).to_vecs(),
                want_large,
                "{p} {name}: withdrawals"
            );
        });
        assert_eq!(
            hand::running_balances(&n, &opening).to_vecs(),
            want_bal,
            "rayon {name}"
        );
        assert_eq!(
            hand::account_summary(&n, &opening),
            want_summary,
            "rayon {name}"
        );
        assert_eq!(
            hand::filter(&n, |v| v < -limit).to_vecs(),
            want_large,
            "rayon {name}"
        );
    }
}

#[test]
fn grouping_a_transaction_log_keeps_time_order() {
    let users = 1000;
    let log = ragged::transaction_log(20_000, users, 3);
    let grouped = ragged::group_by_user(&log, users);
    assert_eq!((grouped.len(), grouped.total_len()), (users, log.len()));
    for u in 0..users {
        let want: Vec<i64> = log
            .iter()
            .filter(|t| t.0 as usize == u)
            .map(|t| t.1)
            .collect();
        assert_eq!(grouped.row(u), &want[..], "user {u}");
    }
    // Skewed: user 0 is busier than the median user, and some users have no transaction.
    assert!(grouped.row_len(0) > 10 * grouped.row_len(users / 2).max(1));
    assert!(grouped.row_lengths().any(|l| l == 0));
}

#[test]
fn balances_disagree_in_length_is_an_error() {
    let n = Nested::from(vec![vec![1i64, 2], vec![3]]);
    for place in [Place::Seq, Place::Cpu] {
        let r =
            std::panic::catch_unwind(|| with_place(place, || ragged::running_balances(&n, &[0])));
        let msg = r.expect_err("one opening balance per row is required");
        let text = msg.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(
            text.contains("map"),
            "{place}: the message names the primitive: {text:?}"
        );
    }
}
