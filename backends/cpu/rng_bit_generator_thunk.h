// rng-bit-generator without the interpreter: XLA's Threefry-2x32 and
// Philox-4x32 bits in XLA's element layout (core/rng_bit_layout.h), equal
// bit for bit to the interpreter's. Counter blocks are enciphered many at a
// time, one block per vector lane (AVX-512, AVX2 or the baseline ISA, chosen
// at run time), and the output is split over the thread pool.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "backends/cpu/thunk.h"
#include "core/ir.h"
#include "core/rng_bit_layout.h"

namespace kiln::cpu {

struct RngBitPlan {
  RngBitLayout layout;
  int64_t element_count = 0;
  int element_bytes = 4;  // 1, 2, 4 or 8
};

// The plan for an rng-bit-generator whose state is u64[2] or u64[3] and
// whose bits are integers of 8 to 64 bits; nullopt for anything else (the
// library path then reports what is wrong).
std::optional<RngBitPlan> PlanRngBitGenerator(const Instruction& instruction);

// The instruction sets the block ciphers are compiled for.
enum class RngVectorIsa { kBaseline, kAvx2, kAvx512 };
// Those this CPU runs, the baseline first and the best last.
std::vector<RngVectorIsa> SupportedRngVectorIsas();

// Writes the bits of `plan` for `state` (state_words u64 words) into `bits`
// (element_count * element_bytes bytes, row-major) and the advanced state
// into `new_state` (which may be `state`), with the ciphers of `isa`, over
// `pool`'s threads (null: the calling thread only).
void GenerateRngBits(const RngBitPlan& plan, const uint64_t* state, uint64_t* new_state, void* bits,
                     RngVectorIsa isa, const IntraOpThreadPool* pool);

class RngBitGeneratorThunk : public Thunk {
 public:
  // outputs: {new state, bits}.
  RngBitGeneratorThunk(int state, int new_state, int bits, RngBitPlan plan)
      : Thunk({state}, {new_state, bits}), plan_(plan) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "rng-bit-generator"; }

 private:
  RngBitPlan plan_;
};

}  // namespace kiln::cpu
