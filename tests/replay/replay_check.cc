// replay_check: the C++ side of the differential replay test
// (tests/python/test_replay_mutations.py).
//   replay_check --samples DIR   writes small valid replays (DIR/recording.replay,
//   DIR/plain.replay) replay_check                 reads file paths from stdin, one a line, and
//   prints per file
//                                "ok NAME:DTYPE:D0xD1..;..." (the arrays read back), "refused
//                                MESSAGE" (a ReplayError) or "other TYPE MESSAGE" (anything else).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>

#include "myriad/replay.h"

namespace {

using myriad::replay::make_array;
using myriad::replay::Replay;

// A recording like the recorder's: 2 envs, 5 frames, 3 bodies, one mesh, one height field,
// two plotted series.
Replay recording() {
  const int64_t M = 2, F = 5, B = 3;
  Replay r;
  r.header = {{"env", "Sample-v0"},
              {"checkpoint", ""},
              {"seed", 7},
              {"num_envs", M},
              {"num_frames", F},
              {"frame_dt", 0.02},
              {"discrete_actions", false},
              {"action_dim", 1}};
  std::vector<float> pose(M * F * B * 7), reward(M * F), value(M * F), action(M * F);
  for (size_t k = 0; k < pose.size(); ++k) pose[k] = std::sin(0.1f * k);
  for (size_t k = 0; k < reward.size(); ++k) reward[k] = 0.5f * k, value[k] = 1.0f / (1 + k);
  for (size_t k = 0; k < action.size(); ++k) action[k] = k % 3 == 2 ? NAN : 0.25f * k;
  r.arrays["body_pose"] = make_array({M, F, B, 7}, pose);
  r.arrays["reward"] = make_array({M, F}, reward);
  r.arrays["value"] = make_array({M, F}, value);
  r.arrays["action"] = make_array({M, F, 1}, action);
  r.arrays["episode"] = make_array<int32_t>({M, F}, {0, 0, 0, 1, 1, 0, 0, 0, 0, -1});
  r.arrays["flags"] = make_array<uint8_t>({M, F}, {1, 0, 2, 1, 4, 1, 0, 0, 2, 0});
  r.arrays["num_frames"] = make_array<int32_t>({M}, {5, 4});
  myriad::Scene s;
  s.bodies = {"world", "a", "b"};
  s.geoms.push_back({"floor", "plane", 0, -1, {1, 1, 0}});
  s.geoms.push_back({"rock", "mesh", 2, 0, {0.1f, 0.1f, 0.1f}});
  s.meshes.push_back({"tetra", {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, {0, 1, 2, 0, 1, 3}});
  s.lines.push_back({1, {{{0, 0, 0}}, {{1, 0, 1}}}});
  myriad::SceneGeom terrain{"terrain", "hfield", 0, -1, {2, 1.5f, 0.4f}};
  terrain.hfield = 0;
  s.geoms.push_back(terrain);
  s.hfields.push_back({"terrain", 3, 2, {2, 1.5f, 0.4f, 0.1f}, {0, 0.5f, 1, 0.25f, 0.75f, 0}});
  s.ground_z = 0;
  std::vector<float> series(M * F * 2);
  for (size_t k = 0; k < series.size(); ++k) series[k] = k % 7 == 6 ? NAN : 0.1f * k;
  r.header["series"] = {"v", "v_command"};
  r.arrays["series"] = make_array({M, F, 2}, series);
  myriad::replay::add_scene(r, s);
  return r;
}

// The smallest recording (1 env, 2 frames, the world body only), unshuffled, with arrays
// outside the format's table (one of them empty).
Replay plain() {
  Replay r;
  r.header = {{"env", "Plain-v0"}};
  r.arrays["body_pose"] =
      make_array<float>({1, 2, 1, 7}, {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0});
  r.arrays["reward"] = make_array<float>({1, 2}, {0, 1});
  r.arrays["value"] = make_array<float>({1, 2}, {2, 3});
  r.arrays["action"] = make_array<int32_t>({1, 2, 1}, {1, 0});
  r.arrays["episode"] = make_array<int32_t>({1, 2}, {0, 0});
  r.arrays["flags"] = make_array<uint8_t>({1, 2}, {1, 2});
  r.arrays["num_frames"] = make_array<int32_t>({1}, {2});
  r.arrays["weights"] = make_array<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  r.arrays["empty"] = make_array<int32_t>({0, 4}, {});
  for (auto& [name, a] : r.arrays) a.shuffle = false;
  myriad::Scene s;
  s.bodies = {"world"};
  myriad::replay::add_scene(r, s);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--samples") {
    myriad::replay::write_file(std::string(argv[2]) + "/recording.replay", recording());
    myriad::replay::write_file(std::string(argv[2]) + "/plain.replay", plain());
    return 0;
  }
  std::ios::sync_with_stdio(false);
  for (std::string path; std::getline(std::cin, path);) {
    const auto start = std::chrono::steady_clock::now();
    std::string verdict;
    try {
      const Replay r = myriad::replay::read_file(path);
      verdict = "ok ";
      for (const auto& [name, a] : r.arrays) {
        verdict += name + ":" + a.dtype + ":";
        for (size_t k = 0; k < a.shape.size(); ++k)
          verdict += (k ? "x" : "") + std::to_string(a.shape[k]);
        if (a.bytes.size() != static_cast<size_t>(a.numel()) * (a.dtype == "uint8" ? 1 : 4))
          verdict += "!size";
        verdict += ";";
      }
    } catch (const myriad::replay::ReplayError& e) {
      verdict = std::string("refused ") + e.what();
    } catch (const std::exception& e) {
      verdict = std::string("other ") + typeid(e).name() + " " + e.what();
    }
    for (char& c : verdict)
      if (c == '\n' || c == '\r') c = ' ';
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::cout << ms << " " << verdict << "\n" << std::flush;
  }
  return 0;
}
