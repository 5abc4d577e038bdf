// gloo side of bench/run_bench.sh: each collective is gloo's own (--op reduce: gloo::reduce,
// allreduce: gloo::allreduce with AllreduceOptions, broadcast: gloo::broadcast with
// BroadcastOptions, allgather: gloo::allgather, allgatherv: gloo::allgatherv, scatter:
// gloo::scatter, alltoall: gloo::alltoall, alltoallv: gloo::alltoallv with equal counts,
// reducescatter and reducescatterv: gloo::ReduceScatterHalvingDoubling (gloo has no options-style
// reduce-scatter; the algorithm works in place on a buffer of all n blocks, so each call copies the
// input into that work buffer between two barriers and the rank's block out of it, and the
// algorithm object, whose constructor connects its buffers, is built once per size and reused),
// sendrecv: unbound buffers, a round trip between ranks 0 and 1), with bench_common.h's sizes,
// modes, types, ops, root, check and output columns.
// Rendezvous through a FileStore directory (GLOO_STORE) under a per-run prefix (GLOO_PREFIX), TCP
// device on loopback; RANK and SIZE from the environment. Start it with bench/gloo_launch.sh.
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <memory>
#include <vector>

#include "bench_common.h"

namespace {

using ReduceFn = void (*)(void*, const void*, const void*, size_t);

template <typename T>
ReduceFn OpFn(int op) {
  switch (op) {
    case 0:
      return &gloo::sum<T>;
    case 1:
      return &gloo::product<T>;
    case 2:
      return &gloo::max<T>;
    default:
      return &gloo::min<T>;
  }
}

template <typename T>
const gloo::ReductionFunction<T>* OpObj(int op) {
  switch (op) {
    case 0:
      return gloo::ReductionFunction<T>::sum;
    case 1:
      return gloo::ReductionFunction<T>::product;
    case 2:
      return gloo::ReductionFunction<T>::max;
    default:
      return gloo::ReductionFunction<T>::min;
  }
}

struct Gloo {
  std::shared_ptr<gloo::rendezvous::Context> ctx;
  uint32_t tag = 0;
  // reducescatter: the halving-doubling algorithm on its work buffer, for one (type, op, count)
  std::unique_ptr<gloo::Algorithm> rs;
  std::vector<char> rs_work;
  int rs_dtype = -1, rs_op = -1;
  size_t rs_count = 0;
  // sendrecv: unbound buffers for the current send/recv buffers
  std::unique_ptr<gloo::transport::UnboundBuffer> sr_send, sr_recv;
  void* sr_send_ptr = nullptr;
  void* sr_recv_ptr = nullptr;
  size_t sr_bytes = 0;
};

constexpr uint64_t kPingPongSlot = 0x5e11d;

void Barrier(void* p) {
  auto* g = static_cast<Gloo*>(p);
  gloo::BarrierOptions opts(g->ctx);
  gloo::barrier(opts);
}

double AllMax(Gloo* g, double v) {
  double in = v, out = v;
  gloo::AllreduceOptions opts(g->ctx);
  opts.setInput(&in, 1);
  opts.setOutput(&out, 1);
  opts.setReduceFunction(static_cast<ReduceFn>(&gloo::max<double>));
  opts.setTag(++g->tag);
  gloo::allreduce(opts);
  return out;
}

double MaxAll(void* p, double v) { return AllMax(static_cast<Gloo*>(p), v); }

void MaxAllN(void* p, double* v, long n) {
  auto* g = static_cast<Gloo*>(p);
  std::vector<double> in(v, v + n);
  gloo::AllreduceOptions opts(g->ctx);
  opts.setInput(in.data(), static_cast<size_t>(n));
  opts.setOutput(v, static_cast<size_t>(n));
  opts.setReduceFunction(static_cast<ReduceFn>(&gloo::max<double>));
  opts.setTag(++g->tag);
  gloo::allreduce(opts);
}

void StatsToRoot(void* p, int, double t, double wrong, double* tmin, double* tmax, double* wsum) {
  auto* g = static_cast<Gloo*>(p);
  *tmax = AllMax(g, t);
  *tmin = -AllMax(g, -t);
  double in = wrong, out = 0;
  gloo::AllreduceOptions opts(g->ctx);
  opts.setInput(&in, 1);
  opts.setOutput(&out, 1);
  opts.setReduceFunction(static_cast<ReduceFn>(&gloo::sum<double>));
  opts.setTag(++g->tag);
  gloo::allreduce(opts);
  *wsum = out;
}

template <typename T>
void TypedRun(Gloo* g, int coll, void* send, void* recv, size_t count, int dtype, int op, int root) {
  T* in = static_cast<T*>(send);
  T* out = static_cast<T*>(recv);
  const int n = g->ctx->size;
  const size_t nc = count * static_cast<size_t>(n);
  switch (coll) {
    case BENCH_REDUCE: {
      gloo::ReduceOptions opts(g->ctx);
      // gloo uses `out` on every rank as scratch, so it must be full size everywhere.
      opts.setInput(in, count);
      opts.setOutput(out, count);
      opts.setReduceFunction(OpFn<T>(op));
      opts.setRoot(root);
      opts.setTag(++g->tag);
      gloo::reduce(opts);
      break;
    }
    case BENCH_ALLREDUCE: {
      gloo::AllreduceOptions opts(g->ctx);
      opts.setInput(in, count);
      opts.setOutput(out, count);
      opts.setReduceFunction(OpFn<T>(op));
      opts.setTag(++g->tag);
      gloo::allreduce(opts);
      break;
    }
    case BENCH_BROADCAST: {  // in place on the send buffer
      gloo::BroadcastOptions opts(g->ctx);
      opts.setOutput(in, count);
      opts.setRoot(root);
      opts.setTag(++g->tag);
      gloo::broadcast(opts);
      break;
    }
    case BENCH_ALLGATHER: {
      gloo::AllgatherOptions opts(g->ctx);
      opts.setInput(in, count);
      opts.setOutput(out, nc);
      opts.setTag(++g->tag);
      gloo::allgather(opts);
      break;
    }
    case BENCH_ALLGATHERV: {
      gloo::AllgathervOptions opts(g->ctx);
      opts.setInput(in, count);
      opts.setOutput(out, std::vector<size_t>(static_cast<size_t>(n), count));
      opts.setTag(++g->tag);
      gloo::allgatherv(opts);
      break;
    }
    case BENCH_REDUCESCATTER:
    case BENCH_REDUCESCATTERV: {
      if (!g->rs || g->rs_dtype != dtype || g->rs_op != op || g->rs_count != count) {
        g->rs.reset();
        g->rs_work.assign(nc * sizeof(T), 0);
        std::vector<T*> ptrs{reinterpret_cast<T*>(g->rs_work.data())};
        g->rs = std::make_unique<gloo::ReduceScatterHalvingDoubling<T>>(
            g->ctx, ptrs, static_cast<int>(nc), std::vector<int>(static_cast<size_t>(n), static_cast<int>(count)),
            OpObj<T>(op));
        g->rs_dtype = dtype;
        g->rs_op = op;
        g->rs_count = count;
      }
      // gloo's halving-doubling keeps this buffer as its send source and result between calls.
      // Refilled without a barrier on each side, checked launches had wrong blocks at 2 ranks
      // (16 MiB or 256 MiB): 2 of a full run's 6 (2, 4 and 8 ranks). At 2 ranks, with only the
      // barrier after the fill 1 of 8; with only one after (re)building the algorithm 4 of 20;
      // with both 0 of 34. Why was not found (its run() ends waiting for its peers' notifications).
      Barrier(g);
      memcpy(g->rs_work.data(), in, nc * sizeof(T));
      Barrier(g);
      g->rs->run();
      memcpy(out, g->rs_work.data(), count * sizeof(T));  // the rank's block lands first
      break;
    }
    case BENCH_SCATTER: {
      gloo::ScatterOptions opts(g->ctx);
      std::vector<T*> blocks;
      if (g->ctx->rank == root) {
        for (int j = 0; j < n; ++j) blocks.push_back(in + static_cast<size_t>(j) * count);
        opts.setInputs(blocks, count);
      }
      opts.setOutput(out, count);
      opts.setRoot(root);
      opts.setTag(++g->tag);
      gloo::scatter(opts);
      break;
    }
    case BENCH_ALLTOALL: {
      gloo::AlltoallOptions opts(g->ctx);
      opts.setInput(in, nc);
      opts.setOutput(out, nc);
      opts.setTag(++g->tag);
      gloo::alltoall(opts);
      break;
    }
    case BENCH_ALLTOALLV: {
      gloo::AlltoallvOptions opts(g->ctx);
      const std::vector<int64_t> per(static_cast<size_t>(n), static_cast<int64_t>(count));
      opts.setInput(in, per);
      opts.setOutput(out, per);
      opts.setTag(++g->tag);
      gloo::alltoallv(opts);
      break;
    }
    default: {  // BENCH_SENDRECV: one round trip between ranks 0 and 1
      const size_t bytes = count * sizeof(T);
      if (g->sr_send_ptr != send || g->sr_recv_ptr != recv || g->sr_bytes != bytes) {
        g->sr_send = g->ctx->createUnboundBuffer(send, bytes);
        g->sr_recv = g->ctx->createUnboundBuffer(recv, bytes);
        g->sr_send_ptr = send;
        g->sr_recv_ptr = recv;
        g->sr_bytes = bytes;
      }
      const int peer = 1 - g->ctx->rank;
      g->sr_recv->recv(peer, kPingPongSlot);  // posted first on both ranks
      if (g->ctx->rank == 0) {
        g->sr_send->send(peer, kPingPongSlot);
        g->sr_send->waitSend();
        g->sr_recv->waitRecv();
      } else {
        g->sr_recv->waitRecv();
        g->sr_send->send(peer, kPingPongSlot);
        g->sr_send->waitSend();
      }
      break;
    }
  }
}

int Run(void* p, int coll, void* send, void* recv, size_t count, int dtype, int op, int root,
        const char**) {
  auto* g = static_cast<Gloo*>(p);
  if (coll < 0 || coll >= kBenchNumColls) return BENCH_RUN_UNSUPPORTED;
  try {
    switch (dtype) {
      case 0:
        TypedRun<int8_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 1:
        TypedRun<uint8_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 2:
        TypedRun<int16_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 3:
        TypedRun<uint16_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 4:
        TypedRun<int32_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 5:
        TypedRun<uint32_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 6:
        TypedRun<int64_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 7:
        TypedRun<uint64_t>(g, coll, send, recv, count, dtype, op, root);
        break;
      case 8:
        TypedRun<float>(g, coll, send, recv, count, dtype, op, root);
        break;
      default:
        TypedRun<double>(g, coll, send, recv, count, dtype, op, root);
        break;
    }
  } catch (const std::exception& e) {
    fprintf(stderr, "rank %d: gloo %s failed: %s\n", g->ctx->rank, kBenchColls[coll].name, e.what());
    return BENCH_RUN_ERROR;
  }
  return 0;
}

int EnvInt(const char* name) {
  const char* v = getenv(name);
  return v ? atoi(v) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  int rank = EnvInt("RANK"), size = EnvInt("SIZE");
  const char* store_dir = getenv("GLOO_STORE");
  const char* prefix = getenv("GLOO_PREFIX");
  if (rank < 0 || size < 1 || !store_dir) {
    fprintf(stderr,
            "gloo_coll_bench: set RANK, SIZE and GLOO_STORE (use bench/gloo_launch.sh)\n");
    return 2;
  }
  bench_opts o;
  int rc = bench_parse(argc, argv, &o, rank);
  if (rc != 0) return rc > 0 ? 0 : 2;
  try {
    gloo::transport::tcp::attr attr("127.0.0.1");
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore file_store(store_dir);
    gloo::rendezvous::PrefixStore store(prefix ? prefix : "bench", file_store);
    Gloo g;
    g.ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
    g.ctx->setTimeout(std::chrono::seconds(120));
    g.ctx->connectFullMesh(store, dev);
    bench_comm c{};
    c.rank = rank;
    c.size = size;
    c.ctx = &g;
    c.barrier = Barrier;
    c.max_all = MaxAll;
    c.max_all_n = MaxAllN;
    c.stats_to_root = StatsToRoot;
    c.run = Run;
    return bench_main(&o, &c);
  } catch (const std::exception& e) {
    fprintf(stderr, "rank %d: gloo error: %s\n", rank, e.what());
    return 2;
  }
}
