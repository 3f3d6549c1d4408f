//! Profiles of the simulated GPU: the counters of every kernel launched on `Place::Sim`
//! while a closure runs (what `dpl::sim_profile` returns).

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::devices::sim_driver;
use crate::driver::sim::SimDriver;

/// The counters of one kernel launch on the simulated GPU (see [`profile`]; dpl-sim's
/// README defines each counter).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelProfile {
    /// The kernel's entry name (`dpl_<function>_k<i>_<what>`).
    pub kernel: String,
    /// Thread blocks launched.
    pub blocks: u64,
    /// Warp-level instructions executed.
    pub warp_instructions: u64,
    /// Thread-level instructions executed (active lanes).
    pub thread_instructions: u64,
    /// 32-byte global-memory sectors moved by loads and stores.
    pub sectors: u64,
    /// The fewest sectors the same accesses could have moved (perfect coalescing).
    pub ideal_sectors: u64,
    /// Extra shared-memory wavefronts caused by bank conflicts.
    pub bank_conflicts: u64,
    /// Block-wide barrier completions.
    pub barriers: u64,
    /// Warp-level global atomic instructions.
    pub atomics: u64,
}

/// How many [`profile`] calls are running; while none is, launch reports are dropped
/// after each call so they do not pile up.
static PROFILING: AtomicUsize = AtomicUsize::new(0);
/// Serializes profiles, so each sees only its own launches.
static PROFILE_LOCK: Mutex<()> = Mutex::new(());

/// The simulator's driver.
fn sim() -> &'static SimDriver {
    sim_driver().inner()
}

/// Drops the launch reports of a call, unless a profile is being taken.
pub(super) fn after_run(d: &SimDriver) {
    if PROFILING.load(Ordering::Relaxed) == 0 {
        d.take_reports();
    }
}

/// Runs `f` and returns its result with the counters of every kernel launched on the
/// simulated GPU meanwhile, in launch order. Profiles of different threads run one after
/// the other.
pub fn profile<R>(f: impl FnOnce() -> R) -> (R, Vec<KernelProfile>) {
    let _serial = PROFILE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    sim().take_reports();
    PROFILING.fetch_add(1, Ordering::Relaxed);
    struct Done;
    impl Drop for Done {
        fn drop(&mut self) {
            PROFILING.fetch_sub(1, Ordering::Relaxed);
        }
    }
    let done = Done;
    let r = f();
    drop(done);
    let launches = sim()
        .take_reports()
        .into_iter()
        .map(|(kernel, r)| KernelProfile {
            kernel,
            blocks: r.blocks,
            warp_instructions: r.instructions,
            thread_instructions: r.thread_instructions,
            sectors: r.sectors_moved,
            ideal_sectors: r.sectors_ideal,
            bank_conflicts: r.bank_conflicts,
            barriers: r.barriers,
            atomics: r.global_atomic_requests,
        })
        .collect();
    (r, launches)
}
