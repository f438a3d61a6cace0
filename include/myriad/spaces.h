// Observation and action spaces: Box (bounded float tensor) and Discrete (integer 0..n-1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace myriad {

enum class DType { kFloat32, kInt32 };

struct Space {
  enum class Kind { kBox, kDiscrete };
  Kind kind = Kind::kBox;
  std::vector<int64_t> shape;  // per-env shape; Discrete has shape {}
  DType dtype = DType::kFloat32;
  std::vector<float> low, high;  // Box only: one entry per element (flattened shape)
  int64_t n = 0;                 // Discrete only: number of actions

  static Space box(std::vector<float> low, std::vector<float> high);
  static Space discrete(int64_t n);

  bool is_discrete() const { return kind == Kind::kDiscrete; }
  // Number of scalars per env (1 for Discrete).
  int64_t flat_size() const;
  std::string describe() const;  // e.g. "Box(-2.0, 2.0, (1,), float32)" or "Discrete(2)"
};

}  // namespace myriad
