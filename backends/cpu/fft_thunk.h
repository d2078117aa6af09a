// fft without the interpreter's literals: the transforms of
// core/interpreter/fft.h (Eigen's FFT module) run straight on the operand's
// and the result's slots, their lines spread over the intra-op threads.
#pragma once

#include <utility>

#include "backends/cpu/thunk.h"
#include "core/interpreter/fft.h"

namespace kiln::cpu {

class FftThunk : public Thunk {
 public:
  FftThunk(int input, int output, interpreter::FftGeometry geometry)
      : Thunk({input}, {output}), geometry_(std::move(geometry)) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "fft"; }

 private:
  interpreter::FftGeometry geometry_;
};

}  // namespace kiln::cpu
