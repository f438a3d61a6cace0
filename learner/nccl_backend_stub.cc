// make_nccl_backend in a build without NCCL (no CUDA LibTorch, or no nccl.h at configure time).
#include <stdexcept>

#include "learner/nccl_backend.h"

namespace myriad::learner {

bool nccl_compiled() { return false; }

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>&, int,
                                                    int, int, std::chrono::milliseconds) {
  throw std::runtime_error(
      "this build has no NCCL backend (configure found no CUDA LibTorch or no nccl.h; see "
      "learner/CMakeLists.txt): run distributed jobs with env.device=cpu (Gloo)");
}

}  // namespace myriad::learner
