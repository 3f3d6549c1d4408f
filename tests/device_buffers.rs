//! `dpl::gpu::device_buffers`: where a `Seq`'s device copy lives, for handing dpl's device
//! data to other CUDA code in the same process (`examples/gpu_bench.rs` runs NVIDIA's CUB
//! on it). On the simulated GPU: a host-only `Seq` has none; the first call on a GPU place
//! uploads an argument and the same buffer serves every later call; a result has one buffer
//! per scalar leaf of its elements; writing on the host drops the device copy.
#![cfg(feature = "sim")]

use dpl::gpu::device_buffers;
use dpl::prelude::*;

#[parallel]
fn doubled(x: &Seq<f32>) -> Seq<f32> {
    map(|v| 2.0 * v, x)
}

#[parallel]
fn pairs(x: &Seq<f32>, k: &Seq<u32>) -> Seq<(f32, u32)> {
    zip(x, k)
}

#[test]
fn a_host_sequence_has_no_device_buffers() {
    let x = Seq::from(vec![1.0f32, 2.0]);
    assert!(device_buffers(&x).is_none());
    // Nor after a call on the CPU.
    let _ = with_place(Place::Cpu, || doubled(&x));
    assert!(device_buffers(&x).is_none());
}

#[test]
fn an_argument_is_uploaded_once_and_its_buffer_reused() {
    let x = Seq::from((0..1000).map(|i| i as f32).collect::<Vec<_>>());
    let y = with_place(Place::Sim, || doubled(&x));
    let (place, bufs) = device_buffers(&x).expect("the call uploaded x");
    assert_eq!(place, Place::Sim);
    assert_eq!(bufs.len(), 1, "one buffer for a sequence of scalars");
    let first = bufs[0];
    let z = with_place(Place::Sim, || doubled(&x));
    assert_eq!(device_buffers(&x).map(|(_, b)| b[0]), Some(first));
    // The results are on the device only, each in a buffer of its own.
    let (py, by) = device_buffers(&y).expect("a result stays on the device");
    let (_, bz) = device_buffers(&z).expect("a result stays on the device");
    assert_eq!(py, Place::Sim);
    assert!(by[0] != first && bz[0] != first && by[0] != bz[0]);
    let want: Vec<f32> = (0..1000).map(|i| 2.0 * i as f32).collect();
    assert_eq!(y.to_vec(), want);
    assert_eq!(z.to_vec(), want);
}

#[test]
fn a_sequence_of_pairs_has_one_buffer_per_component() {
    let x = Seq::from(vec![0.5f32, 1.5, 2.5]);
    let k = Seq::from(vec![7u32, 8, 9]);
    let p = with_place(Place::Sim, || pairs(&x, &k));
    let (_, bufs) = device_buffers(&p).expect("a result stays on the device");
    assert_eq!(bufs.len(), 2);
    assert_ne!(bufs[0], bufs[1]);
    assert_eq!(p.to_vec(), vec![(0.5, 7), (1.5, 8), (2.5, 9)]);
}

#[test]
fn writing_on_the_host_drops_the_device_buffers() {
    let x = Seq::from(vec![1.0f32, 2.0, 3.0]);
    let mut y = with_place(Place::Sim, || doubled(&x));
    assert!(device_buffers(&y).is_some());
    y.as_mut_slice()[0] = 10.0;
    assert!(device_buffers(&y).is_none());
    assert_eq!(y.to_vec(), vec![10.0, 4.0, 6.0]);
}
