// A few vulkan tests check lavapipe's own properties: a CPU device named
// llvmpipe, its serial sort rows. The ctest environment chooses lavapipe by
// VK_DRIVER_FILES; on a GPU's driver (the device checks on a lent GPU run
// the same test binaries) those tests skip and say why. Where the
// environment names lavapipe they run and fail on any other device, so CI
// cannot pass them vacuously.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace kiln::vulkan {

// Empty when VK_DRIVER_FILES (or the older VK_ICD_FILENAMES) names
// lavapipe's ICD; else why a lavapipe-only test does not apply.
inline std::string WhyNotLavapipeEnvironment() {
  const char* files = std::getenv("VK_DRIVER_FILES");
  if (files == nullptr) files = std::getenv("VK_ICD_FILENAMES");
  if (files != nullptr && std::string_view(files).find("lvp_icd") != std::string_view::npos) return "";
  return std::string("this test checks lavapipe's own properties, and VK_DRIVER_FILES (") +
         (files != nullptr ? files : "unset") + ") does not name lavapipe's ICD (lvp_icd...json)";
}

}  // namespace kiln::vulkan
