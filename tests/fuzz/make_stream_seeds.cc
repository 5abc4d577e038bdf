// Writes the seed corpus of tests/fuzz/stream_fuzz.cc into tests/fuzz/corpus/stream/ (run from the
// repository root). Not part of the build; to regenerate:
//   g++ -std=c++20 -Isrc tests/fuzz/make_stream_seeds.cc src/transport/tcp/wire.cc src/common/*.cc \
//       -lpthread -o /tmp/make_stream_seeds && /tmp/make_stream_seeds
// Each seed: piece-size byte, receives-ahead byte, then frames for the fuzz target's receives
// (8, 0, 100, 3000, 9000, 8 bytes; HcclReduce #1, count 2).
#include <cstdio>
#include <string>
#include <vector>
#include "transport/tcp/wire.h"
using namespace hostccl;
using namespace hostccl::net;
static Fingerprint Fp(uint64_t seq = 1) { Fingerprint f; f.kind = 1; f.seq = seq; f.count = 2; return f; }
static void Frame(std::vector<uint8_t>& out, FrameType type, size_t len, Fingerprint fp, const char* text = nullptr) {
  FrameHeader h; h.type = type; h.payload_len = len; h.fp = fp; h.code = type == FrameType::kAbort ? 7 : 0;
  uint8_t hdr[kFrameHeaderBytes]; EncodeFrameHeader(h, hdr);
  out.insert(out.end(), hdr, hdr + kFrameHeaderBytes);
  for (size_t i = 0; i < len; ++i) out.push_back(text ? static_cast<uint8_t>(text[i]) : static_cast<uint8_t>(i * 31 + 7));
}
static void Write(const char* name, uint8_t piece, uint8_t ahead, const std::vector<uint8_t>& s) {
  std::string path = std::string("tests/fuzz/corpus/stream/") + name;
  FILE* f = fopen(path.c_str(), "wb");
  if (!f) { perror(path.c_str()); return; }
  fputc(piece, f); fputc(ahead, f); fwrite(s.data(), 1, s.size(), f); fclose(f);
}
int main() {
  const size_t lens[] = {8, 0, 100, 3000, 9000, 8};
  std::vector<uint8_t> all;
  for (size_t l : lens) Frame(all, FrameType::kData, l, Fp());
  Write("all_whole_all_posted", 255, 5, all);
  Write("all_whole_one_posted", 255, 0, all);
  Write("all_small_pieces", 6, 2, all);
  std::vector<uint8_t> ab;
  Frame(ab, FrameType::kData, 8, Fp()); Frame(ab, FrameType::kData, 0, Fp());
  Frame(ab, FrameType::kAbort, 7, Fp(), "gave up");
  Write("abort_after_two", 63, 0, ab);
  std::vector<uint8_t> cl;
  Frame(cl, FrameType::kData, 8, Fp()); Frame(cl, FrameType::kData, 0, Fp()); Frame(cl, FrameType::kData, 100, Fp());
  Frame(cl, FrameType::kClose, 0, Fp());
  Write("close_after_three", 127, 0, cl);
  std::vector<uint8_t> mm;
  Frame(mm, FrameType::kData, 8, Fp()); Frame(mm, FrameType::kData, 0, Fp(2));
  Write("later_seq", 31, 0, mm);
  std::vector<uint8_t> ln;
  Frame(ln, FrameType::kData, 9, Fp());
  Write("wrong_length", 15, 5, ln);
  return 0;
}
