// `rng` (distribution=rng_uniform / rng_normal) without the interpreter,
// from the execution's one counter-based stream (core/rng_stream.h). An
// op's elements take consecutive draws of that stream (two each for normal,
// one for uniform, none for an empty integer range), so element i's draws
// are known without the others': the elements are split over the thread
// pool by index range, and the draws are computed many at a time in vector
// lanes (AVX-512, AVX2 or the baseline ISA, chosen at run time). Uniform
// floats and integers are the interpreter's numbers bit for bit. Normal
// samples are its formula on the same draws with Highway's vector log and
// cos instead of libm's (rng_normal_lanes.h): they can differ from the
// interpreter's in the last bits of the double before rounding to the
// element type. Neither depends on the thread count.
#pragma once

#include <cstdint>
#include <optional>

#include "backends/cpu/rng_bit_generator_thunk.h"
#include "backends/cpu/thunk.h"
#include "core/ir.h"

namespace kiln::cpu {

struct RngPlan {
  ElementType type = ElementType::kF32;
  bool normal = false;
  int64_t element_count = 0;
};

// The plan of an `rng` whose result is a float array (uniform or normal) or
// an integer array (uniform) with two scalar bounds of its type; nullopt for
// anything else (the interpreter path then reports what is wrong).
std::optional<RngPlan> PlanRng(const Instruction& rng);

// RngUnitInterval(draw) (core/rng_stream.h) computed without a 64-bit
// integer to double conversion, which AVX2 lacks: the 53 bits as two exactly
// converted halves, summed exactly. Equal to it for every draw.
double RngVectorUnitInterval(uint64_t draw);

// Writes the elements of `plan` into `out` (row-major, element_count of
// plan.type), drawn from the stream keyed `key` after its first `counter`
// draws, with bounds `low` and `high` (one element of plan.type each: low
// and high, or mean and standard deviation), computed with the kernels of
// `isa` over `pool`'s threads (null: the calling thread only). Returns the
// draws the elements took. The numbers do not depend on the pool, nor on
// `isa` except normal samples' last bits.
uint64_t GenerateRng(const RngPlan& plan, const void* low, const void* high, uint64_t key, uint64_t counter,
                     void* out, RngVectorIsa isa, const IntraOpThreadPool* pool);

class RngThunk : public Thunk {
 public:
  RngThunk(int low, int high, int result, RngPlan plan) : Thunk({low, high}, {result}), plan_(plan) {}

  // Takes its draws from the execution's stream (the interpreter's, which
  // the interpreter path's rng ops of the same execution also advance).
  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "rng"; }

 private:
  RngPlan plan_;
};

}  // namespace kiln::cpu
