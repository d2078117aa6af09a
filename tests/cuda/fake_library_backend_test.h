// What the tests of the CUDA backend's vendor-library paths (cuBLAS dots,
// cuDNN convolutions) share on machines without a GPU: a fixture with the
// cuda backend on the fake driver (fake_driver/) and the interpreter to
// check it against, the test hooks of the fake libraries found by dlsym,
// and the checks that a program ran as one library call or as one kernel.
#ifndef KILN_TESTS_CUDA_FAKE_LIBRARY_BACKEND_TEST_H_
#define KILN_TESTS_CUDA_FAKE_LIBRARY_BACKEND_TEST_H_

#include <dlfcn.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/literal.h"
#include "tests/unit/test_util.h"

namespace kiln::testing {

// The value of the environment variable `name`, or "" where it is unset.
inline std::string EnvironmentValue(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The library at the path in the environment variable `path_variable`, or
// nullptr. The same path gives the library the backend loaded, so its
// hooks see the backend's calls.
inline void* OpenLibraryNamedBy(const char* path_variable) {
  return dlopen(EnvironmentValue(path_variable).c_str(), RTLD_NOW | RTLD_LOCAL);
}

// The symbol `name` of `library` as a `Hook`; nullptr where either is missing.
template <typename Hook>
Hook FindHook(void* library, const char* name) {
  return library != nullptr ? reinterpret_cast<Hook>(dlsym(library, name)) : nullptr;
}

// The cuda backend on the fake driver, which runs no kernels and counts
// their launches, and the interpreter. A missing fake driver or backend
// fails the test: these tests never pass without running.
class FakeDriverBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(EnvironmentValue("KILN_CUDA_DRIVER").empty())
        << "KILN_CUDA_DRIVER is not set: run this test through ctest";
    StatusOr<std::unique_ptr<Backend>> cuda = CreateBackend("cuda");
    ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
    cuda_ = std::move(cuda).value();
    ASSERT_FALSE(cuda_->devices().empty());
    StatusOr<std::unique_ptr<Backend>> interpreter = CreateBackend("interpreter");
    ASSERT_TRUE(interpreter.ok()) << interpreter.status().ToString();
    interpreter_ = std::move(interpreter).value();
    launch_count_ =
        FindHook<int (*)()>(OpenLibraryNamedBy("KILN_CUDA_DRIVER"), "kiln_fake_cuda_launch_count");
    ASSERT_NE(launch_count_, nullptr) << "KILN_CUDA_DRIVER is not the fake driver";
  }

  const std::string& Description() const { return cuda_->devices()[0]->description(); }

  // Runs `text` on cuda, expecting it to run and to launch exactly one
  // kernel and make no call counted by `library_calls` (nullptr: not
  // counted), whose name `library` the messages give.
  void ExpectOneKernel(const std::string& text, const std::vector<Literal>& arguments, int (*library_calls)(),
                       const char* library) {
    std::unique_ptr<Module> module = ParseHloOrFail(text);
    ASSERT_NE(module, nullptr);
    const int launches = launch_count_();
    const int calls = library_calls != nullptr ? library_calls() : 0;
    StatusOr<Literal> result = Execute(*cuda_, *module, arguments);
    ASSERT_TRUE(result.ok()) << result.status().ToString() << "\n" << text;
    EXPECT_EQ(launch_count_(), launches + 1) << "it did not run as a kernel:\n" << text;
    if (library_calls != nullptr) {
      EXPECT_EQ(library_calls(), calls) << library << " ran:\n" << text;
    }
  }

  // Runs `text` on the interpreter and on cuda, expecting cuda to make
  // exactly one call counted by `library_calls` and launch no kernel, and
  // the results to be equal. Returns the call's index among the library's
  // calls, or -1 where anything failed.
  int ExpectOneLibraryCall(const std::string& text, const std::vector<Literal>& arguments,
                           int (*library_calls)(), const char* library) {
    std::unique_ptr<Module> module = ParseHloOrFail(text);
    if (module == nullptr) return -1;
    StatusOr<Literal> expected = Execute(*interpreter_, *module, arguments);
    EXPECT_TRUE(expected.ok()) << expected.status().ToString();
    const int launches = launch_count_();
    const int calls = library_calls();
    StatusOr<Literal> got = Execute(*cuda_, *module, arguments);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(launch_count_(), launches) << "a kernel ran:\n" << text;
    EXPECT_EQ(library_calls(), calls + 1) << "not one " << library << " call:\n" << text;
    if (!expected.ok() || !got.ok() || library_calls() != calls + 1) return -1;
    EXPECT_TRUE(*got == *expected) << text << "cuda (" << library << "): " << got->ToString()
                                   << "\ninterpreter: " << expected->ToString();
    return calls;
  }

  std::unique_ptr<Backend> cuda_;
  std::unique_ptr<Backend> interpreter_;
  int (*launch_count_)() = nullptr;
};

}  // namespace kiln::testing

#endif  // KILN_TESTS_CUDA_FAKE_LIBRARY_BACKEND_TEST_H_
