// Forward f32 convolution through oneDNN's convolution primitive, for the
// geometries it can express: 1 to 3 spatial dimensions, any dimension numbers
// (described to oneDNN by strides, so no transpose is needed), strides,
// non-negative padding, window dilation and feature groups. Input dilation
// (transposed convolution), negative padding, window reversal and batch
// groups are left to the caller's own path.
//
// The primitive chooses its preferred (blocked) layouts; inputs are reordered
// into them and the result back out on every run, into per-thread scratch
// memory. A convolution large enough for several threads is cut into pieces
// (images of the batch, or bands of output rows) that the intra-op pool runs,
// each on one-thread primitives (see onednn_runtime.h for why); the pieces
// are planned once per pool thread count.
#pragma once

#include <memory>
#include <string>

#include "backends/cpu/convolution_thunk.h"
#include "core/status.h"

namespace kiln::cpu {

class IntraOpThreadPool;

class OneDnnConvolution {
 public:
  // True when this build has oneDNN in it.
  static bool Available();
  // Null when oneDNN is not built in or cannot run `geometry`. Creates the
  // primitive for `pool_threads` (the backend's thread count) right away.
  static std::unique_ptr<OneDnnConvolution> Create(const ConvolutionGeometry& geometry, int pool_threads);
  ~OneDnnConvolution();
  OneDnnConvolution(const OneDnnConvolution&) = delete;
  OneDnnConvolution& operator=(const OneDnnConvolution&) = delete;

  // Row-major operands as ConvolutionGeometry describes them; small
  // convolutions run on the calling thread alone. `pool` may be null (one
  // thread). Safe to call from several threads at once.
  Status Run(const float* input, const float* kernel, float* output, const IntraOpThreadPool* pool) const;

  // oneDNN's name for the implementation it picked ("brg:avx512_core", ...).
  std::string implementation() const;

  // Whether a primitive for some thread count may run Winograd's algorithm
  // (it is asked for first where the geometry and precision allow it).
  bool may_use_winograd() const;

  // How many pieces a pool of `pool_threads` runs the convolution in.
  size_t pieces(int pool_threads) const;

 private:
  struct Impl;
  explicit OneDnnConvolution(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::cpu
