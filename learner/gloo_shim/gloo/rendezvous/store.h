#pragma once
// Stand-in for gloo's rendezvous store interface: ProcessGroupGloo.hpp defines an inline
// subclass (GlooStore) of it. This TU never constructs a GlooStore (libtorch does), so only the
// declarations matter; GLOO_STORE_HAS_STORE_V2 stays undefined, so the header's v2 overrides
// (multi_get, ...) are not declared here.
#include <chrono>
#include <string>
#include <vector>
namespace gloo {
namespace rendezvous {
class Store {
 public:
  virtual ~Store();
  virtual void set(const std::string& key, const std::vector<char>& data) = 0;
  virtual std::vector<char> get(const std::string& key) = 0;
  virtual void wait(const std::vector<std::string>& keys) = 0;
  virtual void wait(const std::vector<std::string>& keys,
                    const std::chrono::milliseconds& timeout) = 0;
};
}  // namespace rendezvous
}  // namespace gloo
