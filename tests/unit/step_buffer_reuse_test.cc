// The device lowering places its temporaries with the shared buffer
// assignment (core/compiler/buffer_assignment.h): temporaries that are
// never live together share scratch bytes, and no launch's output shares a
// byte with its inputs.
#include <gtest/gtest.h>

#include "core/hlo_parser.h"
#include "core/lowering/step_lowering.h"

namespace kiln {
namespace {

StepLoweringRules AnyKernelRules() {
  StepLoweringRules rules;
  rules.backend = "testdevice";
  rules.slot_alignment = 64;
  rules.check_kernel = [](const Computation&) { return OkStatus(); };
  return rules;
}

// Byte ranges of two temporaries overlap.
bool ScratchOverlap(const StepProgram& program, int a, int b) {
  const StepSlot& x = program.slots[static_cast<size_t>(a)];
  const StepSlot& y = program.slots[static_cast<size_t>(b)];
  if (x.kind != StepSlotKind::kTemporary || y.kind != StepSlotKind::kTemporary) return false;
  return x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes;
}

TEST(DeviceBufferReuseTest, AChainOfKernelsNeedsTwoTemporariesOfScratch) {
  // Six kernels (nothing fuses: the passes are not run), five temporaries
  // of 4000 bytes (4032 with the 64-byte slot alignment) and a result.
  auto module = ParseHloModule(R"(HloModule chain
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] negate(a)
  c = f32[1000] exponential(b)
  d = f32[1000] negate(c)
  e = f32[1000] exponential(d)
  f = f32[1000] negate(e)
  ROOT g = f32[1000] exponential(f)
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  StepProgram program;
  ASSERT_TRUE(LowerToStepProgram(std::move(module).value(), AnyKernelRules(), program).ok());
  EXPECT_EQ(program.scratch_bytes, 2 * 4032) << "was 5 * 4032 with a range per temporary";
  int launches = 0;
  for (const ProgramStep& step : program.sequences[0].steps) {
    if (step.kind != ProgramStep::Kind::kLaunch) continue;
    ++launches;
    ASSERT_EQ(step.buffers.size(), 2u);
    EXPECT_FALSE(ScratchOverlap(program, step.buffers[0], step.buffers[1])) << step.name;
  }
  EXPECT_EQ(launches, 6);
  for (const StepSlot& slot : program.slots) {
    if (slot.kind != StepSlotKind::kTemporary) continue;
    EXPECT_EQ(slot.offset % 64, 0);
    EXPECT_LE(slot.offset + slot.bytes, program.scratch_bytes);
  }
}

// A value read after a loop stays apart from everything the loop's steps
// write, and the loop body's temporaries from the caller's.
TEST(DeviceBufferReuseTest, ValuesLiveAcrossALoopKeepTheirBytes) {
  auto module = ParseHloModule(R"(HloModule loop
cond {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[64] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[64] negate(v)
  x = f32[64] exponential(w)
  ROOT t = (s32[], f32[64]) tuple(j, x)
}
ENTRY e {
  a = f32[64] parameter(0)
  kept = f32[64] negate(a)
  zero = s32[] constant(0)
  init = (s32[], f32[64]) tuple(zero, a)
  loop = (s32[], f32[64]) while(init), condition=cond, body=body
  out = f32[64] get-tuple-element(loop), index=1
  ROOT r = f32[64] add(out, kept)
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  StepProgram program;
  ASSERT_TRUE(LowerToStepProgram(std::move(module).value(), AnyKernelRules(), program).ok());
  int kept = -1;
  const ProgramStep* loop = nullptr;
  for (const ProgramStep& step : program.sequences[0].steps) {
    if (step.name == "kept") kept = step.buffers.back();
    if (step.kind == ProgramStep::Kind::kWhile) loop = &step;
  }
  ASSERT_GE(kept, 0);
  ASSERT_NE(loop, nullptr);
  for (int target : loop->targets) EXPECT_FALSE(ScratchOverlap(program, kept, target));
  for (int nested : loop->nested) {
    for (const ProgramStep& step : program.sequences[static_cast<size_t>(nested)].steps) {
      for (int buffer : step.buffers) EXPECT_FALSE(ScratchOverlap(program, kept, buffer)) << step.name;
      for (int target : step.targets) EXPECT_FALSE(ScratchOverlap(program, kept, target)) << step.name;
    }
  }
}

}  // namespace
}  // namespace kiln
