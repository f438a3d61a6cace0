// Smallest c10d program: TCPStore rendezvous, Gloo backend, broadcast, all-reduce (tensor and
// double scalar), barrier; timings; optional fault injection (SPIKE_FAULT=kill|stop on rank
// SPIKE_FAULT_RANK before the timed loop) to see whether the survivors' collectives fail.
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "learner/gloo_backend.h"
#ifdef SPIKE_HAVE_NCCL
#include "nccl_backend.hpp"
#endif

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}
static std::string env(const char* k, const char* def) {
  const char* v = std::getenv(k);
  return v && *v ? v : def;
}

static int run() {
  const int rank = std::stoi(env("RANK", "0"));
  const int world = std::stoi(env("WORLD_SIZE", "1"));
  const std::string addr = env("MASTER_ADDR", "127.0.0.1");
  const int port = std::stoi(env("MASTER_PORT", "29500"));
  const auto timeout = std::chrono::milliseconds(std::stoi(env("SPIKE_TIMEOUT_MS", "10000")));
  const int n = std::stoi(env("SPIKE_NUMEL", "10000"));
  const int iters = std::stoi(env("SPIKE_ITERS", "1000"));
  const std::string fault = env("SPIKE_FAULT", "");
  const int fault_rank = std::stoi(env("SPIKE_FAULT_RANK", "1"));

  auto t0 = Clock::now();
  c10d::TCPStoreOptions so;
  so.port = static_cast<uint16_t>(port);
  // Under torchrun the elastic agent already hosts the store at MASTER_ADDR:MASTER_PORT and says
  // so with TORCHELASTIC_USE_AGENT_STORE=True; then every rank is a client.
  const bool agent_store = env("TORCHELASTIC_USE_AGENT_STORE", "") == "True";
  const std::string restart = env("TORCHELASTIC_RESTART_COUNT", "0");
  so.isServer = (rank == 0) && !agent_store;
  so.numWorkers = world;
  so.waitWorkers = true;
  so.timeout = timeout;
  auto tcp = c10::make_intrusive<c10d::TCPStore>(addr, so);
  double t_store = ms_since(t0);
  // A prefix per group keeps keys apart if a later restart reuses the store.
  // The agent's store outlives restarts: a prefix per restart keeps the old keys apart.
  auto store = c10::make_intrusive<c10d::PrefixStore>("myriad/" + restart, tcp);
  const std::string backend = env("SPIKE_BACKEND", "gloo");
  const int local_rank = std::stoi(env("LOCAL_RANK", std::to_string(rank).c_str()));
  c10::intrusive_ptr<c10d::Backend> pg;
  torch::Device dev(torch::kCPU);
  if (backend == "nccl") {
#ifdef SPIKE_HAVE_NCCL
    dev = torch::Device(torch::kCUDA, local_rank);
    pg = spike::make_nccl_backend(store, rank, world, timeout);
#else
    std::fprintf(stderr, "built without NCCL\n");
    return 2;
#endif
  } else {
    pg = myriad::learner::make_gloo_backend(store, rank, world, timeout);
  }
  double t_pg = ms_since(t0);
  std::printf("[rank %d/%d] backend=%s store %.1f ms, store+gloo rendezvous %.1f ms\n", rank, world,
              pg->getBackendName().c_str(), t_store, t_pg);

  try {
    // 1. broadcast parameters from rank 0.
    std::vector<at::Tensor> b{rank == 0
                                  ? torch::arange(8, torch::dtype(torch::kFloat32).device(dev))
                                  : torch::zeros({8}, torch::dtype(torch::kFloat32).device(dev))};
    c10d::BroadcastOptions bo;
    bo.rootRank = 0;
    pg->broadcast(b, bo)->wait();
    std::printf("[rank %d] broadcast -> sum %.1f (expect 28)\n", rank, b[0].sum().item<float>());

    // 2. flat float all-reduce (sum), then average.
    std::vector<at::Tensor> g{
        torch::full({n}, float(rank + 1), torch::TensorOptions().device(dev))};
    c10d::AllreduceOptions ao;
    ao.reduceOp = c10d::ReduceOp::SUM;
    pg->allreduce(g, ao)->wait();
    std::printf("[rank %d] allreduce float[%d] -> g[0]=%.1f (expect %.1f)\n", rank, n,
                g[0][0].item<float>(), world * (world + 1) / 2.0);

    // 3. double scalar (e.g. KL) all-reduce.
    std::vector<at::Tensor> kl{
        torch::tensor({0.01 * (rank + 1)}, torch::dtype(torch::kFloat64).device(dev))};
    pg->allreduce(kl, ao)->wait();
    std::printf("[rank %d] allreduce double -> %.6f\n", rank, kl[0].item<double>());

    pg->barrier()->wait();

    // 3b. bitwise agreement: a seeded random gradient, all-reduced; every rank prints the same
    // checksum of the raw bits (and the same one on every run with the same world size).
    torch::manual_seed(1000 + rank);
    std::vector<at::Tensor> r{torch::randn({n}).to(dev)};
    pg->allreduce(r, ao)->wait();
    auto bits = r[0].cpu().view(torch::kInt32).to(torch::kInt64);
    auto w = torch::arange(n, torch::kInt64) % 1000003;
    std::printf("[rank %d] bit checksum of all-reduced randn: %lld\n", rank,
                static_cast<long long>((bits * w).sum().item<int64_t>()));

    // 3c. RunningMeanStd merge: every rank gathers every rank's (count, mean, M2) with one flat
    // all-gather and folds them in rank order with Chan's update, so every rank holds the same
    // statistics, equal to those of the concatenated data.
    {
      const int64_t D = 3;
      torch::manual_seed(7);  // the same "all data" on every rank; each takes its own rows
      auto all_x = torch::randn({world * 50 + world * (world - 1) / 2, D},
                                torch::TensorOptions().dtype(torch::kFloat64).device(dev)) *
                       3 +
                   5;
      const int64_t begin = rank * 50 + rank * (rank - 1) / 2, rows = 50 + rank;  // unequal shares
      auto x = all_x.slice(0, begin, begin + rows);
      auto mine = torch::cat({torch::full({1}, double(rows), x.options()), x.mean(0),
                              (x - x.mean(0)).pow(2).sum(0)});  // [1 + 2D]
      auto gathered = torch::empty({world * (1 + 2 * D)}, mine.options());
      pg->_allgather_base(gathered, mine)->wait();
      auto per = gathered.view({world, 1 + 2 * D}).cpu();
      double n = 0;
      auto mean = torch::zeros({D}, torch::kFloat64), m2 = torch::zeros({D}, torch::kFloat64);
      for (int r = 0; r < world; ++r) {
        double nb = per[r][0].item<double>();
        auto mb = per[r].slice(0, 1, 1 + D), m2b = per[r].slice(0, 1 + D, 1 + 2 * D);
        auto delta = mb - mean;
        double tot = n + nb;
        mean = mean + delta * (nb / tot);
        m2 = m2 + m2b + delta.pow(2) * (n * nb / tot);
        n = tot;
      }
      auto ref = all_x.cpu();
      double err = std::max((mean - ref.mean(0)).abs().max().item<double>(),
                            (m2 / n - ref.var(0, /*unbiased=*/false)).abs().max().item<double>());
      std::printf("[rank %d] merged RunningMeanStd: count %.0f, max error vs all data %.2e\n", rank,
                  n, err);
    }

    if (!fault.empty() && rank == fault_rank && restart == "0") {
      std::printf("[rank %d] fault injection: %s\n", rank, fault.c_str());
      std::fflush(stdout);
      raise(fault == "stop" ? SIGSTOP : SIGKILL);
    }

    // 4. latency of the PPO-sized all-reduce.
    for (int i = 0; i < 20; ++i) pg->allreduce(g, ao)->wait();
    std::vector<double> lat;
    lat.reserve(iters);
    auto t1 = Clock::now();
    for (int i = 0; i < iters; ++i) {
      auto ti = Clock::now();
      pg->allreduce(g, ao)->wait();
      if (dev.is_cuda()) (void)g[0][0].item<float>();  // NCCL's wait() only orders streams
      lat.push_back(ms_since(ti) * 1e3);
    }
    double per = ms_since(t1) / iters;
    std::sort(lat.begin(), lat.end());
    std::printf(
        "[rank %d] allreduce float[%d]: %.1f us/op mean, p50 %.1f, p90 %.1f, p99 %.1f us over %d "
        "ops\n",
        rank, n, per * 1e3, lat[iters / 2], lat[iters * 9 / 10], lat[iters * 99 / 100], iters);
    pg->barrier()->wait();
  } catch (const std::exception& e) {
    std::printf("[rank %d] collective failed after %.0f ms: %s\n", rank, ms_since(t0),
                std::string(e.what()).substr(0, 400).c_str());
    return 3;
  }
  std::printf("[rank %d] done in %.1f ms\n", rank, ms_since(t0));
  return 0;
}

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::printf("[rank %s] setup failed: %s\n", env("RANK", "0").c_str(),
                std::string(e.what()).substr(0, 400).c_str());
    return 4;
  }
}
