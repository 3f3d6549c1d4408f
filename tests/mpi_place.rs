//! `Place::Mpi` always exists: `DPL_PLACE=mpi` names it; without the `mpi` feature asking
//! for it is a clear error, and with it (before `dpl::mpi::init`) the error says to start
//! MPI. (The distributed runs themselves are `tests/mpi`, under `mpirun`.)

use dpl::prelude::*;

#[parallel]
fn double(x: &[i32]) -> Vec<i32> {
    map(|v| v * 2, x)
}

#[parallel]
fn try_double(x: &[i32]) -> Result<Vec<i32>, dpl::Error> {
    map(|v| v * 2, x)
}

#[test]
fn mpi_is_a_place() {
    assert_eq!(Place::parse("mpi"), Ok(Place::Mpi));
    assert_eq!(Place::Mpi.to_string(), "mpi");
    assert!(!dpl::available_places().contains(&Place::Mpi));
}

#[test]
fn asking_for_mpi_without_it_is_a_clear_error() {
    let e = with_place(Place::Mpi, || try_double(&[1, 2])).unwrap_err();
    let text = e.to_string();
    if cfg!(feature = "mpi") {
        assert!(text.contains("dpl::mpi::init()"), "{text}");
    } else {
        assert!(text.contains("built without the `mpi` feature"), "{text}");
    }
    let panic = std::panic::catch_unwind(|| with_place(Place::Mpi, || double(&[1]))).unwrap_err();
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert_eq!(msg, text);
}
