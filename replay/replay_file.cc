// Encoding and decoding of replay files (docs/replay-format.md).
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "myriad/replay.h"

namespace myriad::replay {
namespace {

constexpr char kMagic[8] = {'M', 'Y', 'R', 'I', 'A', 'D', 'R', 'P'};
constexpr size_t kPrefix = 24;  // magic, versions, header and payload lengths

size_t dtype_size(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "uint8") return 1;
  return 0;
}

template <class T>
void put(std::vector<uint8_t>& out, T value) {
  uint8_t b[sizeof(T)];
  std::memcpy(b, &value, sizeof(T));  // little-endian hosts only (x86-64, aarch64)
  out.insert(out.end(), b, b + sizeof(T));
}

template <class T>
T get(const std::vector<uint8_t>& in, size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  return value;
}

// Byte planes: element i's byte k goes to k * n + i.
std::vector<uint8_t> shuffle_bytes(const std::vector<uint8_t>& in, size_t width) {
  const size_t n = in.size() / width;
  std::vector<uint8_t> out(in.size());
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < width; ++k) out[k * n + i] = in[i * width + k];
  return out;
}

std::vector<uint8_t> unshuffle_bytes(const uint8_t* in, size_t size, size_t width) {
  const size_t n = size / width;
  std::vector<uint8_t> out(size);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < width; ++k) out[i * width + k] = in[k * n + i];
  return out;
}

nlohmann::json to_json(const std::array<float, 3>& a) { return {a[0], a[1], a[2]}; }
nlohmann::json to_json(const std::array<float, 4>& a) { return {a[0], a[1], a[2], a[3]}; }

}  // namespace

int64_t Array::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

template <class T>
Array make_array(const std::vector<int64_t>& shape, const std::vector<T>& values) {
  Array a;
  if constexpr (std::is_same_v<T, float>) a.dtype = "float32";
  if constexpr (std::is_same_v<T, int32_t>) a.dtype = "int32";
  if constexpr (std::is_same_v<T, uint8_t>) a.dtype = "uint8";
  a.shape = shape;
  if (a.numel() != static_cast<int64_t>(values.size()))
    throw std::invalid_argument("replay array: shape does not match its values");
  a.bytes.resize(values.size() * sizeof(T));
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}
template Array make_array(const std::vector<int64_t>&, const std::vector<float>&);
template Array make_array(const std::vector<int64_t>&, const std::vector<int32_t>&);
template Array make_array(const std::vector<int64_t>&, const std::vector<uint8_t>&);

std::vector<uint8_t> encode(const Replay& r) {
  nlohmann::json header = r.header;
  header["format"] = "myriad-replay";
  header["version"] = {kMajorVersion, kMinorVersion};
  std::vector<uint8_t> raw;
  nlohmann::json arrays = nlohmann::json::object();
  for (const auto& [name, a] : r.arrays) {
    const size_t width = dtype_size(a.dtype);
    if (width == 0 || a.bytes.size() != static_cast<size_t>(a.numel()) * width)
      throw std::invalid_argument("replay array '" + name + "' is malformed");
    raw.resize((raw.size() + 7) / 8 * 8);  // 8-byte aligned offsets
    arrays[name] = {{"dtype", a.dtype},
                    {"shape", a.shape},
                    {"offset", raw.size()},
                    {"bytes", a.bytes.size()},
                    {"shuffle", a.shuffle && width > 1}};
    const std::vector<uint8_t> stored =
        a.shuffle && width > 1 ? shuffle_bytes(a.bytes, width) : a.bytes;
    raw.insert(raw.end(), stored.begin(), stored.end());
  }
  header["arrays"] = arrays;
  header["payload_bytes"] = raw.size();

  uLongf packed_size = compressBound(raw.size());
  std::vector<uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), raw.size(), 6) != Z_OK)
    throw std::runtime_error("replay: zlib compression failed");
  packed.resize(packed_size);

  const std::string text = header.dump();
  std::vector<uint8_t> out(kMagic, kMagic + 8);
  put<uint16_t>(out, kMajorVersion);
  put<uint16_t>(out, kMinorVersion);
  put<uint32_t>(out, static_cast<uint32_t>(text.size()));
  put<uint64_t>(out, packed.size());
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), packed.begin(), packed.end());
  return out;
}

void write_file(const std::string& path, const Replay& r) {
  const std::vector<uint8_t> bytes = encode(r);
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("replay: cannot write " + tmp);
  }
  std::filesystem::rename(tmp, path);
}

Replay decode(const std::vector<uint8_t>& in, const std::string& what) {
  auto fail = [&](const std::string& why) { throw ReplayError(what + ": " + why); };
  if (in.size() < 8 || std::memcmp(in.data(), kMagic, 8) != 0)
    fail("not a Myriad replay (the file does not start with MYRIADRP)");
  if (in.size() < kPrefix) fail("truncated replay (" + std::to_string(in.size()) + " bytes)");
  const uint16_t major = get<uint16_t>(in, 8), minor = get<uint16_t>(in, 10);
  if (major == 0) fail("unsupported replay format 0." + std::to_string(minor));
  if (major > kMajorVersion)
    fail("replay format " + std::to_string(major) + "." + std::to_string(minor) +
         " is newer than this reader (" + std::to_string(kMajorVersion) + ".x); upgrade Myriad");
  const uint64_t header_size = get<uint32_t>(in, 12), payload_size = get<uint64_t>(in, 16);
  if (in.size() - kPrefix < header_size || in.size() - kPrefix - header_size < payload_size)
    fail("truncated replay: " + std::to_string(in.size()) + " bytes, the header announces " +
         std::to_string(kPrefix + header_size + payload_size));
  const uint64_t expected = kPrefix + header_size + payload_size;
  if (in.size() > expected)
    fail("corrupt replay: " + std::to_string(in.size() - expected) +
         " bytes after the payload (the header announces " + std::to_string(expected) + ")");
  Replay r;
  try {
    r.header = nlohmann::json::parse(in.begin() + kPrefix, in.begin() + kPrefix + header_size);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("corrupt replay header: ") + e.what());
  }
  if (!r.header.is_object() || !r.header.contains("arrays") || !r.header.contains("payload_bytes"))
    fail("corrupt replay header: it lacks 'arrays' or 'payload_bytes'");
  if (r.header.contains("format") && r.header["format"] != "myriad-replay")
    fail("not a Myriad replay (header format " + r.header["format"].dump() + ")");
  uLongf raw_size = 0;
  std::vector<uint8_t> raw;
  try {
    raw_size = r.header.at("payload_bytes").get<uint64_t>();
    // zlib expands at most ~1032:1, so a larger claim is corrupt (and must not be allocated).
    if (raw_size > payload_size * 1032 + 64)
      fail("corrupt replay header: payload_bytes " + std::to_string(raw_size) +
           " cannot come from " + std::to_string(payload_size) + " compressed bytes");
    raw.resize(raw_size);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("corrupt replay header: ") + e.what());
  }
  const uint8_t* packed = in.data() + kPrefix + header_size;
  uLong consumed = payload_size;
  const int status = uncompress2(raw.data(), &raw_size, packed, &consumed);
  if (status != Z_OK || raw_size != raw.size())
    fail("corrupt replay payload (zlib: " + std::string(zError(status)) + ")");
  if (consumed != payload_size)
    fail("corrupt replay payload: the zlib stream ends " + std::to_string(payload_size - consumed) +
         " bytes before the payload does");
  try {
    for (const auto& [name, spec] : r.header.at("arrays").items()) {
      Array a;
      a.dtype = spec.at("dtype").get<std::string>();
      a.shape = spec.at("shape").get<std::vector<int64_t>>();
      a.shuffle = spec.value("shuffle", false);
      const uint64_t offset = spec.at("offset").get<uint64_t>(),
                     bytes = spec.at("bytes").get<uint64_t>();
      const size_t width = dtype_size(a.dtype);
      if (width == 0) fail("array '" + name + "' has unknown dtype '" + a.dtype + "'");
      // Element count with overflow checks: no shape may claim more than the payload holds.
      uint64_t count = 1;
      for (int64_t d : a.shape) {
        if (d < 0) fail("corrupt replay: array '" + name + "' has a negative dimension");
        if (d != 0 && count > raw.size() / static_cast<uint64_t>(d))
          fail("corrupt replay: array '" + name + "' is larger than the payload");
        count *= static_cast<uint64_t>(d);
      }
      if (bytes != count * width || offset > raw.size() || bytes > raw.size() - offset)
        fail("corrupt replay: array '" + name + "' does not fit its shape or the payload");
      a.bytes = a.shuffle
                    ? unshuffle_bytes(raw.data() + offset, bytes, width)
                    : std::vector<uint8_t>(raw.begin() + offset, raw.begin() + offset + bytes);
      r.arrays.emplace(name, std::move(a));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("corrupt replay header: ") + e.what());
  }
  r.header.erase("arrays");
  r.header.erase("payload_bytes");
  return r;
}

Replay read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ReplayError(path + ": cannot open the file");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                   std::istreambuf_iterator<char>());
  return decode(bytes, path);
}

void add_scene(Replay& r, const Scene& s) {
  nlohmann::json geoms = nlohmann::json::array(), lines = nlohmann::json::array();
  for (const SceneGeom& g : s.geoms) {
    geoms.push_back({{"name", g.name},
                     {"type", g.type},
                     {"body", g.body},
                     {"size", to_json(g.size)},
                     {"pos", to_json(g.pos)},
                     {"quat", to_json(g.quat)},
                     {"rgba", to_json(g.rgba)}});
    if (g.type == "mesh") geoms.back()["mesh"] = g.mesh;
  }
  // Meshes: rows of the shared vertex and face arrays; faces index the mesh's own vertices.
  nlohmann::json meshes = nlohmann::json::array();
  std::vector<float> vertices;
  std::vector<int32_t> faces;
  for (const SceneMesh& m : s.meshes) {
    meshes.push_back({{"name", m.name},
                      {"vertex_offset", vertices.size() / 3},
                      {"vertex_count", m.vertices.size() / 3},
                      {"face_offset", faces.size() / 3},
                      {"face_count", m.faces.size() / 3}});
    vertices.insert(vertices.end(), m.vertices.begin(), m.vertices.end());
    faces.insert(faces.end(), m.faces.begin(), m.faces.end());
  }
  for (const SceneLine& l : s.lines) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : l.points) points.push_back(to_json(p));
    lines.push_back({{"body", l.body}, {"points", points}, {"rgba", to_json(l.rgba)}});
  }
  nlohmann::json j = {
      {"bodies", s.bodies},
      {"geoms", geoms},
      {"lines", lines},
      {"camera", {{"target", to_json(s.camera_target)}, {"distance", s.camera_distance}}}};
  j["ground"] = s.ground_z ? nlohmann::json({{"z", *s.ground_z}}) : nlohmann::json();
  if (!s.meshes.empty()) {
    j["meshes"] = meshes;
    r.arrays["mesh_vertex"] = make_array({static_cast<int64_t>(vertices.size() / 3), 3}, vertices);
    r.arrays["mesh_face"] = make_array({static_cast<int64_t>(faces.size() / 3), 3}, faces);
  }
  r.header["scene"] = j;
}

}  // namespace myriad::replay
