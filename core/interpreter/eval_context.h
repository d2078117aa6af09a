// What an op kernel of the interpreter may use besides its operands: a way to
// run called computations (reducers, comparators, loop bodies), the backend's
// host feed queues and the per-execution random number state.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>

#include "core/backend.h"
#include "core/ir.h"
#include "core/literal.h"
#include "core/status.h"

namespace kiln::interpreter {

using Operands = std::span<const Literal* const>;

// Shared by all executables of one backend; the only mutable state shared
// between concurrent executions, hence the mutex.
struct HostQueues {
  std::mutex mutex;
  std::deque<Literal> infeed;
  std::deque<Literal> outfeed;
};

// Runs a computation of the module being executed on argument literals.
class ComputationRunner {
 public:
  virtual ~ComputationRunner() = default;
  virtual StatusOr<Literal> Run(const Computation& computation, Operands arguments) = 0;
};

// Per-execution generator state of the `rng` op: a counter-based stream keyed
// by ExecuteOptions::rng_seed, so equal seeds give equal numbers.
struct RngStream {
  uint64_t key = 0;
  uint64_t counter = 0;
  // Next 64 random bits of the stream.
  uint64_t Next();
};

struct EvalContext {
  ComputationRunner* runner = nullptr;
  HostQueues* queues = nullptr;
  RngStream* rng = nullptr;
};

}  // namespace kiln::interpreter
