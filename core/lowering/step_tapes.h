// The tapes of reverse-mode loops (core/tape_custom_calls.h) on a device:
// one growable device buffer per tape number for one execution, which the
// step runner owns. A push is device-to-device copies of the pushed slots
// onto the tape's end and a pop the copies back from it: no host round
// trip per iteration. A full tape grows to twice its capacity (or to what
// the push needs, when more) with one device copy of what it holds, so N
// entries of B bytes hold less than 2 * N * B bytes, as on the cpu; the
// buffer it outgrew is released at once (the executor frees it when the
// queued copy is done). Everything is released when the execution ends.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/lowering/step_program.h"
#include "core/status.h"

namespace kiln {

class ProgramStepExecutor;

// How much the tapes of one execution held, for tests and statistics.
struct StepTapeStatistics {
  int64_t pushes = 0;
  int64_t pops = 0;
  int64_t growths = 0;              // buffers allocated (the first one included)
  int64_t bytes = 0;                // bytes held now
  int64_t peak_bytes = 0;           // the most bytes held at once
  int64_t capacity_bytes = 0;       // bytes reserved now
  int64_t peak_capacity_bytes = 0;  // the most reserved at once (a growth's old buffer included)
};

class StepTapes {
 public:
  StepTapes(ProgramStepExecutor& executor, const std::string& backend)
      : executor_(executor), backend_(backend) {}
  // Releases every tape's buffer.
  ~StepTapes();
  StepTapes(const StepTapes&) = delete;
  StepTapes& operator=(const StepTapes&) = delete;

  // Runs a kTapePush step: RESOURCE_EXHAUSTED naming the bytes when the
  // tape cannot grow.
  Status Push(const ProgramStep& step);
  // Runs a kTapePop step: INTERNAL naming the tape when it holds less than
  // the entry (a pop without its push).
  Status Pop(const ProgramStep& step);

  const StepTapeStatistics& statistics() const { return statistics_; }

 private:
  struct Tape {
    int slot = -1;  // the executor's added slot; -1 before the first push
    int64_t size = 0;
    int64_t capacity = 0;
  };
  Status Grow(Tape& tape, int64_t number, int64_t needed);

  ProgramStepExecutor& executor_;
  const std::string& backend_;
  std::map<int64_t, Tape> tapes_;
  StepTapeStatistics statistics_;
};

}  // namespace kiln
