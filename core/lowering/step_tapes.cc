#include "core/lowering/step_tapes.h"

#include <algorithm>
#include <climits>

#include "core/lowering/step_runner.h"

namespace kiln {
namespace {

int64_t EntryBytes(const ProgramStep& step) {
  int64_t bytes = 0;
  for (int64_t part : step.bytes) bytes += part;
  return bytes;
}

}  // namespace

StepTapes::~StepTapes() {
  for (auto& [number, tape] : tapes_) {
    if (tape.slot >= 0) executor_.ReleaseSlot(tape.slot);
  }
}

Status StepTapes::Grow(Tape& tape, int64_t number, int64_t needed) {
  // Doubling: the copies over all pushes cost less than twice the bytes pushed.
  const int64_t capacity = std::max(needed, tape.capacity > INT64_MAX / 2 ? INT64_MAX : 2 * tape.capacity);
  StatusOr<int> grown = executor_.AddSlot(capacity);
  if (!grown.ok()) {
    return Status(grown.status().code(), backend_ + ": tape " + std::to_string(number) + " needs " +
                                             std::to_string(capacity) + " bytes of device memory (it holds " +
                                             std::to_string(tape.size) + "): " + grown.status().message());
  }
  statistics_.growths += 1;
  statistics_.capacity_bytes += capacity;
  statistics_.peak_capacity_bytes = std::max(statistics_.peak_capacity_bytes, statistics_.capacity_bytes);
  if (tape.slot >= 0) {
    if (tape.size > 0) KILN_RETURN_IF_ERROR(executor_.CopyRange(tape.slot, 0, *grown, 0, tape.size));
    executor_.ReleaseSlot(tape.slot);
    statistics_.capacity_bytes -= tape.capacity;
  }
  tape.slot = *grown;
  tape.capacity = capacity;
  return OkStatus();
}

Status StepTapes::Push(const ProgramStep& step) {
  if (step.sources.size() != step.bytes.size())
    return Internal(backend_, ": tape push '", step.name, "' has ", step.sources.size(), " arrays and ",
                    step.bytes.size(), " sizes");
  Tape& tape = tapes_[step.tape];
  const int64_t bytes = EntryBytes(step);
  if (bytes > INT64_MAX - tape.size)
    return ResourceExhausted(backend_, ": tape ", step.tape, " would hold more than ", INT64_MAX, " bytes");
  if (tape.size + bytes > tape.capacity) KILN_RETURN_IF_ERROR(Grow(tape, step.tape, tape.size + bytes));
  for (size_t i = 0; i < step.sources.size(); ++i) {
    if (step.bytes[i] == 0) continue;
    KILN_RETURN_IF_ERROR(executor_.CopyRange(step.sources[i], 0, tape.slot, tape.size, step.bytes[i]));
    tape.size += step.bytes[i];
  }
  statistics_.pushes += 1;
  statistics_.bytes += bytes;
  statistics_.peak_bytes = std::max(statistics_.peak_bytes, statistics_.bytes);
  return OkStatus();
}

Status StepTapes::Pop(const ProgramStep& step) {
  if (step.targets.size() != step.bytes.size())
    return Internal(backend_, ": tape pop '", step.name, "' has ", step.targets.size(), " arrays and ",
                    step.bytes.size(), " sizes");
  Tape& tape = tapes_[step.tape];
  const int64_t bytes = EntryBytes(step);
  if (bytes > tape.size) {
    return Internal(backend_, ": '", step.name, "' pops ", bytes, " bytes from tape ", step.tape,
                    ", which holds ", tape.size, " (a pop without its push)");
  }
  // The entry's arrays lie in push order from the entry's start.
  tape.size -= bytes;
  int64_t offset = tape.size;
  for (size_t i = 0; i < step.targets.size(); ++i) {
    if (step.bytes[i] == 0) continue;
    KILN_RETURN_IF_ERROR(executor_.CopyRange(tape.slot, offset, step.targets[i], 0, step.bytes[i]));
    offset += step.bytes[i];
  }
  statistics_.pops += 1;
  statistics_.bytes -= bytes;
  return OkStatus();
}

}  // namespace kiln
