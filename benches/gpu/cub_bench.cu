// The baselines that `examples/gpu_bench.rs` times dpl against on a real GPU: NVIDIA CUB's
// device-wide reduce, inclusive scan and radix sort, and a hand-written triad kernel, behind
// a small C interface (`dcb_*`) that the Rust program loads at run time (libloading).
//
// Built by `cargo xtask gpu-bench` with nvcc from PyPI into a shared library with the CUDA
// runtime linked in statically (`-cudart static`), so the library needs nothing from CUDA
// on the machine it runs on but the driver (libcuda), which the runtime opens itself.
//
// Every entry point works on device pointers it is given (dpl's own buffers: dpl and the
// CUDA runtime share the device's primary context) and returns a cudaError_t as an int
// (0: success; `dcb_error_string` names the others). Calls are enqueued on the legacy
// default stream; `dcb_sync` waits for all of the device's work, dpl's included. CUB's
// temporary storage is allocated once per operation and size (at the first call for that
// size) and reused by every later call of that size, so the timed calls allocate nothing.
// Not thread-safe: the benchmark calls it from one thread.

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

namespace {

// One operation's temporary storage, kept for the size it was last sized for.
struct Temp {
  void* ptr = nullptr;
  size_t bytes = 0;      // allocated bytes
  size_t items = 0;      // the size (number of items) `needed` was computed for
  size_t needed = 0;     // the bytes CUB asked for at that size
};

Temp reduce_temp, scan_temp, sort_temp;
float* reduce_out = nullptr;  // the device-side result of a reduction (one float)

// Makes `t` hold at least `needed` bytes for `items` items (allocating only when the
// size changes and the current allocation is too small).
cudaError_t reserve(Temp& t, size_t items, size_t needed) {
  t.items = items;
  t.needed = needed;
  if (needed <= t.bytes && t.ptr != nullptr) return cudaSuccess;
  if (t.ptr != nullptr) {
    cudaError_t e = cudaFree(t.ptr);
    t.ptr = nullptr;
    t.bytes = 0;
    if (e != cudaSuccess) return e;
  }
  size_t bytes = needed > 0 ? needed : 1;
  cudaError_t e = cudaMalloc(&t.ptr, bytes);
  if (e == cudaSuccess) t.bytes = bytes;
  return e;
}

// CUB takes the number of items as an `int` here; larger inputs are refused.
bool too_large(size_t n) { return n > static_cast<size_t>(INT32_MAX); }

// Runs a CUB device-wide algorithm on `n` items: `run(temp, bytes, items)` is its call.
// The first call for a size asks CUB how much temporary storage it needs (`temp` null) and
// reserves it in `t`; every call then runs with that storage.
template <typename Run>
cudaError_t with_temp(Temp& t, size_t n, Run run) {
  if (too_large(n)) return cudaErrorInvalidValue;
  int items = static_cast<int>(n);
  if (t.items != n || t.ptr == nullptr) {
    size_t needed = 0;
    cudaError_t e = run(nullptr, needed, items);
    if (e != cudaSuccess) return e;
    e = reserve(t, n, needed);
    if (e != cudaSuccess) return e;
  }
  size_t bytes = t.needed;
  return run(t.ptr, bytes, items);
}

// out[i] = x[i] + a * y[i], four floats per thread. The product and the sum are rounded
// separately (no fused multiply-add), as dpl and plain Rust compute them, so the results
// agree to the bit.
__global__ void triad_vec4(const float4* __restrict__ x, const float4* __restrict__ y,
                           float4* __restrict__ out, float a, size_t n4) {
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 u = x[i];
    float4 v = y[i];
    out[i] = make_float4(__fadd_rn(u.x, __fmul_rn(a, v.x)), __fadd_rn(u.y, __fmul_rn(a, v.y)),
                         __fadd_rn(u.z, __fmul_rn(a, v.z)), __fadd_rn(u.w, __fmul_rn(a, v.w)));
  }
}

// The same for elements begin..n one per thread (unaligned buffers, and the ragged end).
__global__ void triad_scalar(const float* __restrict__ x, const float* __restrict__ y,
                             float* __restrict__ out, float a, size_t begin, size_t n) {
  size_t i = begin + static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __fadd_rn(x[i], __fmul_rn(a, y[i]));
}

constexpr unsigned TRIAD_BLOCK = 256;

unsigned blocks_for(size_t items) {
  return static_cast<unsigned>((items + TRIAD_BLOCK - 1) / TRIAD_BLOCK);
}

}  // namespace

// Only the `dcb_*` entry points are exported (the library is built with hidden visibility).
#define DCB_API __attribute__((visibility("default")))

extern "C" {

// What the benchmark reports about the device.
struct DcbDeviceInfo {
  char name[256];
  int multiprocessors;
  int cc_major;
  int cc_minor;
  int memory_clock_khz;   // peak memory clock (0: not reported)
  int memory_bus_bits;    // memory bus width
  int l2_bytes;
  int driver_version;     // e.g. 13000 for CUDA 13.0
  int runtime_version;    // the runtime linked into this library
  int cub_version;        // CUB_VERSION of the headers compiled in (MMMmmmpp)
  unsigned long long total_memory;
};

// The name of an error code returned by the other functions.
DCB_API const char* dcb_error_string(int code) {
  return cudaGetErrorString(static_cast<cudaError_t>(code));
}

// Selects `device` and initialises the runtime on its primary context (the context dpl's
// driver uses), then fills `info`.
DCB_API int dcb_init(int device, DcbDeviceInfo* info) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return e;
  e = cudaFree(nullptr);  // creates (retains) the primary context now
  if (e != cudaSuccess) return e;
  cudaDeviceProp p;
  e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) return e;
  std::memset(info, 0, sizeof *info);
  std::strncpy(info->name, p.name, sizeof info->name - 1);
  info->multiprocessors = p.multiProcessorCount;
  info->cc_major = p.major;
  info->cc_minor = p.minor;
  info->memory_bus_bits = p.memoryBusWidth;
  info->l2_bytes = p.l2CacheSize;
  info->total_memory = p.totalGlobalMem;
  info->cub_version = CUB_VERSION;
  // Only informative (the peak bandwidth): a runtime that no longer reports it leaves 0.
  if (cudaDeviceGetAttribute(&info->memory_clock_khz, cudaDevAttrMemoryClockRate, device) !=
      cudaSuccess) {
    info->memory_clock_khz = 0;
    cudaGetLastError();
  }
  e = cudaDriverGetVersion(&info->driver_version);
  if (e != cudaSuccess) return e;
  e = cudaRuntimeGetVersion(&info->runtime_version);
  if (e != cudaSuccess) return e;
  if (reduce_out == nullptr) {
    e = cudaMalloc(&reduce_out, sizeof(float));
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

// Waits for every piece of work queued on the device (CUB's and dpl's), then reports the
// first error a kernel raised, if any.
DCB_API int dcb_sync(void) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return e;
  return cudaGetLastError();
}

// Device memory for CUB's outputs (and the copy that measures the bandwidth).
DCB_API int dcb_alloc(size_t bytes, void** ptr) { return cudaMalloc(ptr, bytes > 0 ? bytes : 1); }

DCB_API int dcb_free(void* ptr) { return cudaFree(ptr); }

// Copies `bytes` from device to host (synchronous).
DCB_API int dcb_read(const void* src, void* dst, size_t bytes) {
  return cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost);
}

// Copies `bytes` between device buffers (asynchronous: time it with dcb_sync).
DCB_API int dcb_copy(void* dst, const void* src, size_t bytes) {
  return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0);
}

// The sum of x[0..n] into *result on the host: cub::DeviceReduce::Sum, then the 4-byte
// read-back (which waits), as a dpl call returning an f32 does.
DCB_API int dcb_sum_f32(const float* x, size_t n, float* result) {
  if (reduce_out == nullptr) return cudaErrorInitializationError;  // dcb_init first
  cudaError_t e = with_temp(reduce_temp, n, [&](void* temp, size_t& bytes, int items) {
    return cub::DeviceReduce::Sum(temp, bytes, x, reduce_out, items);
  });
  if (e != cudaSuccess) return e;
  return cudaMemcpy(result, reduce_out, sizeof(float), cudaMemcpyDeviceToHost);
}

// out[i] = x[0] + ... + x[i]: cub::DeviceScan::InclusiveSum (asynchronous).
DCB_API int dcb_scan_f32(const float* x, float* out, size_t n) {
  return with_temp(scan_temp, n, [&](void* temp, size_t& bytes, int items) {
    return cub::DeviceScan::InclusiveSum(temp, bytes, x, out, items);
  });
}

// `out` = the keys of `keys` in ascending order, `keys` left as it is:
// cub::DeviceRadixSort::SortKeys over all 32 bits (asynchronous).
DCB_API int dcb_sort_u32(const unsigned* keys, unsigned* out, size_t n) {
  return with_temp(sort_temp, n, [&](void* temp, size_t& bytes, int items) {
    return cub::DeviceRadixSort::SortKeys(temp, bytes, keys, out, items);
  });
}

// out[i] = x[i] + a * y[i] (asynchronous): 16-byte loads and stores when the three
// buffers allow them.
DCB_API int dcb_triad_f32(const float* x, const float* y, float* out, float a, size_t n) {
  if (too_large(n)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  uintptr_t bits = reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y) |
                   reinterpret_cast<uintptr_t>(out);
  size_t vec = (bits % 16 == 0) ? n / 4 : 0;
  if (vec > 0) {
    triad_vec4<<<blocks_for(vec), TRIAD_BLOCK>>>(reinterpret_cast<const float4*>(x),
                                                  reinterpret_cast<const float4*>(y),
                                                  reinterpret_cast<float4*>(out), a, vec);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return e;
  }
  size_t begin = vec * 4;
  if (begin < n) {
    triad_scalar<<<blocks_for(n - begin), TRIAD_BLOCK>>>(x, y, out, a, begin, n);
    return cudaGetLastError();
  }
  return cudaSuccess;
}

// The triad of host vectors as a CUDA programmer who keeps them in page-locked memory
// writes it: x and y copied to the device (cudaMemcpyAsync from page-locked buffers), the
// triad into `out` (device memory), the result copied back into a page-locked buffer, and
// a wait for all of it. `x` and `y` are copied into the page-locked buffers only when they
// change (a new size or new vectors), not by the calls timed: the bus's ceiling, with no
// copy on the host.
DCB_API int dcb_host_triad_f32(const float* x, const float* y, float* out, float a, size_t n) {
  static float *hx = nullptr, *hy = nullptr, *hout = nullptr, *dx = nullptr, *dy = nullptr;
  static size_t held = 0;
  static const float *from_x = nullptr, *from_y = nullptr;
  size_t bytes = n * sizeof(float);
  if (n == 0) return cudaSuccess;
  if (n != held) {
    cudaFreeHost(hx);
    cudaFreeHost(hy);
    cudaFreeHost(hout);
    cudaFree(dx);
    cudaFree(dy);
    hx = hy = hout = dx = dy = nullptr;
    held = 0;
    from_x = from_y = nullptr;
    cudaError_t e = cudaMallocHost(&hx, bytes);
    if (e == cudaSuccess) e = cudaMallocHost(&hy, bytes);
    if (e == cudaSuccess) e = cudaMallocHost(&hout, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&dx, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&dy, bytes);
    if (e != cudaSuccess) return e;
    held = n;
  }
  if (x != from_x || y != from_y) {
    std::memcpy(hx, x, bytes);
    std::memcpy(hy, y, bytes);
    from_x = x;
    from_y = y;
  }
  cudaError_t e = cudaMemcpyAsync(dx, hx, bytes, cudaMemcpyHostToDevice, 0);
  if (e == cudaSuccess) e = cudaMemcpyAsync(dy, hy, bytes, cudaMemcpyHostToDevice, 0);
  if (e == cudaSuccess) e = static_cast<cudaError_t>(dcb_triad_f32(dx, dy, out, a, n));
  if (e == cudaSuccess) e = cudaMemcpyAsync(hout, out, bytes, cudaMemcpyDeviceToHost, 0);
  if (e == cudaSuccess) e = cudaStreamSynchronize(0);
  return e;
}

}  // extern "C"
