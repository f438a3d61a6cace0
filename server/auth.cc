#include "server/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace myriad::server {
namespace {

std::string checked(std::string secret, const std::string& where) {
  if (secret.empty()) throw AuthError("the shared secret in " + where + " is empty");
  if (secret.size() < kMinSecretBytes)
    throw AuthError("the shared secret in " + where + " is " + std::to_string(secret.size()) +
                    " bytes; at least " + std::to_string(kMinSecretBytes) +
                    " are required (e.g. `openssl rand -hex 32`)");
  return secret;
}

}  // namespace

std::string load_secret_file(const std::string& path) {
  // stat before open: opening a named pipe (FIFO) for reading blocks until a writer comes, and
  // a device may never end. Then O_NONBLOCK, so a file swapped for a FIFO between the two calls
  // does not block the open either, and fstat the open file, so the checked file is the one read.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0)
    throw AuthError("cannot open the shared secret file '" + path + "': " + std::strerror(errno));
  if (!S_ISREG(before.st_mode))
    throw AuthError("the shared secret file '" + path + "' is not a regular file (" +
                    (S_ISFIFO(before.st_mode)   ? "a named pipe"
                     : S_ISDIR(before.st_mode)  ? "a directory"
                     : S_ISSOCK(before.st_mode) ? "a socket"
                                                : "a device") +
                    ")");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    throw AuthError("cannot open the shared secret file '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw AuthError("the shared secret file '" + path + "' is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw AuthError(std::string("permissions ") + mode + " for the shared secret file '" + path +
                    "' are too open: it must not be accessible by group or others (chmod 600 '" +
                    path + "')");
  }
  std::string secret;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw AuthError("cannot read the shared secret file '" + path + "': " + std::strerror(err));
    }
    if (n == 0) break;
    secret.append(buf, static_cast<size_t>(n));
    // Bounded: a regular file that keeps growing is not read forever.
    if (secret.size() > (1u << 20)) {
      ::close(fd);
      throw AuthError("the shared secret file '" + path + "' is over 1 MiB");
    }
  }
  ::close(fd);
  if (!secret.empty() && secret.back() == '\n') secret.pop_back();
  if (!secret.empty() && secret.back() == '\r') secret.pop_back();
  return checked(std::move(secret), "file '" + path + "'");
}

std::string load_secret_env(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr)
    throw AuthError("the environment variable " + name + " (the shared secret) is not set");
  return checked(value, "environment variable " + name);
}

std::string load_secret(const std::string& file, const std::string& env_name) {
  if (!file.empty() && !env_name.empty())
    throw AuthError("give the shared secret as a file or an environment variable, not both");
  if (!file.empty()) return load_secret_file(file);
  if (!env_name.empty()) return load_secret_env(env_name);
  throw AuthError("no shared secret: give a secret file or an environment variable name");
}

Nonce random_nonce() {
  Nonce nonce{};
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    throw AuthError("OpenSSL RAND_bytes failed to produce a nonce");
  return nonce;
}

Mac hmac_sha256(std::string_view key, std::string_view message) {
  Mac mac{};
  unsigned int length = 0;
  const unsigned char* out = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                                  reinterpret_cast<const unsigned char*>(message.data()),
                                  message.size(), mac.data(), &length);
  if (out == nullptr || length != mac.size()) throw AuthError("OpenSSL HMAC-SHA256 failed");
  return mac;
}

bool mac_equal(const Mac& a, const Mac& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace myriad::server
