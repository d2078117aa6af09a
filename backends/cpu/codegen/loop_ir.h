// Counted loops in LLVM IR: `for (i = begin; i < end; ++i) body(i)`, in the
// simple form LLVM's loop passes recognise and vectorise.
#pragma once

#include <functional>

#include <llvm/IR/IRBuilder.h>

#include "core/status.h"

namespace kiln::cpu::codegen {

// Emits the loop at the builder's insertion point; afterwards the builder
// points at the loop's exit block. `body` is called with the induction
// variable and the builder inside the loop body; it may add blocks.
Status EmitCountedLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const char* name,
                       const std::function<Status(llvm::Value*)>& body);

}  // namespace kiln::cpu::codegen
