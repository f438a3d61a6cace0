// myriad launch: starts K local ranks of a data-parallel job with torchrun's variables, prefixes
// their output, forwards SIGINT/SIGTERM, stops every rank when one fails (naming it and its exit
// status) and optionally restarts them all. POSIX only.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tools/commands.h"

namespace myriad::tools {
namespace {

struct LaunchOptions {
  int nproc_per_node = 1, nnodes = 1, node_rank = 0, max_restarts = 0;
  std::string master;  // HOST:PORT; default 127.0.0.1 and a free port (one node only)
  double grace_seconds = 10;
  std::vector<std::string> command;
};

volatile std::sig_atomic_t g_signal = 0;
void on_signal(int s) { g_signal = s; }

// The names `myriad` itself answers to: `-- train CONFIG` runs this binary's train.
bool is_subcommand(const std::string& word) {
  for (const char* s : {"train", "eval", "bench", "view", "physics-check", "physics-bench"})
    if (word == s) return true;
  return false;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error(std::string("myriad launch: cannot pick a free port: ") +
                             std::strerror(errno));
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    const char* name = sigabbrev_np(s);
    return "was killed by signal " + std::to_string(s) +
           (name ? " (SIG" + std::string(name) + ")" : "");
  }
  return "stopped (status " + std::to_string(status) + ")";
}

// One rank: its process and the unfinished tails of its two output streams.
struct Rank {
  int rank = 0;
  pid_t pid = -1;
  int out = -1, err = -1;
  std::string out_tail, err_tail;
  bool running = false;
  int status = 0;
};

// Writes every complete line of `chunk` (after what `tail` holds) prefixed; keeps the rest.
void relay(const std::string& prefix, std::string& tail, const char* chunk, size_t n,
           std::ostream& to, bool flush_all) {
  tail.append(chunk, n);
  size_t start = 0, nl;
  while ((nl = tail.find('\n', start)) != std::string::npos) {
    to << prefix << tail.substr(start, nl - start + 1);
    start = nl + 1;
  }
  tail.erase(0, start);
  if (flush_all && !tail.empty()) {
    to << prefix << tail << "\n";
    tail.clear();
  }
  to.flush();
}

// Reads what is ready on every open pipe (waiting up to timeout_ms); closes pipes at EOF.
void pump(std::vector<Rank>& ranks, int timeout_ms) {
  std::vector<pollfd> fds;
  for (const Rank& r : ranks) {
    if (r.out >= 0) fds.push_back({r.out, POLLIN, 0});
    if (r.err >= 0) fds.push_back({r.err, POLLIN, 0});
  }
  if (fds.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
    return;
  }
  if (::poll(fds.data(), fds.size(), timeout_ms) <= 0) return;
  char buf[65536];
  for (const pollfd& p : fds) {
    if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
    for (Rank& r : ranks) {
      const bool is_out = p.fd == r.out, is_err = p.fd == r.err;
      if (!is_out && !is_err) continue;
      const ssize_t n = ::read(p.fd, buf, sizeof buf);
      const std::string prefix = "[rank " + std::to_string(r.rank) + "] ";
      std::string& tail = is_out ? r.out_tail : r.err_tail;
      std::ostream& to = is_out ? std::cout : std::cerr;
      if (n > 0) {
        relay(prefix, tail, buf, static_cast<size_t>(n), to, false);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        relay(prefix, tail, buf, 0, to, true);
        ::close(p.fd);
        (is_out ? r.out : r.err) = -1;
      }
    }
  }
}

// Reaps ranks that ended; returns the first one (in rank order) that failed, or -1.
int reap(std::vector<Rank>& ranks) {
  int failed = -1;
  for (Rank& r : ranks) {
    if (!r.running) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, WNOHANG) == r.pid) {
      r.running = false;
      r.status = status;
      if (failed < 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) failed = r.rank;
    }
  }
  return failed;
}

bool any_running(const std::vector<Rank>& ranks) {
  for (const Rank& r : ranks)
    if (r.running) return true;
  return false;
}

// SIGTERM to every running rank, then SIGKILL after the grace period; drains their output.
void stop_all(std::vector<Rank>& ranks, double grace_seconds) {
  for (const Rank& r : ranks)
    if (r.running) ::kill(r.pid, SIGTERM);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_seconds);
  while (any_running(ranks) && std::chrono::steady_clock::now() < deadline) {
    pump(ranks, 50);
    reap(ranks);
  }
  for (const Rank& r : ranks)
    if (r.running) ::kill(r.pid, SIGKILL);
  while (any_running(ranks)) {
    pump(ranks, 50);
    reap(ranks);
  }
  for (int k = 0; k < 20; ++k) pump(ranks, 0);
}

std::vector<Rank> start_ranks(const LaunchOptions& o, const std::string& addr, int port,
                              int restart) {
  std::vector<Rank> ranks;
  std::vector<std::string> argv = o.command;
  if (is_subcommand(argv.front())) argv.insert(argv.begin(), "/proc/self/exe");
  for (int local = 0; local < o.nproc_per_node; ++local) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("myriad launch: pipe: ") + std::strerror(errno));
    Rank r;
    r.rank = o.node_rank * o.nproc_per_node + local;
    const pid_t pid = ::fork();
    if (pid < 0)
      throw std::runtime_error(std::string("myriad launch: fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      const auto set = [](const char* k, const std::string& v) { ::setenv(k, v.c_str(), 1); };
      set("RANK", std::to_string(r.rank));
      set("WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node));
      set("LOCAL_RANK", std::to_string(local));
      set("LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node));
      set("GROUP_RANK", std::to_string(o.node_rank));
      set("MASTER_ADDR", addr);
      set("MASTER_PORT", std::to_string(port));
      set("MYRIAD_RESTART_COUNT", std::to_string(restart));
      set("TORCHELASTIC_RESTART_COUNT", std::to_string(restart));
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      std::cerr << "myriad launch: cannot run " << argv.front() << ": " << std::strerror(errno)
                << std::endl;
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    r.pid = pid;
    r.out = out[0];
    r.err = err[0];
    r.running = true;
    ranks.push_back(std::move(r));
  }
  return ranks;
}

int run_launch(const LaunchOptions& o) {
  if (o.command.empty())
    throw CLI::ValidationError("myriad launch: no command after `--` (e.g. -- train CONFIG)");
  if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    throw CLI::ValidationError("--node-rank " + std::to_string(o.node_rank) +
                               " is not in [0, --nnodes=" + std::to_string(o.nnodes) + ")");
  std::string addr = "127.0.0.1";
  int port = 0;
  const bool own_port = o.master.empty();
  if (own_port) {
    if (o.nnodes > 1)
      throw CLI::ValidationError("--master HOST:PORT is required with --nnodes > 1");
  } else {
    const size_t colon = o.master.rfind(':');
    char* end = nullptr;
    const long p =
        colon == std::string::npos ? -1 : std::strtol(o.master.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || colon == 0 || *end != '\0' || p < 1 || p > 65535)
      throw CLI::ValidationError("--master '" + o.master + "' is not HOST:PORT (port 1-65535)");
    addr = o.master.substr(0, colon);
    port = static_cast<int>(p);
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  for (int restart = 0;; ++restart) {
    if (own_port) port = free_port();
    std::vector<Rank> ranks = start_ranks(o, addr, port, restart);
    int failed = -1;
    while (any_running(ranks) && failed < 0 && !g_signal) {
      pump(ranks, 100);
      failed = reap(ranks);
    }
    if (g_signal) {
      std::cerr << "myriad launch: got signal " << g_signal << ", stopping every rank" << std::endl;
      stop_all(ranks, o.grace_seconds);
      return 1;
    }
    if (failed < 0) {
      stop_all(ranks, o.grace_seconds);  // drains the last output; every rank has ended
      return 0;
    }
    const Rank& bad = ranks[failed - o.node_rank * o.nproc_per_node];
    std::cerr << "myriad launch: rank " << bad.rank << " (pid " << bad.pid << ") "
              << describe_status(bad.status) << "; stopping the others" << std::endl;
    stop_all(ranks, o.grace_seconds);
    if (restart >= o.max_restarts) {
      std::cerr << "myriad launch: the job failed" << std::endl;
      return 1;
    }
    std::cerr << "myriad launch: restarting every rank (restart " << restart + 1 << " of "
              << o.max_restarts << ")" << std::endl;
  }
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto o = std::make_shared<LaunchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "launch",
      "Start the local ranks of a data-parallel job: launch [options] -- train CONFIG ...");
  cmd->add_option("--nproc-per-node", o->nproc_per_node, "Ranks on this node")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--nnodes", o->nnodes, "Nodes in the job")->check(CLI::Range(1, 65536));
  cmd->add_option("--node-rank", o->node_rank, "This node's index, 0 .. nnodes-1");
  cmd->add_option("--master", o->master,
                  "HOST:PORT of rank 0's store (default 127.0.0.1 and a free port, one node)");
  cmd->add_option("--max-restarts", o->max_restarts,
                  "Restart every rank this many times after a failure (training resumes from "
                  "its --out folder's last checkpoint)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--grace-seconds", o->grace_seconds,
                  "After SIGTERM, seconds before a rank is killed")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("command", o->command,
                  "The command after `--` (a myriad subcommand or a program)")
      ->required();
  cmd->callback([o] { std::exit(run_launch(*o)); });
}

}  // namespace myriad::tools
