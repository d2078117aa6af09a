#include "benchmarks/machine/worker_team.h"

#include <pthread.h>
#include <sched.h>

namespace kiln::bench {
namespace {

// Pinning keeps each member on its own core, as OMP_PROC_BIND does for
// OpenMP; where it is not allowed the measurement still runs, unpinned.
void PinToCore(int core) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  int seen = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    if (seen++ == core % CPU_COUNT(&allowed)) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      return;
    }
  }
}

}  // namespace

WorkerTeam::WorkerTeam(int size) : size_(size < 1 ? 1 : size), start_(size_), finish_(size_) {
  PinToCore(0);
  for (int member = 1; member < size_; ++member) threads_.emplace_back([this, member] { Serve(member); });
}

WorkerTeam::~WorkerTeam() {
  stopping_ = true;
  start_.arrive_and_wait();
  for (std::thread& thread : threads_) thread.join();
}

void WorkerTeam::Run(const std::function<void(int)>& job) {
  job_ = job;
  start_.arrive_and_wait();
  job_(0);
  finish_.arrive_and_wait();
}

void WorkerTeam::Serve(int member) {
  PinToCore(member);
  while (true) {
    start_.arrive_and_wait();
    if (stopping_) return;
    job_(member);
    finish_.arrive_and_wait();
  }
}

Slice SliceOf(long count, long granule, int member, int members) {
  const long granules = count / granule;
  const long begin = granules * member / members * granule;
  const long end = member + 1 == members ? count : granules * (member + 1) / members * granule;
  return {begin, end};
}

int AvailableCores() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) return CPU_COUNT(&allowed);
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

}  // namespace kiln::bench
