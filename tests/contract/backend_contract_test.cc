// The contract every backend of the build keeps, run on each of them
// (interpreter, cpu, and every backend added later gets it for free): what
// it says of itself, buffers, argument errors, the calling convention,
// unsupported ops, infeed/outfeed, determinism and sharing between threads.
// Cancellation and deadlines are in tests/unit/execution_stop_test.cc.
//
// A backend that the build lists but cannot create fails here; it never
// passes by having nothing to run.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/literal.h"

namespace kiln {
namespace {

constexpr char kAxpy[] = R"(HloModule axpy
ENTRY e {
  a = f32[] parameter(0)
  x = f32[4] parameter(1)
  y = f32[4] parameter(2)
  ab = f32[4] broadcast(a), dimensions={}
  ax = f32[4] multiply(ab, x)
  ROOT r = f32[4] add(ax, y)
})";

// A tuple parameter and a tuple result: both travel as their array leaves.
constexpr char kSwapTuple[] = R"(HloModule swap_tuple
ENTRY e {
  t = (s32[2], f64[3]) parameter(0)
  a = s32[2] get-tuple-element(t), index=0
  b = f64[3] get-tuple-element(t), index=1
  ROOT r = (f64[3], s32[2]) tuple(b, a)
})";

// The result is the parameter itself.
constexpr char kIdentity[] = R"(HloModule identity
ENTRY e {
  ROOT x = f32[3] parameter(0)
})";

constexpr char kInfeedTwice[] = R"(HloModule infeed_outfeed
ENTRY e {
  t0 = token[] after-all()
  in = (f32[2], token[]) infeed(t0)
  v = f32[2] get-tuple-element(in), index=0
  t1 = token[] get-tuple-element(in), index=1
  d = f32[2] add(v, v)
  ROOT out = token[] outfeed(d, t1), outfeed_shape=f32[2]
})";

constexpr char kRandom[] = R"(HloModule random
ENTRY e {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  ROOT r = f32[64] rng(lo, hi), distribution=rng_uniform
})";

constexpr char kUnknownCustomCall[] = R"(HloModule unknown_target
ENTRY e {
  x = f32[2] parameter(0)
  ROOT y = f32[2] custom-call(x), custom_call_target="kiln_contract_no_such_target"
})";

std::unique_ptr<Module> Parse(const char* text) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

class BackendContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(GetParam());
    // A GPU backend on a machine without that GPU says so and is skipped;
    // any other failure to create a backend of this build fails.
    if (!backend.ok() && backend.status().code() == StatusCode::kUnavailable) {
      GTEST_SKIP() << "backend '" << GetParam()
                   << "' cannot run on this machine: " << backend.status().ToString();
    }
    ASSERT_TRUE(backend.ok()) << "backend '" << GetParam()
                              << "' is in this build but cannot be created: " << backend.status().ToString();
    backend_ = std::move(backend).value();
    ASSERT_FALSE(backend_->devices().empty()) << GetParam() << " has no device";
    device_ = backend_->devices()[0];
  }

  std::unique_ptr<Executable> Compile(const char* text) {
    std::unique_ptr<Module> module = Parse(text);
    if (module == nullptr) return nullptr;
    StatusOr<std::unique_ptr<Executable>> executable = backend_->Compile(*module, CompileOptions{});
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    return executable.ok() ? std::move(executable).value() : nullptr;
  }

  std::unique_ptr<DeviceBuffer> Buffer(const Literal& literal) {
    StatusOr<std::unique_ptr<DeviceBuffer>> buffer = backend_->BufferFromLiteral(literal, device_);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? std::move(buffer).value() : nullptr;
  }

  static StatusOr<std::vector<Literal>> Run(Executable& executable, std::vector<DeviceBuffer*> arguments,
                                            const ExecuteOptions& options = {}) {
    KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<DeviceBuffer>> results,
                          executable.Execute(arguments, options));
    std::vector<Literal> leaves;
    for (const std::unique_ptr<DeviceBuffer>& result : results) {
      KILN_ASSIGN_OR_RETURN(Literal leaf, result->ToLiteral());
      leaves.push_back(std::move(leaf));
    }
    return leaves;
  }

  // Expects `status` to be INVALID_ARGUMENT with a message containing `words`.
  static void ExpectInvalidArgument(const Status& status, const std::string& words) {
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    EXPECT_NE(status.message().find(words), std::string::npos) << status.ToString();
  }

  std::unique_ptr<Backend> backend_;
  Device* device_ = nullptr;
};

TEST_P(BackendContractTest, DescribesItselfAndItsDevices) {
  EXPECT_EQ(backend_->name(), GetParam());
  EXPECT_GT(backend_->max_buffer_bytes(), 0);
  std::vector<int> ids;
  for (Device* device : backend_->devices()) {
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(device->backend(), backend_.get());
    EXPECT_FALSE(device->description().empty());
    for (int id : ids) EXPECT_NE(id, device->id());
    ids.push_back(device->id());
  }
  // Every backend runs f32, the type every Kiln sample and binding starts from.
  EXPECT_TRUE(backend_->SupportsElementType(ElementType::kF32));
  EXPECT_FALSE(backend_->SupportsElementType(ElementType::kInvalid));
}

TEST_P(BackendContractTest, EverySupportedElementTypeRoundTripsThroughABuffer) {
  constexpr std::array kArrayTypes = {
      ElementType::kPred, ElementType::kS8,  ElementType::kS16, ElementType::kS32, ElementType::kS64,
      ElementType::kU8,   ElementType::kU16, ElementType::kU32, ElementType::kU64, ElementType::kF16,
      ElementType::kBF16, ElementType::kF32, ElementType::kF64, ElementType::kC64, ElementType::kC128};
  int supported = 0;
  for (ElementType type : kArrayTypes) {
    if (!backend_->SupportsElementType(type)) continue;
    ++supported;
    Literal literal(Shape(type, {2, 3}));
    for (size_t i = 0; i < literal.raw().size(); ++i) {
      // Predicates hold 0 or 1; other types any bytes of a valid value.
      literal.raw()[i] =
          type == ElementType::kPred ? static_cast<uint8_t>(i % 2) : static_cast<uint8_t>(i * 37 + 1);
    }
    std::unique_ptr<DeviceBuffer> buffer = Buffer(literal);
    ASSERT_NE(buffer, nullptr) << ElementTypeName(type);
    EXPECT_EQ(buffer->shape(), literal.shape());
    EXPECT_EQ(buffer->device(), device_);
    StatusOr<Literal> back = buffer->ToLiteral();
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(*back == literal) << ElementTypeName(type);
  }
  EXPECT_GT(supported, 0);
}

TEST_P(BackendContractTest, BufferCreationRefusesTuplesAndForeignDevices) {
  const Literal tuple = Literal::Tuple({Literal::Scalar<float>(1), Literal::Scalar<int32_t>(2)});
  ExpectInvalidArgument(backend_->BufferFromLiteral(tuple, device_).status(), "one array");
  StatusOr<std::unique_ptr<Backend>> other = CreateBackend(GetParam());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const Status foreign =
      backend_->BufferFromLiteral(Literal::Scalar<float>(1), (*other)->devices()[0]).status();
  EXPECT_EQ(foreign.code(), StatusCode::kInvalidArgument) << foreign.ToString();
}

TEST_P(BackendContractTest, RunsAndReportsItsCallingConvention) {
  std::unique_ptr<Executable> executable = Compile(kAxpy);
  ASSERT_NE(executable, nullptr);
  ASSERT_EQ(executable->parameter_leaves().size(), 3u);
  EXPECT_EQ(executable->parameter_leaves()[1], Shape(ElementType::kF32, {4}));
  ASSERT_EQ(executable->result_leaves().size(), 1u);
  EXPECT_EQ(executable->result_leaves()[0], Shape(ElementType::kF32, {4}));
  std::unique_ptr<DeviceBuffer> a = Buffer(Literal::Scalar<float>(2));
  std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>({1, 2, 3, 4}));
  std::unique_ptr<DeviceBuffer> y = Buffer(Literal::FromVector<float>({10, 20, 30, 40}));
  StatusOr<std::vector<Literal>> result = Run(*executable, {a.get(), x.get(), y.get()});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->size(), 1u);
  EXPECT_TRUE((*result)[0] == Literal::FromVector<float>({12, 24, 36, 48})) << (*result)[0].ToString();
}

TEST_P(BackendContractTest, TupleParametersAndResultsTravelAsLeaves) {
  std::unique_ptr<Executable> executable = Compile(kSwapTuple);
  ASSERT_NE(executable, nullptr);
  ASSERT_EQ(executable->parameter_leaves().size(), 2u);
  ASSERT_EQ(executable->result_leaves().size(), 2u);
  EXPECT_EQ(executable->result_leaves()[0], Shape(ElementType::kF64, {3}));
  std::unique_ptr<DeviceBuffer> ints = Buffer(Literal::FromVector<int32_t>({7, -8}));
  std::unique_ptr<DeviceBuffer> doubles = Buffer(Literal::FromVector<double>({0.5, 1.5, 2.5}));
  StatusOr<std::vector<Literal>> result = Run(*executable, {ints.get(), doubles.get()});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_EQ(result->size(), 2u);
  EXPECT_TRUE((*result)[0] == Literal::FromVector<double>({0.5, 1.5, 2.5}));
  EXPECT_TRUE((*result)[1] == Literal::FromVector<int32_t>({7, -8}));
}

TEST_P(BackendContractTest, ArgumentErrorsNameTheArgumentAndLeaveTheExecutableUsable) {
  std::unique_ptr<Executable> executable = Compile(kAxpy);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> a = Buffer(Literal::Scalar<float>(1));
  std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>({1, 1, 1, 1}));
  std::unique_ptr<DeviceBuffer> y = Buffer(Literal::FromVector<float>({0, 1, 2, 3}));
  std::unique_ptr<DeviceBuffer> short_x = Buffer(Literal::FromVector<float>({1, 1, 1}));
  std::unique_ptr<DeviceBuffer> int_x = Buffer(Literal::FromVector<int32_t>({1, 1, 1, 1}));
  StatusOr<std::unique_ptr<Backend>> other = CreateBackend(GetParam());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  StatusOr<std::unique_ptr<DeviceBuffer>> foreign_x =
      (*other)->BufferFromLiteral(Literal::FromVector<float>({1, 1, 1, 1}), (*other)->devices()[0]);
  ASSERT_TRUE(foreign_x.ok()) << foreign_x.status().ToString();

  ExpectInvalidArgument(Run(*executable, {a.get(), x.get()}).status(), "3");
  ExpectInvalidArgument(Run(*executable, {a.get(), x.get(), y.get(), y.get()}).status(), "3");
  ExpectInvalidArgument(Run(*executable, {a.get(), nullptr, y.get()}).status(), "argument 1");
  ExpectInvalidArgument(Run(*executable, {a.get(), short_x.get(), y.get()}).status(), "f32[4]");
  ExpectInvalidArgument(Run(*executable, {a.get(), int_x.get(), y.get()}).status(), "f32[4]");
  ExpectInvalidArgument(Run(*executable, {a.get(), foreign_x->get(), y.get()}).status(), "argument 1");

  StatusOr<std::vector<Literal>> result = Run(*executable, {a.get(), x.get(), y.get()});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_TRUE((*result)[0] == Literal::FromVector<float>({1, 2, 3, 4}));
}

TEST_P(BackendContractTest, BuffersOfAnotherBackendAreRefused) {
  std::unique_ptr<Executable> executable = Compile(kIdentity);
  ASSERT_NE(executable, nullptr);
  for (const std::string& name : BackendNames()) {
    if (name == GetParam()) continue;
    StatusOr<std::unique_ptr<Backend>> other = CreateBackend(name);
    if (!other.ok() && other.status().code() == StatusCode::kUnavailable) continue;  // no such device here
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    StatusOr<std::unique_ptr<DeviceBuffer>> buffer =
        (*other)->BufferFromLiteral(Literal::FromVector<float>({1, 2, 3}), (*other)->devices()[0]);
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    ExpectInvalidArgument(Run(*executable, {buffer->get()}).status(), "argument 0");
  }
}

TEST_P(BackendContractTest, ResultsDoNotAliasArgumentsAndOutliveTheExecutable) {
  std::unique_ptr<Executable> executable = Compile(kIdentity);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>({1, 2, 3}));
  DeviceBuffer* const arguments[] = {x.get()};
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results = executable->Execute(arguments, {});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 1u);
  executable.reset();
  x.reset();
  StatusOr<Literal> value = (*results)[0]->ToLiteral();
  ASSERT_TRUE(value.ok()) << value.status().ToString();
  EXPECT_TRUE(*value == Literal::FromVector<float>({1, 2, 3}));
}

TEST_P(BackendContractTest, UnsupportedOpsAreNamedBeforeAnythingRuns) {
  std::unique_ptr<Module> standard = Parse(kAxpy);
  ASSERT_NE(standard, nullptr);
  EXPECT_TRUE(backend_->UnsupportedOps(*standard).empty());
  // A custom call to a target nobody registered cannot be compiled: the
  // error names the target.
  std::unique_ptr<Module> unknown = Parse(kUnknownCustomCall);
  ASSERT_NE(unknown, nullptr);
  StatusOr<std::unique_ptr<Executable>> executable = backend_->Compile(*unknown, CompileOptions{});
  ASSERT_FALSE(executable.ok());
  EXPECT_EQ(executable.status().code(), StatusCode::kNotFound) << executable.status().ToString();
  EXPECT_NE(executable.status().message().find("kiln_contract_no_such_target"), std::string::npos)
      << executable.status().ToString();
}

TEST_P(BackendContractTest, InfeedAndOutfeedAreFirstInFirstOut) {
  std::unique_ptr<Executable> executable = Compile(kInfeedTwice);
  ASSERT_NE(executable, nullptr);
  const Status empty_infeed = Run(*executable, {}).status();
  EXPECT_FALSE(empty_infeed.ok()) << "an infeed with nothing queued must fail, not wait forever";
  EXPECT_NE(empty_infeed.message().find("infeed"), std::string::npos) << empty_infeed.ToString();
  ASSERT_TRUE(backend_->TransferToInfeed(Literal::FromVector<float>({1, 2})).ok());
  ASSERT_TRUE(backend_->TransferToInfeed(Literal::FromVector<float>({3, 4})).ok());
  ASSERT_TRUE(Run(*executable, {}).ok());
  ASSERT_TRUE(Run(*executable, {}).ok());
  StatusOr<Literal> first = backend_->TransferFromOutfeed();
  StatusOr<Literal> second = backend_->TransferFromOutfeed();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(*first == Literal::FromVector<float>({2, 4}));
  EXPECT_TRUE(*second == Literal::FromVector<float>({6, 8}));
  const Status drained = backend_->TransferFromOutfeed().status();
  EXPECT_EQ(drained.code(), StatusCode::kFailedPrecondition) << drained.ToString();
}

TEST_P(BackendContractTest, EqualSeedsGiveEqualRandomNumbers) {
  std::unique_ptr<Executable> executable = Compile(kRandom);
  ASSERT_NE(executable, nullptr);
  ExecuteOptions seven;
  seven.rng_seed = 7;
  ExecuteOptions eight;
  eight.rng_seed = 8;
  StatusOr<std::vector<Literal>> a = Run(*executable, {}, seven);
  StatusOr<std::vector<Literal>> b = Run(*executable, {}, seven);
  StatusOr<std::vector<Literal>> c = Run(*executable, {}, eight);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE((*a)[0] == (*b)[0]);
  EXPECT_FALSE((*a)[0] == (*c)[0]);
  for (int64_t i = 0; i < (*a)[0].element_count(); ++i) {
    const double value = (*a)[0].GetAsDouble(i);
    EXPECT_GE(value, 0.0);
    EXPECT_LT(value, 1.0);
  }
}

TEST_P(BackendContractTest, ThreadsShareOneExecutable) {
  std::unique_ptr<Executable> executable = Compile(kAxpy);
  ASSERT_NE(executable, nullptr);
  constexpr int kThreads = 4;
  constexpr int kRuns = 25;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < kRuns; ++run) {
        const auto scale = static_cast<float>(t * kRuns + run);
        std::unique_ptr<DeviceBuffer> a = Buffer(Literal::Scalar<float>(scale));
        std::unique_ptr<DeviceBuffer> x = Buffer(Literal::FromVector<float>({1, 2, 3, 4}));
        std::unique_ptr<DeviceBuffer> y = Buffer(Literal::FromVector<float>({1, 1, 1, 1}));
        StatusOr<std::vector<Literal>> result = Run(*executable, {a.get(), x.get(), y.get()});
        const Literal want =
            Literal::FromVector<float>({scale + 1, 2 * scale + 1, 3 * scale + 1, 4 * scale + 1});
        if (!result.ok() || !((*result)[0] == want)) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, BackendContractTest, ::testing::ValuesIn(BackendNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The list itself: a build without backends would run nothing above.
TEST(BackendContractListTest, TheBuildHasTheInterpreterAndAtLeastOneCompiler) {
  const std::vector<std::string> names = BackendNames();
  EXPECT_GE(names.size(), 2u);
  EXPECT_NE(std::find(names.begin(), names.end(), "interpreter"), names.end());
}

}  // namespace
}  // namespace kiln
