// A fresh temporary directory per test, removed afterwards.
//
// Removal goes through `rm -rf`, not std::filesystem::remove_all: libtorch.so exports its own
// copy of that symbol, and calls from a binary linked to it resolve there and crash.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <string>

namespace myriad::testing_util {

class TempDir {
 public:
  explicit TempDir(const std::string& name) {
    std::string templ = "/tmp/myriad_" + name + "_XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) std::abort();
    path_ = templ;
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace myriad::testing_util
