// Fuzzing the frame decoder and the handshake state machines (no sockets).
//
// By default a seeded random-mutation driver: it starts from valid encoded frames and a real
// handshake's messages, mutates them (bit flips, byte sets, inserts, deletes, truncation,
// splices, boundary length fields, re-fixed checksums so mutated payloads reach the
// handshake parsers), feeds each input to a FrameDecoder in input-chosen pieces and every
// decoded frame to a ServerHandshake and a ClientHandshake, and checks invariants. Built with
// AddressSanitizer and UBSan, any out-of-bounds read, overflow or broken invariant aborts.
//
//   fuzz_frame [--inputs N] [--seed S]
//
// With MYRIAD_LIBFUZZER defined (clang's -fsanitize=fuzzer) the same input function is a
// libFuzzer target.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "myriad/crc32c.h"
#include "server/auth.h"
#include "server/frame.h"
#include "server/handshake.h"

namespace {

using namespace myriad::server;

const std::string kSecret = "fuzz-secret-0123456789abcdef";
constexpr uint32_t kMaxPayload = 4096;  // small, so length-field mutations cross it often
constexpr uint64_t kConnId = 77;

Nonce fixed_nonce(uint8_t base) {
  Nonce n{};
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<uint8_t>(base + i);
  return n;
}
// Fixed nonces make a recorded honest handshake valid for every run, so mutations of it
// reach the states past each check.
const Nonce kServerNonce = fixed_nonce(0x10);
const Nonce kClientNonce = fixed_nonce(0x80);

struct Tally {
  uint64_t inputs = 0, bytes = 0, frames = 0;
  uint64_t errors[8] = {};
  uint64_t outcomes[5] = {};
  uint64_t client_outcomes[5] = {};
};
Tally tally;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "fuzz_frame: invariant violated: %s\n", what);
  std::abort();
}

void check_reply(const Frame& reply) {
  const std::string bytes = encode(reply, kMaxPayload);
  FrameDecoder d(kMaxPayload);
  d.feed(bytes.data(), bytes.size());
  Frame back;
  if (d.next(back) != FrameDecoder::Status::Frame || back.type != reply.type ||
      back.payload != reply.payload)
    violated("a handshake reply does not round-trip");
}

// One input: `data` is the byte stream; `plan` picks the piece sizes it arrives in.
void one_input(const uint8_t* data, size_t size, uint64_t plan) {
  tally.inputs++;
  tally.bytes += size;
  // Half the inputs see the server's two-stage limit: small until authenticated.
  const bool staged = (plan >> 7) & 1;
  FrameDecoder decoder(staged ? kMaxHandshakePayload : kMaxPayload);
  ServerHandshake server(kSecret, kConnId, kServerNonce);
  ClientHandshake client(kSecret, Peer{Role::Actor, "fuzz"}, kClientNonce);
  bool server_done = false, client_done = false;
  size_t at = 0, consumed = 0;
  bool errored = false;
  for (;;) {
    if (at < size) {
      const size_t piece = std::min<size_t>(size - at, 1 + (plan % 97));
      plan = plan * 6364136223846793005ull + 1442695040888963407ull;
      decoder.feed(data + at, piece);
      at += piece;
    }
    Frame f;
    FrameDecoder::Status status;
    while ((status = decoder.next(f)) == FrameDecoder::Status::Frame) {
      tally.frames++;
      // A frame is exactly the bytes it was decoded from.
      const std::string again = encode(f, kMaxPayload);
      if (consumed + again.size() > size ||
          std::memcmp(again.data(), data + consumed, again.size()))
        violated("a decoded frame does not re-encode to its input bytes");
      consumed += again.size();
      if (!server_done) {
        HandshakeStep s = server.on_frame(f);
        tally.outcomes[static_cast<int>(s.outcome)]++;
        for (const auto& r : s.replies) check_reply(r);
        if (s.outcome != HandshakeOutcome::Continue) server_done = true;
        if (s.outcome == HandshakeOutcome::Authenticated) decoder.set_max_payload(kMaxPayload);
        if (s.outcome == HandshakeOutcome::Authenticated && !server.authenticated())
          violated("Authenticated outcome without an authenticated state");
        if (s.outcome != HandshakeOutcome::Authenticated && server.authenticated())
          violated("authenticated state without the Authenticated outcome");
      } else if (server.on_frame(f).outcome != HandshakeOutcome::ProtocolError) {
        violated("the server handshake accepted a frame after it ended");
      }
      if (!client_done) {
        HandshakeStep c = client.on_frame(f);
        tally.client_outcomes[static_cast<int>(c.outcome)]++;
        for (const auto& r : c.replies) check_reply(r);
        if (c.outcome != HandshakeOutcome::Continue) client_done = true;
      }
      RejectCode code;
      std::string reason;
      if (f.type == FrameType::Reject) parse_reject(f.payload, code, reason);
    }
    if (decoder.buffered() + consumed > size) violated("the decoder holds bytes it was not fed");
    if (status == FrameDecoder::Status::Error) {
      const DecodeError error = decoder.error();
      tally.errors[static_cast<int>(error)]++;
      errored = true;
      // Sticky: nothing more comes out, whatever follows.
      decoder.feed(data + at, size - at);
      if (decoder.next(f) != FrameDecoder::Status::Error || decoder.error() != error)
        violated("a decoder error is not sticky");
      break;
    }
    if (at >= size) break;
  }
  if (!errored && consumed + decoder.buffered() != size) violated("bytes lost without an error");
}

#ifndef MYRIAD_LIBFUZZER

// ---- the seeded mutation driver ----

std::vector<std::string> seed_corpus() {
  std::vector<std::string> seeds;
  // The honest handshake, as the client sends it and as the server answers.
  ServerHandshake server(kSecret, kConnId, kServerNonce);
  ClientHandshake client(kSecret, Peer{Role::Actor, "fuzz"}, kClientNonce);
  const Frame hello = client.hello();
  const HandshakeStep challenge = server.on_frame(hello);
  const HandshakeStep response = client.on_frame(challenge.replies.at(0));
  const HandshakeStep welcome = server.on_frame(response.replies.at(0));
  if (welcome.outcome != HandshakeOutcome::Authenticated) violated("the seed handshake failed");
  const std::string to_server = encode(hello) + encode(response.replies.at(0));
  const std::string to_client = encode(challenge.replies.at(0)) + encode(welcome.replies.at(0));
  seeds.push_back(to_server);
  seeds.push_back(to_client);
  seeds.push_back(to_server + encode(FrameType::Chunk, "trajectory") +
                  encode(FrameType::Heartbeat, ""));
  seeds.push_back(encode(FrameType::Reject, reject_payload(RejectCode::AuthFailed, "no")));
  for (uint8_t t = 1; t <= kMaxFrameType; ++t)
    seeds.push_back(encode(static_cast<FrameType>(t), std::string(t * 5, static_cast<char>(t))));
  seeds.push_back(encode(FrameType::Weights, std::string(kMaxPayload, 'w')));
  return seeds;
}

void set_u32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4 && at + i < s.size(); ++i) s[at + i] = static_cast<char>(v >> (8 * i));
}

// Offsets of headers in a stream of valid frames (before mutation), for targeted mutations.
std::vector<size_t> header_offsets(const std::string& s) {
  std::vector<size_t> out;
  size_t at = 0;
  while (at + kHeaderSize <= s.size() && std::memcmp(s.data() + at, "MYRD", 4) == 0) {
    out.push_back(at);
    uint32_t len = 0;
    for (int i = 0; i < 4; ++i)
      len |= static_cast<uint32_t>(static_cast<uint8_t>(s[at + 8 + i])) << (8 * i);
    at += kHeaderSize + len;
  }
  return out;
}

std::string mutate(const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  std::string s = seeds[pick(seeds.size())];
  const int rounds = 1 + static_cast<int>(pick(4));
  for (int r = 0; r < rounds; ++r) {
    const auto headers = header_offsets(s);
    const size_t h = headers.empty() ? 0 : headers[pick(headers.size())];
    switch (pick(11)) {
      case 0:  // flip a bit
        if (!s.empty()) s[pick(s.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // set a byte
        if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
        break;
      case 2:  // insert bytes
        s.insert(pick(s.size() + 1), std::string(1 + pick(8), static_cast<char>(rng())));
        break;
      case 3:  // delete bytes
        if (!s.empty()) {
          const size_t at = pick(s.size());
          s.erase(at, 1 + pick(8));
        }
        break;
      case 4:  // truncate
        s.resize(pick(s.size() + 1));
        break;
      case 5: {  // splice with another seed
        const std::string& other = seeds[pick(seeds.size())];
        s = s.substr(0, pick(s.size() + 1)) + other.substr(pick(other.size() + 1));
        break;
      }
      case 6: {  // a boundary or huge length field
        const uint32_t lengths[] = {0,
                                    1,
                                    kMaxPayload - 1,
                                    kMaxPayload,
                                    kMaxPayload + 1,
                                    0x7FFFFFFFu,
                                    0x80000000u,
                                    0xFFFFFFFFu,
                                    static_cast<uint32_t>(rng())};
        set_u32(s, h + 8, lengths[pick(9)]);
        break;
      }
      case 7:  // another type, version or reserved byte
        if (h + 8 <= s.size())
          s[h + 4 + pick(4)] = static_cast<char>(pick(3) == 0 ? rng() : pick(12));
        break;
      case 8:  // mutate a payload byte and fix its checksum, to reach the handshake parsers
      case 9:
        if (h + kHeaderSize < s.size()) {
          uint32_t len = 0;
          for (int i = 0; i < 4; ++i)
            len |= static_cast<uint32_t>(static_cast<uint8_t>(s[h + 8 + i])) << (8 * i);
          const size_t end = std::min(s.size(), h + kHeaderSize + len);
          if (end > h + kHeaderSize) {
            s[h + kHeaderSize + pick(end - h - kHeaderSize)] = static_cast<char>(rng());
            if (end == h + kHeaderSize + len)
              set_u32(s, h + 12, myriad::crc32c(s.data() + h + kHeaderSize, len));
          }
        }
        break;
      case 10:  // duplicate a piece (replays)
        if (!s.empty() && s.size() < 64 * 1024) {
          const size_t at = pick(s.size());
          s.insert(pick(s.size() + 1), s.substr(at, 1 + pick(64)));
        }
        break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t inputs = 200000, seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--inputs") == 0)
      inputs = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--seed") == 0)
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: fuzz_frame [--inputs N] [--seed S]\n");
      return 2;
    }
  }
  std::mt19937_64 rng(seed);
  const std::vector<std::string> seeds = seed_corpus();
  const auto start = std::chrono::steady_clock::now();
  for (const auto& s : seeds)
    one_input(reinterpret_cast<const uint8_t*>(s.data()), s.size(), rng());
  for (uint64_t i = 0; i < inputs; ++i) {
    const std::string input = mutate(seeds, rng);
    one_input(reinterpret_cast<const uint8_t*>(input.data()), input.size(), rng());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "fuzz_frame: seed %llu, %llu inputs (%llu bytes) in %.2f s: %.0f inputs/s, 0 crashes\n",
      static_cast<unsigned long long>(seed), static_cast<unsigned long long>(tally.inputs),
      static_cast<unsigned long long>(tally.bytes), seconds, tally.inputs / seconds);
  std::printf("  frames decoded %llu; decoder errors:",
              static_cast<unsigned long long>(tally.frames));
  for (int e = 1; e <= 6; ++e)
    std::printf(" %s=%llu", to_string(static_cast<DecodeError>(e)),
                static_cast<unsigned long long>(tally.errors[e]));
  std::printf("\n  server handshake steps:");
  for (int o = 0; o < 5; ++o)
    std::printf(" %s=%llu", to_string(static_cast<HandshakeOutcome>(o)),
                static_cast<unsigned long long>(tally.outcomes[o]));
  std::printf("\n  client handshake steps:");
  for (int o = 0; o < 5; ++o)
    std::printf(" %s=%llu", to_string(static_cast<HandshakeOutcome>(o)),
                static_cast<unsigned long long>(tally.client_outcomes[o]));
  std::printf("\n");
  // The mutations must reach every decoder error and the deep handshake states.
  for (int e = 1; e <= 6; ++e)
    if (tally.errors[e] == 0 && inputs >= 10000) violated("a decoder error was never reached");
  if (inputs >= 10000 && (tally.outcomes[1] == 0 || tally.outcomes[2] == 0))
    violated("the server handshake's authenticated/auth-failed states were never reached");
  return 0;
}

#else

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint64_t plan = size;
  for (size_t i = 0; i < size && i < 8; ++i) plan = plan * 131 + data[i];
  one_input(data, size, plan);
  return 0;
}

#endif
