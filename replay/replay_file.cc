// Encoding and decoding of replay files (docs/replay-format.md).
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>

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

// Limits every reader applies (docs/replay-format.md, "What a reader refuses").
constexpr int kMaxJsonDepth = 64;                  // nested arrays and objects in the header
constexpr size_t kMaxDims = 32;                    // dimensions of one array
constexpr uint64_t kMaxInflate = 1032;             // zlib's largest expansion ratio
constexpr uint64_t kMaxIndex = uint64_t{1} << 63;  // sizes, offsets and dims are below 2^63

[[noreturn]] void refuse(const std::string& what, const std::string& why) {
  throw ReplayError(what + ": " + why);
}

// A JSON integer in 0..2^63-1 (not a float, a bool or a string), or a refusal naming it.
uint64_t index_value(const nlohmann::json& j, const std::string& what, const std::string& field) {
  if (j.is_number_unsigned() && j.get<uint64_t>() < kMaxIndex) return j.get<uint64_t>();
  if (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() >= 0)
    return static_cast<uint64_t>(j.get<int64_t>());
  refuse(what, "corrupt replay header: " + field + " is " + j.dump().substr(0, 80) +
                   ", not an integer in 0..2^63-1");
}

// The header's JSON: at most kMaxJsonDepth levels, no duplicate keys, no byte-order mark.
nlohmann::json parse_header(const uint8_t* begin, const uint8_t* end, const std::string& what) {
  if (end - begin >= 3 && begin[0] == 0xEF && begin[1] == 0xBB && begin[2] == 0xBF)
    refuse(what, "corrupt replay header: it starts with a byte-order mark");
  // nlohmann::json reads a NUL byte as the end of the text; JSON has none outside strings and
  // none raw inside them.
  if (const void* nul = std::memchr(begin, 0, end - begin))
    refuse(what, "corrupt replay header: a NUL byte at header offset " +
                     std::to_string(static_cast<const uint8_t*>(nul) - begin));
  std::vector<std::set<std::string>> keys;  // keys seen in each open object
  const nlohmann::json::parser_callback_t check =
      [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using E = nlohmann::json::parse_event_t;
        if (event == E::object_start || event == E::array_start) {
          if (depth + 1 > kMaxJsonDepth)
            refuse(what, "corrupt replay header: JSON nested deeper than " +
                             std::to_string(kMaxJsonDepth) + " levels");
          if (event == E::object_start) keys.emplace_back();
        } else if (event == E::object_end) {
          keys.pop_back();
        } else if (event == E::key) {
          if (!keys.back().insert(parsed.get<std::string>()).second)
            refuse(what, "corrupt replay header: duplicate key " + parsed.dump());
        }
        return true;
      };
  try {
    return nlohmann::json::parse(begin, end, check);
  } catch (const nlohmann::json::exception& e) {
    refuse(what, std::string("corrupt replay header: ") + e.what());
  }
}

// Inflates the payload into exactly `size` bytes. The buffer grows with what the stream really
// produces (never more than size + 1), so a header that lies about the size allocates nothing.
std::vector<uint8_t> inflate_payload(const uint8_t* packed, uint64_t packed_size, uint64_t size,
                                     const std::string& what) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) throw std::runtime_error("replay: zlib inflateInit failed");
  std::vector<uint8_t> out;
  uint64_t in_left = packed_size;
  const uint8_t* in_at = packed;
  const uint64_t chunk = std::numeric_limits<uInt>::max();  // zlib counts in uInt
  int status = Z_OK;
  for (;;) {
    if (z.avail_out == 0) {
      if (z.total_out == out.size()) {
        if (out.size() > size) break;  // one byte more than payload_bytes: stop there
        // First 4x the compressed size (typical replays inflate 1.5-3x), then doubling.
        const uint64_t first = std::max<uint64_t>(65536, 4 * std::min(packed_size, size));
        out.resize(std::min<uint64_t>(size + 1, out.empty() ? first : out.size() * 2));
      }
      z.next_out = out.data() + z.total_out;
      z.avail_out = static_cast<uInt>(std::min<uint64_t>(out.size() - z.total_out, chunk));
    }
    if (z.avail_in == 0 && in_left > 0) {
      z.next_in = const_cast<Bytef*>(in_at);
      z.avail_in = static_cast<uInt>(std::min(in_left, chunk));
      in_at += z.avail_in;
      in_left -= z.avail_in;
    }
    status = inflate(&z, Z_NO_FLUSH);
    if (status == Z_BUF_ERROR && (z.avail_in > 0 || in_left > 0 || z.avail_out == 0)) continue;
    if (status != Z_OK) break;  // the end, an error, or the payload ended inside the stream
  }
  const uint64_t produced = z.total_out, consumed = z.total_in;
  const std::string message = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (status != Z_STREAM_END) {
    if (produced > size)
      refuse(what, "corrupt replay payload: it decompresses to more than payload_bytes " +
                       std::to_string(size));
    if (status == Z_BUF_ERROR)
      refuse(what, "corrupt replay payload: the zlib stream is cut short after " +
                       std::to_string(produced) + " of " + std::to_string(size) + " bytes");
    refuse(what,
           "corrupt replay payload (zlib: " + (message.empty() ? zError(status) : message) + ")");
  }
  if (produced != size)
    refuse(what, "corrupt replay payload: it decompresses to " + std::to_string(produced) +
                     " bytes, payload_bytes says " + std::to_string(size));
  if (consumed != packed_size)
    refuse(what, "corrupt replay payload: the zlib stream ends " +
                     std::to_string(packed_size - consumed) + " bytes before the payload does");
  out.resize(size);
  return out;
}

// The arrays of docs/replay-format.md, where present, have their dtype and a shape that agrees
// with the others' (M envs, F frames) and with the header's num_envs and num_frames.
void check_known_arrays(const nlohmann::json& header, const std::string& what) {
  struct Rule {
    const char* name;
    std::vector<std::string> dtypes;
    std::vector<int64_t> shape;  // kM, kF, kAny or a fixed size
  };
  constexpr int64_t kM = -1, kF = -2, kAny = -3;
  static const std::vector<Rule> rules = {{"body_pose", {"float32"}, {kM, kF, kAny, 7}},
                                          {"reward", {"float32"}, {kM, kF}},
                                          {"value", {"float32"}, {kM, kF}},
                                          {"action", {"float32", "int32"}, {kM, kF, kAny}},
                                          {"episode", {"int32"}, {kM, kF}},
                                          {"flags", {"uint8"}, {kM, kF}},
                                          {"num_frames", {"int32"}, {kM}},
                                          {"mesh_vertex", {"float32"}, {kAny, 3}},
                                          {"mesh_face", {"int32"}, {kAny, 3}},
                                          {"hfield_elevation", {"float32"}, {kAny}},
                                          {"series", {"float32"}, {kM, kF, kAny}}};
  std::map<int64_t, std::pair<uint64_t, std::string>> bound;  // kM/kF -> (size, who set it)
  for (const char* key : {"num_envs", "num_frames"})
    if (header.contains(key))
      bound[key == std::string("num_envs") ? kM : kF] = {header[key].get<uint64_t>(),
                                                         std::string("header ") + key};
  const nlohmann::json& arrays = header["arrays"];
  for (const Rule& rule : rules) {
    if (!arrays.contains(rule.name)) continue;
    const nlohmann::json& spec = arrays[rule.name];
    const std::string dtype = spec["dtype"].get<std::string>();
    const std::string field = std::string("array '") + rule.name + "'";
    if (std::find(rule.dtypes.begin(), rule.dtypes.end(), dtype) == rule.dtypes.end())
      refuse(what, "corrupt replay: " + field + " has dtype " + dtype + ", expected " +
                       rule.dtypes.front());
    const nlohmann::json& shape = spec["shape"];
    if (shape.size() != rule.shape.size())
      refuse(what, "corrupt replay: " + field + " has shape " + shape.dump() + ", expected " +
                       std::to_string(rule.shape.size()) + " dimensions");
    for (size_t k = 0; k < rule.shape.size(); ++k) {
      const uint64_t got = shape[k].get<uint64_t>();
      const int64_t want = rule.shape[k];
      if (want >= 0 && got != static_cast<uint64_t>(want))
        refuse(what, "corrupt replay: " + field + " has shape " + shape.dump() + ", dimension " +
                         std::to_string(k) + " should be " + std::to_string(want));
      if (want != kM && want != kF) continue;
      const auto [it, fresh] = bound.emplace(want, std::make_pair(got, field));
      if (!fresh && it->second.first != got)
        refuse(what, "corrupt replay: " + field + " has shape " + shape.dump() + ", but " +
                         it->second.second + " says " + (want == kM ? "M = " : "F = ") +
                         std::to_string(it->second.first));
    }
  }
}

// What the viewer needs to draw a recording (viewer/replay.js checks the same): the seven
// per-frame arrays, at least one env and frame, one scene body per body_pose body, each env's
// frame count within F, every scene reference (geom and line bodies, meshes, height fields) in
// range, and the plotted series named as the array holds them.
void check_recording(const Replay& r, const std::string& what) {
  for (const char* name :
       {"body_pose", "reward", "value", "action", "episode", "flags", "num_frames"})
    if (!r.arrays.count(name))
      refuse(what, std::string("corrupt replay: array '") + name + "' is missing");
  const std::vector<int64_t>& pose = r.arrays.at("body_pose").shape;
  const int64_t M = pose[0], F = pose[1], B = pose[2];
  if (M == 0 || F == 0)
    refuse(what, "empty replay: it holds " + std::to_string(M) + " env(s) and " +
                     std::to_string(F) + " frame(s)");
  const nlohmann::json* scene = r.header.contains("scene") ? &r.header["scene"] : nullptr;
  if (!scene || !scene->is_object() || !scene->contains("bodies") ||
      !(*scene)["bodies"].is_array() || (*scene)["bodies"].empty())
    refuse(what, "corrupt replay: the header has no scene with bodies");
  if (static_cast<int64_t>((*scene)["bodies"].size()) != B)
    refuse(what, "corrupt replay: body_pose has " + std::to_string(B) + " bodies, the scene " +
                     std::to_string((*scene)["bodies"].size()));
  const int32_t* frames = r.arrays.at("num_frames").data<int32_t>();
  for (int64_t e = 0; e < M; ++e)
    if (frames[e] < 0 || frames[e] > F)
      refuse(what, "corrupt replay: env " + std::to_string(e) + " has num_frames " +
                       std::to_string(frames[e]) + " outside 0.." + std::to_string(F));
  // An integer in 0..limit-1, as JSON.
  const auto in_range = [](const nlohmann::json& j, const char* key, uint64_t limit) {
    if (!j.is_object() || !j.contains(key)) return false;
    const nlohmann::json& v = j[key];
    return (v.is_number_unsigned() && v.get<uint64_t>() < limit) ||
           (v.is_number_integer() && v.get<int64_t>() >= 0 &&
            static_cast<uint64_t>(v.get<int64_t>()) < limit);
  };
  const auto list = [&](const char* key) {
    return scene->contains(key) && (*scene)[key].is_array() ? (*scene)[key]
                                                            : nlohmann::json::array();
  };
  const nlohmann::json geoms = list("geoms"), lines = list("lines"), meshes = list("meshes");
  const nlohmann::json hfields = list("hfields");
  for (const nlohmann::json* items : {&geoms, &lines})
    for (const nlohmann::json& g : *items)
      if (!in_range(g, "body", static_cast<uint64_t>(B)))
        refuse(what, "corrupt replay: a scene geom or line refers to body " +
                         (g.is_object() && g.contains("body") ? g["body"].dump().substr(0, 80)
                                                              : "(none)") +
                         " of " + std::to_string(B));
  const auto rows = [&](const char* name) {
    return r.arrays.count(name) && !r.arrays.at(name).shape.empty()
               ? static_cast<uint64_t>(r.arrays.at(name).shape[0])
               : uint64_t{0};
  };
  const uint64_t V = rows("mesh_vertex"), T = rows("mesh_face");
  for (const nlohmann::json& m : meshes) {
    const auto fits = [&](const char* offset, const char* count, uint64_t n) {
      return in_range(m, offset, n + 1) && in_range(m, count, n + 1) &&
             m[offset].get<uint64_t>() + m[count].get<uint64_t>() <= n;
    };
    if (!fits("vertex_offset", "vertex_count", V) || !fits("face_offset", "face_count", T))
      refuse(what, "corrupt replay: a scene mesh lies outside mesh_vertex / mesh_face");
  }
  for (const nlohmann::json& g : geoms)
    if (g.contains("type") && g["type"] == "mesh" && !in_range(g, "mesh", meshes.size()))
      refuse(what, "corrupt replay: a mesh geom refers to mesh " +
                       (g.contains("mesh") ? g["mesh"].dump().substr(0, 80) : "(none)") + " of " +
                       std::to_string(meshes.size()));
  // Height fields (1.2): nrow x ncol samples (each at least 2) inside hfield_elevation.
  const uint64_t E = rows("hfield_elevation");
  for (const nlohmann::json& h : hfields) {
    const uint64_t kSide = uint64_t{1} << 31;
    const bool ok =
        in_range(h, "nrow", kSide) && in_range(h, "ncol", kSide) && in_range(h, "offset", E + 1) &&
        h["nrow"].get<uint64_t>() >= 2 && h["ncol"].get<uint64_t>() >= 2 &&
        h["nrow"].get<uint64_t>() * h["ncol"].get<uint64_t>() <= E - h["offset"].get<uint64_t>();
    if (!ok)
      refuse(what,
             "corrupt replay: a scene height field is not nrow x ncol samples (each at least "
             "2) inside hfield_elevation");
  }
  for (const nlohmann::json& g : geoms)
    if (g.contains("type") && g["type"] == "hfield" && !in_range(g, "hfield", hfields.size()))
      refuse(what, "corrupt replay: an hfield geom refers to height field " +
                       (g.contains("hfield") ? g["hfield"].dump().substr(0, 80) : "(none)") +
                       " of " + std::to_string(hfields.size()));
  // Plotted series (1.2): the header's names and the array [M, F, S] come together.
  const bool named = r.header.contains("series"), stored = r.arrays.count("series") > 0;
  if (named != stored)
    refuse(what, std::string("corrupt replay: ") +
                     (named ? "the header names series but the array 'series' is missing"
                            : "array 'series' is present but the header names no series"));
  if (named) {
    const nlohmann::json& names = r.header["series"];
    bool strings = names.is_array();
    for (const nlohmann::json& n : names) strings = strings && n.is_string();
    if (!strings) refuse(what, "corrupt replay: the header's series is not a list of names");
    if (r.arrays.at("series").shape[2] != static_cast<int64_t>(names.size()))
      refuse(what, "corrupt replay: array 'series' holds " +
                       std::to_string(r.arrays.at("series").shape[2]) +
                       " series, the header names " + std::to_string(names.size()));
  }
}

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
  if (in.size() < 8 || std::memcmp(in.data(), kMagic, 8) != 0)
    refuse(what, "not a Myriad replay (the file does not start with MYRIADRP)");
  if (in.size() < kPrefix)
    refuse(what, "truncated replay (" + std::to_string(in.size()) + " bytes)");
  const uint16_t major = get<uint16_t>(in, 8), minor = get<uint16_t>(in, 10);
  if (major == 0) refuse(what, "unsupported replay format 0." + std::to_string(minor));
  if (major > kMajorVersion)
    refuse(what, "replay format " + std::to_string(major) + "." + std::to_string(minor) +
                     " is newer than this reader (" + std::to_string(kMajorVersion) +
                     ".x); upgrade Myriad");
  const uint64_t header_size = get<uint32_t>(in, 12), payload_size = get<uint64_t>(in, 16);
  if (in.size() - kPrefix < header_size || in.size() - kPrefix - header_size < payload_size)
    refuse(what, "truncated replay: " + std::to_string(in.size()) +
                     " bytes, the header announces " +
                     (payload_size > UINT64_MAX - kPrefix - header_size
                          ? std::string("more than 2^64")
                          : std::to_string(kPrefix + header_size + payload_size)));
  const uint64_t expected = kPrefix + header_size + payload_size;
  if (in.size() > expected)
    refuse(what, "corrupt replay: " + std::to_string(in.size() - expected) +
                     " bytes after the payload (the header announces " + std::to_string(expected) +
                     ")");
  Replay r;
  r.header = parse_header(in.data() + kPrefix, in.data() + kPrefix + header_size, what);
  if (!r.header.is_object()) refuse(what, "corrupt replay header: it is not a JSON object");
  if (r.header.contains("format") && r.header["format"] != "myriad-replay")
    refuse(what,
           "not a Myriad replay (header format " + r.header["format"].dump().substr(0, 80) + ")");
  if (!r.header.contains("arrays") || !r.header["arrays"].is_object())
    refuse(what, "corrupt replay header: 'arrays' is missing or not an object");
  if (!r.header.contains("payload_bytes"))
    refuse(what, "corrupt replay header: 'payload_bytes' is missing");
  const uint64_t raw_size = index_value(r.header["payload_bytes"], what, "payload_bytes");
  // zlib expands at most ~1032:1, so a larger claim is corrupt, whatever memory there is.
  if (raw_size > payload_size * kMaxInflate + 64)
    refuse(what, "corrupt replay header: payload_bytes " + std::to_string(raw_size) +
                     " cannot come from " + std::to_string(payload_size) + " compressed bytes");
  for (const char* key : {"num_envs", "num_frames"})
    if (r.header.contains(key)) index_value(r.header[key], what, key);

  // Every array's spec is checked before the payload is inflated.
  struct Extent {
    std::string name;
    uint64_t offset, bytes;
  };
  std::vector<Extent> extents;
  for (const auto& [name, spec] : r.header["arrays"].items()) {
    const std::string field = "array '" + name + "'";
    if (!spec.is_object()) refuse(what, "corrupt replay header: " + field + " is not an object");
    for (const char* key : {"dtype", "shape", "offset", "bytes"})
      if (!spec.contains(key))
        refuse(what, "corrupt replay header: " + field + " lacks '" + key + "'");
    const nlohmann::json& dtype = spec["dtype"];
    const size_t width = dtype.is_string() ? dtype_size(dtype.get<std::string>()) : 0;
    if (width == 0)
      refuse(what, "corrupt replay header: " + field + " has dtype " + dtype.dump().substr(0, 80) +
                       " (float32, int32 or uint8)");
    const nlohmann::json& shape = spec["shape"];
    if (!shape.is_array() || shape.size() > kMaxDims)
      refuse(what, "corrupt replay header: " + field + " has shape " + shape.dump().substr(0, 80) +
                       ", not a list of at most " + std::to_string(kMaxDims) + " sizes");
    if (spec.contains("shuffle") && !spec["shuffle"].is_boolean())
      refuse(what, "corrupt replay header: " + field + " has shuffle " +
                       spec["shuffle"].dump().substr(0, 80) + ", not true or false");
    const uint64_t offset = index_value(spec["offset"], what, field + " offset");
    const uint64_t bytes = index_value(spec["bytes"], what, field + " bytes");
    std::vector<uint64_t> dims;
    for (const nlohmann::json& d : shape)
      dims.push_back(index_value(d, what, field + " dimension"));
    // Element count with overflow checks: no shape may claim more than the payload holds, and
    // neither may its non-zero dimensions together (an empty [0, 2^62] is refused too).
    uint64_t count = 1;
    for (uint64_t n : dims) {
      if (n != 0 && count > raw_size / n)
        refuse(what, "corrupt replay: " + field + " of shape " + shape.dump() +
                         " is larger than the " + std::to_string(raw_size) + "-byte payload");
      count *= n == 0 ? 1 : n;
    }
    if (std::find(dims.begin(), dims.end(), 0) != dims.end()) count = 0;
    if (bytes != count * width || offset > raw_size || bytes > raw_size - offset)
      refuse(what, "corrupt replay: " + field + " (offset " + std::to_string(offset) + ", " +
                       std::to_string(bytes) + " bytes, shape " + shape.dump() + " " +
                       dtype.get<std::string>() + ") does not fit its shape or the " +
                       std::to_string(raw_size) + "-byte payload");
    if (offset % 8 != 0)
      refuse(what, "corrupt replay: " + field + " offset " + std::to_string(offset) +
                       " is not a multiple of 8");
    extents.push_back({name, offset, bytes});
  }
  // Arrays may not overlap (empty ones hold nothing): together they never hold more than the
  // payload.
  extents.erase(
      std::remove_if(extents.begin(), extents.end(), [](const Extent& e) { return e.bytes == 0; }),
      extents.end());
  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.bytes < b.bytes;
  });
  for (size_t k = 1; k < extents.size(); ++k)
    if (extents[k].offset < extents[k - 1].offset + extents[k - 1].bytes)
      refuse(what, "corrupt replay: arrays '" + extents[k - 1].name + "' and '" + extents[k].name +
                       "' overlap in the payload");
  check_known_arrays(r.header, what);

  const std::vector<uint8_t> raw =
      inflate_payload(in.data() + kPrefix + header_size, payload_size, raw_size, what);
  for (const auto& [name, spec] : r.header["arrays"].items()) {
    Array a;
    a.dtype = spec["dtype"].get<std::string>();
    a.shape = spec["shape"].get<std::vector<int64_t>>();
    a.shuffle = spec.value("shuffle", false);
    const uint64_t offset = spec["offset"].get<uint64_t>(), bytes = spec["bytes"].get<uint64_t>();
    const size_t width = dtype_size(a.dtype);
    a.bytes = a.shuffle ? unshuffle_bytes(raw.data() + offset, bytes, width)
                        : std::vector<uint8_t>(raw.begin() + offset, raw.begin() + offset + bytes);
    r.arrays.emplace(name, std::move(a));
  }
  check_recording(r, what);
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
    if (g.type == "hfield") geoms.back()["hfield"] = g.hfield;
  }
  // Height fields: rows of the shared elevation array.
  nlohmann::json hfields = nlohmann::json::array();
  std::vector<float> elevation;
  for (const SceneHeightField& h : s.hfields) {
    hfields.push_back({{"name", h.name},
                       {"nrow", h.nrow},
                       {"ncol", h.ncol},
                       {"size", to_json(h.size)},
                       {"offset", elevation.size()}});
    elevation.insert(elevation.end(), h.elevation.begin(), h.elevation.end());
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
  if (s.camera_direction) j["camera"]["direction"] = to_json(*s.camera_direction);
  j["ground"] = s.ground_z ? nlohmann::json({{"z", *s.ground_z}}) : nlohmann::json();
  if (!s.meshes.empty()) {
    j["meshes"] = meshes;
    r.arrays["mesh_vertex"] = make_array({static_cast<int64_t>(vertices.size() / 3), 3}, vertices);
    r.arrays["mesh_face"] = make_array({static_cast<int64_t>(faces.size() / 3), 3}, faces);
  }
  if (!s.hfields.empty()) {
    j["hfields"] = hfields;
    r.arrays["hfield_elevation"] = make_array({static_cast<int64_t>(elevation.size())}, elevation);
  }
  r.header["scene"] = j;
}

}  // namespace myriad::replay
