// Events, their promises, AllReady, the background workers and host devices:
// the pieces asynchronous execution is made of (core/runtime/).
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/hlo_parser.h"
#include "core/interpreter/interpreter_backend.h"
#include "core/runtime/event.h"
#include "core/runtime/host_devices.h"
#include "core/runtime/work_queue.h"

namespace kiln {
namespace {

TEST(RuntimeEventTest, ReadyEventsReportTheirStatus) {
  EXPECT_TRUE(Event::Ready().IsReady());
  EXPECT_TRUE(Event::Ready().Await().ok());
  const Event failed = Event::Ready(Status(StatusCode::kCancelled, "stopped"));
  EXPECT_EQ(failed.Await().code(), StatusCode::kCancelled);
  EXPECT_EQ(failed.Await().message(), "stopped");
}

TEST(RuntimeEventTest, AwaitBlocksUntilAnotherThreadSetsThePromise) {
  Promise promise;
  const Event event = promise.event();
  EXPECT_FALSE(event.IsReady());
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    promise.Set(Status(StatusCode::kDeadlineExceeded, "late"));
  });
  EXPECT_EQ(event.Await().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(event.IsReady());
  setter.join();
}

TEST(RuntimeEventTest, CallbacksRunOnceWhetherRegisteredBeforeOrAfter) {
  Promise promise;
  const Event event = promise.event();
  int before = 0;
  int after = 0;
  event.OnReady([&](const Status& status) {
    EXPECT_TRUE(status.ok());
    ++before;
  });
  EXPECT_EQ(before, 0);
  promise.Set(OkStatus());
  promise.Set(Internal("a second outcome is ignored"));
  EXPECT_EQ(before, 1);
  event.OnReady([&](const Status& status) {
    EXPECT_TRUE(status.ok());
    ++after;
  });
  EXPECT_EQ(after, 1);
  EXPECT_TRUE(event.Await().ok());
}

TEST(RuntimeEventTest, ADroppedPromiseFailsItsEventInsteadOfHanging) {
  Event event = Event::Ready();
  {
    Promise promise;
    event = promise.event();
  }
  EXPECT_EQ(event.Await().code(), StatusCode::kInternal);
}

TEST(RuntimeEventTest, AllReadyWaitsForEveryEventAndKeepsTheFirstErrorInOrder) {
  EXPECT_TRUE(AllReady({}).IsReady());
  Promise a;
  Promise b;
  Promise c;
  const Event all = AllReady({a.event(), b.event(), c.event()});
  c.Set(Internal("third"));
  b.Set(Status(StatusCode::kCancelled, "second"));
  EXPECT_FALSE(all.IsReady());
  a.Set(OkStatus());
  ASSERT_TRUE(all.IsReady());
  EXPECT_EQ(all.Await().code(), StatusCode::kCancelled);
  EXPECT_EQ(all.Await().message(), "second");
}

TEST(RuntimeEventTest, BackgroundWorkRunsConcurrentlyAndCompletesEveryItem) {
  constexpr int kItems = 64;
  std::atomic<int> done{0};
  std::vector<Promise> promises(kItems);
  std::vector<Event> events;
  for (Promise& promise : promises) events.push_back(promise.event());
  // Two items that each wait for the other prove two workers run at once.
  Promise first_started;
  Promise second_started;
  RunInBackground([&, seen = second_started.event()]() noexcept {
    first_started.Set(OkStatus());
    EXPECT_TRUE(seen.Await().ok());
  });
  RunInBackground([&, seen = first_started.event()]() noexcept {
    second_started.Set(OkStatus());
    EXPECT_TRUE(seen.Await().ok());
  });
  for (int i = 0; i < kItems; ++i) {
    RunInBackground([&, i]() noexcept {
      done.fetch_add(1);
      promises[static_cast<size_t>(i)].Set(OkStatus());
    });
  }
  EXPECT_TRUE(AllReady(events).Await().ok());
  EXPECT_EQ(done.load(), kItems);
  EXPECT_TRUE(AllReady({first_started.event(), second_started.event()}).Await().ok());
}

TEST(RuntimeHostDevicesTest, CountsAreCheckedAndNamed) {
  EXPECT_EQ(*HostDevices::Count("cpu", BackendOptions{}), 1);
  EXPECT_EQ(*HostDevices::Count("cpu", BackendOptions{4}), 4);
  EXPECT_EQ(HostDevices::Count("cpu", BackendOptions{-1}).status().code(), StatusCode::kInvalidArgument);
  const Status too_many = HostDevices::Count("interpreter", BackendOptions{65}).status();
  EXPECT_EQ(too_many.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.message().find("interpreter: num_devices"), std::string::npos) << too_many.message();
}

TEST(RuntimeHostDevicesTest, AnExecutionRunsOnItsArgumentsDeviceAndRefusesAMix) {
  interpreter::InterpreterBackend backend(2);
  ASSERT_EQ(backend.devices().size(), 2u);
  Device* zero = backend.devices()[0];
  Device* one = backend.devices()[1];
  EXPECT_EQ(one->description(), "interpreter:1 (host reference)");
  const Literal literal = Literal::Scalar<float>(1.0f);
  std::unique_ptr<DeviceBuffer> on_one = std::move(backend.BufferFromLiteral(literal, one)).value();
  std::unique_ptr<DeviceBuffer> on_zero = std::move(backend.BufferFromLiteral(literal, zero)).value();
  EXPECT_EQ(on_one->device(), one);
  std::unique_ptr<Module> module = ParseHloModule(R"(HloModule add
ENTRY e {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
})")
                                       .value();
  std::unique_ptr<Executable> executable = backend.Compile(*module, CompileOptions{}).value();

  std::vector<DeviceBuffer*> same = {on_one.get(), on_one.get()};
  StatusOr<std::vector<std::unique_ptr<DeviceBuffer>>> ran = executable->Execute(same, ExecuteOptions{});
  ASSERT_TRUE(ran.ok()) << ran.status().message();
  EXPECT_EQ((*ran)[0]->device(), one);

  std::vector<DeviceBuffer*> mixed = {on_one.get(), on_zero.get()};
  const Status refused = executable->Execute(mixed, ExecuteOptions{}).status();
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("argument 1 lives on interpreter:0"), std::string::npos)
      << refused.message();

  ExecuteOptions elsewhere;
  elsewhere.device = zero;
  EXPECT_EQ(executable->Execute(same, elsewhere).status().code(), StatusCode::kInvalidArgument);

  interpreter::InterpreterBackend other(1);
  elsewhere.device = other.devices()[0];
  EXPECT_EQ(executable->Execute(same, elsewhere).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(backend.BufferFromLiteral(literal, other.devices()[0]).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
