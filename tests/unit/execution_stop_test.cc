// Cancellation and deadlines of an execution, on every backend of the build:
// a loop that never ends is stopped, says which loop it was, and leaves the
// executable and its arguments usable for the next run.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/stop_condition.h"
#include "tests/unit/nested_loop_program.h"

namespace kiln {
namespace {

using Clock = StopCondition::Clock;

// Counts i up from 0 while i != n: never ends for n = -1 (2^64 iterations).
constexpr char kCountTo[] = R"(HloModule count_to
cond {
  s = (s64[], s64[]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  n = s64[] get-tuple-element(s), index=1
  ROOT ne = pred[] compare(i, n), direction=NE
}
body {
  s = (s64[], s64[]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  n = s64[] get-tuple-element(s), index=1
  one = s64[] constant(1)
  next = s64[] add(i, one)
  ROOT t = (s64[], s64[]) tuple(next, n)
}
ENTRY e {
  n = s64[] parameter(0)
  zero = s64[] constant(0)
  init = (s64[], s64[]) tuple(zero, n)
  loop = (s64[], s64[]) while(init), condition=cond, body=body
  ROOT count = s64[] get-tuple-element(loop), index=0
})";

// A condition that is always true, with a vector state: no way out but a stop.
constexpr char kForever[] = R"(HloModule forever
cond {
  s = f32[64] parameter(0)
  ROOT yes = pred[] constant(true)
}
body {
  s = f32[64] parameter(0)
  half = f32[] constant(0.5)
  h = f32[64] broadcast(half), dimensions={}
  ROOT next = f32[64] multiply(s, h)
}
ENTRY e {
  x = f32[64] parameter(0)
  ROOT loop = f32[64] while(x), condition=cond, body=body
})";

class ExecutionStopTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Backend>> backend = CreateBackend(GetParam());
    if (!backend.ok() && backend.status().code() == StatusCode::kUnavailable) {
      GTEST_SKIP() << "backend '" << GetParam()
                   << "' cannot run on this machine: " << backend.status().ToString();
    }
    ASSERT_TRUE(backend.ok()) << backend.status().ToString();
    backend_ = std::move(backend).value();
  }

  std::unique_ptr<Executable> Compile(const char* text) {
    StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
    EXPECT_TRUE(module.ok()) << module.status().ToString();
    if (!module.ok()) return nullptr;
    StatusOr<std::unique_ptr<Executable>> executable = backend_->Compile(**module, CompileOptions{});
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    return executable.ok() ? std::move(executable).value() : nullptr;
  }

  std::unique_ptr<DeviceBuffer> Buffer(const Literal& literal) {
    StatusOr<std::unique_ptr<DeviceBuffer>> buffer =
        backend_->BufferFromLiteral(literal, backend_->devices()[0]);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? std::move(buffer).value() : nullptr;
  }

  static Status Run(Executable& executable, DeviceBuffer* argument, const ExecuteOptions& options) {
    DeviceBuffer* arguments[] = {argument};
    return executable.Execute(arguments, options).status();
  }

  static ExecuteOptions WithTimeout(std::chrono::milliseconds timeout) {
    ExecuteOptions options;
    options.stop = StopCondition(nullptr, Clock::now() + timeout);
    return options;
  }

  std::unique_ptr<Backend> backend_;
};

TEST_P(ExecutionStopTest, DeadlineStopsAnEndlessLoopAndTheExecutableRunsAgain) {
  std::unique_ptr<Executable> executable = Compile(kCountTo);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> endless = Buffer(Literal::Scalar<int64_t>(-1));
  const Status stopped = Run(*executable, endless.get(), WithTimeout(std::chrono::milliseconds(50)));
  EXPECT_EQ(stopped.code(), StatusCode::kDeadlineExceeded) << stopped.ToString();
  EXPECT_NE(stopped.message().find("in while 'loop' after"), std::string::npos) << stopped.message();

  // The argument is intact and the same executable finishes a finite run.
  StatusOr<Literal> argument = endless->ToLiteral();
  ASSERT_TRUE(argument.ok());
  EXPECT_EQ(argument->data<int64_t>()[0], -1);
  std::unique_ptr<DeviceBuffer> ten = Buffer(Literal::Scalar<int64_t>(10));
  DeviceBuffer* arguments[] = {ten.get()};
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results = executable->Execute(arguments, {});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 1u);
  StatusOr<Literal> count = (*results)[0]->ToLiteral();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->data<int64_t>()[0], 10);
}

TEST_P(ExecutionStopTest, CancelFromAnotherThreadStopsAConstantTrueLoop) {
  std::unique_ptr<Executable> executable = Compile(kForever);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> x = Buffer(Literal(Shape(ElementType::kF32, {64})));
  auto flag = std::make_shared<CancellationFlag>();
  ExecuteOptions options;
  options.stop = StopCondition(flag, Clock::time_point::max());
  std::atomic<bool> returned{false};
  Status stopped;
  std::thread runner([&] {
    stopped = Run(*executable, x.get(), options);
    returned = true;
  });
  // Whether the loop has started or not, a cancelled execution returns
  // CANCELLED; the pause only makes "while running" the likely case.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load());
  flag->Cancel();
  runner.join();
  EXPECT_EQ(stopped.code(), StatusCode::kCancelled) << stopped.ToString();
}

TEST_P(ExecutionStopTest, AnExecutionCancelledBeforeItStartsDoesNotRun) {
  std::unique_ptr<Executable> executable = Compile(kCountTo);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> ten = Buffer(Literal::Scalar<int64_t>(10));
  auto flag = std::make_shared<CancellationFlag>();
  flag->Cancel();
  ExecuteOptions options;
  options.stop = StopCondition(flag, Clock::time_point::max());
  const Status stopped = Run(*executable, ten.get(), options);
  EXPECT_EQ(stopped.code(), StatusCode::kCancelled) << stopped.ToString();
  // Cancellation wins over a deadline that has passed as well.
  options.stop = StopCondition(flag, Clock::now());
  EXPECT_EQ(Run(*executable, ten.get(), options).code(), StatusCode::kCancelled);
}

TEST_P(ExecutionStopTest, AStopInANestedLoopNamesBothLoops) {
  std::unique_ptr<Executable> executable = Compile(kNestedEndlessLoop);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> zero = Buffer(Literal::Scalar<int32_t>(0));
  // The deadline must fall inside 'spin': on a loaded machine (a vulkan
  // upload under a sanitizer with other tests beside it) 20 ms could pass
  // before the inner loop starts, and the stop would then name 'outer' only.
  const Status stopped = Run(*executable, zero.get(), WithTimeout(std::chrono::milliseconds(500)));
  EXPECT_EQ(stopped.code(), StatusCode::kDeadlineExceeded) << stopped.ToString();
  const std::string& message = stopped.message();
  const size_t inner = message.find("in while 'spin' after");
  const size_t outer = message.find("in while 'outer' after 0 iterations");
  EXPECT_NE(inner, std::string::npos) << message;
  EXPECT_NE(outer, std::string::npos) << message;
  EXPECT_LT(inner, outer) << message;
}

TEST_P(ExecutionStopTest, AGenerousDeadlineAndAnUnusedCancellationChangeNothing) {
  std::unique_ptr<Executable> executable = Compile(kCountTo);
  ASSERT_NE(executable, nullptr);
  std::unique_ptr<DeviceBuffer> hundred = Buffer(Literal::Scalar<int64_t>(100));
  ExecuteOptions options;
  options.stop = StopCondition(std::make_shared<CancellationFlag>(), Clock::now() + std::chrono::hours(1));
  DeviceBuffer* arguments[] = {hundred.get()};
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> results = executable->Execute(arguments, options);
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  StatusOr<Literal> count = (*results)[0]->ToLiteral();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->data<int64_t>()[0], 100);
}

INSTANTIATE_TEST_SUITE_P(EveryBackend, ExecutionStopTest, ::testing::ValuesIn(BackendNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace kiln
