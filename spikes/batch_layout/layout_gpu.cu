// The batch layout spike on a GPU: the stages of stages.h, one thread per env, over the engine's
// env-major layout (thread i's field at base + i * size: a warp's load of element k touches 32
// sectors) and over tiles of 32 envs (element k of env i at ((i / 32) * size + k) * 32 + i % 32:
// one 128-byte line). Checks that both layouts give every env the same bits, and that the
// Cholesky factor (only +, -, *, / and sqrt, correctly rounded on both sides without FMA
// contraction) matches the CPU's bit for bit; then times each kernel with CUDA events.
// Usage: layout_gpu [num_envs (default 65536)] [launches (default 50)]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "stages.h"
#include "tree.h"

namespace spike {
namespace {

constexpr int kTile = 32;

#define CHECK_CUDA(call)                                                           \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "layout_gpu: %s: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                \
    }                                                                              \
  } while (0)

// One field of the batch on the device.
struct DeviceField {
  float* p = nullptr;
  int size = 0;
};

// Env i's handle on field f in each layout.
struct EnvMajor {
  using Handle = float*;
  __device__ static Handle at(const DeviceField& f, int i) { return f.p + size_t(i) * f.size; }
};
struct Tiled {
  using Handle = Strided<float>;
  __device__ static Handle at(const DeviceField& f, int i) {
    return {f.p + size_t(i / kTile) * f.size * kTile + i % kTile, kTile};
  }
};

struct KinematicsFields {
  DeviceField qpos, xpos, xquat, xmat, xipos;
};

template <class Layout>
__global__ void kinematics_kernel(TreeView m, KinematicsFields f, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const KinematicsData<typename Layout::Handle> d{Layout::at(f.qpos, i), Layout::at(f.xpos, i),
                                                  Layout::at(f.xquat, i), Layout::at(f.xmat, i),
                                                  Layout::at(f.xipos, i)};
  kinematics<float>(m, d);
}

template <class Layout>
__global__ void cholesky_kernel(int nv, DeviceField a, DeviceField l, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  cholesky<float>(nv, Layout::at(a, i), Layout::at(l, i));
}

// Index of element k of env i in a host array of layout `tiled`.
size_t index(bool tiled, int size, int i, int k) {
  return layout_index(tiled ? kTile : 1, size, i, k);
}

DeviceField upload(const std::vector<float>& env_major, int size, int n, bool tiled) {
  std::vector<float> host(size_t(n) * size);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < size; ++k) host[index(tiled, size, i, k)] = env_major[size_t(i) * size + k];
  DeviceField f;
  f.size = size;
  CHECK_CUDA(cudaMalloc(&f.p, host.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(f.p, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  return f;
}

DeviceField zeros(int size, int n) {
  DeviceField f;
  f.size = size;
  CHECK_CUDA(cudaMalloc(&f.p, size_t(n) * size * sizeof(float)));
  CHECK_CUDA(cudaMemset(f.p, 0, size_t(n) * size * sizeof(float)));
  return f;
}

// A field back in env-major order.
std::vector<float> download(const DeviceField& f, int n, bool tiled) {
  std::vector<float> host(size_t(n) * f.size), out(host.size());
  CHECK_CUDA(cudaMemcpy(host.data(), f.p, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < f.size; ++k) out[size_t(i) * f.size + k] = host[index(tiled, f.size, i, k)];
  return out;
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* p = nullptr;
  CHECK_CUDA(cudaMalloc(&p, v.size() * sizeof(T)));
  CHECK_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

// Milliseconds per launch of `launch`, averaged over `launches` after one warm-up.
template <class F>
float time_ms(F launch, int launches) {
  launch();
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start));
  for (int r = 0; r < launches; ++r) launch();
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  CHECK_CUDA(cudaGetLastError());
  return ms / launches;
}

int run(int n, int launches) {
  if (n % kTile != 0) {
    std::fprintf(stderr, "layout_gpu: num_envs must be a multiple of %d (got %d)\n", kTile, n);
    return 2;
  }
  const Inputs in(n);
  const TreeModel& tm = in.model;
  TreeView m{tm.nbody,
             tm.nq,
             tm.nv,
             device_copy(tm.parent),
             device_copy(tm.qposadr),
             device_copy(tm.joint),
             device_copy(tm.body_pos),
             device_copy(tm.body_quat),
             device_copy(tm.body_ipos),
             device_copy(tm.jnt_axis),
             device_copy(tm.jnt_pos)};
  const int threads = 128, blocks = (n + threads - 1) / threads;
  std::vector<float> kin_out[2], chol_out[2];
  float kin_ms[2], chol_ms[2];
  for (int tiled = 0; tiled < 2; ++tiled) {
    KinematicsFields f{upload(in.qpos, tm.nq, n, tiled), zeros(3 * tm.nbody, n),
                       zeros(4 * tm.nbody, n), zeros(9 * tm.nbody, n), zeros(3 * tm.nbody, n)};
    DeviceField a = upload(in.a, in.n * in.n, n, tiled), l = zeros(in.n * in.n, n);
    kin_ms[tiled] = time_ms(
        [&] {
          if (tiled)
            kinematics_kernel<Tiled><<<blocks, threads>>>(m, f, n);
          else
            kinematics_kernel<EnvMajor><<<blocks, threads>>>(m, f, n);
        },
        launches);
    chol_ms[tiled] = time_ms(
        [&] {
          if (tiled)
            cholesky_kernel<Tiled><<<blocks, threads>>>(in.n, a, l, n);
          else
            cholesky_kernel<EnvMajor><<<blocks, threads>>>(in.n, a, l, n);
        },
        launches);
    for (const DeviceField* g : {&f.xpos, &f.xquat, &f.xmat, &f.xipos}) {
      const std::vector<float> v = download(*g, n, tiled);
      kin_out[tiled].insert(kin_out[tiled].end(), v.begin(), v.end());
    }
    chol_out[tiled] = download(l, n, tiled);
  }
  // The CPU's factor of the same matrices (the same template, T = float, plain pointers).
  std::vector<float> cpu_l(size_t(n) * in.n * in.n, 0.0f);
  for (int i = 0; i < n; ++i)
    cholesky<float>(in.n, in.a.data() + size_t(i) * in.n * in.n,
                    cpu_l.data() + size_t(i) * in.n * in.n);
  const bool kin_same = same_bits(kin_out[0], kin_out[1]);
  const bool chol_same = same_bits(chol_out[0], chol_out[1]);
  const bool chol_cpu = same_bits(chol_out[0], cpu_l);
  cudaDeviceProp prop;
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("layout_gpu on %s, %d envs, %d launches each, %d threads per block\n", prop.name, n,
              launches, threads);
  std::printf(
      "bitwise: kinematics env-major == tiled: %s; cholesky env-major == tiled: %s; "
      "cholesky GPU == CPU: %s\n",
      kin_same ? "yes" : "NO", chol_same ? "yes" : "NO", chol_cpu ? "yes" : "NO");
  const char* names[2] = {"kinematics", "cholesky14"};
  const float* ms[2] = {kin_ms, chol_ms};
  for (int s = 0; s < 2; ++s)
    std::printf(
        "%-11s env-major %8.4f ms (%7.1f M env/s)  tiled-32 %8.4f ms (%7.1f M env/s)  "
        "ratio %.2fx\n",
        names[s], ms[s][0], n / ms[s][0] / 1e3, ms[s][1], n / ms[s][1] / 1e3, ms[s][0] / ms[s][1]);
  return kin_same && chol_same ? 0 : 1;
}

}  // namespace
}  // namespace spike

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 65536;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 50;
  if (n <= 0 || launches <= 0) {
    std::fprintf(stderr, "usage: layout_gpu [num_envs > 0, a multiple of 32] [launches > 0]\n");
    return 2;
  }
  return spike::run(n, launches);
}
