// Fallback evaluation: Debian's libgloo (libgloo-dev) used directly, without c10d.
// Built twice: gloo_direct (libgloo only, gloo's FileStore rendezvous in SPIKE_STORE_DIR) and
// gloo_direct_torch (also links libtorch and rendezvous through c10d::TCPStore) to see whether
// libtorch_cpu's bundled gloo and Debian's libgloo can live in one process.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#ifdef SPIKE_WITH_TORCH
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
// gloo's store interface on top of c10d's TCPStore.
class TcpStoreAdapter : public gloo::rendezvous::Store {
 public:
  explicit TcpStoreAdapter(c10::intrusive_ptr<c10d::Store> s) : s_(std::move(s)) {}
  void set(const std::string& k, const std::vector<char>& v) override {
    s_->set(k, std::vector<uint8_t>(v.begin(), v.end()));
  }
  std::vector<char> get(const std::string& k) override {
    auto v = s_->get(k);
    return {v.begin(), v.end()};
  }
  void wait(const std::vector<std::string>& keys) override { s_->wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    s_->wait(keys, t);
  }

 private:
  c10::intrusive_ptr<c10d::Store> s_;
};
#endif

using Clock = std::chrono::steady_clock;
static double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}
static std::string env(const char* k, const char* def) {
  const char* v = std::getenv(k);
  return v && *v ? v : def;
}

int main() {
  const int rank = std::stoi(env("RANK", "0"));
  const int world = std::stoi(env("WORLD_SIZE", "1"));
  const auto timeout = std::chrono::milliseconds(std::stoi(env("SPIKE_TIMEOUT_MS", "10000")));
  const int n = std::stoi(env("SPIKE_NUMEL", "10000"));
  const int iters = std::stoi(env("SPIKE_ITERS", "1000"));
  try {
    auto t0 = Clock::now();
#ifdef SPIKE_WITH_TORCH
    c10d::TCPStoreOptions so;
    so.port = static_cast<uint16_t>(std::stoi(env("MASTER_PORT", "29500")));
    so.isServer = rank == 0;
    so.numWorkers = world;
    so.timeout = timeout;
    auto tcp = c10::make_intrusive<c10d::TCPStore>(env("MASTER_ADDR", "127.0.0.1"), so);
    TcpStoreAdapter base(tcp);
#else
    gloo::rendezvous::FileStore base(env("SPIKE_STORE_DIR", "/tmp/gloo-store"));
#endif
    gloo::rendezvous::PrefixStore store("myriad", base);
    gloo::transport::tcp::attr attr(env("SPIKE_GLOO_HOST", "127.0.0.1").c_str());
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, world);
    ctx->setTimeout(timeout);
    ctx->connectFullMesh(store, dev);
    std::printf("[rank %d/%d] gloo direct rendezvous %.1f ms\n", rank, world, ms_since(t0));

    std::vector<float> p(8, rank == 0 ? 1.f : 0.f);
    gloo::BroadcastOptions bo(ctx);
    bo.setRoot(0);
    bo.setOutput(p.data(), p.size());
    bo.setTimeout(timeout);
    gloo::broadcast(bo);

    std::vector<float> g(n, float(rank + 1));
    auto allreduce = [&] {
      gloo::AllreduceOptions ao(ctx);
      ao.setOutput(g.data(), g.size());
      ao.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      ao.setTimeout(timeout);
      gloo::allreduce(ao);
    };
    allreduce();
    std::printf("[rank %d] broadcast p[0]=%.0f (expect 1), allreduce g[0]=%.0f (expect %d)\n", rank,
                p[0], g[0], world * (world + 1) / 2);
    for (int i = 0; i < 20; ++i) allreduce();
    auto t1 = Clock::now();
    for (int i = 0; i < iters; ++i) allreduce();
    std::printf("[rank %d] gloo direct allreduce float[%d]: %.1f us/op\n", rank, n,
                ms_since(t1) / iters * 1e3);
    gloo::BarrierOptions ba(ctx);
    ba.setTimeout(timeout);
    gloo::barrier(ba);
  } catch (const std::exception& e) {
    std::printf("[rank %d] failed: %s\n", rank, e.what());
    return 3;
  }
  return 0;
}
