// Runs a module on the vulkan backend (lavapipe in the tests) and on the
// interpreter with the same arguments and compares every result leaf: NaN
// where the interpreter has NaN, infinities exactly, other values within
// 1e-4 + 1e-5 relative (the device may sum in another order). Returns how
// many NaN the interpreter's results hold, so a test can check that its
// planted special values reached the outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln::vulkan {

inline int64_t ExpectVulkanAgreesWithInterpreter(const Module& module, const std::vector<Literal>& arguments,
                                                 const std::string& what) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  EXPECT_TRUE(vulkan.ok()) << "the vulkan backend is needed (lavapipe: .ci/install-deps): "
                           << vulkan.status().ToString();
  StatusOr<std::unique_ptr<Backend>> interpreter = CreateBackend("interpreter");
  EXPECT_TRUE(interpreter.ok()) << interpreter.status().ToString();
  if (!vulkan.ok() || !interpreter.ok()) return 0;
  StatusOr<std::vector<Literal>> want = testing::ExecuteLeaves(**interpreter, module, arguments);
  StatusOr<std::vector<Literal>> got = testing::ExecuteLeaves(**vulkan, module, arguments);
  EXPECT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_TRUE(got.ok()) << what << ": " << got.status().ToString();
  if (!want.ok() || !got.ok()) return 0;
  EXPECT_EQ(got->size(), want->size()) << what;
  int64_t nans = 0;
  for (size_t leaf = 0; leaf < want->size() && leaf < got->size(); ++leaf) {
    const Literal& w = (*want)[leaf];
    const Literal& g = (*got)[leaf];
    EXPECT_EQ(g.shape(), w.shape()) << what << " leaf " << leaf;
    if (g.shape() != w.shape()) continue;
    for (int64_t i = 0; i < w.element_count(); ++i) {
      const double expected = w.GetAsDouble(i), actual = g.GetAsDouble(i);
      if (std::isnan(expected)) {
        ++nans;
        EXPECT_TRUE(std::isnan(actual)) << what << " leaf " << leaf << " element " << i << " is " << actual;
      } else if (std::isinf(expected)) {
        EXPECT_EQ(actual, expected) << what << " leaf " << leaf << " element " << i;
      } else {
        EXPECT_NEAR(actual, expected, 1e-4 + 1e-5 * std::fabs(expected))
            << what << " leaf " << leaf << " element " << i;
      }
    }
  }
  return nans;
}

}  // namespace kiln::vulkan
