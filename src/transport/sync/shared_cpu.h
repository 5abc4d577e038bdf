// Ranks of one host that fit its CPUs but were put on the same one.
//
// With no binding (`hcclrun --bind none`, torchrun) the scheduler may place two ranks' calling
// threads on one CPU while the other CPUs run other threads. An inline attempt spins ~2 us for its
// peer and gives up without yielding (a full ring's attempt polls ~20 us), so the two threads take
// the CPU in turns of a whole time slice (milliseconds) and neither peer progresses meanwhile;
// the load balancer is slow to move a thread that keeps running. Every rank publishes the CPU of
// each of its arrivals; an attempt that gives up looks at its peers' CPUs: when a rank with a lower
// index shares its CPU, it moves itself to another CPU it may run on (ShareAction says kMove;
// MoveOffCpu narrows the thread's affinity to exclude the CPU, which migrates it at once, then
// restores the affinity it had); when only higher ranks share it, it yields so that they run and
// move (kYield). docs/performance.md "Ranks that share a CPU move apart".
#pragma once

#include <cstdint>

namespace hostccl::net {

// The CPU the calling thread runs on (sched_getcpu), or -1.
int CurrentCpu();

enum class CpuShare { kNone, kYield, kMove };

// What rank `self` of n does, running on `cpu`, when member r's last arrival ran on CPU
// published(r) - 1 (0: none published yet).
template <typename Published>
CpuShare ShareAction(int self, int cpu, int n, const Published& published) {
  if (cpu < 0) return CpuShare::kNone;
  bool higher = false;
  for (int r = 0; r < n; ++r) {
    if (r == self || published(r) != cpu + 1) continue;
    if (r < self) return CpuShare::kMove;
    higher = true;
  }
  return higher ? CpuShare::kYield : CpuShare::kNone;
}

// Moves the calling thread off `cpu` to another CPU its affinity allows, then restores that
// affinity. False (nothing changed) when the thread may run on `cpu` alone or the calls fail.
bool MoveOffCpu(int cpu);

}  // namespace hostccl::net
