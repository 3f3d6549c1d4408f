//! The `Place::Mpi` test program, run by `cargo xtask test` under `mpirun` with 1, 2, 3
//! and 4 ranks (and by `cargo test --features mpi` as one rank). Every primitive, the
//! nested forms, halos, sorts, replicated parameters, error agreement and the determinism
//! of float reductions, on blocks of every shape (balanced, uneven, empty), checked
//! against plain Rust on the global data.
//!
//! It is its own harness (`harness = false`): MPI calls must come in the same order on
//! every rank, so the cases run one after the other on the main thread. A failed check
//! panics, which aborts the whole job with the message.

mod errors;
mod flat;
mod harness;
mod indexed;
mod loops;
mod nested;
mod small_ints;
mod sorting;
mod vocabulary;

// The programs shared with the single-machine suites (`tests/programs`).
#[path = "../programs/indexed.rs"]
mod shared_indexed;
#[path = "../programs/stencil.rs"]
mod shared_stencil;

use harness::Env;

fn main() {
    let mpi = dpl::mpi::init();
    let env = Env {
        rank: mpi.rank(),
        size: mpi.size(),
    };
    let filter = std::env::args().nth(1).filter(|a| !a.starts_with('-'));
    if filter.as_deref() == Some("abort") {
        abort_demo(env);
    }
    let cases: Vec<harness::Case> = [
        flat::CASES,
        indexed::CASES,
        sorting::CASES,
        nested::CASES,
        errors::CASES,
        small_ints::CASES,
        loops::CASES,
        vocabulary::CASES,
    ]
    .concat();
    let mut ran = 0;
    for (name, case) in cases {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        dpl::with_place(dpl::Place::Mpi, || case(env));
        if env.rank == 0 {
            println!("mpi test {name} ({} ranks) ... ok", env.size);
        }
        ran += 1;
    }
    if env.rank == 0 {
        println!("mpi tests: {ran} passed on {} ranks", env.size);
    }
}

/// `mpi abort`: the last rank panics (a bug, not a dpl error) while the others wait in a
/// collective. The panic hook of `dpl::mpi::init` aborts the job with the message, so
/// `mpirun` ends with a failure instead of hanging (`cargo xtask test` checks both).
fn abort_demo(env: Env) -> ! {
    if env.rank == env.size - 1 {
        panic!("deliberate panic on rank {} of {}", env.rank, env.size);
    }
    let x = vec![1.0f64; 10];
    let _ = dpl::with_place(dpl::Place::Mpi, || flat::dot(&x, &x));
    unreachable!("the job was not aborted");
}
