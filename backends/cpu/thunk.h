// Thunks: the steps an executable runs, planned entirely at compile time.
// A thunk names its arrays by slot number; at run time a per-execution table
// maps each slot to memory (an argument, a constant, a result buffer, a place
// in the arena, or, for values a loop or branch binds, whatever it set).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/stop_condition.h"

namespace kiln::cpu {

class HostStepRuntime;
class IntraOpThreadPool;
class LibraryRuntime;

// Per-execution state; never shared between executions.
struct ExecutionContext {
  void** slots = nullptr;
  const IntraOpThreadPool* pool = nullptr;
  LibraryRuntime* library = nullptr;
  // The feed queues and tapes the feed and tape thunks use (host_step_thunks.h).
  HostStepRuntime* host_steps = nullptr;
  // Checked between thunks and at loop back-edges; never null while running.
  const StopCondition* stop = nullptr;
};

class Thunk {
 public:
  Thunk(std::vector<int> inputs, std::vector<int> outputs)
      : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  virtual ~Thunk() = default;
  Thunk(const Thunk&) = delete;
  Thunk& operator=(const Thunk&) = delete;

  virtual Status Run(ExecutionContext& context) const = 0;
  // A short name for statistics and errors ("kernel", "dot", ...).
  virtual std::string_view kind() const = 0;

  // The instruction the thunk runs, for profiles and messages.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  // Slots read and written in the sequence that owns the thunk; what buffer
  // assignment uses for liveness.
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }

 protected:
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  std::string name_;
};

struct ThunkSequence {
  std::vector<std::unique_ptr<Thunk>> thunks;
  Status Run(ExecutionContext& context) const;
};

}  // namespace kiln::cpu
