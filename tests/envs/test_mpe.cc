// The particle-world scenarios (envs/mpe/) against PettingZoo's MPE (the mpe2 package): from
// the same state and actions, one step gives the same next state, observations, rewards and
// flags. tests/envs/mpe_reference.py records PettingZoo's transitions (random states, and
// seeded 25-step episodes); this file replays them with Myriad's kernels on the CPU:
//   - state-given: every step starts from PettingZoo's float64 state rounded to float32;
//   - free-running: episodes run on Myriad's own state from PettingZoo's reset state, resynced
//     only after a step whose collision test sits on its threshold (float32 may flip it).
// Skipped, naming the reason, when the venv's Python (MYRIAD_PYTHON) has no mpe2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "envs/mpe/spread.h"
#include "envs/mpe/tag.h"
#include "tests/temp_dir.h"
#include "tests/test_python.h"

namespace myriad::envs::mpe {
namespace {

using nlohmann::json;
using testing_util::TempDir;

// ---------------------------------------------------------------------------------------------
// The reference: PettingZoo's transitions for one config ("spread-discrete", ...), recorded by
// the script when a test asks for them (ctest runs each test in its own process).

struct Reference {
  json config;
  std::string skip_reason;  // non-empty: no reference on this machine
};

Reference reference(const std::string& name) {
  Reference r;
  const char* python = testing_util::test_python();
  if (*python == '\0') {
    r.skip_reason = "no Python to run PettingZoo: set MYRIAD_VENV_PYTHON (CMake) or MYRIAD_PYTHON";
    return r;
  }
  // Without MYRIAD_SOURCE_DIR, find the script next to this source file.
  const char* source_dir = std::getenv("MYRIAD_SOURCE_DIR");
  const std::string here = __FILE__;
  const std::string script = source_dir != nullptr && *source_dir != '\0'
                                 ? std::string(source_dir) + "/tests/envs/mpe_reference.py"
                                 : here.substr(0, here.rfind('/')) + "/mpe_reference.py";
  TempDir dir("mpe_reference");
  const std::string out = dir.file("mpe.json"), err = dir.file("stderr.txt");
  const std::string command = std::string(python) + " '" + script + "' '" + out + "' --config " +
                              name + " 2> '" + err + "'";
  const int status = std::system(command.c_str());
  std::ifstream err_in(err);
  const std::string message((std::istreambuf_iterator<char>(err_in)), {});
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
    r.skip_reason = message;
  } else if (status != 0) {
    ADD_FAILURE() << command << " failed (" << status << "):\n" << message;
    r.skip_reason = "the reference script failed";
  } else {
    std::ifstream in(out);
    const json all = json::parse(in);
    r.config = all["configs"][0];
    std::printf("[ mpe     ] reference: PettingZoo MPE from mpe2 %s\n",
                all["mpe2_version"].get<std::string>().c_str());
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Comparison with a tally of what was compared and the largest differences.

struct Tally {
  std::string name;
  double rtol, atol;
  int transitions = 0, ambiguous = 0, resyncs = 0, mismatches = 0;
  double max_state = 0, max_obs = 0, max_reward = 0;  // largest |got - want|

  void check(const char* what, double got, double want, double* max_err, const std::string& where) {
    const double err = std::abs(got - want);
    *max_err = std::max(*max_err, std::isnan(err) ? INFINITY : err);
    if (!(err <= atol + rtol * std::abs(want)) && mismatches++ < 8)
      ADD_FAILURE() << name << " " << where << ": " << what << " got " << got << ", want " << want;
  }
  void report() const {
    std::printf(
        "[ mpe     ] %-32s %5d transitions (%d ambiguous, %d resyncs), max |err|: state %.2e, "
        "obs %.2e, reward %.2e\n",
        name.c_str(), transitions, ambiguous, resyncs, max_state, max_obs, max_reward);
    EXPECT_EQ(mismatches, 0) << name;
  }
};

std::vector<float> floats(const json& a) {
  std::vector<float> v;
  for (const json& x : a) v.push_back(static_cast<float>(x.get<double>()));
  return v;
}

// Compares Myriad's observations [A, kObsDim] with PettingZoo's per-agent lists: each agent's
// obs_size(i) values, then zero padding.
template <class S>
void compare_obs(const float* obs, const json& want, Tally& tally, const std::string& where) {
  ASSERT_EQ(want.size(), static_cast<size_t>(S::kAgents));
  for (int i = 0; i < S::kAgents; ++i) {
    ASSERT_EQ(want[i].size(), static_cast<size_t>(S::obs_size(i))) << where;
    for (int k = 0; k < S::kObsDim; ++k) {
      const double w = k < S::obs_size(i) ? want[i][k].get<double>() : 0.0;
      tally.check("obs", obs[i * S::kObsDim + k], w, &tally.max_obs,
                  where + " agent " + std::to_string(i) + " obs[" + std::to_string(k) + "]");
    }
  }
}

// Replays one config's rows. free_run: trajectories step on Myriad's own state.
template <class S>
Tally replay(const json& cfg, bool free_run, double rtol, double atol) {
  using Action = typename S::Action;
  Tally tally{std::string(cfg["scenario"]) + (cfg["continuous"] ? " continuous" : " discrete") +
                  (free_run ? " free-running" : " state-given"),
              rtol, atol};
  const typename S::Params params{};
  float s[S::kStateDim], obs[S::kAgents * S::kObsDim], reward[S::kAgents];
  bool resync = true;
  for (const json& row : cfg["rows"]) {
    const int trajectory = row["trajectory"];
    const std::string where = trajectory < 0 ? "single step"
                                             : "episode " + std::to_string(trajectory) + " step " +
                                                   std::to_string(row.value("step", -1));
    if (row.contains("reset")) {
      // The first observation of an episode, from PettingZoo's reset state.
      const std::vector<float> s0 = floats(row["reset"]["state"]);
      std::copy(s0.begin(), s0.end(), s);
      S::observe(params, s, obs);
      compare_obs<S>(obs, row["reset"]["obs"], tally, where + " reset");
      resync = false;
      continue;
    }
    if (trajectory < 0 && free_run) continue;
    if (!free_run || trajectory < 0 || resync) {
      const std::vector<float> s0 = floats(row["state"]);
      EXPECT_EQ(s0.size(), static_cast<size_t>(S::kStateDim));
      std::copy(s0.begin(), s0.end(), s);
      tally.resyncs += free_run ? 1 : 0;
    }
    Action a[S::kAgents * S::kActionDim];
    for (int i = 0; i < S::kAgents; ++i)
      for (int k = 0; k < S::kActionDim; ++k)
        a[i * S::kActionDim + k] = static_cast<Action>(row["actions"][i][k].get<double>());
    bool terminated = true;
    S::step(params, s, a, reward, terminated);
    S::observe(params, s, obs);
    ++tally.transitions;

    const std::vector<double> next = row["next_state"];
    for (int k = 0; k < S::kStateDim; ++k)
      tally.check("state", s[k], next[k], &tally.max_state,
                  where + " state[" + std::to_string(k) + "]");
    compare_obs<S>(obs, row["obs"], tally, where);
    const bool ambiguous = row["ambiguous"];
    tally.ambiguous += ambiguous ? 1 : 0;
    resync = ambiguous;
    const int t = row["t"];
    for (int i = 0; i < S::kAgents; ++i) {
      if (!ambiguous)
        tally.check("reward", reward[i], row["rewards"][i].get<double>(), &tally.max_reward,
                    where + " agent " + std::to_string(i));
      EXPECT_EQ(terminated, row["terminated"][i].get<bool>()) << where;
      // The framework truncates at the spec's limit; PettingZoo's max_cycles is 25.
      EXPECT_EQ(t + 1 >= S::kMaxEpisodeSteps, row["truncated"][i].get<bool>()) << where;
    }
  }
  return tally;
}

// State-given steps match to float32 rounding; free-running episodes accumulate it over 25
// steps of contact dynamics.
constexpr double kStepRtol = 1e-5, kStepAtol = 1e-5;
constexpr double kRunRtol = 1e-4, kRunAtol = 1e-4;

template <class S>
void check_parity(const std::string& scenario) {
  const std::string name = scenario + (S::ActionDecoder::kContinuous ? "-continuous" : "-discrete");
  const Reference ref = reference(name);
  if (!ref.skip_reason.empty()) GTEST_SKIP() << ref.skip_reason;
  const json& cfg = ref.config;
  for (int i = 0; i < S::kAgents; ++i) EXPECT_EQ(S::agent_name(i), cfg["agents"][i]);
  const Tally given = replay<S>(cfg, false, kStepRtol, kStepAtol);
  given.report();
  EXPECT_GT(given.transitions, 1000);
  const Tally run = replay<S>(cfg, true, kRunRtol, kRunAtol);
  run.report();
  EXPECT_GT(run.transitions, 400);
}

TEST(MpeParity, SpreadDiscrete) { check_parity<Spread<3, DiscreteActions>>("spread"); }
TEST(MpeParity, SpreadContinuous) { check_parity<Spread<3, ContinuousActions>>("spread"); }
TEST(MpeParity, TagDiscrete) { check_parity<Tag<1, 3, 2, DiscreteActions>>("tag"); }
TEST(MpeParity, TagContinuous) { check_parity<Tag<1, 3, 2, ContinuousActions>>("tag"); }

}  // namespace
}  // namespace myriad::envs::mpe
