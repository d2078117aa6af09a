// Counted loops in LLVM IR: `for (i = begin; i < end; ++i) body(i)`, in the
// simple form LLVM's loop passes recognise and vectorise.
#pragma once

#include <cstdint>
#include <functional>

#include <llvm/IR/IRBuilder.h>

#include "core/status.h"

namespace kiln::llvm_ir {

// Loops whose body adds into an accumulator on every iteration (reductions,
// dot and convolution sums) may be interleaved by the vectoriser: several
// independent partial sums keep a reduction from waiting on one add chain
// (softmax over f32[4096,1024]: 1.5 -> 1.1 ms on 2 threads). Every other loop
// is marked not to interleave, which there would only cost compile time and
// code size; an accumulating loop that calls a vector math function (exp:
// a long body on its own) interleaves twofold at most.
//
// A kPlainTail loop is a plain loop whose trip count is not known at compile
// time and is usually short (what is left of a row after its full blocks):
// it is vectorised as one loop of masked vector operations instead of a
// vector loop, a narrower vector loop for its remainder and a scalar loop
// for theirs, which took a third of such a kernel's compile time.
enum class LoopKind : uint8_t { kPlain, kAccumulating, kPlainTail };

// Emits the loop at the builder's insertion point; afterwards the builder
// points at the loop's exit block. `body` is called with the induction
// variable and the builder inside the loop body; it may add blocks.
Status EmitCountedLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const char* name,
                       const std::function<Status(llvm::Value*)>& body, LoopKind kind = LoopKind::kPlain);

}  // namespace kiln::llvm_ir
