// What the TCP store's handshake is built from: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104),
// written here because hostccl links no crypto library (checked against the standard's test
// vectors in tests/bootstrap/store_test.cc), random bytes from getrandom(2), and a comparison whose
// time does not depend on where two byte strings differ.
//
// The handshake (store_tcp.cc) is a mutual challenge-response over the job secret: neither side
// ever sends the secret, each proves it knows it with an HMAC over both sides' fresh nonces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace hostccl::boot {

constexpr size_t kSha256Bytes = 32;
// The shortest and longest store secret accepted (HOSTCCL_STORE_SECRET; hcclrun makes 16 random
// bytes written as 32 hex digits).
constexpr size_t kMinStoreSecretBytes = 16;
constexpr size_t kMaxStoreSecretBytes = 1024;

// SHA-256 of data: 32 raw bytes.
std::string Sha256(const std::string& data);
// HMAC-SHA256(key, data): 32 raw bytes.
std::string HmacSha256(const std::string& key, const std::string& data);
// n bytes from getrandom(2) (blocks only until the kernel's pool is initialised at boot).
Status RandomBytes(size_t n, std::string* out);
// Lower-case hex of bytes.
std::string ToHex(const std::string& bytes);
// True when a and b are equal; the time taken depends only on their lengths.
bool ConstantTimeEqual(const std::string& a, const std::string& b);
// kPara naming `what` when a secret is shorter or longer than the bounds above.
Status CheckStoreSecret(const std::string& secret, const char* what);

}  // namespace hostccl::boot
