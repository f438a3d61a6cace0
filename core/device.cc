#include "myriad/device.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "core/cuda_probe.h"

namespace myriad {
namespace {

// "cpu, cuda, auto, cuda:0, cuda:1" for a machine with two GPUs; the generic list otherwise.
std::string valid_names(bool cuda_built, int gpus) {
  std::string s = "cpu, cuda, auto";
  if (!cuda_built) return s + " (this build has no CUDA backend)";
  if (gpus <= 0) return s + ", cuda:K (this machine has no CUDA GPU)";
  for (int k = 0; k < gpus; ++k) s += ", cuda:" + std::to_string(k);
  return s;
}

// K of "cuda:K" (digits only, no sign, at most 4 of them), or -1 when name is not of that form.
int cuda_index_of(const std::string& name) {
  const std::string prefix = "cuda:";
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string digits = name.substr(prefix.size());
  if (digits.empty() || digits.size() > 4) return -1;
  for (char c : digits)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoi(digits);
}

}  // namespace

bool cuda_compiled() { return cuda_probe_compiled(); }

int cuda_device_count() { return cuda_probe_device_count(); }

bool cuda_available() { return cuda_device_count() > 0; }

int cuda_current_device() { return cuda_probe_current_device(); }

DeviceId parse_device(const std::string& name, bool cuda_built, int gpus, int current) {
  if (name == "cpu") return {Device::kCpu, 0};
  if (name == "auto")
    return cuda_built && gpus > 0 ? DeviceId{Device::kCuda, current} : DeviceId{Device::kCpu, 0};
  const int index = cuda_index_of(name);
  if (name != "cuda" && index < 0)
    throw std::invalid_argument("unknown device '" + name +
                                "' (valid: " + valid_names(cuda_built, gpus) + ")");
  if (!cuda_built)
    throw std::invalid_argument("device '" + name +
                                "' requested, but this build has no CUDA backend (nvcc was not "
                                "found when it was configured); use device=cpu or device=auto");
  if (gpus <= 0)
    throw std::invalid_argument("device '" + name +
                                "' requested, but no CUDA GPU answers on this machine; use "
                                "device=cpu or device=auto");
  if (index >= gpus)
    throw std::invalid_argument("device '" + name + "' requested, but this process sees " +
                                std::to_string(gpus) + " CUDA GPU" + (gpus == 1 ? "" : "s") +
                                " (valid: " + valid_names(cuda_built, gpus) + ")");
  return {Device::kCuda, index < 0 ? current : index};
}

DeviceId resolve_device_id(const std::string& name) {
  // Names that need no CUDA call answer without touching the runtime.
  if (name == "cpu") return {Device::kCpu, 0};
  const bool built = cuda_compiled();
  const int gpus = built ? cuda_device_count() : 0;
  return parse_device(name, built, gpus, gpus > 0 ? cuda_current_device() : 0);
}

Device resolve_device(const std::string& name) {
  const DeviceId d = resolve_device_id(name);
  if (d.is_cuda() && d.index != cuda_current_device())
    throw std::invalid_argument("device '" + name +
                                "' selects a GPU other than the current one, but this caller "
                                "keeps no device index (use resolve_device_id)");
  return d.kind;
}

std::string device_name(Device d) { return d == Device::kCpu ? "cpu" : "cuda"; }

std::string device_name(DeviceId d) {
  return d.is_cpu() ? "cpu" : "cuda:" + std::to_string(d.index);
}

namespace {

// OpenMP's own default: OMP_NUM_THREADS's first entry, else the cores this process may use.
int default_cpu_threads() {
  static const int threads = [] {
    if (const char* env = std::getenv("OMP_NUM_THREADS")) {
      char* end = nullptr;
      const long n = std::strtol(env, &end, 10);
      if (end != env && n > 0 && n <= 4096) return static_cast<int>(n);
    }
    return std::max(omp_get_num_procs(), 1);
  }();
  return threads;
}

// Per thread, as OpenMP's setting is, but myriad's own: LibTorch shares the OpenMP runtime, and
// its set_num_threads (the learner's threads) must not change how many threads step the envs.
thread_local int t_cpu_threads = 0;

}  // namespace

// 0 goes back to the default (a thread's earlier count does not stick: a Python env made with
// threads=0 after one with threads=1 gets every core).
void set_cpu_threads(int threads) {
  if (threads < 0) throw std::invalid_argument("threads must be >= 0");
  t_cpu_threads = threads;  // 0: back to the default
}

int cpu_threads() { return t_cpu_threads > 0 ? t_cpu_threads : default_cpu_threads(); }

}  // namespace myriad

extern "C" int myriad_cpu_threads() { return myriad::cpu_threads(); }
