// Rank setup from torchrun's and SLURM's variables, and per-rank seeds. (Multi-process runs
// over loopback are in tests/tools/test_distributed.py.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "learner/distributed.h"

namespace myriad::learner {
namespace {

// Sets variables for one scope and removes every variable a rank setup reads afterwards.
struct Env {
  explicit Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    clear();
    for (const auto& [k, v] : vars) setenv(k, v, 1);
  }
  ~Env() { clear(); }
  static void clear() {
    for (const char* k :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID",
          "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_NODELIST", "TORCHELASTIC_RESTART_COUNT",
          "MYRIAD_RESTART_COUNT", "TORCHELASTIC_USE_AGENT_STORE"})
      unsetenv(k);
  }
};

TEST(RankSetup, NoVariablesIsOneProcess) {
  const Env env({});
  const RankInfo r = rank_from_environment();
  EXPECT_EQ(r.world_size, 1);
  EXPECT_EQ(r.source, "none");
}

TEST(RankSetup, TorchrunVariables) {
  const Env env({{"RANK", "3"},
                 {"WORLD_SIZE", "8"},
                 {"LOCAL_RANK", "1"},
                 {"MASTER_ADDR", "node7"},
                 {"MASTER_PORT", "29400"},
                 {"TORCHELASTIC_RESTART_COUNT", "2"},
                 {"TORCHELASTIC_USE_AGENT_STORE", "True"}});
  const RankInfo r = rank_from_environment();
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.world_size, 8);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.master_addr, "node7");
  EXPECT_EQ(r.master_port, 29400);
  EXPECT_EQ(r.restart, 2);
  EXPECT_TRUE(r.agent_store);
  EXPECT_EQ(r.source, "torchrun");
}

TEST(RankSetup, SlurmVariables) {
  const Env env({{"SLURM_PROCID", "5"},
                 {"SLURM_NTASKS", "16"},
                 {"SLURM_LOCALID", "1"},
                 {"SLURM_JOB_NODELIST", "gpu[03-06,09],cpu1"}});
  const RankInfo r = rank_from_environment();
  EXPECT_EQ(r.rank, 5);
  EXPECT_EQ(r.world_size, 16);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.master_addr, "gpu03");
  EXPECT_EQ(r.master_port, 29500);
  EXPECT_EQ(r.source, "slurm");
}

TEST(RankSetup, FirstSlurmHost) {
  EXPECT_EQ(first_slurm_host("node01"), "node01");
  EXPECT_EQ(first_slurm_host("a,b[1-2]"), "a");
  EXPECT_EQ(first_slurm_host("n[7,9]"), "n7");
  EXPECT_EQ(first_slurm_host("rack2-n[010-020]"), "rack2-n010");
  EXPECT_THROW(first_slurm_host("n[1-2"), std::invalid_argument);
}

TEST(RankSetup, BadVariablesNameThemselves) {
  const auto message = [] {
    try {
      rank_from_environment();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  {
    const Env env({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}});
    EXPECT_NE(message().find("MASTER_PORT is not set"), std::string::npos) << message();
  }
  {
    const Env env(
        {{"RANK", "-1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}});
    EXPECT_NE(message().find("RANK='-1'"), std::string::npos) << message();
  }
  {
    const Env env(
        {{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "70000"}});
    EXPECT_NE(message().find("not a TCP port"), std::string::npos) << message();
  }
}

TEST(RankSetup, RankSeedsDifferAndRankZeroIsThePlainRun) {
  EXPECT_EQ(rank_seed(42, 0), 42u);
  std::set<uint64_t> seen;
  for (int rank = 0; rank < 64; ++rank) {
    const uint64_t s = rank_seed(42, rank);
    EXPECT_LE(s, 0x7FFFFFFFFFFFFFFFull);
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_NE(rank_seed(42, 1), rank_seed(43, 1));
}

}  // namespace
}  // namespace myriad::learner
