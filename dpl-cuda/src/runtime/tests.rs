//! The executor on the simulator: nested arguments as parts, their checks, and ragged
//! results left on the device.

use dpl_core::interp::Value;
use dpl_core::ir::{Scalar, Type};
use dpl_core::run::Error;

use super::columns::words;
use super::*;
use crate::Driver;
use crate::sim::SimDriver;

/// Compiles a program written in the IR text form.
fn program(src: &str) -> GpuProgram {
    let mut f = dpl_core::text::parse(src).unwrap_or_else(|e| panic!("{e}\n{src}"));
    dpl_core::captures::fix_captures(&mut f);
    let c = dpl_core::pipeline::compile(f).unwrap_or_else(|e| panic!("{e:?}"));
    crate::compile(&c.fused).unwrap_or_else(|e| panic!("{e}"))
}

fn row_sums() -> GpuProgram {
    program(
        "fn row_sums(%0 x: [[i32]]) -> [i32] {
  %1 r: [i32] = map(|%2 row: [i32]| [] { %3 s: i32 = sum(%2); %3 }, %0)
  %1
}",
    )
}

fn positives() -> GpuProgram {
    program(
        "fn positives(%0 x: [[i32]]) -> [[i32]] {
  %1 r: [[i32]] = map(|%2 row: [i32]| [] {
%3 p: [i32] = filter(|%4 v: i32| [] { %5 z: i32 = const 0; %6 c: bool = gt %4, %5; %6 }, %2)
%3
  }, %0)
  %1
}",
    )
}

/// Rows with empty ones first, inside and last.
fn rows() -> Vec<Vec<i32>> {
    vec![
        vec![],
        vec![3, -1, 4],
        vec![],
        vec![-5],
        vec![9, 2, -6, 5, 3],
        vec![],
    ]
}

fn value(rows: &[Vec<i32>]) -> Value {
    Value::seq(
        rows.iter()
            .map(|r| Value::seq(r.iter().map(|&x| Value::I32(x)).collect()))
            .collect(),
    )
}

fn parts(rows: &[Vec<i32>]) -> (HostColumns, HostColumns) {
    let mut offsets = vec![0];
    for r in rows {
        offsets.push(offsets[offsets.len() - 1] + r.len());
    }
    let flat: Vec<Value> = rows.iter().flatten().map(|&x| Value::I32(x)).collect();
    let values = HostColumns::from_values(&Type::Scalar(Scalar::I32), flat.iter());
    (HostColumns::offsets(&offsets), values.expect("i32 values"))
}

fn run_host(p: &GpuProgram, d: &SimDriver, args: Vec<Input>) -> Result<Value, Error> {
    match run_resident(p, d, args, false, &|_| UNKNOWN_LOCATION)? {
        Output::Host(v) => Ok(v),
        other => panic!("a host result was expected: {other:?}"),
    }
}

/// A nested argument given as host columns, as device columns or as a host value
/// gives the same result; device parts are neither freed nor changed by the call,
/// and everything the call uploaded is freed.
#[test]
fn nested_parts_agree_with_values() {
    let d = SimDriver::default();
    let p = row_sums();
    let rows = rows();
    let want = Value::seq(rows.iter().map(|r| Value::I32(r.iter().sum())).collect());
    let base = d.device().memory_used();
    let from_value = run_host(&p, &d, vec![Input::Host(value(&rows))]);
    assert_eq!(from_value, Ok(want.clone()));
    let (offsets, values) = parts(&rows);
    let host = NestedColumns {
        offsets: Columns::Host(offsets.clone()),
        values: Columns::Host(values.clone()),
    };
    assert_eq!(
        run_host(&p, &d, vec![Input::Nested(host)]),
        Ok(want.clone())
    );
    assert_eq!(d.device().memory_used(), base);

    let (o, v) = (upload_columns(&d, &offsets), upload_columns(&d, &values));
    let (o, v) = (o.expect("upload"), v.expect("upload"));
    let on_device = d.device().memory_used();
    let dev_in = NestedColumns {
        offsets: Columns::Device(o.clone()),
        values: Columns::Device(v.clone()),
    };
    assert_eq!(run_host(&p, &d, vec![Input::Nested(dev_in)]), Ok(want));
    assert_eq!(d.device().memory_used(), on_device);
    assert_eq!(read_columns(&d, &o), Ok(offsets.cols));
    assert_eq!(read_columns(&d, &v), Ok(values.cols));
    for b in o.bufs.iter().chain(&v.bufs) {
        d.free(*b).expect("free");
    }
    assert_eq!(d.device().memory_used(), base);
}

/// Parts that do not make a nested sequence of the parameter's type are rejected
/// with a message, and nothing stays allocated.
#[test]
fn malformed_parts_are_rejected() {
    let d = SimDriver::default();
    let p = row_sums();
    let (offsets, values) = parts(&rows());
    let base = d.device().memory_used();
    let with_offsets = |o: &[usize]| NestedColumns {
        offsets: Columns::Host(HostColumns::offsets(o)),
        values: Columns::Host(values.clone()),
    };
    let f32_values = HostColumns {
        elem: Type::Scalar(Scalar::F32),
        ..values.clone()
    };
    let i32_offsets = HostColumns {
        elem: Type::Scalar(Scalar::I32),
        len: offsets.len * 2,
        ..offsets.clone()
    };
    let short = HostColumns {
        len: values.len + 1,
        ..values.clone()
    };
    let cases = [
        (
            with_offsets(&[0, 0, 3, 3, 2, 9, 9]),
            "offsets decrease at row 3",
        ),
        (
            with_offsets(&[1, 1, 4, 4, 5, 10, 10]),
            "offsets[0] is Some(1)",
        ),
        (
            with_offsets(&[0, 0, 3, 3, 4, 8, 8]),
            "the last offset is 8, there are 9 values",
        ),
        (with_offsets(&[]), "needs rows + 1 offsets"),
        (
            NestedColumns {
                offsets: Columns::Host(offsets.clone()),
                values: Columns::Host(f32_values),
            },
            "must be i32, f32 was given",
        ),
        (
            NestedColumns {
                offsets: Columns::Host(i32_offsets),
                values: Columns::Host(values.clone()),
            },
            "offsets of a nested sequence must be usize",
        ),
        (
            NestedColumns {
                offsets: Columns::Host(offsets.clone()),
                values: Columns::Host(short),
            },
            "do not hold 10 element(s) of i32",
        ),
    ];
    for (n, why) in cases {
        match run_host(&p, &d, vec![Input::Nested(n)]) {
            Err(Error::Device(m)) => assert!(m.contains(why), "{m}, expected {why}"),
            other => panic!("{other:?}, expected an error saying {why}"),
        }
        assert_eq!(d.device().memory_used(), base, "{why}");
    }
    // Device offsets are checked at both ends.
    let bad = upload_columns(&d, &HostColumns::offsets(&[0, 0, 3, 3, 4, 9, 8]));
    let bad = bad.expect("upload");
    let n = NestedColumns {
        offsets: Columns::Device(bad.clone()),
        values: Columns::Host(values.clone()),
    };
    match run_host(&p, &d, vec![Input::Nested(n)]) {
        Err(Error::Device(m)) => assert!(m.contains("from 0 to 8, expected 0 to 9"), "{m}"),
        other => panic!("{other:?}"),
    }
    d.free(bad.bufs[0]).expect("free");
    assert_eq!(d.device().memory_used(), base);
}

/// A ragged result kept on the device comes back as offsets and values owned by the
/// caller: fresh buffers (copies) when it is an argument's, freed by the caller.
#[test]
fn ragged_results_stay_on_the_device() {
    let d = SimDriver::default();
    let rows = rows();
    let read = |n: &DeviceNested| {
        let o = words(&read_columns(&d, &n.offsets).expect("read")[0]);
        let v = download(&d, &n.values).expect("read");
        (o, v)
    };
    let keep = |p: &GpuProgram, a: Input| match run_resident(p, &d, vec![a], true, &|_| {
        UNKNOWN_LOCATION
    }) {
        Ok(Output::Nested(n)) => n,
        other => panic!("a nested device result was expected: {other:?}"),
    };
    let base = d.device().memory_used();
    let p = positives();
    let n = keep(&p, Input::Host(value(&rows)));
    let kept: Vec<Vec<i32>> = rows
        .iter()
        .map(|r| r.iter().copied().filter(|&x| x > 0).collect())
        .collect();
    let (o, v) = read(&n);
    let (want_o, want_v) = parts(&kept);
    assert_eq!(o, words(&want_o.cols[0]));
    assert_eq!(v, Value::seq(want_v.to_values().expect("values")));
    for b in n.offsets.bufs.iter().chain(&n.values.bufs) {
        d.free(*b).expect("free");
    }
    assert_eq!(d.device().memory_used(), base);

    let id = program("fn id(%0 x: [[i32]]) -> [[i32]] {\n  %0\n}");
    let (offsets, values) = parts(&rows);
    let o = upload_columns(&d, &offsets).expect("upload");
    let v = upload_columns(&d, &values).expect("upload");
    let n = keep(
        &id,
        Input::Nested(NestedColumns {
            offsets: Columns::Device(o.clone()),
            values: Columns::Device(v.clone()),
        }),
    );
    assert_ne!(n.offsets.bufs, o.bufs);
    assert_ne!(n.values.bufs, v.bufs);
    assert_eq!(read(&n).0, words(&offsets.cols[0]));
    assert_eq!(read_columns(&d, &n.values), Ok(values.cols));
    for b in [&n.offsets, &n.values, &o, &v].iter().flat_map(|s| &s.bufs) {
        d.free(*b).expect("free");
    }
    assert_eq!(d.device().memory_used(), base);
}

/// A plan that does not fit its program is refused before anything runs, in debug builds
/// (where tests run): here a kernel that takes one parameter more than its launches pass.
#[test]
fn invalid_plans_are_refused_in_debug_builds() {
    let d = SimDriver::default();
    let mut p = row_sums();
    assert_eq!(p.verify(), Ok(()));
    let base = d.device().memory_used();
    p.params[0] += 1;
    let want = format!(
        "internal error of the GPU executor: invalid plan: a launch of `{}` passes {} \
         argument(s), the kernel takes {}",
        p.kernels[0],
        p.params[0] - 1,
        p.params[0]
    );
    match run_host(&p, &d, vec![Input::Host(value(&rows()))]) {
        Err(Error::Device(m)) => assert_eq!(m, want),
        other => panic!("{other:?}"),
    }
    assert_eq!(d.device().memory_used(), base);
}

/// A loop at the top level of the body adds 1 to each element `n` times; the sequence it
/// carries stays on the device.
fn add_n_times() -> GpuProgram {
    program(
        "fn add_n(%0 x: [f32], %1 n: u32) -> [f32] {
  %2 zero: u32 = const 0
  %3 l: ([f32], u32) = loop(%4 v: [f32] = %0, %5 i: u32 = %2) while {
    %6 more: bool = lt %5, %1
    %6
  } do {
    %7 w: [f32] = map(|%8 e: f32| [] { %9 c: f32 = const 1.0; %10 s: f32 = add %8, %9; %10 }, %4)
    %11 one: u32 = const 1
    %12 i1: u32 = add %5, %11
    %13 next: ([f32], u32) = tuple(%7, %12)
    %13
  }
  %14 r: [f32] = %3.0
  %14
}",
    )
}

/// What an iteration of a top-level loop allocated is freed when the next one no longer
/// carries it: 300 iterations over 64 KiB fit in a device of 1 MiB (without the release
/// they would need 19 MiB), and everything is freed when the call ends. The loop is host
/// control flow over the plan's steps.
#[test]
fn a_top_level_loop_frees_what_its_iterations_no_longer_carry() {
    let p = add_n_times();
    assert!(
        p.plan
            .steps
            .iter()
            .any(|s| matches!(s, crate::plan::Step::Loop { .. })),
        "{:?}",
        p.plan.steps
    );
    let d = SimDriver::new(dpl_sim::Device::with_memory_limit(1 << 20));
    let base = d.device().memory_used();
    let n = 16 * 1024;
    let x: Vec<Value> = (0..n).map(|i| Value::F32((i % 100) as f32)).collect();
    let got = run_host(
        &p,
        &d,
        vec![Input::Host(Value::seq(x)), Input::Host(Value::U32(300))],
    );
    let want: Vec<Value> = (0..n)
        .map(|i| Value::F32((i % 100) as f32 + 300.0))
        .collect();
    match got {
        Ok(v) => assert!(v == Value::seq(want), "wrong values"),
        Err(e) => panic!("{e:?}"),
    }
    assert_eq!(d.device().memory_used(), base);
    // Zero iterations: the argument itself is the result.
    let one = vec![Value::F32(2.5)];
    let got = run_host(
        &p,
        &d,
        vec![
            Input::Host(Value::seq(one.clone())),
            Input::Host(Value::U32(0)),
        ],
    );
    assert_eq!(got, Ok(Value::seq(one)));
}
