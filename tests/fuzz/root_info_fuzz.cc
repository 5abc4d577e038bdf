// libFuzzer target (reliability.md row 7): hostccl::boot::DecodeRootInfo over arbitrary 4108-byte
// blocks (the input, zero-padded or cut), plus an encode/decode round trip of a root info built
// from the input (so the checksum-protected fields are reached too). Never crashes; a round trip
// of a root info that decodes must give back the same fields. Built by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hostccl::boot::kRootInfoBytes;
  std::vector<uint8_t> block(kRootInfoBytes, 0);
  std::memcpy(block.data(), data, size < kRootInfoBytes ? size : kRootInfoBytes);
  hostccl::boot::RootInfo decoded;
  (void)hostccl::boot::DecodeRootInfo(block.data(), &decoded);

  // Round trip: ip | port(2) | token(16) | identifier, split at the first two NULs of the input.
  if (size < 19) return 0;
  const char* text = reinterpret_cast<const char*>(data + 18);
  size_t text_len = size - 18;
  size_t cut = std::strlen(std::string(text, text_len).c_str());
  hostccl::boot::RootInfo in;
  in.ip.assign(text, cut);
  in.identifier = cut < text_len ? std::string(text + cut + 1, text_len - cut - 1) : std::string("id");
  in.port = static_cast<uint16_t>(data[0] | (data[1] << 8));
  std::memcpy(in.token, data + 2, 16);
  if (in.ip.size() > 63 || in.identifier.size() > 127) return 0;  // Encode truncates longer fields
  in.identifier = std::string(in.identifier.c_str());               // the field is NUL-terminated
  std::vector<uint8_t> enc(kRootInfoBytes, 0);
  hostccl::boot::EncodeRootInfo(in, enc.data());
  hostccl::boot::RootInfo out;
  if (hostccl::boot::DecodeRootInfo(enc.data(), &out).ok()) {
    if (out.ip != in.ip || out.port != in.port || out.identifier != in.identifier ||
        std::memcmp(out.token, in.token, 16) != 0)
      __builtin_trap();  // decode(encode(x)) != x
  }
  return 0;
}
