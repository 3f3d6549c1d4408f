//! dpl-sim's error reporting on nvcc-compiled kernels used wrongly: out-of-bounds and
//! misaligned pointers, a launch that never ends, bad arguments, barriers reached by part
//! of a block, and a full-mask shuffle in divergent code (`faults.cu`). Each must give an
//! `Err` naming the kind of fault, the thread and the PTX instruction, never a panic or a
//! hang, and leave the device usable.

#[path = "../fixtures/support.rs"]
mod support;

use dpl_sim::{Arg, Error, FaultKind};
use support::{Fixture, dim1};

const GRID: &str = include_str!("../fixtures/grid.ptx");
const DIVERGENT: &str = include_str!("../fixtures/divergent.ptx");
const FAULTS: &str = include_str!("../fixtures/faults.ptx");

/// Checks that `result` is a fault of `kind` whose PTX line holds the named instruction,
/// and returns the faulting thread's global x index.
#[track_caller]
fn expect_fault<T: std::fmt::Debug>(result: Result<T, Error>, kind: FaultKind, ptx: &str) -> u32 {
    match result {
        Err(Error::Fault {
            kind: k,
            block,
            thread,
            line,
            inst,
            ..
        }) => {
            assert_eq!(k, kind, "fault kind ({inst} at line {line})");
            let text = ptx.lines().nth(line as usize - 1).unwrap_or("");
            let opcode = inst.split_whitespace().next().unwrap_or("");
            assert!(
                text.contains(opcode),
                "PTX line {line} is `{text}`, the error names `{inst}`"
            );
            block[0] * 128 + thread[0]
        }
        other => panic!("expected a {kind} fault, got {other:?}"),
    }
}

#[test]
fn out_of_bounds_store_names_thread_and_instruction() {
    let fx = Fixture::new("grid.ptx", GRID);
    let (x, y) = (fx.zeros::<f32>(100), fx.zeros::<f32>(64));
    let result = fx.dev.launch(
        &fx.module,
        "saxpy_gridstride",
        dim1(1),
        dim1(128),
        0,
        &[100u64.into(), 1.0f32.into(), (&x).into(), (&y).into()],
    );
    let message = result
        .as_ref()
        .map(|_| String::new())
        .unwrap_or_else(|e| e.to_string());
    let index = expect_fault(result, FaultKind::OutOfBounds, GRID);
    assert!(
        (64..100).contains(&index),
        "thread {index} cannot fault: indices below 64 are in bounds"
    );
    assert!(message.contains("saxpy_gridstride"), "{message}");
    // The device still works after the fault.
    let (x, y) = (fx.upload(&[2.0f32; 64]), fx.upload(&[1.0f32; 64]));
    fx.launch(
        "saxpy_gridstride",
        dim1(1),
        dim1(128),
        0,
        &[64u64.into(), 3.0f32.into(), (&x).into(), (&y).into()],
    );
    assert_eq!(fx.download(&y), vec![7.0f32; 64]);
}

#[test]
fn misaligned_pointer() {
    let fx = Fixture::new("grid.ptx", GRID);
    let (x, y) = (fx.zeros::<f32>(64), fx.zeros::<f32>(64));
    let result = fx.dev.launch(
        &fx.module,
        "saxpy_gridstride",
        dim1(1),
        dim1(32),
        0,
        &[
            16u64.into(),
            1.0f32.into(),
            Arg::Ptr(x.addr() + 2),
            (&y).into(),
        ],
    );
    expect_fault(result, FaultKind::Misaligned, GRID);
}

#[test]
fn endless_loop_stops_at_the_instruction_limit() {
    let fx = Fixture::new("divergent.ptx", DIVERGENT);
    fx.dev.set_instruction_limit(200_000);
    // Collatz from 0 never reaches 1 (0 is even and halves to 0).
    let (start, steps) = (fx.upload(&[5u64, 0, 7]), fx.zeros::<u32>(3));
    let result = fx.dev.launch(
        &fx.module,
        "collatz_steps",
        dim1(1),
        dim1(32),
        0,
        &[(&start).into(), (&steps).into(), 3i32.into()],
    );
    expect_fault(result, FaultKind::InstructionLimit, DIVERGENT);
}

#[test]
fn bad_arguments_and_unknown_kernel() {
    let fx = Fixture::new("grid.ptx", GRID);
    let (x, y) = (fx.zeros::<f32>(4), fx.zeros::<f32>(4));
    let launch = |args: &[Arg<'_>]| {
        fx.dev
            .launch(&fx.module, "saxpy_gridstride", dim1(1), dim1(32), 0, args)
    };
    match launch(&[4u64.into(), 1.0f32.into(), (&x).into()]) {
        Err(Error::Arguments { kernel, .. }) => assert_eq!(kernel, "saxpy_gridstride"),
        other => panic!("three arguments for four parameters: {other:?}"),
    }
    match launch(&[4u64.into(), 1.0f64.into(), (&x).into(), (&y).into()]) {
        Err(Error::Arguments { .. }) => {}
        other => panic!("an f64 for the .f32 parameter: {other:?}"),
    }
    match fx
        .dev
        .launch(&fx.module, "saxpy", dim1(1), dim1(32), 0, &[])
    {
        Err(Error::UnknownKernel { name, available }) => {
            assert_eq!(name, "saxpy");
            for k in ["grid3d_coords", "stencil7_3d", "saxpy_gridstride"] {
                assert!(available.contains(k), "{available}");
            }
        }
        other => panic!("unknown kernel: {other:?}"),
    }
}

#[test]
fn barriers_in_divergent_code() {
    let fx = Fixture::new("faults.ptx", FAULTS);
    let out = fx.zeros::<i32>(64);
    // Odd and even threads at two different bar.sync instructions.
    let result = fx.dev.launch(
        &fx.module,
        "barrier_per_parity",
        dim1(1),
        dim1(64),
        0,
        &[(&out).into()],
    );
    expect_fault(result, FaultKind::BarrierDivergence, FAULTS);

    // Uniform conditions are fine: all threads (k = 64) or none (k = 0) at the barrier.
    for k in [0i32, 64] {
        fx.launch(
            "barrier_for_some",
            dim1(1),
            dim1(64),
            0,
            &[(&out).into(), k.into()],
        );
        let want: Vec<i32> = (0..64)
            .map(|t| if t < k { (t + 1) % k } else { -t })
            .collect();
        assert_eq!(fx.download(&out), want, "k={k}");
    }
    // Threads 0..10 wait at a barrier the others never reach. CUDA calls this undefined;
    // since Volta a GPU releases the barrier once every thread that has not exited
    // arrived, so the simulator may either finish with that result or report a deadlock or
    // divergence, but must not hang or panic.
    match fx.dev.launch(
        &fx.module,
        "barrier_for_some",
        dim1(1),
        dim1(64),
        0,
        &[(&out).into(), 10i32.into()],
    ) {
        Ok(_) => {
            let want: Vec<i32> = (0..64)
                .map(|t| if t < 10 { (t + 1) % 10 } else { -t })
                .collect();
            assert_eq!(fx.download(&out), want);
        }
        Err(Error::Fault {
            kind: FaultKind::Deadlock | FaultKind::BarrierDivergence,
            ..
        }) => {}
        Err(other) => panic!("barrier reached by 10 of 64 threads: {other}"),
    }
}

#[test]
fn full_mask_shuffle_in_a_branch() {
    let fx = Fixture::new("faults.ptx", FAULTS);
    let values: Vec<i32> = (0..32).map(|t| if t % 3 == 0 { 1 } else { -1 }).collect();
    let (din, dout) = (fx.upload(&values), fx.zeros::<i32>(32));
    let result = fx.dev.launch(
        &fx.module,
        "shuffle_in_branch",
        dim1(1),
        dim1(32),
        0,
        &[(&din).into(), (&dout).into()],
    );
    expect_fault(result, FaultKind::WarpSync, FAULTS);
    // With every lane in the branch the same shuffle is legal.
    let ones = fx.upload(&[1i32; 32]);
    fx.launch(
        "shuffle_in_branch",
        dim1(1),
        dim1(32),
        0,
        &[(&ones).into(), (&dout).into()],
    );
    assert_eq!(fx.download(&dout), vec![1; 32]);
}
