// Lane groups: the threads that solve one env together (physics/constraint/newton_group.h).
// A group runs the same code on each of its lanes; work over n items is split with
// group_for(g, n, f) (item i on lane i mod size, then a barrier), and what every lane needs
// (sums in a fixed order, the line search's control flow) each lane computes itself, so the
// result is the same bits whatever the group's size.
//
//   SerialGroup       one lane, no barrier: the CPU's instance (the staged CPU step).
//   InterleavedGroup  G lanes run one after another on one CPU thread (lane G − 1 first), each
//                     over its own items, between barriers: what a warp computes, in an order
//                     that exposes an item that reads another lane's item of the same phase.
//   SubWarpGroup<G>   (CUDA) G consecutive lanes of a warp (G divides 32), __syncwarp over them
//                     between phases; a warp holds 32 / G groups that sync apart (GJK/EPA's
//                     pairs, physics/launch.h).
//   WarpGroup         (CUDA) SubWarpGroup<32>: the 32 lanes of a warp.
#pragma once

#include "myriad/hd.h"

namespace myriad::physics::constraint {

struct SerialGroup {
  MYRIAD_HD static constexpr int size() { return 1; }
  MYRIAD_HD static constexpr int rank() { return 0; }
  MYRIAD_HD void sync() const {}
  template <class F>
  MYRIAD_HD void split(int n, F& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }
};

template <int G>
struct InterleavedGroup {
  static_assert(G >= 1, "a group has a lane");
  static constexpr int size() { return G; }
  static constexpr int rank() { return 0; }  // the lane that writes what one lane writes
  void sync() const {}
  template <class F>
  void split(int n, F& f) const {
    for (int lane = G - 1; lane >= 0; --lane)
      for (int i = lane; i < n; i += G) f(i);
  }
};

#if defined(__CUDACC__)
template <int G>
struct SubWarpGroup {
  static_assert(G >= 1 && G <= 32 && 32 % G == 0, "a sub-warp group divides the warp");
  static constexpr int kLanes = G;
  MYRIAD_HD static constexpr int size() { return G; }
  MYRIAD_HD int rank() const {
#if defined(__CUDA_ARCH__)
    return static_cast<int>(threadIdx.x) & (G - 1);
#else
    return 0;
#endif
  }
  // The group's place in its warp: the first of its lanes.
  MYRIAD_HD int first_lane() const {
#if defined(__CUDA_ARCH__)
    return static_cast<int>(threadIdx.x) & 31 & ~(G - 1);
#else
    return 0;
#endif
  }
  MYRIAD_HD void sync() const {
#if defined(__CUDA_ARCH__)
    __syncwarp(G == 32 ? 0xffffffffu : ((1u << G) - 1u) << first_lane());
#endif
  }
  template <class F>
  MYRIAD_HD void split(int n, F& f) const {
    for (int i = rank(); i < n; i += G) f(i);
  }
};

using WarpGroup = SubWarpGroup<32>;
#endif

// f(i) for i in [0, n), split over g's lanes; returns after a barrier, so that every lane then
// reads what any lane wrote.
template <class G, class F>
MYRIAD_HD void group_for(const G& g, int n, F&& f) {
  g.split(n, f);
  g.sync();
}

// True on the one lane that writes what the group computed redundantly (a value every lane
// holds); the caller syncs before another lane reads it.
template <class G>
MYRIAD_HD bool group_leader(const G& g) {
  return g.rank() == 0;
}

}  // namespace myriad::physics::constraint
