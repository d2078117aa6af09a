// fft through cuFFT on the CUDA backend, on machines without a GPU: the
// fake driver (fake_driver/, device memory is host memory) and the fake
// cuFFT (fake_cufft/, which computes each transform on the host as a naive
// DFT from the plan it was given and records each plan and execution). A
// forward transform's result is checked against the interpreter, so a
// wrong type, size, batch or distance fails; an inverse's unscaled cuFFT
// output is checked against N times the interpreter's, and the module the
// CUDA passes made against the 1/N factor (the fake driver runs no kernel,
// so the scaling kernel is only seen launching).
//
// cuFFT and the driver load once per process, so each scenario is its own
// ctest (tests/cuda/CMakeLists.txt) with its own environment, selecting one
// suite with --gtest_filter:
//   CufftPlanning        no environment: PlanCufftTransform and CufftCalls
//   CufftFft             the fake driver and the fake cuFFT
//   ForcedKernelFft      ... and KILN_CUDA_FFT=kernel
//   MissingCufft         KILN_CUFFT_LIBRARY = a path with no file
//   IncompleteCufft      KILN_CUFFT_LIBRARY = a library without cuFFT's entries
//   RequiredCufftMissing KILN_CUDA_FFT=cufft and no cuFFT
//   BadFftSetting        KILN_CUDA_FFT=fast
#include <cmath>
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/cuda/cuda_program.h"
#include "backends/cuda/cufft_transform.h"
#include "core/backend.h"
#include "core/literal.h"
#include "tests/cuda/fake_cufft/fake_cufft.h"
#include "tests/cuda/fake_library_backend_test.h"

namespace kiln {
namespace {

using cuda::CufftTransform;
using cuda::fake::FakeFftExec;
using cuda::fake::FakeFftPlan;
using testing::Execute;
using testing::ExecuteLeaves;
using testing::LiteralNear;
using testing::ParseHloOrFail;

// Values of no pattern a transform could hide a wrong index in.
Literal Values(const Shape& shape, int salt) {
  Literal literal(shape);
  const bool f64 = shape.element_type() == ElementType::kF64 || shape.element_type() == ElementType::kC128;
  const size_t count = static_cast<size_t>(shape.element_count()) * (IsComplex(shape.element_type()) ? 2 : 1);
  for (size_t i = 0; i < count; ++i) {
    const double value = std::sin(static_cast<double>(i * 7 + static_cast<size_t>(salt)) * 0.37) * 2;
    if (f64) {
      literal.data<double>()[i] = value;
    } else {
      literal.data<float>()[i] = static_cast<float>(value);
    }
  }
  return literal;
}

std::string FftModule(const std::string& operand, const std::string& result, const std::string& type,
                      const std::string& lengths) {
  return "HloModule fft\nENTRY main {\n  x = " + operand + " parameter(0)\n  ROOT f = " + result +
         " fft(x), fft_type=" + type + ", fft_length={" + lengths + "}\n}\n";
}

// The module's only fft instruction.
const Instruction* FindFft(const Module& module) {
  for (const auto& instruction : module.entry()->instructions())
    if (instruction->opcode == Opcode::kFft) return instruction.get();
  return nullptr;
}

TEST(CufftPlanning, EachTypeRankAndBatchIsOnePlan) {
  struct Case {
    std::string module;
    cuda::cufftType type;
    int direction, rank, batch, idist, odist;
    std::array<int, 3> n, inembed, onembed;
    bool overwrites_input;
  };
  const std::vector<Case> cases = {
      {FftModule("c64[6,8]", "c64[6,8]", "FFT", "8"),
       cuda::CUFFT_C2C,
       cuda::CUFFT_FORWARD,
       1,
       6,
       8,
       8,
       {8, 0, 0},
       {8, 0, 0},
       {8, 0, 0},
       false},
      {FftModule("c128[2,3,4,5]", "c128[2,3,4,5]", "IFFT", "4,5"),
       cuda::CUFFT_Z2Z,
       cuda::CUFFT_INVERSE,
       2,
       6,
       20,
       20,
       {4, 5, 0},
       {4, 5, 0},
       {4, 5, 0},
       false},
      {FftModule("f32[3,4,6]", "c64[3,4,4]", "RFFT", "3,4,6"),
       cuda::CUFFT_R2C,
       cuda::CUFFT_FORWARD,
       3,
       1,
       72,
       48,
       {3, 4, 6},
       {3, 4, 6},
       {3, 4, 4},
       false},
      {FftModule("c128[5,4]", "f64[5,6]", "IRFFT", "6"),
       cuda::CUFFT_Z2D,
       cuda::CUFFT_FORWARD,
       1,
       5,
       4,
       6,
       {6, 0, 0},
       {4, 0, 0},
       {6, 0, 0},
       true},
      {FftModule("f64[7]", "c128[4]", "RFFT", "7"),
       cuda::CUFFT_D2Z,
       cuda::CUFFT_FORWARD,
       1,
       1,
       7,
       4,
       {7, 0, 0},
       {7, 0, 0},
       {4, 0, 0},
       false},
      {FftModule("c64[2,3,5]", "f32[2,3,8]", "IRFFT", "3,8"),
       cuda::CUFFT_C2R,
       cuda::CUFFT_FORWARD,
       2,
       2,
       15,
       24,
       {3, 8, 0},
       {3, 5, 0},
       {3, 8, 0},
       true},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Module> module = ParseHloOrFail(c.module);
    ASSERT_NE(module, nullptr);
    StatusOr<CufftTransform> transform = cuda::PlanCufftTransform(*FindFft(*module));
    ASSERT_TRUE(transform.ok()) << transform.status().ToString() << "\n" << c.module;
    CufftTransform expected;
    expected.type = c.type;
    expected.direction = c.direction;
    expected.rank = c.rank;
    expected.n = c.n;
    expected.inembed = c.inembed;
    expected.onembed = c.onembed;
    expected.idist = c.idist;
    expected.odist = c.odist;
    expected.batch = c.batch;
    expected.overwrites_input = c.overwrites_input;
    expected.input_bytes = FindFft(*module)->operand(0)->shape.byte_size();
    EXPECT_EQ(*transform, expected) << c.module << "got " << transform->ToString() << "\nnot "
                                    << expected.ToString();
  }
}

TEST(CufftPlanning, OtherLayoutsAndEmptyArraysKeepTheExpansion) {
  for (const std::string& text :
       {std::string("HloModule fft\nENTRY main {\n  x = c64[4,8]{0,1} parameter(0)\n"
                    "  ROOT f = c64[4,8]{1,0} fft(x), fft_type=FFT, fft_length={8}\n}\n"),
        FftModule("c64[0,8]", "c64[0,8]", "FFT", "8")}) {
    std::unique_ptr<Module> module = ParseHloOrFail(text);
    ASSERT_NE(module, nullptr);
    StatusOr<CufftTransform> transform = cuda::PlanCufftTransform(*FindFft(*module));
    EXPECT_EQ(transform.status().code(), StatusCode::kUnimplemented) << text;
    StatusOr<bool> changed = cuda::CufftCalls().Run(*module);
    ASSERT_TRUE(changed.ok()) << changed.status().ToString();
    EXPECT_FALSE(*changed) << text;
    EXPECT_NE(FindFft(*module), nullptr) << text;
  }
}

// The constant the inverse's result is multiplied by, or NaN.
double InverseScale(const Module& module) {
  double scale = std::nan("");
  for (const auto& instruction : module.entry()->instructions())
    if (instruction->opcode == Opcode::kConstant) scale = instruction->literal->GetAsDouble(0);
  return scale;
}

TEST(CufftPlanning, InversesAreCufftCallsScaledByOneOverN) {
  struct Case {
    std::string module;
    double scale;
  };
  const std::vector<Case> cases = {
      {FftModule("c64[6,8]", "c64[6,8]", "IFFT", "8"), 1.0 / 8},
      {FftModule("c128[2,3,5]", "f64[2,3,8]", "IRFFT", "3,8"), 1.0 / 24},
      {FftModule("c64[3,4,6]", "c64[3,4,6]", "IFFT", "3,4,6"), static_cast<double>(1.0f / 72)},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Module> module = ParseHloOrFail(c.module);
    ASSERT_NE(module, nullptr);
    StatusOr<bool> changed = cuda::CufftCalls().Run(*module);
    ASSERT_TRUE(changed.ok()) << changed.status().ToString();
    EXPECT_TRUE(*changed);
    EXPECT_EQ(FindFft(*module), nullptr) << c.module;
    int calls = 0;
    for (const auto& instruction : module->entry()->instructions()) calls += cuda::IsCufftCall(*instruction);
    EXPECT_EQ(calls, 1) << c.module;
    EXPECT_EQ(InverseScale(*module), c.scale) << c.module;
    EXPECT_TRUE(module->entry()->root()->shape.Compatible(FindFft(*ParseHloOrFail(c.module))->shape));
  }
  // A forward transform is the call alone.
  std::unique_ptr<Module> forward = ParseHloOrFail(FftModule("f32[4,6]", "c64[4,4]", "RFFT", "6"));
  ASSERT_NE(forward, nullptr);
  ASSERT_TRUE(cuda::CufftCalls().Run(*forward).ok());
  EXPECT_TRUE(cuda::IsCufftCall(*forward->entry()->root()));
}

// The fake cuFFT's hooks, found in the library KILN_CUFFT_LIBRARY names.
struct CufftHooks {
  int (*plan_count)() = nullptr;
  int (*plan)(int, FakeFftPlan*) = nullptr;
  int (*exec_count)() = nullptr;
  int (*exec)(int, FakeFftExec*) = nullptr;
  int (*exec_output)(int, void*, size_t) = nullptr;
  int (*live_plans)() = nullptr;
};

class CudaFftTest : public testing::FakeDriverBackendTest {
 protected:
  void SetUp() override {
    FakeDriverBackendTest::SetUp();
    if (HasFatalFailure()) return;
    void* cufft = testing::OpenLibraryNamedBy("KILN_CUFFT_LIBRARY");
    hooks_.plan_count = testing::FindHook<int (*)()>(cufft, "kiln_fake_cufft_plan_count");
    hooks_.plan = testing::FindHook<int (*)(int, FakeFftPlan*)>(cufft, "kiln_fake_cufft_plan");
    hooks_.exec_count = testing::FindHook<int (*)()>(cufft, "kiln_fake_cufft_exec_count");
    hooks_.exec = testing::FindHook<int (*)(int, FakeFftExec*)>(cufft, "kiln_fake_cufft_exec");
    hooks_.exec_output = testing::FindHook<int (*)(int, void*, size_t)>(cufft, "kiln_fake_cufft_exec_output");
    hooks_.live_plans = testing::FindHook<int (*)()>(cufft, "kiln_fake_cufft_live_plans");
  }

  // Runs the fft module `text` on cuda and the interpreter; expects one
  // cuFFT plan and execution, and cuFFT's output to be the interpreter's
  // result times `factor` (1 forward, N inverse). Returns cuda's result.
  Literal ExpectCufft(const std::string& text, double factor) {
    std::unique_ptr<Module> module = ParseHloOrFail(text);
    EXPECT_NE(module, nullptr);
    if (module == nullptr) return Literal();
    const Shape input = module->entry()->parameter(0)->shape;
    const std::vector<Literal> arguments = {Values(input, 3)};
    StatusOr<Literal> expected = Execute(*interpreter_, *module, arguments);
    EXPECT_TRUE(expected.ok()) << expected.status().ToString();
    const int plans = hooks_.plan_count(), execs = hooks_.exec_count(), launches = launch_count_();
    StatusOr<Literal> got = Execute(*cuda_, *module, arguments);
    EXPECT_TRUE(got.ok()) << got.status().ToString() << "\n" << text;
    EXPECT_EQ(hooks_.plan_count(), plans + 1) << text;
    EXPECT_EQ(hooks_.exec_count(), execs + 1) << text;
    // The inverse's scaling is the one kernel; a forward transform has none.
    EXPECT_EQ(launch_count_(), launches + (factor == 1 ? 0 : 1)) << text;
    if (!expected.ok() || !got.ok() || hooks_.exec_count() != execs + 1) return Literal();
    FakeFftExec exec;
    EXPECT_EQ(hooks_.exec(execs, &exec), 1);
    EXPECT_NE(exec.stream, nullptr) << "not on the execution's stream";
    EXPECT_NE(exec.work_area, nullptr) << "no work area from the execution's workspace";
    Literal raw(expected->shape());
    EXPECT_EQ(hooks_.exec_output(execs, raw.raw().data(), raw.raw().size()), 1) << text;
    Literal scaled(expected->shape());
    const bool f64 = scaled.shape().element_type() == ElementType::kF64 ||
                     scaled.shape().element_type() == ElementType::kC128;
    const size_t count = scaled.raw().size() / (f64 ? sizeof(double) : sizeof(float));
    for (size_t i = 0; i < count; ++i) {
      if (f64) {
        scaled.data<double>()[i] = expected->data<double>()[i] * factor;
      } else {
        scaled.data<float>()[i] = static_cast<float>(expected->data<float>()[i] * factor);
      }
    }
    EXPECT_TRUE(LiteralNear(scaled, raw, f64 ? 1e-9 : 2e-4)) << text;
    if (factor == 1) {
      EXPECT_TRUE(LiteralNear(*expected, *got, f64 ? 1e-9 : 2e-4)) << text;
    }
    return std::move(got).value();
  }

  CufftHooks hooks_;
};

using CufftFft = CudaFftTest;
using ForcedKernelFft = CudaFftTest;
using MissingCufft = CudaFftTest;
using IncompleteCufft = CudaFftTest;

TEST_F(CufftFft, DescribesTheFftPath) {
  EXPECT_NE(Description().find("fft: cufft 12.0.0"), std::string::npos) << Description();
}

TEST_F(CufftFft, ForwardTransformsOfEachTypeAndRankMatchTheInterpreter) {
  ASSERT_NE(hooks_.plan_count, nullptr) << "KILN_CUFFT_LIBRARY is not the fake cuFFT";
  ExpectCufft(FftModule("c64[3,8]", "c64[3,8]", "FFT", "8"), 1);
  ExpectCufft(FftModule("c128[2,3,5]", "c128[2,3,5]", "FFT", "3,5"), 1);
  ExpectCufft(FftModule("c64[2,3,4,5]", "c64[2,3,4,5]", "FFT", "3,4,5"), 1);
  ExpectCufft(FftModule("f32[4,6]", "c64[4,4]", "RFFT", "6"), 1);
  ExpectCufft(FftModule("f64[2,3,7]", "c128[2,3,4]", "RFFT", "3,7"), 1);
  ExpectCufft(FftModule("f32[2,3,4]", "c64[2,3,3]", "RFFT", "2,3,4"), 1);
}

TEST_F(CufftFft, InversesAreCufftsUnscaledTransformThenOneKernel) {
  ASSERT_NE(hooks_.plan_count, nullptr) << "KILN_CUFFT_LIBRARY is not the fake cuFFT";
  ExpectCufft(FftModule("c64[3,8]", "c64[3,8]", "IFFT", "8"), 8);
  ExpectCufft(FftModule("c128[2,3,5]", "c128[2,3,5]", "IFFT", "3,5"), 15);
  ExpectCufft(FftModule("c64[4,4]", "f32[4,6]", "IRFFT", "6"), 6);
  ExpectCufft(FftModule("c128[2,3,4]", "f64[2,3,7]", "IRFFT", "3,7"), 21);
  ExpectCufft(FftModule("c64[2,3,3]", "f32[2,3,4]", "IRFFT", "2,3,4"), 24);
}

TEST_F(CufftFft, OnePlanServesEveryExecution) {
  ASSERT_NE(hooks_.plan_count, nullptr) << "KILN_CUFFT_LIBRARY is not the fake cuFFT";
  std::unique_ptr<Module> module = ParseHloOrFail(FftModule("c64[4,16]", "c64[4,16]", "FFT", "16"));
  ASSERT_NE(module, nullptr);
  StatusOr<std::unique_ptr<Executable>> executable = cuda_->Compile(*module, CompileOptions{});
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  const Literal input = Values(module->entry()->root()->shape, 5);
  StatusOr<std::unique_ptr<DeviceBuffer>> buffer = cuda_->BufferFromLiteral(input, cuda_->devices()[0]);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  const int plans = hooks_.plan_count(), execs = hooks_.exec_count(), live = hooks_.live_plans();
  DeviceBuffer* arguments[] = {buffer->get()};
  for (int run = 0; run < 4; ++run) {
    auto results = (*executable)->Execute(arguments, ExecuteOptions{});
    ASSERT_TRUE(results.ok()) << results.status().ToString();
  }
  EXPECT_EQ(hooks_.plan_count(), plans + 1);
  EXPECT_EQ(hooks_.exec_count(), execs + 4);
  FakeFftPlan plan;
  ASSERT_EQ(hooks_.plan(plans, &plan), 1);
  EXPECT_EQ(plan.auto_allocation, 0) << "the work area is cuFFT's own, not the execution's";
  for (int i = 0; i < 4; ++i) {
    FakeFftExec exec;
    ASSERT_EQ(hooks_.exec(execs + i, &exec), 1);
    EXPECT_EQ(exec.handle, plan.handle) << "execution " << i << " used another plan";
  }
  EXPECT_EQ(hooks_.live_plans(), live + 1);
  executable->reset();
  EXPECT_EQ(hooks_.live_plans(), live) << "the executable's plan outlived it";
}

TEST_F(CufftFft, InverseRealTransformLeavesItsOperandAlone) {
  ASSERT_NE(hooks_.plan_count, nullptr) << "KILN_CUFFT_LIBRARY is not the fake cuFFT";
  // cuFFT's C2R overwrites its input (the fake fills it with NaN): the
  // parameter, also returned, must still hold the caller's values.
  const std::string text =
      "HloModule fft\nENTRY main {\n  x = c64[3,5] parameter(0)\n"
      "  f = f32[3,8] fft(x), fft_type=IRFFT, fft_length={8}\n  ROOT t = (f32[3,8], c64[3,5]) tuple(f, "
      "x)\n}\n";
  std::unique_ptr<Module> module = ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  const Literal input = Values(Shape(ElementType::kC64, {3, 5}), 2);
  const int execs = hooks_.exec_count();
  StatusOr<std::vector<Literal>> results = ExecuteLeaves(*cuda_, *module, std::vector<Literal>{input});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ(hooks_.exec_count(), execs + 1);
  ASSERT_EQ(results->size(), 2u);
  EXPECT_TRUE((*results)[1] == input) << (*results)[1].ToString();
}

TEST_F(ForcedKernelFft, FftRunsAsTheExpansion) {
  EXPECT_NE(Description().find("fft: kiln kernels (KILN_CUDA_FFT=kernel)"), std::string::npos)
      << Description();
  ASSERT_NE(hooks_.exec_count, nullptr) << "KILN_CUFFT_LIBRARY is not the fake cuFFT";
  std::unique_ptr<Module> module = ParseHloOrFail(FftModule("c64[3,8]", "c64[3,8]", "IFFT", "8"));
  ASSERT_NE(module, nullptr);
  const int launches = launch_count_();
  StatusOr<Literal> got =
      Execute(*cuda_, *module, std::vector<Literal>{Values(Shape(ElementType::kC64, {3, 8}), 1)});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_GT(launch_count_(), launches);
  EXPECT_EQ(hooks_.exec_count(), 0);
}

TEST_F(MissingCufft, FftRunsAsTheExpansionAndTheDeviceSaysWhy) {
  for (const char* part : {"fft: kiln kernels (cuFFT not loaded: ",
                           "KILN_CUFFT_LIBRARY=/nonexistent/libcufft.so.12", "No such file"})
    EXPECT_NE(Description().find(part), std::string::npos) << Description();
  std::unique_ptr<Module> module = ParseHloOrFail(FftModule("f32[4,6]", "c64[4,4]", "RFFT", "6"));
  ASSERT_NE(module, nullptr);
  const int launches = launch_count_();
  StatusOr<Literal> got =
      Execute(*cuda_, *module, std::vector<Literal>{Values(Shape(ElementType::kF32, {4, 6}), 1)});
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_GT(launch_count_(), launches);
}

TEST_F(IncompleteCufft, TheDeviceNamesTheMissingEntry) {
  for (const char* part : {"fft: kiln kernels (cuFFT not loaded: KILN_CUFFT_LIBRARY=",
                           " has no cufftGetProperty", "(not cuFFT 11 or newer)"})
    EXPECT_NE(Description().find(part), std::string::npos) << Description();
}

TEST(RequiredCufftMissing, BackendIsUnavailableSayingWhy) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "KILN_CUDA_FFT=cufft made a backend without cuFFT";
  EXPECT_EQ(backend.status().code(), StatusCode::kUnavailable) << backend.status().ToString();
  for (const char* part : {"KILN_CUDA_FFT=cufft", "/nonexistent/libcufft.so.12"})
    EXPECT_NE(backend.status().message().find(part), std::string::npos) << backend.status().ToString();
}

TEST(BadFftSetting, BackendCreationIsAnInvalidArgumentNamingTheValue) {
  StatusOr<std::unique_ptr<Backend>> backend = CreateBackend("cuda");
  ASSERT_FALSE(backend.ok()) << "KILN_CUDA_FFT=fast was accepted";
  EXPECT_EQ(backend.status().code(), StatusCode::kInvalidArgument) << backend.status().ToString();
  EXPECT_NE(backend.status().message().find("'fast'"), std::string::npos) << backend.status().ToString();
}

}  // namespace
}  // namespace kiln
