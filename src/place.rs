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
pub fn default_place() -> Place {
    static DEFAULT: OnceLock<Place> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        let fallback = || {
            if gpu_status(0).is_ok() {
                Place::Gpu(0)
            } else {
                Place::Cpu
            }
        };
        match std::env::var("DPL_PLACE") {
            Ok(text) => Place::parse(&text).unwrap_or_else(|e| {
                log::warn!("ignoring DPL_PLACE: {e}");
                fallback()
            }),
            Err(_) => fallback(),
        }
    })
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
