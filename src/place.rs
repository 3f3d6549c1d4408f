//! Choosing where calls run: the default place (`DPL_PLACE`), and [`with_place`] scopes.

use crate::{Error, Place};
use std::cell::Cell;
use std::sync::OnceLock;

thread_local! {
    static SCOPED: Cell<Option<Place>> = const { Cell::new(None) };
}

/// The place used when no [`with_place`] scope is active: `DPL_PLACE` if set (`cpu`, `seq`,
/// `gpu`, `gpu:N`, `sim`, `mpi`); else `Gpu(0)` when the `cuda` feature is on and device 0 is
/// usable; else [`Place::Cpu`].
///
/// An unparsable `DPL_PLACE` is reported once (through the `log` crate, level `warn`) and
/// ignored.
///
/// When the default is the GPU because one was found (not because `DPL_PLACE` says so),
/// a call whose data are all on the host and whose work per element is low runs on the
/// CPU: see [`Place`](crate::Place)'s "Placement by default".
pub fn default_place() -> Place {
    defaults().0
}

/// The default place, and whether `DPL_PLACE` chose it.
fn defaults() -> (Place, bool) {
    static DEFAULT: OnceLock<(Place, bool)> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let fallback = || {
            if gpu_status(0).is_ok() {
                Place::Gpu(0)
            } else {
                Place::Cpu
            }
        };
        match std::env::var("DPL_PLACE") {
            Ok(text) => match Place::parse(&text) {
                Ok(p) => (p, true),
                Err(e) => {
                    log::warn!("ignoring DPL_PLACE: {e}");
                    (fallback(), false)
                }
            },
            Err(_) => (fallback(), false),
        }
    })
}

/// Whether the current place was asked for (a [`with_place`] scope or `DPL_PLACE`), rather
/// than found (the GPU by default because there is one).
fn asked_for() -> bool {
    SCOPED.with(Cell::get).is_some() || defaults().1
}

/// The place a call of a function compiled for the GPU runs on: [`dispatch_place`], except
/// that a GPU found by default, not asked for, runs only the calls that pay for the trip:
/// those of a `compute_bound` function (`dpl_cpu::codegen::compute_bound`: costly
/// elements, a sort, a loop at the top level) or with data already on the device
/// (`resident`, asked only then); the others run on the CPU (a `saxpy` of host vectors
/// took 100-400 ms on an H100 against 1-75 ms on its 16 CPU cores, nearly all of it
/// PCIe transfers).
pub fn gpu_dispatch(compute_bound: bool, resident: impl FnOnce() -> bool) -> Place {
    decide(dispatch_place(), asked_for(), compute_bound, resident)
}

/// [`gpu_dispatch`]'s rule on its inputs.
fn decide(
    place: Place,
    asked_for: bool,
    compute_bound: bool,
    resident: impl FnOnce() -> bool,
) -> Place {
    match place {
        Place::Gpu(_) if !asked_for && !compute_bound && !resident() => Place::Cpu,
        other => other,
    }
}

/// The place a call made now actually runs on: [`current_place`], except that with the
/// `cuda` feature a `Place::Gpu(n)` whose device cannot be used (no driver library, no
/// such device) runs on [`Place::Cpu`], saying why once per device (through the `log`
/// crate, level `warn`).
/// (Without the `cuda` feature, `Place::Gpu` is an error: the backend is not built.)
pub fn dispatch_place() -> Place {
    match current_place() {
        Place::Gpu(n) if cfg!(feature = "cuda") => match gpu_status(n) {
            Ok(()) => Place::Gpu(n),
            Err(reason) => {
                static TOLD: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());
                let mut told = TOLD.lock().unwrap_or_else(|e| e.into_inner());
                if !told.contains(&n) {
                    told.push(n);
                    log::warn!("Place::Gpu({n}) is not usable ({reason}); running on the CPU");
                }
                Place::Cpu
            }
        },
        other => other,
    }
}

/// Whether `Place::Gpu(n)` can run calls: the `cuda` feature is on, the CUDA driver
/// library loads and device `n` exists. Otherwise the reason.
fn gpu_status(n: usize) -> Result<(), String> {
    #[cfg(feature = "cuda")]
    return crate::gpu::device_status(n);
    #[cfg(not(feature = "cuda"))]
    Err(unavailable(Place::Gpu(n)).to_string())
}

/// The place a `#[parallel]` call made now on this thread runs on.
pub fn current_place() -> Place {
    SCOPED.with(Cell::get).unwrap_or_else(default_place)
}

/// Runs `f` with `place` as the current place of this thread; the previous place is
/// restored afterwards, also when `f` panics. Scopes nest.
///
/// ```
/// use dpl::prelude::*;
/// let p = with_place(Place::Seq, dpl::current_place);
/// assert_eq!(p, Place::Seq);
/// ```
///
/// The scope belongs to the thread that opened it. A `#[parallel]` call made on another
/// thread — a task of your own rayon `par_iter`, a `std::thread::spawn` — runs on that
/// thread's place, the default unless it opens a scope itself: neither rayon nor the
/// standard library has a hook that would carry a thread-local value into the tasks they
/// start. (The work dpl itself spreads over threads inside a call is not affected: the
/// place is read once, when the call starts.) Read the place first and open the scope in
/// the task:
///
/// ```
/// use dpl::prelude::*;
///
/// let seen = with_place(Place::Seq, || {
///     let place = dpl::current_place();
///     std::thread::scope(|s| {
///         let inherited = s.spawn(|| dpl::current_place()).join().unwrap();
///         let carried = s.spawn(|| with_place(place, dpl::current_place)).join().unwrap();
///         (inherited, carried)
///     })
/// });
/// assert_eq!(seen, (dpl::default_place(), Place::Seq));
/// ```
pub fn with_place<R>(place: Place, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Place>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPED.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SCOPED.with(|s| s.replace(Some(place))));
    f()
}

/// The error for a place whose backend this build does not have.
pub fn unavailable(place: Place) -> Error {
    let reason = match place {
        Place::Gpu(_) if cfg!(feature = "cuda") => "no usable CUDA device",
        Place::Gpu(_) => "dpl was built without the `cuda` feature",
        Place::Sim => "dpl was built without the `sim` feature",
        Place::Mpi if !cfg!(feature = "mpi") => "dpl was built without the `mpi` feature",
        Place::Mpi => "this function has no implementation for it",
        Place::Cpu | Place::Seq => "this function has no implementation for it",
    };
    Error::PlaceUnavailable {
        place,
        reason: reason.to_string(),
    }
}

/// The places this build can run `#[parallel]` functions on: [`Place::Seq`], [`Place::Cpu`],
/// [`Place::Sim`] with the `sim` feature, `Place::Gpu(n)` for every usable CUDA device
/// with the `cuda` feature, and [`Place::Mpi`] with the `mpi` feature while MPI runs
/// (`dpl::mpi::init`).
pub fn available_places() -> Vec<Place> {
    let mut places = vec![Place::Seq, Place::Cpu];
    if cfg!(feature = "sim") {
        places.push(Place::Sim);
    }
    if crate::mpi_running() {
        places.push(Place::Mpi);
    }
    let mut n = 0;
    while gpu_status(n).is_ok() {
        places.push(Place::Gpu(n));
        n += 1;
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_found_by_default_runs_only_what_pays_for_the_trip() {
        let g = Place::Gpu(0);
        // Asked for: always there.
        assert_eq!(decide(g, true, false, || false), g);
        // Found: compute-bound functions and resident data go there, the rest to the CPU.
        assert_eq!(decide(g, false, true, || false), g);
        assert_eq!(decide(g, false, false, || true), g);
        assert_eq!(decide(g, false, false, || false), Place::Cpu);
        // Other places are never changed, nor asked about their data.
        for p in [Place::Cpu, Place::Seq, Place::Sim, Place::Mpi] {
            assert_eq!(decide(p, false, false, || unreachable!()), p);
        }
        // A compute-bound call does not look at its arguments.
        assert_eq!(decide(g, false, true, || unreachable!()), g);
    }

    #[test]
    fn a_scope_asks_for_its_place() {
        with_place(Place::Seq, || assert!(asked_for()));
    }
}
