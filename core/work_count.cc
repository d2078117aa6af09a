#include "core/work_count.h"

#include <atomic>

namespace kiln {
namespace {

std::atomic<uint64_t> instructions_walked{0};
std::atomic<uint64_t> shapes_verified{0};

}  // namespace

void CountInstructionsWalked(size_t instructions) {
  instructions_walked.fetch_add(instructions, std::memory_order_relaxed);
}

uint64_t InstructionsWalked() { return instructions_walked.load(std::memory_order_relaxed); }

void CountShapesVerified(size_t instructions) {
  shapes_verified.fetch_add(instructions, std::memory_order_relaxed);
}

uint64_t ShapesVerified() { return shapes_verified.load(std::memory_order_relaxed); }

}  // namespace kiln
