// A fixed team of threads, each pinned to one core, that runs the same job on
// its own slice of the work and meets at a barrier. The machine measurements
// time whole team rounds, so thread start-up never enters a sample.
#pragma once

#include <barrier>
#include <functional>
#include <thread>
#include <vector>

namespace kiln::bench {

class WorkerTeam {
 public:
  // `size` >= 1 threads; the calling thread is member 0.
  explicit WorkerTeam(int size);
  ~WorkerTeam();
  WorkerTeam(const WorkerTeam&) = delete;
  WorkerTeam& operator=(const WorkerTeam&) = delete;

  int size() const { return size_; }
  // Runs job(member) on every member and returns when all have finished.
  void Run(const std::function<void(int member)>& job);

 private:
  void Serve(int member);

  int size_;
  std::function<void(int)> job_;
  bool stopping_ = false;
  std::barrier<> start_;
  std::barrier<> finish_;
  std::vector<std::thread> threads_;
};

// [begin, end) of `member`'s share of `count` items, in whole `granule`s.
struct Slice {
  long begin;
  long end;
};
Slice SliceOf(long count, long granule, int member, int members);

// Number of cores this process may run on.
int AvailableCores();

}  // namespace kiln::bench
