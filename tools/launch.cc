// myriad launch: starts K local ranks of a data-parallel job with torchrun's variables, prefixes
// their output, forwards SIGINT/SIGTERM, stops every rank when one fails (naming it and its exit
// status) and optionally restarts them all. POSIX only (plus Linux's parent-death signal).
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tools/commands.h"

extern char** environ;

namespace myriad::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct LaunchOptions {
  int nproc_per_node = 1, nnodes = 1, node_rank = 0, max_restarts = 0;
  std::string master;  // HOST:PORT; default 127.0.0.1 and a free port (one node only)
  double grace_seconds = 10, timeout_seconds = 0;
  std::vector<std::string> command;
  std::vector<std::string> subcommands;  // the names `myriad` answers to, filled at parse time
};

// The first signal is forwarded and the job stopped; a second one kills every rank at once.
volatile std::sig_atomic_t g_signal = 0, g_signals = 0;
void on_signal(int s) {
  g_signal = s;
  g_signals = g_signals + 1;
}

std::string signal_name(int s) {
  const char* name = sigabbrev_np(s);
  return std::to_string(s) + (name ? " (SIG" + std::string(name) + ")" : "");
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
  if (WIFSIGNALED(status)) return "was killed by signal " + signal_name(WTERMSIG(status));
  return "stopped (status " + std::to_string(status) + ")";
}

// The program each rank runs: a `myriad` subcommand runs this binary, a path runs as given,
// any other word is looked up in PATH (here, so that the child only has to call execve).
std::vector<std::string> resolve_command(const LaunchOptions& o) {
  std::vector<std::string> argv = o.command;
  const std::string& word = argv.front();
  for (const std::string& s : o.subcommands)
    if (word == s) {
      argv.insert(argv.begin(), "/proc/self/exe");
      return argv;
    }
  if (word.find('/') != std::string::npos) return argv;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string full = dir + "/" + word;
    if (::access(full.c_str(), X_OK) == 0) {
      argv.front() = full;
      return argv;
    }
    start = end + 1;
  }
  throw CLI::ValidationError("myriad launch: '" + word +
                             "' is neither a myriad subcommand nor a program in PATH");
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

// Writes every complete line of `chunk` (after what `tail` holds) prefixed; keeps the rest. A
// line longer than 64 KiB is cut rather than held without bound.
void relay(const std::string& prefix, std::string& tail, const char* chunk, size_t n,
           std::ostream& to, bool flush_all) {
  tail.append(chunk, n);
  size_t start = 0, nl;
  while ((nl = tail.find('\n', start)) != std::string::npos) {
    to << prefix << tail.substr(start, nl - start + 1);
    start = nl + 1;
  }
  tail.erase(0, start);
  if ((flush_all || tail.size() > 65536) && !tail.empty()) {
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

// Reaps ranks that ended; returns the index of the first one (in rank order) that failed, or -1.
int reap(std::vector<Rank>& ranks) {
  int failed = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    Rank& r = ranks[i];
    if (!r.running) continue;
    int status = 0;
    if (::waitpid(r.pid, &status, WNOHANG) == r.pid) {
      r.running = false;
      r.status = status;
      if (failed < 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        failed = static_cast<int>(i);
    }
  }
  return failed;
}

bool any_running(const std::vector<Rank>& ranks) {
  for (const Rank& r : ranks)
    if (r.running) return true;
  return false;
}

void signal_all(const std::vector<Rank>& ranks, int sig) {
  for (const Rank& r : ranks)
    if (r.running) ::kill(r.pid, sig);
}

// Sends `sig` to every running rank, then SIGKILL after the grace period (or at once on a
// second signal to launch); drains their output and closes the pipes.
void stop_all(std::vector<Rank>& ranks, int sig, double grace_seconds) {
  signal_all(ranks, sig);
  const int signals = g_signals;
  const auto deadline = Clock::now() + std::chrono::duration<double>(grace_seconds);
  while (any_running(ranks) && Clock::now() < deadline && g_signals == signals) {
    pump(ranks, 50);
    reap(ranks);
  }
  signal_all(ranks, SIGKILL);
  while (any_running(ranks)) {
    pump(ranks, 50);
    reap(ranks);
  }
  // What the ranks wrote before they ended; a pipe a rank's own child still holds is let go.
  for (int k = 0; k < 20; ++k) pump(ranks, 0);
  for (Rank& r : ranks) {
    for (int* fd : {&r.out, &r.err})
      if (*fd >= 0) {
        ::close(*fd);
        *fd = -1;
      }
  }
}

// Starts the ranks of this node. Everything the child needs is built before fork(), so that
// between fork and exec it only calls async-signal-safe functions.
std::vector<Rank> start_ranks(const LaunchOptions& o, const std::vector<std::string>& argv,
                              const std::string& addr, int port, int restart) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> ours = {"RANK",
                                         "WORLD_SIZE",
                                         "LOCAL_RANK",
                                         "LOCAL_WORLD_SIZE",
                                         "GROUP_RANK",
                                         "MASTER_ADDR",
                                         "MASTER_PORT",
                                         "MYRIAD_RESTART_COUNT",
                                         "TORCHELASTIC_RESTART_COUNT"};
  std::vector<std::string> inherited;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    bool replaced = false;
    for (const std::string& k : ours) replaced |= var.rfind(k + "=", 0) == 0;
    if (!replaced) inherited.push_back(var);
  }
  // The node's cores shared among its ranks, as torchrun does (it gives each 1): a rank's env
  // loop and fused learner math use OMP_NUM_THREADS when run.threads is 0. One that is set
  // already is kept.
  bool omp_set = false;
  for (const std::string& var : inherited) omp_set |= var.rfind("OMP_NUM_THREADS=", 0) == 0;
  if (!omp_set) {
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    const long share = std::max(1L, (cores > 0 ? cores : 1) / o.nproc_per_node);
    inherited.push_back("OMP_NUM_THREADS=" + std::to_string(share));
  }
  const std::string exec_failed = "myriad launch: cannot run " + argv.front() + "\n";
  const pid_t parent = ::getpid();

  // A signal to launch between fork and exec is handled by launch alone.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &block, &old);
  std::vector<Rank> ranks;
  for (int local = 0; local < o.nproc_per_node; ++local) {
    Rank r;
    r.rank = o.node_rank * o.nproc_per_node + local;
    const std::vector<std::string> values = {
        std::to_string(r.rank),      std::to_string(o.nnodes * o.nproc_per_node),
        std::to_string(local),       std::to_string(o.nproc_per_node),
        std::to_string(o.node_rank), addr,
        std::to_string(port),        std::to_string(restart),
        std::to_string(restart)};
    std::vector<std::string> env = inherited;
    for (size_t k = 0; k < ours.size(); ++k) env.push_back(ours[k] + "=" + values[k]);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);

    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("myriad launch: pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0)
      throw std::runtime_error(std::string("myriad launch: fork: ") + std::strerror(errno));
    if (pid == 0) {
#ifdef __linux__
      // A rank never outlives its launch (killed with SIGKILL, say) to hold a GPU or a port.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
#endif
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::sigprocmask(SIG_SETMASK, &old, nullptr);
      ::execve(args[0], args.data(), envp.data());
      const ssize_t written = ::write(2, exec_failed.data(), exec_failed.size());
      (void)written;
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
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
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
  const std::vector<std::string> argv = resolve_command(o);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  std::optional<Clock::time_point> deadline;
  if (o.timeout_seconds > 0)
    deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                  std::chrono::duration<double>(o.timeout_seconds));
  for (int restart = 0;; ++restart) {
    if (own_port) port = free_port();
    std::vector<Rank> ranks = start_ranks(o, argv, addr, port, restart);
    int failed = -1;
    bool timed_out = false;
    while (any_running(ranks) && failed < 0 && !g_signal) {
      pump(ranks, 100);
      failed = reap(ranks);
      if (failed < 0 && deadline && Clock::now() >= *deadline) {
        timed_out = any_running(ranks);
        if (timed_out) break;
      }
    }
    if (g_signal) {
      const int sig = g_signal;
      std::cerr << "myriad launch: got signal " << signal_name(sig)
                << ", forwarding it to every rank" << std::endl;
      stop_all(ranks, sig, o.grace_seconds);
      return 1;
    }
    if (timed_out) {
      std::cerr << "myriad launch: the job ran past --timeout-seconds " << o.timeout_seconds
                << "; stopping every rank" << std::endl;
      stop_all(ranks, SIGTERM, o.grace_seconds);
      return 1;
    }
    if (failed < 0) {
      stop_all(ranks, SIGTERM, o.grace_seconds);  // drains the last output; every rank has ended
      return 0;
    }
    const Rank& bad = ranks[failed];
    std::cerr << "myriad launch: rank " << bad.rank << " (pid " << bad.pid << ") "
              << describe_status(bad.status) << "; stopping the others" << std::endl;
    stop_all(ranks, SIGTERM, o.grace_seconds);
    if (restart >= o.max_restarts) {
      std::cerr << "myriad launch: the job failed" << std::endl;
      return 1;
    }
    std::cerr << "myriad launch: restarting all ranks (restart " << restart + 1 << " of "
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
  cmd->add_option("--timeout-seconds", o->timeout_seconds,
                  "Stop every rank and exit 1 when the whole job (restarts included) has run "
                  "this long; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("command", o->command,
                  "The command after `--` (a myriad subcommand or a program)")
      ->required();
  cmd->callback([o, &app] {
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      o->subcommands.push_back(sub->get_name());
    std::exit(run_launch(*o));
  });
}

int launch_usage_exit_code(const CLI::App& app, int code) {
  return code != 0 && app.get_subcommand("launch")->parsed() ? 2 : code;
}

}  // namespace myriad::tools
