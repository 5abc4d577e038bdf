#include "transport/sync/shared_cpu.h"

#include <sched.h>

namespace hostccl::net {

int CurrentCpu() { return sched_getcpu(); }

bool MoveOffCpu(int cpu) {
  cpu_set_t mask;
  if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof mask, &mask) != 0) return false;
  if (!CPU_ISSET(cpu, &mask) || CPU_COUNT(&mask) < 2) return false;
  cpu_set_t others = mask;
  CPU_CLR(cpu, &others);
  if (sched_setaffinity(0, sizeof others, &others) != 0) return false;
  (void)sched_setaffinity(0, sizeof mask, &mask);  // back to what it was; the thread stays moved
  return true;
}

}  // namespace hostccl::net
