#include "learner/run_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <sstream>
#include <system_error>
#include <vector>

namespace myriad::learner {
namespace fs = std::filesystem;
namespace {

bool is_event_file(const std::string& name) { return name.rfind("events.out.tfevents.", 0) == 0; }

// Plain unlink(2): libtorch exports its own std::filesystem::remove_all, which crashes when
// called from binaries linked to it (see tests/temp_dir.h).
void remove_file(const fs::path& p) {
  if (::unlink(p.c_str()) != 0 && errno != ENOENT)
    throw std::runtime_error("cannot remove " + p.string() +
                             " to overwrite the run: " + std::strerror(errno));
}

// Deletes the files a run writes, nothing else the folder may hold.
void remove_run_files(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "config.yaml" || name == "metrics.csv" || name == "metrics.csv.tmp" ||
        name == "summary.json" || name == "eval.replay" || name == "serve.csv" ||
        is_event_file(name))
      doomed.push_back(e.path());
  }
  for (const auto& e : fs::directory_iterator(dir / "checkpoints", ec)) doomed.push_back(e.path());
  for (const auto& p : doomed) remove_file(p);
  ::rmdir((dir / "checkpoints").c_str());
}

bool inside(const fs::path& file, const fs::path& dir) {
  std::error_code ec;
  const fs::path f = fs::weakly_canonical(fs::absolute(file), ec);
  const fs::path d = fs::weakly_canonical(fs::absolute(dir), ec);
  auto fi = f.begin();
  for (auto di = d.begin(); di != d.end(); ++di, ++fi) {
    if (di->empty()) continue;  // a trailing separator
    if (fi == f.end() || *fi != *di) return false;
  }
  return true;
}

}  // namespace

std::string run_file_in(const std::string& dir) {
  std::error_code ec;
  for (const char* name : {"config.yaml", "metrics.csv", "summary.json", "serve.csv"})
    if (fs::exists(fs::path(dir) / name, ec)) return name;
  if (!fs::is_empty(fs::path(dir) / "checkpoints", ec) && !ec) return "checkpoints/";
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_event_file(e.path().filename().string())) return e.path().filename().string();
  return "";
}

std::string claim_run_dir(const std::string& out, const std::string& stem,
                          const std::string& resume, bool overwrite, const std::string& root) {
  if (out.empty()) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) throw std::runtime_error("cannot create run folder " + root + ": " + ec.message());
    const std::time_t now = std::time(nullptr);
    std::ostringstream name;
    name << (fs::path(root) / stem).string() << "-"
         << std::put_time(std::localtime(&now), "%Y%m%d-%H%M%S");
    const std::string base = name.str();
    // mkdir is atomic: of two runs started in the same second, exactly one gets each name.
    for (int k = 1; k < 10000; ++k) {
      const std::string dir = k == 1 ? base : base + "-" + std::to_string(k);
      if (::mkdir(dir.c_str(), 0777) == 0) return dir;
      if (errno != EEXIST)
        throw std::runtime_error("cannot create run folder " + dir + ": " + std::strerror(errno));
    }
    throw std::runtime_error("cannot find a free run folder name " + base + "-<k>");
  }
  const std::string found = run_file_in(out);
  if (!found.empty()) {
    const bool in_place = !resume.empty() && inside(resume, out);
    if (in_place && overwrite)
      throw std::invalid_argument("--overwrite with --resume " + resume +
                                  " would delete the run being resumed in " + out +
                                  "; give one or the other");
    if (!in_place) {
      if (!overwrite)
        throw RunDirExists("run folder '" + out + "' already holds a run (it has " + found +
                           "); refusing to overwrite it. Choose a new --out, resume it in place "
                           "with --resume " +
                           (fs::path(out) / "checkpoints/last.pt").string() +
                           ", or replace it with --overwrite (Python: overwrite=True)");
      remove_run_files(out);
    }
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error("cannot create run folder " + out + ": " + ec.message());
  return out;
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the file releases the flock
}
RunDirLock::RunDirLock(RunDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
RunDirLock& RunDirLock::operator=(RunDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

RunDirLock lock_run_dir(const std::string& dir) {
  const std::string path = (fs::path(dir) / ".lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0)
    throw std::runtime_error("cannot create the run folder's lock file " + path + ": " +
                             std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw RunDirExists("run folder '" + dir +
                         "' is in use by another running process (it holds " + path +
                         "); two runs never write one folder. Choose another --out");
    throw std::runtime_error("cannot lock " + path + ": " + std::strerror(err));
  }
  RunDirLock lock;
  lock.fd_ = fd;
  return lock;
}

std::string restart_resume_override(int restart, const std::string& out, bool resume_given) {
  if (restart <= 0 || resume_given || out.empty()) return "";
  const auto last = std::filesystem::path(out) / "checkpoints" / "last.pt";
  return std::filesystem::exists(last) ? "run.resume=" + last.string() : "";
}

std::string claim_job_run_dir(int rank, const std::string& out, const std::string& stem,
                              const std::string& resume, bool overwrite) {
  return rank != 0 ? "" : claim_run_dir(out, stem, resume, overwrite);
}

}  // namespace myriad::learner
