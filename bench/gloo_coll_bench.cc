// gloo side of bench/run_bench.sh: each collective is gloo's own (--op reduce: gloo::reduce,
// allreduce: gloo::allreduce with AllreduceOptions, broadcast: gloo::broadcast with
// BroadcastOptions), with bench_common.h's sizes, modes, types, ops, root, check and output columns.
// Rendezvous through a FileStore directory (GLOO_STORE) under a per-run prefix (GLOO_PREFIX), TCP
// device on loopback; RANK and SIZE from the environment. Start it with bench/gloo_launch.sh.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <memory>

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

struct Gloo {
  std::shared_ptr<gloo::rendezvous::Context> ctx;
  uint32_t tag = 0;
};

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
void TypedRun(Gloo* g, int coll, void* send, void* recv, size_t count, int op, int root) {
  T* in = static_cast<T*>(send);
  T* out = static_cast<T*>(recv);
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
    default: {  // BENCH_BROADCAST: in place on the send buffer
      gloo::BroadcastOptions opts(g->ctx);
      opts.setOutput(in, count);
      opts.setRoot(root);
      opts.setTag(++g->tag);
      gloo::broadcast(opts);
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
        TypedRun<int8_t>(g, coll, send, recv, count, op, root);
        break;
      case 1:
        TypedRun<uint8_t>(g, coll, send, recv, count, op, root);
        break;
      case 2:
        TypedRun<int16_t>(g, coll, send, recv, count, op, root);
        break;
      case 3:
        TypedRun<uint16_t>(g, coll, send, recv, count, op, root);
        break;
      case 4:
        TypedRun<int32_t>(g, coll, send, recv, count, op, root);
        break;
      case 5:
        TypedRun<uint32_t>(g, coll, send, recv, count, op, root);
        break;
      case 6:
        TypedRun<int64_t>(g, coll, send, recv, count, op, root);
        break;
      case 7:
        TypedRun<uint64_t>(g, coll, send, recv, count, op, root);
        break;
      case 8:
        TypedRun<float>(g, coll, send, recv, count, op, root);
        break;
      default:
        TypedRun<double>(g, coll, send, recv, count, op, root);
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
    c.stats_to_root = StatsToRoot;
    c.run = Run;
    return bench_main(&o, &c);
  } catch (const std::exception& e) {
    fprintf(stderr, "rank %d: gloo error: %s\n", rank, e.what());
    return 2;
  }
}
