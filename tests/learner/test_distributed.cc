// Rank setup from torchrun's and SLURM's variables, per-rank seeds and devices, and the
// process group of a one-rank job on each backend (Gloo here; NCCL where a GPU answers).
// (Multi-process runs over loopback are in tests/tools/test_distributed.py.)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <set>
#include <thread>

#include "learner/distributed.h"
#include "learner/nccl_backend.h"
#include "myriad/device.h"

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

RankInfo ranks(int rank, int world, int local_rank) {
  RankInfo r;
  r.rank = rank;
  r.world_size = world;
  r.local_rank = local_rank;
  return r;
}

TEST(RankDevice, OneRankKeepsTheConfiguredDevice) {
  for (const char* d : {"cpu", "cuda", "auto", "cuda:3"})
    EXPECT_EQ(rank_device(d, ranks(0, 1, 0), 8), d);
}

TEST(RankDevice, EachRankTakesItsOwnGpu) {
  EXPECT_EQ(rank_device("cuda", ranks(5, 8, 1), 4), "cuda:1");
  EXPECT_EQ(rank_device("auto", ranks(3, 4, 3), 4), "cuda:3");
  // One visible GPU per rank (CUDA_VISIBLE_DEVICES, srun --gpus-per-task=1).
  EXPECT_EQ(rank_device("cuda", ranks(7, 8, 7), 1), "cuda:0");
  // CPU jobs, and a GPU the user pinned, are kept.
  EXPECT_EQ(rank_device("cpu", ranks(1, 2, 1), 4), "cpu");
  EXPECT_EQ(rank_device("auto", ranks(1, 2, 1), 0), "auto");
  EXPECT_EQ(rank_device("cuda:2", ranks(1, 2, 1), 4), "cuda:2");
}

TEST(RankDevice, MoreRanksThanGpusIsRefusedByName) {
  try {
    rank_device("cuda", ranks(6, 8, 2), 2);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 6 (local rank 2)"), std::string::npos) << what;
    EXPECT_NE(what.find("2 CUDA device(s)"), std::string::npos) << what;
  }
}

// A TCP port nothing listens on now (the kernel's pick for port 0).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// A one-rank job's collectives go through the backend (nothing is skipped for world size 1):
// the mean over one rank and the broadcast from it leave every tensor as it was, from any
// device and in any layout, and each call is counted.
void expect_one_rank_collectives(const torch::Device& device, const std::string& backend) {
  RankInfo info = ranks(0, 1, 0);
  info.master_port = free_port();
  Comm comm(info, std::chrono::milliseconds(20000), device);
  EXPECT_EQ(comm.backend(), backend);
  EXPECT_EQ(comm.device(), device);
  std::vector<torch::Device> places{torch::kCPU};
  if (device.is_cuda()) places.push_back(device);
  for (const torch::Device& place : places) {
    SCOPED_TRACE(place.str());
    torch::Tensor f = torch::arange(12, torch::dtype(torch::kFloat32).device(place));
    const torch::Tensor f0 = f.clone();
    comm.all_reduce_mean_(f);
    EXPECT_TRUE(torch::equal(f, f0));
    // Non-contiguous (a transposed view): staged through a contiguous copy and written back.
    torch::Tensor d = torch::rand({3, 4}, torch::dtype(torch::kFloat64).device(place)).t();
    const torch::Tensor d0 = d.clone();
    comm.all_reduce_mean_(d);
    EXPECT_TRUE(torch::equal(d, d0));
    torch::Tensor bytes = torch::randint(0, 255, {37}, torch::dtype(torch::kUInt8).device(place));
    const torch::Tensor bytes0 = bytes.clone();
    comm.broadcast_(bytes);
    EXPECT_TRUE(torch::equal(bytes, bytes0));
    const torch::Tensor gathered = comm.all_gather(bytes);
    EXPECT_TRUE(torch::equal(gathered, bytes0.cpu().unsqueeze(0)));
  }
  // One rank agrees with itself: one digest gathered, nothing more.
  check_ranks_agree(comm, job_settings(TrainConfig{}));
  // Joining the group is the first call.
  EXPECT_EQ(comm.traffic().calls, 1 + 4 * static_cast<int64_t>(places.size()) + 1);
}

TEST(OneRankGroup, GlooOnTheCpu) { expect_one_rank_collectives(torch::kCPU, "gloo"); }

TEST(OneRankGroup, NcclOnTheGpu) {
  if (!nccl_compiled()) GTEST_SKIP() << "this build has no NCCL backend";
  if (cuda_device_count() == 0) GTEST_SKIP() << "no GPU answers";
  expect_one_rank_collectives(torch::Device(torch::kCUDA, 0), "nccl");
}

TEST(RankAgreement, SettingsTextReadsBack) {
  TrainConfig c;
  c.env.options["max_episode_steps"] = 200;
  c.env.xml = "a\nb.xml";  // one line per setting, whatever a string holds
  const Settings s = job_settings(c);
  EXPECT_EQ(parse_settings(settings_text(s)), s);
  const auto find = [&](const std::string& key) {
    for (const auto& [k, v] : s)
      if (k == key) return v;
    return std::string("(missing)");
  };
  EXPECT_EQ(find("ppo.hidden_sizes"), "[64, 64]");
  EXPECT_EQ(find("env.id"), "CartPole-v1");
  EXPECT_EQ(find("env.options"), "{max_episode_steps: 200}");
}

TEST(RankAgreement, RankSpecificSettingsAreLeftOut) {
  TrainConfig a, b;
  b.run.threads = 7;
  b.run.log_every_seconds = 5;
  EXPECT_EQ(job_settings(a), job_settings(b));
  b.run.resume = "/node1/last.pt";
  a.run.resume = "/node0/last.pt";
  EXPECT_EQ(job_settings(a), job_settings(b));  // both resume: the paths may differ per node
  a.run.resume = "";
  EXPECT_EQ(describe_disagreement(job_settings(a), 0, job_settings(b), 1),
            "ranks disagree on run.resume: rank 0 has (unset), rank 1 has (set)");
}

TEST(RankAgreement, TheFirstDifferingSettingIsNamedWithBothValues) {
  TrainConfig a, b;
  EXPECT_EQ(describe_disagreement(job_settings(a), 0, job_settings(b), 1), "");
  b.ppo.hidden_sizes = {32};
  EXPECT_EQ(describe_disagreement(job_settings(a), 0, job_settings(b), 1),
            "ranks disagree on ppo.hidden_sizes: rank 0 has [64, 64], rank 1 has [32]");
  b.env.id = "Acrobot-v1";
  b.ppo.learning_rate = 0.001;
  EXPECT_EQ(describe_disagreement(job_settings(a), 0, job_settings(b), 2),
            "ranks disagree on env.id: rank 0 has CartPole-v1, rank 2 has Acrobot-v1 (and on 2 "
            "more: ppo.learning_rate, ppo.hidden_sizes)");
  // Numbers as their shortest text (YAML writes 3e-4 as 0.00029999999999999997).
  TrainConfig d;
  d.ppo.learning_rate = 0.001;
  EXPECT_EQ(describe_disagreement(job_settings(a), 0, job_settings(d), 1),
            "ranks disagree on ppo.learning_rate: rank 0 has 3e-04, rank 1 has 0.001");
  // A key only one side has (another build's config): named as absent.
  Settings c = job_settings(a);
  c.emplace_back("ppo.new_key", "1");
  EXPECT_EQ(describe_disagreement(job_settings(a), 0, c, 1),
            "ranks disagree on ppo.new_key: rank 0 has (absent), rank 1 has 1");
}

TEST(RankAgreement, EnvNumEnvsIsTheJobsCountSplitOverRanks) {
  TrainConfig c;
  c.env.num_envs = 64;
  c.ppo.num_steps = 32;
  c.ppo.num_minibatches = 2;
  EXPECT_EQ(rank_num_envs(c, 1), 64);
  EXPECT_EQ(rank_num_envs(c, 2), 32);
  EXPECT_EQ(rank_num_envs(c, 64), 1);
  const auto message = [&](int world) {
    try {
      rank_num_envs(c, world);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(3).find("'env.num_envs'"), std::string::npos) << message(3);
  EXPECT_NE(message(3).find("multiple of 3"), std::string::npos) << message(3);
  c.ppo.num_steps = 1;
  c.ppo.num_minibatches = 2;  // 4 samples a rank at 16 ranks: 2 shares of 2; at 32 ranks, of 1
  EXPECT_EQ(rank_num_envs(c, 16), 4);
  EXPECT_NE(message(32).find("'ppo.num_minibatches'"), std::string::npos) << message(32);
}

// Two ranks in two threads of this process: equal settings pass; one differing setting is
// named, with both values, by the same exception on both ranks.
TEST(RankAgreement, TwoRanksCompareTheirSettings) {
  for (const bool same : {true, false}) {
    SCOPED_TRACE(same ? "same" : "different");
    const int port = free_port();
    std::string errors[2];
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r)
      threads.emplace_back([&, r] {
        RankInfo info = ranks(r, 2, r);
        info.master_port = port;
        TrainConfig c;
        if (r == 1 && !same) c.ppo.update_epochs = 9;
        try {
          Comm comm(info, std::chrono::milliseconds(20000));
          check_ranks_agree(comm, job_settings(c));
        } catch (const std::exception& e) {
          errors[r] = e.what();
        }
      });
    for (auto& t : threads) t.join();
    if (same) {
      EXPECT_EQ(errors[0], "");
      EXPECT_EQ(errors[1], "");
      continue;
    }
    const std::string want = "ranks disagree on ppo.update_epochs: rank 0 has 4, rank 1 has 9";
    EXPECT_NE(errors[0].find(want), std::string::npos) << errors[0];
    EXPECT_EQ(errors[0], errors[1]);
  }
}

}  // namespace
}  // namespace myriad::learner
