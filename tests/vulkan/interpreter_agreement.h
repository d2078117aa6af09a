// Runs a module on the vulkan backend (lavapipe in the tests) and on the
// interpreter with the same arguments: RunOnInterpreterAndVulkan gives both
// results; ExpectVulkanAgreesWithInterpreter compares every result leaf:
// NaN where the interpreter has NaN, infinities exactly, other values
// within 1e-4 + 1e-5 relative (the device may sum in another order), and
// returns how many NaN the interpreter's results hold, so a test can check
// that its planted special values reached the outputs.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/unit/test_util.h"

namespace kiln::vulkan {

// The result leaves of `module` on the interpreter and on the vulkan
// backend, run with `arguments`.
struct InterpreterAndVulkanLeaves {
  std::vector<Literal> interpreter, vulkan;
};

inline StatusOr<InterpreterAndVulkanLeaves> RunOnInterpreterAndVulkan(const Module& module,
                                                                      const std::vector<Literal>& arguments) {
  StatusOr<std::unique_ptr<Backend>> vulkan = CreateBackend("vulkan");
  if (!vulkan.ok()) {
    return Status(vulkan.status().code(),
                  "the vulkan backend is needed (lavapipe: .ci/install-deps): " + vulkan.status().ToString());
  }
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  InterpreterAndVulkanLeaves leaves;
  KILN_ASSIGN_OR_RETURN(leaves.interpreter, testing::ExecuteLeaves(*interpreter, module, arguments));
  KILN_ASSIGN_OR_RETURN(leaves.vulkan, testing::ExecuteLeaves(**vulkan, module, arguments));
  return leaves;
}

inline int64_t ExpectVulkanAgreesWithInterpreter(const Module& module, const std::vector<Literal>& arguments,
                                                 const std::string& what) {
  StatusOr<InterpreterAndVulkanLeaves> leaves = RunOnInterpreterAndVulkan(module, arguments);
  EXPECT_TRUE(leaves.ok()) << what << ": " << leaves.status().ToString();
  if (!leaves.ok()) return 0;
  const std::vector<Literal>* want = &leaves->interpreter;
  const std::vector<Literal>* got = &leaves->vulkan;
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
