// fft on the slots: Kiln's own FFT (fft_transform.h), its plans built with
// the thunk, its lines spread over the intra-op threads.
#pragma once

#include <memory>

#include "backends/cpu/fft_transform.h"
#include "backends/cpu/thunk.h"

namespace kiln::cpu {

class FftThunk : public Thunk {
 public:
  FftThunk(int input, int output, const interpreter::FftGeometry& geometry)
      : Thunk({input}, {output}), transform_(FftTransform::Create(geometry)) {}

  Status Run(ExecutionContext& context) const override;
  std::string_view kind() const override { return "fft"; }

 private:
  std::unique_ptr<FftTransform> transform_;
};

}  // namespace kiln::cpu
