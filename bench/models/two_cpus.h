// The two CPUs a model's threads run on, and pinning a thread to one: shared by copy_models and
// exchange_model (two pinned threads each).
#pragma once

#include <pthread.h>
#include <sched.h>

#include <vector>

namespace models {

// The first two CPUs of this process's affinity mask (fewer when the mask holds fewer).
inline std::vector<int> FirstTwoCpus() {
  cpu_set_t mask;
  sched_getaffinity(0, sizeof mask, &mask);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &mask)) cpus.push_back(c);
  return cpus;
}

inline void PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

}  // namespace models
