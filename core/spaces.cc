#include "myriad/spaces.h"

#include <cstdint>
#include <sstream>
#include <stdexcept>

namespace myriad {

Space Space::box(std::vector<float> low, std::vector<float> high) {
  if (low.size() != high.size()) throw std::invalid_argument("Box: low and high differ in size");
  Space s;
  s.kind = Kind::kBox;
  s.shape = {static_cast<int64_t>(low.size())};
  s.dtype = DType::kFloat32;
  s.low = std::move(low);
  s.high = std::move(high);
  return s;
}

Space Space::discrete(int64_t n) {
  Space s;
  s.kind = Kind::kDiscrete;
  s.dtype = DType::kInt32;
  s.n = n;
  return s;
}

int64_t Space::flat_size() const {
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  return size;
}

std::string Space::describe() const {
  std::ostringstream out;
  if (is_discrete()) {
    out << "Discrete(" << n << ")";
    return out.str();
  }
  out << "Box(shape=(";
  for (size_t k = 0; k < shape.size(); ++k) out << (k ? ", " : "") << shape[k];
  out << (shape.size() == 1 ? ",)" : ")") << ", float32)";
  return out.str();
}

}  // namespace myriad
