// Replay files: a scene plus per-frame arrays for M envs, in the versioned, compressed format
// of docs/replay-format.md. Written by the recorder, read by `myriad view` (to check a file
// before serving it), the tests and, in Python, myriad.load_replay.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad/scene.h"

namespace myriad::replay {

// 1.1 added meshes, 1.2 height fields and plotted series.
constexpr uint16_t kMajorVersion = 1, kMinorVersion = 2;

// A file that is not a replay, is truncated, corrupt or from a newer major version.
class ReplayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Array {
  std::string dtype;  // float32, int32 or uint8
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;  // C order, little-endian, unshuffled
  bool shuffle = true;         // store byte planes (helps zlib with floats)

  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
  int64_t numel() const;
};

struct Replay {
  nlohmann::json header;  // everything but "arrays" and "payload_bytes", which the writer adds
  std::map<std::string, Array> arrays;
};

template <class T>
Array make_array(const std::vector<int64_t>& shape, const std::vector<T>& values);

// The whole file as bytes, and written atomically (a temporary file renamed into place).
std::vector<uint8_t> encode(const Replay& r);
void write_file(const std::string& path, const Replay& r);

// Parses and checks a file; `what` names it in errors.
Replay decode(const std::vector<uint8_t>& bytes, const std::string& what);
Replay read_file(const std::string& path);

// Puts the scene in the header ("scene") and its meshes' vertices and faces in the arrays
// "mesh_vertex" [V, 3] float32 and "mesh_face" [F, 3] int32 (indices into mesh_vertex).
void add_scene(Replay& r, const Scene& s);

}  // namespace myriad::replay
