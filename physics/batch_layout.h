// The batch's layout, defined once: where element k of env i of field f lives, env-major (block
// 1, Data<T>'s [N, size] arrays) or in blocks of W envs (element-major within a block: a CUDA
// warp's 32 threads load element k of their envs as 128 contiguous bytes). BatchView<T, W>
// (physics/batch_view.h) hands the kernels their envs' pointers by it; BlockedData<T> is a host
// batch stored by it, packed from and unpacked into a Data<T>, which the CPU tests step and the
// CUDA batch stages its copies through (physics/cuda_batch.cuh).
//
// In a blocked layout:
// - element k of env i of field f is at ((i / W) * row[f] + k) * W + i % W, but for the fields
//   that stay env-major (stays_per_env: the constraint half's, whose sizes vary per env, and the
//   geoms' poses, which collision reads a thread per (env, pair)), at i * row[f] + k;
// - the solver scratch's row has room past the solver's own for the contiguous copies a blocked
//   env solves on (constraint::solve_copies_size);
// - the envs are padded up to a multiple of W; the padding envs are zero and never launched.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/physics/data.h"
#include "physics/batch_view.h"
#include "physics/constraint/solve.h"

namespace myriad::physics {

struct BatchLayout {
  int block = 1;                      // envs a block; 1: env-major
  int64_t n = 0;                      // envs
  int64_t padded = 0;                 // envs allocated: n rounded up to the block
  int64_t size[kNumDataFields] = {};  // an env's elements of each field (Data<T>'s rows)
  int64_t row[kNumDataFields] = {};   // an env's room for each field (size, or more)
  bool per_env[kNumDataFields] = {};  // kept env-major in a blocked layout

  bool blocked(int f) const { return block > 1 && !per_env[f]; }
  // The field's elements to allocate.
  int64_t elements(int f) const { return padded * row[f]; }
  // Where element k of env i of field f is.
  int64_t index(int f, int64_t i, int64_t k) const {
    return blocked(f) ? ((i / block) * row[f] + k) * block + i % block : i * row[f] + k;
  }
};

// The layout of a batch of n envs of model m in blocks of `block` envs (1: env-major, as Data<T>).
template <class T>
BatchLayout batch_layout(const Model<T>& m, int64_t n, int block) {
  if (block < 1) throw std::invalid_argument("batch_layout: block " + std::to_string(block));
  if (n < 0) throw std::invalid_argument("batch_layout: " + std::to_string(n) + " envs");
  BatchLayout l;
  l.block = block;
  l.n = n;
  l.padded = (n + block - 1) / block * block;
  EnvData<T> probe{};
  int f = 0;
  for_each_field(probe, m, [&](const char* name, T*&, int64_t size) {
    l.size[f] = size;
    l.row[f] = size;
    if (block > 1 && std::string(name) == "solver_scratch")
      l.row[f] += constraint::solve_copies_size(m.nv);
    l.per_env[f] = stays_per_env(name);
    ++f;
  });
  return l;
}

// Field f of every env: env-major rows [n, size[f]] <=> the layout's storage.
template <class T>
void pack_field(const BatchLayout& l, int f, const T* rows, T* out) {
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t k = 0; k < l.size[f]; ++k) out[l.index(f, i, k)] = rows[i * l.size[f] + k];
}
template <class T>
void unpack_field(const BatchLayout& l, int f, const T* in, T* rows) {
  for (int64_t i = 0; i < l.n; ++i)
    for (int64_t k = 0; k < l.size[f]; ++k) rows[i * l.size[f] + k] = in[l.index(f, i, k)];
}

// The kernels' view of storage laid out by l (bases: each field's first element).
template <class T, int Block>
BatchView<T, Block> view_of_layout(const BatchLayout& l, T* const* bases) {
  if (l.block != Block)
    throw std::logic_error("view_of_layout: a layout of " + std::to_string(l.block) +
                           " envs a block viewed as " + std::to_string(Block));
  BatchView<T, Block> v{};
  for (int f = 0; f < kNumDataFields; ++f) {
    v.base[f] = bases[f];
    v.size[f] = l.row[f];
  }
  return v;
}

// A host batch stored in a blocked layout: the CPU's way to run and test the kernels a CUDA
// batch runs (the same views, the same code).
template <class T>
class BlockedData {
 public:
  BlockedData(const Model<T>& m, int64_t n, int block) : layout_(batch_layout(m, n, block)) {
    for (int f = 0; f < kNumDataFields; ++f)
      arrays_.emplace_back(static_cast<size_t>(layout_.elements(f)), T(0));
  }
  const BatchLayout& layout() const { return layout_; }

  // Every field of d (n envs, env-major) in, or back out.
  void pack(const Model<T>& m, Data<T>& d) {
    check(d);
    for_fields(m, d, [&](int f, T* rows) { pack_field(layout_, f, rows, arrays_[f].data()); });
  }
  void unpack(const Model<T>& m, Data<T>& d) const {
    check(d);
    for_fields(m, d, [&](int f, T* rows) { unpack_field(layout_, f, arrays_[f].data(), rows); });
  }

  template <int Block>
  BatchView<T, Block> view() {
    T* bases[kNumDataFields];
    for (int f = 0; f < kNumDataFields; ++f) bases[f] = arrays_[f].data();
    return view_of_layout<T, Block>(layout_, bases);
  }

 private:
  void check(const Data<T>& d) const {
    if (d.num_envs() != layout_.n)
      throw std::invalid_argument("BlockedData: a batch of " + std::to_string(d.num_envs()) +
                                  " envs, the layout holds " + std::to_string(layout_.n));
  }
  template <class F>
  static void for_fields(const Model<T>& m, Data<T>& d, F&& f) {
    EnvData<T> rows = d.env(m, 0);
    int k = 0;
    for_each_field(rows, m, [&](const char*, T*& p, int64_t) { f(k++, p); });
  }

  BatchLayout layout_;
  std::vector<std::vector<T>> arrays_;
};

}  // namespace myriad::physics
