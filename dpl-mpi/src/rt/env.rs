//! Starting and stopping MPI: [`init`], the guard [`Mpi`], and the panic hook.

use mpi::Threading;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::cell::Cell;
use std::sync::{Mutex, MutexGuard, Once};

/// The communicator dpl's calls use (a duplicate of `MPI_COMM_WORLD`, so that dpl's
/// collectives never match a program's own) with this process's rank and the job's size.
pub(crate) struct World {
    pub(crate) comm: SimpleCommunicator,
    pub(crate) rank: usize,
    pub(crate) size: usize,
}

/// The world while MPI runs (between [`init`] and the drop of its guard). The mutex also
/// serialises dpl's calls on one rank (MPI is initialised `MPI_THREAD_SERIALIZED`).
pub(crate) struct Shared(pub(crate) Option<World>);

// SAFETY: the communicator handle is only used while the mutex is held, one thread at a
// time, which `MPI_THREAD_SERIALIZED` (checked by `init`) allows from any thread.
unsafe impl Send for Shared {}

pub(crate) static WORLD: Mutex<Shared> = Mutex::new(Shared(None));

/// The world, locked for one call.
pub(crate) fn world() -> MutexGuard<'static, Shared> {
    WORLD.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// Set right before a panic that every rank raises alike (an agreed dpl error): the
    /// panic hook then lets it unwind instead of aborting the job.
    pub(crate) static AGREED_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// MPI, running: returned by [`init`]; dropping it finalises MPI.
///
/// ```no_run
/// let mpi = dpl_mpi::rt::init();
/// println!("rank {} of {}", mpi.rank(), mpi.size());
/// ```
pub struct Mpi {
    universe: Option<mpi::environment::Universe>,
    rank: usize,
    size: usize,
}

impl Mpi {
    /// This process's rank, `0..size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks of the job (1 without `mpirun`).
    pub fn size(&self) -> usize {
        self.size
    }
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        // The duplicated communicator is freed before MPI is finalised.
        drop(world().0.take());
        drop(self.universe.take());
    }
}

/// Starts MPI (`MPI_Init_thread`, `MPI_THREAD_SERIALIZED`) for `Place::Mpi`. Call it once,
/// early in `main`, on every rank; keep the guard alive while `#[parallel]` calls run on
/// `Place::Mpi`: dropping it finalises MPI.
///
/// It also installs a panic hook: a panic on any rank (other than a dpl error that every
/// rank reports alike) prints its message and aborts the whole job (`MPI_Abort`), so a
/// failing rank never leaves the others waiting in a collective.
///
/// A program started without `mpirun` is one rank.
///
/// # Panics
///
/// If MPI was initialised before (by an earlier `init` or by other code), or the MPI
/// library cannot give `MPI_THREAD_SERIALIZED` (dpl's calls may come from any thread).
pub fn init() -> Mpi {
    let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Serialized) else {
        panic!("dpl::mpi::init: MPI is already initialised (call init once, and only through dpl)");
    };
    if matches!(threading, Threading::Single | Threading::Funneled) {
        panic!(
            "dpl::mpi::init: the MPI library gives thread level {threading:?}; dpl needs \
             MPI_THREAD_SERIALIZED (calls may come from any thread, one at a time)"
        );
    }
    let world = universe.world();
    let comm = world.duplicate();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    install_panic_hook();
    world_lock_set(World { comm, rank, size });
    Mpi {
        universe: Some(universe),
        rank,
        size,
    }
}

fn world_lock_set(w: World) {
    world().0 = Some(w);
}

/// Whether MPI runs for dpl (between [`init`] and the drop of its guard).
pub fn is_running() -> bool {
    world().0.is_some()
}

/// This process's rank (0 when MPI is not running).
pub fn rank() -> usize {
    world().0.as_ref().map_or(0, |w| w.rank)
}

/// The number of ranks of the job (1 when MPI is not running).
pub fn size() -> usize {
    world().0.as_ref().map_or(1, |w| w.size)
}

/// Chains a hook after the current one that aborts the MPI job, unless the panic is an
/// agreed dpl error (raised alike on every rank) or MPI is not running any more.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            if AGREED_PANIC.with(|f| f.replace(false)) {
                return;
            }
            if mpi::is_initialized() && !mpi::is_finalized() {
                SimpleCommunicator::world().abort(101);
            }
        }));
    });
}
