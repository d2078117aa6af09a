// The per-execution tapes of the kiln_tape_push / kiln_tape_pop custom calls
// (core/tape_custom_calls.h): one stack of byte entries per tape number.
// Each tape is one buffer that doubles when full (amortised constant time
// per push), so N entries of B bytes never take 2 * N * B bytes or more.
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "core/interpreter/eval_context.h"

namespace kiln::interpreter {

// What the tapes of one execution hold, summed over tapes.
struct TapeStatistics {
  int64_t pushes = 0;
  int64_t bytes = 0;                // held now
  int64_t capacity_bytes = 0;       // reserved now
  int64_t peak_bytes = 0;           // the most held at once
  int64_t peak_capacity_bytes = 0;  // the most reserved at once
};

class Tapes {
 public:
  // Runs a kiln_tape_push or kiln_tape_pop instruction.
  StatusOr<Literal> Evaluate(const Instruction& instruction, Operands operands);
  const TapeStatistics& statistics() const { return statistics_; }

 private:
  struct Tape {
    std::unique_ptr<uint8_t[]> data;
    int64_t size = 0;
    int64_t capacity = 0;
  };
  Status Push(Tape& tape, Operands values);
  StatusOr<Literal> Pop(Tape& tape, const Instruction& instruction, int32_t counter);

  std::map<int64_t, Tape> tapes_;
  TapeStatistics statistics_;
};

}  // namespace kiln::interpreter
