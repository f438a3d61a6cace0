// Shared-secret loading and the HMAC-SHA256 primitives of the server handshake (OpenSSL).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace myriad::server {

// A secret shorter than this is refused (16 bytes of a random hex or base64 string is the
// least worth having; `openssl rand -hex 32 > secret && chmod 600 secret` makes a good one).
inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;

using Nonce = std::array<uint8_t, kNonceBytes>;
using Mac = std::array<uint8_t, kMacBytes>;

// Every refusal below: the message says what was wrong and how to fix it, never the secret.
class AuthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads the secret from a regular file (anything else, a named pipe included, is refused by
// name before it is opened; at most 1 MiB is read), like ssh reads a private key: a file that its
// group or others may read or write (mode & 077) is refused ("chmod 600 PATH"). One trailing
// newline (\n or \r\n) is stripped. Throws AuthError if missing, unreadable, too open, empty
// or shorter than kMinSecretBytes.
std::string load_secret_file(const std::string& path);

// Reads the secret from the environment variable `name`. Throws AuthError if unset, empty or
// shorter than kMinSecretBytes.
std::string load_secret_env(const std::string& name);

// Exactly one source: a file path or an environment variable name (the other empty). The
// secret never comes from the command line, where `ps` would show it.
std::string load_secret(const std::string& file, const std::string& env_name);

// 32 bytes from OpenSSL's CSPRNG (RAND_bytes). Throws AuthError if it fails.
Nonce random_nonce();

// HMAC-SHA256(key, message).
Mac hmac_sha256(std::string_view key, std::string_view message);

// Constant-time comparison (CRYPTO_memcmp): no timing leak of how many bytes matched.
bool mac_equal(const Mac& a, const Mac& b);

}  // namespace myriad::server
