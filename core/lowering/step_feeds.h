// What an infeed step takes off a backend's infeed queue and what an outfeed
// step puts on its outfeed queue, for every backend's runner: the device
// backends' step runner (step_runner.cc) and the cpu's feed thunks move the
// arrays between the queue and their own memory, and agree on the rest here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/interpreter/eval_context.h"
#include "core/literal.h"
#include "core/shape.h"
#include "core/status.h"

namespace kiln {

// The arrays of the next value on the infeed queue, in leaf order, taken off
// the queue. FAILED_PRECONDITION when the queue is empty (naming
// kiln_client_transfer_to_infeed), INVALID_ARGUMENT when its value is not of
// `shape`, INTERNAL when it has other than `arrays` arrays. An infeed of an
// empty tuple takes nothing (as the interpreter has it). `backend` names the
// backend in errors. Thread-safe (the queue's mutex).
StatusOr<std::vector<Literal>> TakeInfeedArrays(interpreter::HostQueues& queues, const Shape& shape,
                                                size_t arrays, const std::string& backend);

// The array leaves of `shape`, in order: the arrays an outfeed step reads.
std::vector<Shape> FeedArrayShapes(const Shape& shape);

// Puts the value of `shape` whose arrays are `arrays` (in leaf order, as
// FeedArrayShapes gives them) on the outfeed queue. INTERNAL when there are
// too few. Thread-safe.
Status PutOutfeedValue(interpreter::HostQueues& queues, const Shape& shape, std::vector<Literal> arrays,
                       const std::string& backend);

}  // namespace kiln
