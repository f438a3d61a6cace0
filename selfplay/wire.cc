#include "selfplay/wire.h"

#include <cstring>
#include <stdexcept>
#include <vector>

namespace myriad::selfplay {
namespace {

class Writer {
 public:
  template <class T>
  void pod(T v) {
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void text(const std::string& s) {
    pod<uint64_t>(s.size());
    out_ += s;
  }
  void tensor(const torch::Tensor& t) {
    const torch::Tensor c = t.to(torch::kCPU).contiguous();
    const uint8_t dtype = c.scalar_type() == torch::kFloat  ? 0
                          : c.scalar_type() == torch::kLong ? 1
                          : c.scalar_type() == torch::kByte ? 2
                                                            : 255;
    if (dtype == 255) throw std::invalid_argument("wire: unsupported tensor dtype");
    pod<uint8_t>(dtype);
    pod<uint8_t>(static_cast<uint8_t>(c.dim()));
    for (int64_t s : c.sizes()) pod<int64_t>(s);
    out_.append(static_cast<const char*>(c.data_ptr()), c.numel() * c.element_size());
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(const std::string& in) : in_(in) {}
  template <class T>
  T pod() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, in_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string text() {
    const uint64_t n = pod<uint64_t>();
    need(n);
    std::string s = in_.substr(at_, n);
    at_ += n;
    return s;
  }
  // Sizes are checked one by one and their product (in bytes) against what the payload still
  // holds before anything is allocated: a header cannot make the reader allocate more than the
  // frame it came in, nor overflow the product.
  torch::Tensor tensor(const char* field) {
    const uint8_t dtype = pod<uint8_t>(), rank = pod<uint8_t>();
    if (dtype > 2 || rank > 4)
      throw std::invalid_argument(std::string("wire: ") + field + ": malformed tensor header");
    const size_t element = dtype == 1 ? 8 : dtype == 0 ? 4 : 1;
    std::vector<int64_t> sizes;
    // span: the product of the non-zero sizes, kept at most the payload's length (no overflow).
    size_t span = 1;
    bool empty = false;
    for (uint8_t k = 0; k < rank; ++k) {
      const int64_t s = pod<int64_t>();
      if (s < 0) throw std::invalid_argument(std::string("wire: ") + field + ": negative size");
      sizes.push_back(s);
      if (s == 0) {
        empty = true;
      } else if (span > in_.size() / static_cast<uint64_t>(s)) {
        throw std::invalid_argument(std::string("wire: ") + field +
                                    ": sizes larger than the message");
      } else {
        span *= static_cast<size_t>(s);
      }
    }
    const size_t bytes = empty ? 0 : span * element;
    if (bytes > in_.size() - at_)
      throw std::invalid_argument(std::string("wire: ") + field +
                                  ": sizes larger than the message");
    const auto type = dtype == 0 ? torch::kFloat : dtype == 1 ? torch::kLong : torch::kByte;
    torch::Tensor t = torch::empty(sizes, torch::TensorOptions(type));
    if (bytes > 0) std::memcpy(t.data_ptr(), in_.data() + at_, bytes);
    at_ += bytes;
    return t;
  }
  void tag(uint32_t expected, const char* what) {
    if (pod<uint32_t>() != expected)
      throw std::invalid_argument(std::string("wire: not a ") + what + " message");
  }
  void end() const {
    if (at_ != in_.size()) throw std::invalid_argument("wire: trailing bytes");
  }

 private:
  void need(size_t n) const {
    if (n > in_.size() - at_) throw std::invalid_argument("wire: truncated message");
  }
  const std::string& in_;
  size_t at_ = 0;
};

}  // namespace

std::string encode(const WeightsMsg& m) {
  Writer w;
  w.pod(kWeightsTag);
  w.pod(m.version);
  w.pod(m.opponent_id);
  w.pod(m.grant);
  w.text(m.config_yaml);
  w.tensor(m.learner);
  w.tensor(m.opponent);
  return w.take();
}

WeightsMsg decode_weights(const std::string& payload) {
  Reader r(payload);
  r.tag(kWeightsTag, "Weights");
  WeightsMsg m;
  m.version = r.pod<int64_t>();
  m.opponent_id = r.pod<int64_t>();
  m.grant = r.pod<int64_t>();
  m.config_yaml = r.text();
  m.learner = r.tensor("learner");
  m.opponent = r.tensor("opponent");
  r.end();
  if (m.learner.dim() != 1 || !m.learner.sizes().equals(m.opponent.sizes()))
    throw std::invalid_argument("wire: Weights of mismatched shapes");
  return m;
}

std::string encode(const ChunkMsg& m) {
  Writer w;
  w.pod(kChunkTag);
  w.pod(m.version);
  w.pod(m.opponent_id);
  for (const torch::Tensor* t : {&m.obs, &m.actions, &m.logprobs, &m.rewards, &m.terminated,
                                 &m.truncated, &m.final_obs, &m.next_obs})
    w.tensor(*t);
  return w.take();
}

ChunkMsg decode_chunk(const std::string& payload) {
  Reader r(payload);
  r.tag(kChunkTag, "Chunk");
  ChunkMsg m;
  m.version = r.pod<int64_t>();
  m.opponent_id = r.pod<int64_t>();
  m.obs = r.tensor("obs");
  m.actions = r.tensor("actions");
  m.logprobs = r.tensor("logprobs");
  m.rewards = r.tensor("rewards");
  m.terminated = r.tensor("terminated");
  m.truncated = r.tensor("truncated");
  m.final_obs = r.tensor("final_obs");
  m.next_obs = r.tensor("next_obs");
  r.end();
  // Every [T, B] field agrees with obs [T, B, D]; final_obs is obs-shaped; next_obs [B, D].
  const auto bad = [](const char* field, const std::string& why) {
    return std::invalid_argument(std::string("wire: Chunk field '") + field + "': " + why);
  };
  if (m.obs.dim() != 3) throw bad("obs", "rank " + std::to_string(m.obs.dim()) + ", not 3");
  const auto tb = m.obs.sizes().slice(0, 2);
  if (!m.final_obs.sizes().equals(m.obs.sizes())) throw bad("final_obs", "not obs's shape");
  if (m.next_obs.dim() != 2 || m.next_obs.size(0) != m.obs.size(1) ||
      m.next_obs.size(1) != m.obs.size(2))
    throw bad("next_obs", "not [B, D] of obs");
  if (m.actions.dim() < 2 || !m.actions.sizes().slice(0, 2).equals(tb))
    throw bad("actions", "not [T, B, ...] of obs");
  const std::pair<const char*, const torch::Tensor*> flat[] = {{"logprobs", &m.logprobs},
                                                               {"rewards", &m.rewards},
                                                               {"terminated", &m.terminated},
                                                               {"truncated", &m.truncated}};
  for (const auto& [name, t] : flat)
    if (!t->sizes().equals(tb)) throw bad(name, "not [T, B] of obs");
  return m;
}

std::string encode(const MatchResultMsg& m) {
  Writer w;
  w.pod(kResultTag);
  for (int64_t v : {m.version, m.opponent_id, m.wins, m.losses, m.draws}) w.pod(v);
  return w.take();
}

MatchResultMsg decode_result(const std::string& payload) {
  Reader r(payload);
  r.tag(kResultTag, "MatchResult");
  MatchResultMsg m;
  for (int64_t* v : {&m.version, &m.opponent_id, &m.wins, &m.losses, &m.draws})
    *v = r.pod<int64_t>();
  r.end();
  return m;
}

}  // namespace myriad::selfplay
