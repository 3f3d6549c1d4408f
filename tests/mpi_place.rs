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

/// A loop at the top level of the body (the SPEC's power iteration's form).
#[parallel]
fn halve_until_small(x: &[f64], limit: f64) -> Result<Vec<f64>, dpl::Error> {
    let mut v = x.to_vec();
    while sum(v) > limit {
        v = map(|e| e * 0.5, v);
    }
    v
}

/// `Place::Mpi` distributes loops at the top level of a body (`tests/mpi/loops.rs` runs
/// them under `mpirun`); before `dpl::mpi::init` a call there is the usual error, and the
/// other places run it.
#[test]
fn a_top_level_loop_is_distributed() {
    let i = dpl::inspect!(halve_until_small);
    assert_eq!(i.mpi_not_compiled, "");
    if cfg!(feature = "mpi") {
        assert!(i.mpi_ir.contains("loop("), "{}", i.mpi_ir);
    }
    let e = with_place(Place::Mpi, || halve_until_small(&[1.0, 2.0], 1.0)).unwrap_err();
    assert!(matches!(e, dpl::Error::PlaceUnavailable { .. }), "{e}");
    let got = with_place(Place::Cpu, || halve_until_small(&[1.0, 2.0], 1.0));
    assert_eq!(got, Ok(vec![0.25, 0.5]));
}
