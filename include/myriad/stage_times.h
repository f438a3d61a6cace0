// Per-stage GPU time: while timing is on, every CUDA launch of parallel_for (each named after its
// stage: "physics.collision", "physics_env.post_step", ...) is bracketed by two CUDA events, and
// the totals come back by stage name. For benchmarks (`myriad bench --stage-times`): the events
// cost a little per launch, so a timed run without them is the throughput figure. In a build
// without CUDA, or with no CUDA launch while on, the list is empty.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad {

struct StageTime {
  std::string name;  // the launch's name
  int64_t launches;  // how many launches of it were timed
  double ms;         // their GPU time summed, in milliseconds
};

// Starts timing (what an earlier run collected is dropped).
void stage_times_start();
// Stops timing, waits for the timed launches and returns the totals in first-launch order.
std::vector<StageTime> stage_times_stop();

}  // namespace myriad
