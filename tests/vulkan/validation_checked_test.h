// The vulkan tests that run programs on a device fail on any validation
// message they raised (the ctest environment turns the core and
// synchronization layers on): messages left by earlier tests are dropped
// when a test starts, since those tests reported them.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/vulkan/vulkan_instance.h"

namespace kiln::vulkan {

// Expects that no validation message was recorded since the last call.
inline void ExpectNoValidationMessages() {
  const std::vector<std::string> messages = Instance::TakeValidationMessages();
  EXPECT_TRUE(messages.empty()) << messages.size() << " validation messages, the first: "
                                << (messages.empty() ? "" : messages.front());
}

// A test (Base: ::testing::Test or a ::testing::TestWithParam) that fails on
// the validation messages it raised.
template <typename Base = ::testing::Test>
class ValidationCheckedTest : public Base {
 protected:
  void SetUp() override { Instance::TakeValidationMessages(); }
  void TearDown() override { ExpectNoValidationMessages(); }
};

}  // namespace kiln::vulkan
