// libFuzzer target (reliability.md row 7): TcpTransport's read path (frame parser, per-socket read
// buffer, direct payload reads, pending frames, ABORT/CLOSE handling) over an arbitrary byte
// stream from a peer. Rank 0 holds one end of a socketpair; the other end writes the input in
// pieces while rank 0 posts receives of fixed lengths with one fingerprint and drives progress,
// then closes. Never crashes; every receive that the stream's leading whole, matching DATA frames
// complete is done before the peer closes; every request ends (done or an error) once the peer
// has closed: a wait that times out although EOF is in the socket means bytes or a close went
// unnoticed.
// Input: byte 0 picks the piece size (1..256 bytes, each written between progress calls), byte 1
// how many receives are posted ahead (1..6), the rest is the stream. Built by scripts/fuzz.sh;
// tests/fuzz/make_stream_seeds.cc writes the seed corpus.
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/tcp/socket.h"
#include "transport/tcp/tcp_transport.h"

namespace {

hostccl::Fingerprint StreamFp() {
  hostccl::Fingerprint fp;
  fp.kind = static_cast<uint8_t>(hostccl::CollKind::kReduce);
  fp.seq = 1;
  fp.count = 2;
  return fp;
}

// How many of the receives (lengths `lens`, fingerprint StreamFp()) the byte stream completes,
// read the simplest way: whole DATA frames in order, each matching the next receive; anything
// else (a malformed or other frame, a mismatch, a truncated frame) ends the count. The transport
// must complete at least these without the peer closing or sending anything more.
size_t ModelCompletes(const uint8_t* p, size_t n, const size_t* lens, size_t count) {
  using namespace hostccl::net;
  size_t done = 0, off = 0;
  while (done < count) {
    FrameHeader h;
    if (n - off < kFrameHeaderBytes || !DecodeFrameHeader(p + off, kFrameHeaderBytes, &h).ok()) break;
    if (h.type != FrameType::kData || h.fp != StreamFp() || h.parts != 0 || h.payload_len != lens[done]) break;
    if (n - off - kFrameHeaderBytes < h.payload_len) break;
    off += kFrameHeaderBytes + h.payload_len;
    ++done;
  }
  return done;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hostccl;
  using namespace hostccl::net;
  if (size < 2) return 0;
  const size_t piece = static_cast<size_t>(data[0]) + 1;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  Fd writer(sv[1]);
  std::vector<Fd> fds(2);
  fds[1] = Fd(sv[0]);
  TcpTransport t(0, 2, std::move(fds), {"self", "fuzz-peer"});

  // The receives a Reduce-like exchange would post, in order (lengths cover the buffered path,
  // an empty message and a direct payload read). At most `ahead` are posted at a time, so frames
  // also arrive before their receive (kept pending, possibly inside the read buffer).
  static const size_t kLens[] = {8, 0, 100, 3000, 9000, 8};
  constexpr size_t kCount = sizeof(kLens) / sizeof(kLens[0]);
  const size_t ahead = 1 + data[1] % kCount;
  std::vector<std::vector<uint8_t>> bufs(kCount);
  std::vector<RequestId> ids;
  size_t cur = 0;  // first request not known to be done
  bool failed = false;
  auto top_up = [&] {
    while (!failed && ids.size() < kCount && ids.size() < cur + ahead) {
      size_t i = ids.size();
      bufs[i].resize(kLens[i]);
      RequestId id;
      if (!t.Irecv(1, bufs[i].data(), kLens[i], StreamFp(), &id).ok()) {
        failed = true;
        return;
      }
      ids.push_back(id);
    }
  };
  auto progress = [&] {  // one nonblocking round
    bool done = false;
    if (cur < ids.size() && !t.Test(ids[cur], &done).ok()) failed = true;
    if (done) ++cur;
    top_up();
  };
  top_up();
  const uint8_t* p = data + 2;
  size_t left = size - 2;
  while (left > 0 && !failed) {
    size_t n = left < piece ? left : piece;
    ssize_t w = ::send(writer.get(), p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      left -= static_cast<size_t>(w);
    } else if (cur == kCount) {
      break;  // socket full and nothing left to receive: the rest is never read
    }
    progress();
  }
  // Every receive the stream completes must complete from what was read, with the peer still
  // connected and silent (bytes parsed into the read buffer produce no POLLIN).
  const size_t expect = left == 0 ? ModelCompletes(data + 2, size - 2, kLens, kCount) : 0;
  for (int round = 0; round < 1000 && cur < expect && !failed; ++round) progress();
  if (cur < expect && !failed) __builtin_trap();
  ::shutdown(writer.get(), SHUT_WR);
  while (cur < kCount && !failed) {
    Status st = t.Wait(ids[cur], Deadline::AfterMs(5000));
    if (st.code() == Code::kTimeout) __builtin_trap();  // EOF or bytes left unread: would hang
    failed = !st.ok();  // errors are sticky: the later requests fail the same way
    ++cur;
    top_up();
  }
  return 0;
}
