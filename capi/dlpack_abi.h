// DLPack's structs as the C ABI exchanges them. Debian's dlpack.h is 0.6,
// which predates DLPack 1.0's versioned tensor and the bool type code; this
// header adds them, with the layout DLPack 1.x fixes, when the installed
// header lacks them, so the library speaks both whatever dlpack.h it was
// built against.
#pragma once

#include <cstdint>

#include <dlpack/dlpack.h>

#ifndef DLPACK_MAJOR_VERSION
#define KILN_DLPACK_SUPPLIES_VERSIONED 1

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};

// DLPack 1.x: `version` first and unchanged in every later 1.x, then the
// owner's context and deleter, the flags, and the tensor.
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)
#endif

namespace kiln::capi {

// The DLPack version the library produces and the major one it accepts.
inline constexpr uint32_t kDlpackMajor = 1;
inline constexpr uint32_t kDlpackMinor = 0;
// kDLBool, which DLPack 0.8 added to DLDataTypeCode.
inline constexpr uint8_t kDlpackBoolCode = 6;

}  // namespace kiln::capi
