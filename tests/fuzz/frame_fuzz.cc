// libFuzzer target (reliability.md row 7): hostccl::net::DecodeFrameHeader (the TCP wire-frame
// decoder) over arbitrary bytes of any length. Never crashes; an accepted header re-encodes to a
// header that decodes to the same type, payload length, code and fingerprint, and respects the
// payload bounds of its type. Built by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>

#include "transport/tcp/wire.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hostccl::net;
  FrameHeader h;
  if (!DecodeFrameHeader(data, size, &h).ok()) return 0;
  if (size < kFrameHeaderBytes) __builtin_trap();  // accepted a short header
  if (h.type == FrameType::kData && h.payload_len > kMaxDataPayload) __builtin_trap();
  if (h.type == FrameType::kAbort && h.payload_len > kMaxReasonBytes) __builtin_trap();
  uint8_t again[kFrameHeaderBytes];
  EncodeFrameHeader(h, again);
  FrameHeader h2;
  if (!DecodeFrameHeader(again, sizeof(again), &h2).ok()) __builtin_trap();
  if (h2.type != h.type || h2.payload_len != h.payload_len || h2.code != h.code || !(h2.fp == h.fp) ||
      h2.part != h.part || h2.parts != h.parts)
    __builtin_trap();
  return 0;
}
