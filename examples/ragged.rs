//! Segmented operations on ragged data: per-row scans, filters and reductions over a
//! `Nested<T>`, and a realistic use of them — per-user running balances from a transaction
//! log grouped by user.
//!
//! A `Nested<T>` is a sequence of rows of different lengths (rows may be empty). Inside a
//! `#[parallel]` body `map` over it hands each row to the closure as a sequence, so
//! `map(|r| scan(|a, b| a + b, r), rows)` is a segmented scan and `map(|r| filter(p, r), rows)`
//! a segmented filter whose result is again ragged. The outer map runs in parallel, each row
//! sequentially inside (Copperhead's default schedule).
//!
//! The transaction log: `TX` transactions of `USERS` users, each an amount in cents
//! (deposits positive, withdrawals negative), in time order; users' activity is skewed (a
//! few users make many transactions). Grouping by user is a stable counting sort on the
//! host (plain Rust), which keeps each user's transactions in time order. Then, per user,
//! dpl computes the running balance after every transaction (opening balance plus a
//! segmented scan), the final and the lowest balance and the number of overdrafts (a
//! segmented scan feeding segmented reductions), and the large withdrawals (a segmented
//! filter).
//!
//! Run it with `cargo run --release --example ragged` (`RAGGED_TX`, `RAGGED_USERS` change the
//! sizes). Every result is checked against plain sequential Rust and timed against
//! hand-written rayon.

use dpl::prelude::*;
use dpl_testkit::SplitMix64;
#[path = "shared/timing.rs"]
mod timing;

// ---------------------------------------------------------------------------------------
// The generic segmented operations
// ---------------------------------------------------------------------------------------

/// Inclusive prefix sums of every row (a segmented scan).
#[parallel]
pub fn row_prefix_sums(rows: &Nested<i64>) -> Nested<i64> {
    map(|r| scan(|a, b| a + b, r), rows)
}

/// The positive elements of every row, in order (a segmented filter; rows may become empty).
#[parallel]
pub fn row_positives(rows: &Nested<i64>) -> Nested<i64> {
    map(|r| filter(|v| v > 0, r), rows)
}

/// The sum and the maximum of every row; the maximum of an empty row is `i64::MIN`.
///
/// Written as one `map` returning a pair per row, then `unzip`: one pass over the rows.
/// Two separate `map`s over `rows` (`(map(|r| sum(r), rows), map(|r| max.., rows))`) compute
/// the same, but the compiler does not fuse sibling maps whose bodies hold inner reductions,
/// so that form reads the data twice.
#[parallel]
pub fn row_sums_and_maxima(rows: &Nested<i64>) -> (Vec<i64>, Vec<i64>) {
    unzip(map(
        |r| (sum(r), reduce(|a, b| a.max(b), r, i64::MIN)),
        rows,
    ))
}

// ---------------------------------------------------------------------------------------
// Per-user running balances
// ---------------------------------------------------------------------------------------

/// The balance of each user after each of their transactions: the opening balance plus a
/// running sum of the amounts.
#[parallel]
pub fn running_balances(amounts: &Nested<i64>, opening: &[i64]) -> Nested<i64> {
    map(
        |r, b0| map(|s| b0 + s, scan(|a, b| a + b, r)),
        amounts,
        opening,
    )
}

/// Per user: the closing balance, the lowest balance reached (the opening balance counts),
/// and how many transactions left the account overdrawn (balance below zero).
///
/// One `map` over the users computes all three from one running balance per row (a scan
/// feeding two reductions) and returns a triple per user; the three results are its fields.
/// (Written as three separate `map`s over a materialized `Nested` of balances, the compiler
/// keeps four passes and a ragged temporary: about 3x slower.)
#[parallel]
pub fn account_summary(amounts: &Nested<i64>, opening: &[i64]) -> (Vec<i64>, Vec<i64>, Vec<usize>) {
    let per_user = map(
        |r, b0| {
            let balances = map(|s| b0 + s, scan(|a, b| a + b, r));
            (
                b0 + sum(r),
                reduce(|a, b| a.min(b), balances, b0),
                count(|v| v < 0, balances),
            )
        },
        amounts,
        opening,
    );
    (
        map(|t| t.0, per_user),
        map(|t| t.1, per_user),
        map(|t| t.2, per_user),
    )
}

/// Per user, the withdrawals larger than `limit` cents, in time order.
#[parallel]
pub fn large_withdrawals(amounts: &Nested<i64>, limit: i64) -> Nested<i64> {
    map(|r| filter(|v| v < -limit, r), amounts)
}

// ---------------------------------------------------------------------------------------
// Plain Rust: the reference each result is checked against
// ---------------------------------------------------------------------------------------

/// Plain sequential Rust versions of the functions above, on the same flat values +
/// offsets representation, one row after the other.
pub mod plain {
    use dpl::Nested;

    /// Rows of `rows` mapped by `f`, which pushes each output row's elements.
    fn ragged(rows: &Nested<i64>, mut f: impl FnMut(usize, &[i64], &mut Vec<i64>)) -> Nested<i64> {
        let mut values = Vec::with_capacity(rows.total_len());
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0);
        for i in 0..rows.len() {
            f(i, rows.row(i), &mut values);
            offsets.push(values.len());
        }
        Nested::from_parts(values, offsets).expect("offsets of pushed rows")
    }

    /// Per-row inclusive prefix sums.
    pub fn prefix_sums(rows: &Nested<i64>) -> Nested<i64> {
        running_balances(rows, &vec![0; rows.len()])
    }

    /// Per-row positive elements.
    pub fn positives(rows: &Nested<i64>) -> Nested<i64> {
        ragged(rows, |_, r, out| {
            out.extend(r.iter().copied().filter(|&v| v > 0))
        })
    }

    /// Per-row sums and maxima (`i64::MIN` for an empty row).
    pub fn sums_and_maxima(rows: &Nested<i64>) -> (Vec<i64>, Vec<i64>) {
        rows.rows()
            .map(|r| {
                (
                    r.iter().fold(0i64, |a, &b| a.wrapping_add(b)),
                    r.iter().copied().max().unwrap_or(i64::MIN),
                )
            })
            .unzip()
    }

    /// Running balances.
    pub fn running_balances(amounts: &Nested<i64>, opening: &[i64]) -> Nested<i64> {
        assert_eq!(amounts.len(), opening.len(), "one opening balance per user");
        ragged(amounts, |i, r, out| {
            let mut bal = opening[i];
            out.extend(r.iter().map(|&v| {
                bal = bal.wrapping_add(v);
                bal
            }));
        })
    }

    /// Closing balances, lowest balances and overdraft counts.
    pub fn account_summary(
        amounts: &Nested<i64>,
        opening: &[i64],
    ) -> (Vec<i64>, Vec<i64>, Vec<usize>) {
        assert_eq!(amounts.len(), opening.len(), "one opening balance per user");
        let mut closing = Vec::with_capacity(amounts.len());
        let mut lowest = Vec::with_capacity(amounts.len());
        let mut overdrafts = Vec::with_capacity(amounts.len());
        for (r, &b0) in amounts.rows().zip(opening) {
            let (mut bal, mut low, mut over) = (b0, b0, 0usize);
            for &v in r {
                bal = bal.wrapping_add(v);
                low = low.min(bal);
                over += usize::from(bal < 0);
            }
            closing.push(bal);
            lowest.push(low);
            overdrafts.push(over);
        }
        (closing, lowest, overdrafts)
    }

    /// Large withdrawals.
    pub fn large_withdrawals(amounts: &Nested<i64>, limit: i64) -> Nested<i64> {
        ragged(amounts, |_, r, out| {
            out.extend(r.iter().copied().filter(|&v| v < -limit))
        })
    }
}

// ---------------------------------------------------------------------------------------
// Hand-written rayon: the baseline dpl is timed against
// ---------------------------------------------------------------------------------------

/// What a user would write with rayon on the flat values + offsets representation: rows in
/// parallel, output rows written in place where the output has the input's shape, and a
/// count / offsets / fill sequence for filters.
pub mod hand {
    use dpl::Nested;
    use rayon::prelude::*;

    /// The output's rows as disjoint mutable slices, with the shape of `like`.
    fn split_rows<'a>(mut out: &'a mut [i64], like: &Nested<i64>) -> Vec<&'a mut [i64]> {
        let mut rows = Vec::with_capacity(like.len());
        for len in like.row_lengths() {
            let (head, tail) = std::mem::take(&mut out).split_at_mut(len);
            rows.push(head);
            out = tail;
        }
        rows
    }

    /// Per-row inclusive prefix sums, rows in parallel.
    pub fn prefix_sums(rows: &Nested<i64>) -> Nested<i64> {
        running(rows, None)
    }

    /// Running balances (prefix sums from an opening balance), rows in parallel.
    pub fn running_balances(amounts: &Nested<i64>, opening: &[i64]) -> Nested<i64> {
        running(amounts, Some(opening))
    }

    fn running(rows: &Nested<i64>, opening: Option<&[i64]>) -> Nested<i64> {
        let mut out = vec![0i64; rows.total_len()];
        split_rows(&mut out, rows)
            .into_par_iter()
            .enumerate()
            .with_min_len(256)
            .for_each(|(i, o)| {
                let mut acc = opening.map_or(0, |b| b[i]);
                for (d, &v) in o.iter_mut().zip(rows.row(i)) {
                    acc = acc.wrapping_add(v);
                    *d = acc;
                }
            });
        Nested::from_parts(out, rows.offsets().to_vec()).expect("same shape as the input")
    }

    /// Per-row filter: count per row, offsets, then fill, rows in parallel.
    pub fn filter(rows: &Nested<i64>, keep: impl Fn(i64) -> bool + Sync) -> Nested<i64> {
        let counts: Vec<usize> = (0..rows.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| rows.row(i).iter().filter(|&&v| keep(v)).count())
            .collect();
        let mut offsets = Vec::with_capacity(rows.len() + 1);
        offsets.push(0usize);
        let mut total = 0;
        for c in &counts {
            total += c;
            offsets.push(total);
        }
        let mut out = vec![0i64; total];
        let shape =
            Nested::from_parts(vec![0i64; total], offsets.clone()).expect("offsets from counts");
        split_rows(&mut out, &shape)
            .into_par_iter()
            .enumerate()
            .with_min_len(256)
            .for_each(|(i, o)| {
                for (d, v) in o
                    .iter_mut()
                    .zip(rows.row(i).iter().copied().filter(|&v| keep(v)))
                {
                    *d = v;
                }
            });
        Nested::from_parts(out, offsets).expect("offsets from counts")
    }

    /// Per-row sums and maxima.
    pub fn sums_and_maxima(rows: &Nested<i64>) -> (Vec<i64>, Vec<i64>) {
        (0..rows.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                let r = rows.row(i);
                (
                    r.iter().fold(0i64, |a, &b| a.wrapping_add(b)),
                    r.iter().copied().max().unwrap_or(i64::MIN),
                )
            })
            .unzip()
    }

    /// Closing balances, lowest balances and overdraft counts, one pass per row.
    pub fn account_summary(
        amounts: &Nested<i64>,
        opening: &[i64],
    ) -> (Vec<i64>, Vec<i64>, Vec<usize>) {
        let per_user: Vec<(i64, i64, usize)> = (0..amounts.len())
            .into_par_iter()
            .with_min_len(256)
            .map(|i| {
                let b0 = opening[i];
                let (mut bal, mut low, mut over) = (b0, b0, 0usize);
                for &v in amounts.row(i) {
                    bal = bal.wrapping_add(v);
                    low = low.min(bal);
                    over += usize::from(bal < 0);
                }
                (bal, low, over)
            })
            .collect();
        let mut out = (Vec::new(), Vec::new(), Vec::new());
        for (c, l, o) in per_user {
            out.0.push(c);
            out.1.push(l);
            out.2.push(o);
        }
        out
    }
}

// ---------------------------------------------------------------------------------------
// Data
// ---------------------------------------------------------------------------------------

/// A transaction log in time order: `(user, amount in cents)`. User activity is skewed:
/// user `u` is drawn with weight about `1 / (u + 1)`, so low-numbered users are busy and
/// many high-numbered users have no transaction at all. Amounts: 60% purchases of up to
/// $200, 30% deposits of up to $1,500, 10% withdrawals of up to $2,000.
pub fn transaction_log(tx: usize, users: usize, seed: u64) -> Vec<(u32, i64)> {
    let mut rng = SplitMix64::new(seed);
    let users = users.max(1) as u64;
    (0..tx)
        .map(|_| {
            // Inverse of a log-uniform draw: weight ~ 1 / (u + 1).
            let x = (rng.below(1 << 30) as f64 + 0.5) / (1u64 << 30) as f64;
            let user = (((users + 1) as f64).powf(x) - 1.0).floor() as u64;
            let kind = rng.below(10);
            let amount = match kind {
                0..=5 => -(rng.below(20_000) as i64 + 1),
                6..=8 => rng.below(150_000) as i64 + 1,
                _ => -(rng.below(200_000) as i64 + 1),
            };
            (user.min(users - 1) as u32, amount)
        })
        .collect()
}

/// Groups a log by user with a stable counting sort: row `u` holds user `u`'s amounts in
/// time order (empty for users without transactions).
pub fn group_by_user(log: &[(u32, i64)], users: usize) -> Nested<i64> {
    let mut offsets = vec![0usize; users + 1];
    for &(u, _) in log {
        assert!(
            (u as usize) < users,
            "transaction of user {u}, but only {users} users"
        );
        offsets[u as usize + 1] += 1;
    }
    for i in 0..users {
        offsets[i + 1] += offsets[i];
    }
    let mut next = offsets.clone();
    let mut values = vec![0i64; log.len()];
    for &(u, amount) in log {
        values[next[u as usize]] = amount;
        next[u as usize] += 1;
    }
    Nested::from_parts(values, offsets).expect("offsets from counts")
}

/// Opening balances: up to $5,000 each.
pub fn opening_balances(users: usize, seed: u64) -> Vec<i64> {
    let mut rng = SplitMix64::new(seed);
    (0..users).map(|_| rng.below(500_001) as i64).collect()
}

// ---------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

struct Report {
    wrong: usize,
}

impl Report {
    /// Checks `dpl_fn` on every place and times it on the CPU place against `rayon_fn`
    /// and the plain sequential `seq_fn`.
    fn case<T: PartialEq>(
        &mut self,
        name: &str,
        dpl_fn: impl Fn() -> T,
        rayon_fn: impl Fn() -> T,
        seq_fn: impl Fn() -> T,
    ) {
        let want = seq_fn();
        let mut line = format!("{name:<26}");
        for place in dpl::available_places() {
            let ok = with_place(place, &dpl_fn) == want;
            self.wrong += usize::from(!ok);
            line += &format!(" {place}: {:<5}", if ok { "ok" } else { "WRONG" });
        }
        let rayon_ok = rayon_fn() == want;
        self.wrong += usize::from(!rayon_ok);
        let t_dpl = with_place(Place::Cpu, || {
            timing::median(9, || drop(std::hint::black_box(dpl_fn())))
        });
        let t_rayon = timing::median(9, || drop(std::hint::black_box(rayon_fn())));
        let t_seq = timing::median(9, || drop(std::hint::black_box(seq_fn())));
        line += &format!(
            "  dpl {:>8.2} ms  rayon {:>8.2} ms  seq {:>8.2} ms  dpl/rayon speed {:.2}x",
            t_dpl.as_secs_f64() * 1e3,
            t_rayon.as_secs_f64() * 1e3,
            t_seq.as_secs_f64() * 1e3,
            t_rayon.as_secs_f64() / t_dpl.as_secs_f64()
        );
        println!("{line}");
    }
}

#[allow(dead_code)] // unused where tests and benches include this file as a module
fn main() {
    let tx = env_usize("RAGGED_TX", 4_000_000);
    let users = env_usize("RAGGED_USERS", 200_000);
    let log = transaction_log(tx, users, 7);
    let amounts = group_by_user(&log, users);
    let opening = opening_balances(users, 8);
    let empty = amounts.row_lengths().filter(|&l| l == 0).count();
    println!(
        "{tx} transactions of {users} users ({empty} without any, the busiest with {}), {} rayon threads\n",
        amounts.max_row_len(),
        rayon::current_num_threads()
    );
    let mut report = Report { wrong: 0 };
    report.case(
        "per-row prefix sums",
        || row_prefix_sums(&amounts),
        || hand::prefix_sums(&amounts),
        || plain::prefix_sums(&amounts),
    );
    report.case(
        "per-row filter (> 0)",
        || row_positives(&amounts),
        || hand::filter(&amounts, |v| v > 0),
        || plain::positives(&amounts),
    );
    report.case(
        "per-row sum and max",
        || row_sums_and_maxima(&amounts),
        || hand::sums_and_maxima(&amounts),
        || plain::sums_and_maxima(&amounts),
    );
    report.case(
        "running balances",
        || running_balances(&amounts, &opening),
        || hand::running_balances(&amounts, &opening),
        || plain::running_balances(&amounts, &opening),
    );
    report.case(
        "account summary",
        || account_summary(&amounts, &opening),
        || hand::account_summary(&amounts, &opening),
        || plain::account_summary(&amounts, &opening),
    );
    report.case(
        "large withdrawals",
        || large_withdrawals(&amounts, 150_000),
        || hand::filter(&amounts, |v| v < -150_000),
        || plain::large_withdrawals(&amounts, 150_000),
    );

    let (closing, lowest, overdrafts) = account_summary(&amounts, &opening);
    let overdrawn = overdrafts.iter().filter(|&&o| o > 0).count();
    let worst = lowest.iter().copied().min().unwrap_or(0);
    let total: i64 = closing.iter().sum();
    println!(
        "\n{overdrawn} users were overdrawn at least once; the lowest balance was {:.2}; the bank holds {:.2} at the close",
        worst as f64 / 100.0,
        total as f64 / 100.0
    );
    if report.wrong > 0 {
        println!("{} result(s) WRONG", report.wrong);
        std::process::exit(1);
    }
    println!("all results checked against plain Rust: ok");
}
