// Reports how long a compile phase took, on stderr, when the environment
// variable KILN_CPU_TIMING is set: a debugging aid for compile-time work,
// silent and nearly free otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace kiln::cpu {

class PhaseTimer {
 public:
  explicit PhaseTimer(const char* phase)
      : phase_(phase),
        enabled_(std::getenv("KILN_CPU_TIMING") != nullptr),
        start_(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    if (!enabled_) return;
    const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start_;
    std::fprintf(stderr, "kiln cpu timing: %-24s %9.3f ms\n", phase_, elapsed.count());
  }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  const char* phase_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kiln::cpu
