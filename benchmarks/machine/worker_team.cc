#include "benchmarks/machine/worker_team.h"

#include <pthread.h>
#include <sched.h>

namespace kiln::bench {
namespace {

// The CPUs this process may use, read once before any thread is pinned: a
// pinned thread's own mask (which new threads inherit) holds one CPU only, and
// reading that instead would put every member on the same core.
const cpu_set_t* ProcessCpus() {
  static const cpu_set_t* cpus = [] {
    static cpu_set_t allowed;
    CPU_ZERO(&allowed);
    return sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? &allowed : nullptr;
  }();
  return cpus;
}

// Pinning keeps each member on its own core, as OMP_PROC_BIND does for
// OpenMP; where it is not allowed the measurement still runs, unpinned.
void PinToCore(int core) {
  const cpu_set_t* cpus = ProcessCpus();
  if (cpus == nullptr) return;
  const cpu_set_t& allowed = *cpus;
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
  if (const cpu_set_t* cpus = ProcessCpus()) return CPU_COUNT(cpus);
  const unsigned hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : static_cast<int>(hardware);
}

}  // namespace kiln::bench
