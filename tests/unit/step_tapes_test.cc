// The tapes of reverse-mode loops on device backends: the tape steps the
// shared lowering makes of kiln_tape_push / kiln_tape_pop, and StepTapes
// (core/lowering/step_tapes.h) run against an executor whose slots are
// host memory: entries come back in reverse order, byte for byte; the
// buffer doubles (one copy of what it holds each time) and is released at
// the end; a pop without its push and a device without room are errors
// that say which tape and how many bytes.
#include "core/lowering/step_tapes.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/lowering/step_lowering.h"
#include "core/lowering/step_runner.h"

namespace kiln {
namespace {

// Slots are byte vectors; added slots count against `limit` bytes.
class HostExecutor : public ProgramStepExecutor {
 public:
  explicit HostExecutor(size_t program_slots, int64_t limit = INT64_MAX) : limit_(limit) {
    slots.resize(program_slots);
  }
  Status Launch(const ProgramStep&) override { return Internal("no kernels here"); }
  Status Copy(int source, int target, int64_t bytes) override {
    return CopyRange(source, 0, target, 0, bytes);
  }
  Status CopyRange(int source, int64_t source_offset, int target, int64_t target_offset,
                   int64_t bytes) override {
    std::vector<uint8_t>& from = slots.at(static_cast<size_t>(source));
    std::vector<uint8_t>& to = slots.at(static_cast<size_t>(target));
    if (source_offset + bytes > static_cast<int64_t>(from.size()) ||
        target_offset + bytes > static_cast<int64_t>(to.size()))
      return OutOfRange("copy outside a slot");
    std::memcpy(to.data() + target_offset, from.data() + source_offset, static_cast<size_t>(bytes));
    copies += 1;
    copied_bytes += bytes;
    return OkStatus();
  }
  StatusOr<int> AddSlot(int64_t bytes) override {
    if (bytes > limit_ - live_bytes)
      return ResourceExhausted("device has ", limit_ - live_bytes, " bytes left");
    slots.emplace_back(static_cast<size_t>(bytes));
    live_bytes += bytes;
    added[static_cast<int>(slots.size() - 1)] = bytes;
    return static_cast<int>(slots.size() - 1);
  }
  void ReleaseSlot(int slot) override {
    live_bytes -= added.at(slot);
    added.erase(slot);
    slots[static_cast<size_t>(slot)].clear();
  }
  void Bind(int, int) override {}
  Status ReadToHost(int, void*, int64_t) override { return Internal("no host reads here"); }
  Status WriteFromHost(int, const void*, int64_t) override { return Internal("no host writes here"); }

  std::vector<std::vector<uint8_t>> slots;
  std::map<int, int64_t> added;  // live added slots and their bytes
  int64_t live_bytes = 0;
  int64_t copies = 0;
  int64_t copied_bytes = 0;

 private:
  int64_t limit_;
};

const std::string kBackend = "testdevice";

ProgramStep PushStep(int64_t tape, std::vector<int> sources, std::vector<int64_t> bytes) {
  ProgramStep step;
  step.kind = ProgramStep::Kind::kTapePush;
  step.name = "push";
  step.tape = tape;
  step.sources = std::move(sources);
  step.bytes = std::move(bytes);
  return step;
}

ProgramStep PopStep(int64_t tape, std::vector<int> targets, std::vector<int64_t> bytes) {
  ProgramStep step;
  step.kind = ProgramStep::Kind::kTapePop;
  step.name = "popped";
  step.tape = tape;
  step.targets = std::move(targets);
  step.bytes = std::move(bytes);
  return step;
}

// Slot 0 holds 12 bytes and slot 1 4 bytes (the pushed state); slots 2 and
// 3 receive the pops.
TEST(StepTapesTest, PopsGiveBackPushesInReverseOrderAndTheTapeDoubles) {
  HostExecutor executor(4);
  executor.slots[0].resize(12);
  executor.slots[1].resize(4);
  executor.slots[2].resize(12);
  executor.slots[3].resize(4);
  constexpr int kEntries = 100;
  constexpr int64_t kEntryBytes = 16;
  {
    StepTapes tapes(executor, kBackend);
    for (int i = 0; i < kEntries; ++i) {
      for (size_t b = 0; b < 12; ++b) executor.slots[0][b] = static_cast<uint8_t>(i + b);
      for (size_t b = 0; b < 4; ++b) executor.slots[1][b] = static_cast<uint8_t>(255 - i - b);
      ASSERT_TRUE(tapes.Push(PushStep(7, {0, 1}, {12, 4})).ok());
    }
    const StepTapeStatistics& pushed = tapes.statistics();
    EXPECT_EQ(pushed.pushes, kEntries);
    EXPECT_EQ(pushed.peak_bytes, kEntries * kEntryBytes);
    // 16, 32, ..., 2048 bytes: 8 buffers, the last under twice what it holds.
    EXPECT_EQ(pushed.growths, 8);
    EXPECT_EQ(pushed.capacity_bytes, 2048);
    EXPECT_LT(pushed.capacity_bytes, 2 * kEntries * kEntryBytes);
    EXPECT_LT(pushed.peak_capacity_bytes, 3 * kEntries * kEntryBytes) << "a growth holds old and new at once";
    EXPECT_EQ(executor.added.size(), 1u) << "each outgrown buffer is released";
    EXPECT_EQ(executor.live_bytes, 2048);
    // Growth copies (16 + 32 + ... + 1024 bytes) move less than twice the
    // bytes pushed.
    EXPECT_EQ(executor.copied_bytes - kEntries * kEntryBytes, 2032);
    EXPECT_LT(executor.copied_bytes - kEntries * kEntryBytes, 2 * kEntries * kEntryBytes);
    for (int i = kEntries - 1; i >= 0; --i) {
      ASSERT_TRUE(tapes.Pop(PopStep(7, {2, 3}, {12, 4})).ok());
      for (size_t b = 0; b < 12; ++b) ASSERT_EQ(executor.slots[2][b], static_cast<uint8_t>(i + b)) << i;
      for (size_t b = 0; b < 4; ++b) ASSERT_EQ(executor.slots[3][b], static_cast<uint8_t>(255 - i - b)) << i;
    }
    EXPECT_EQ(tapes.statistics().bytes, 0);
    EXPECT_EQ(tapes.statistics().pops, kEntries);
  }
  EXPECT_TRUE(executor.added.empty()) << "the tape outlived its execution";
  EXPECT_EQ(executor.live_bytes, 0);
}

TEST(StepTapesTest, TapesAreSeparateByNumber) {
  HostExecutor executor(2);
  executor.slots[0] = {1, 2, 3, 4};
  executor.slots[1].resize(4);
  StepTapes tapes(executor, kBackend);
  ASSERT_TRUE(tapes.Push(PushStep(0, {0}, {4})).ok());
  executor.slots[0] = {9, 9, 9, 9};
  ASSERT_TRUE(tapes.Push(PushStep(1, {0}, {4})).ok());
  ASSERT_TRUE(tapes.Pop(PopStep(0, {1}, {4})).ok());
  EXPECT_EQ(executor.slots[1], (std::vector<uint8_t>{1, 2, 3, 4}));
  ASSERT_TRUE(tapes.Pop(PopStep(1, {1}, {4})).ok());
  EXPECT_EQ(executor.slots[1], (std::vector<uint8_t>{9, 9, 9, 9}));
}

TEST(StepTapesTest, APopWithoutItsPushIsInternalNamingTheTape) {
  HostExecutor executor(2);
  executor.slots[0].resize(4);
  executor.slots[1].resize(8);
  StepTapes tapes(executor, kBackend);
  ASSERT_TRUE(tapes.Push(PushStep(5, {0}, {4})).ok());
  const Status status = tapes.Pop(PopStep(5, {1}, {8}));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  EXPECT_NE(status.message().find("tape 5"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("'popped'"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("holds 4"), std::string::npos) << status.ToString();
}

TEST(StepTapesTest, ADeviceWithoutRoomIsResourceExhaustedNamingTheBytes) {
  HostExecutor executor(1, /*limit=*/100);
  executor.slots[0].resize(40);
  StepTapes tapes(executor, kBackend);
  ASSERT_TRUE(tapes.Push(PushStep(2, {0}, {40})).ok());  // 40 bytes
  // Growing to 80 needs 80 more bytes beside the 40 held: 120 > 100.
  const Status status = tapes.Push(PushStep(2, {0}, {40}));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
  EXPECT_NE(status.message().find("tape 2 needs 80 bytes"), std::string::npos) << status.ToString();
}

// The lowering: a push is a counter kernel and a push step of its arrays; a
// pop is a counter kernel and a pop step into new slots.
TEST(StepTapesTest, TapeCallsLowerToTapeStepsAndCounterKernels) {
  StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = s32[2] parameter(1)
  n = s32[] constant(0)
  pushed = s32[] custom-call(n, x, y), custom_call_target="kiln_tape_push", backend_config="3"
  popped = (s32[], f32[4], s32[2]) custom-call(pushed), custom_call_target="kiln_tape_pop", backend_config="3"
  count = s32[] get-tuple-element(popped), index=0
  back = f32[4] get-tuple-element(popped), index=1
  ROOT out = (s32[], f32[4]) tuple(count, back)
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  StepLoweringRules rules;
  rules.backend = kBackend;
  rules.check_kernel = [](const Computation&) { return OkStatus(); };
  EXPECT_TRUE(UnsupportedDeviceOps(**module, rules).empty());
  StepProgram program;
  ASSERT_TRUE(LowerToStepProgram(std::move(module).value(), rules, program).ok());
  const std::vector<ProgramStep>& steps = program.sequences[0].steps;
  std::vector<ProgramStep::Kind> kinds;
  for (const ProgramStep& step : steps) kinds.push_back(step.kind);
  ASSERT_EQ(kinds, (std::vector<ProgramStep::Kind>{ProgramStep::Kind::kLaunch, ProgramStep::Kind::kTapePush,
                                                   ProgramStep::Kind::kLaunch, ProgramStep::Kind::kTapePop}));
  EXPECT_EQ(steps[0].kernel != steps[2].kernel, true) << "+1 and -1 are two kernels";
  EXPECT_EQ(steps[1].tape, 3);
  EXPECT_EQ(steps[1].bytes, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(steps[3].tape, 3);
  EXPECT_EQ(steps[3].bytes, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(steps[3].targets.size(), 2u);
  // The pop's counter input is the push's counter output.
  EXPECT_EQ(steps[2].buffers[0], steps[0].buffers[1]);
}

}  // namespace
}  // namespace kiln
