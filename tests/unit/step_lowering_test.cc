// The shared device lowering (core/lowering): what steps, slots and kernels
// a module becomes under a backend's rules, what it refuses and how it names
// the refusal, and the kernel descriptions it makes. The CUDA backend's
// tests run the same lowering end to end.
#include "core/lowering/step_lowering.h"

#include <climits>
#include <string>

#include <gtest/gtest.h>

#include "core/hlo_parser.h"

namespace kiln {
namespace {

std::unique_ptr<Module> ParseLoweringModule(const std::string& text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(module).value() : nullptr;
}

bool Contains(const Computation& computation, Opcode opcode) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode == opcode) return true;
  }
  return false;
}

// A backend that runs any kernel except one holding a sort, with 64-byte
// slots and 100 bytes of scratch for a reduce.
StepLoweringRules TestRules() {
  StepLoweringRules rules;
  rules.backend = "testdevice";
  rules.slot_alignment = 64;
  rules.check_kernel = [](const Computation& kernel) {
    return Contains(kernel, Opcode::kSort) ? Unimplemented("no sort kernel") : OkStatus();
  };
  rules.kernel_scratch_bytes = [](const Instruction& root) -> int64_t {
    return root.opcode == Opcode::kReduce ? 100 : 0;
  };
  // The same answer per instruction: every op alone is a kernel but sort.
  auto table = std::make_shared<compiler::EmittableTable>("testdevice",
                                                          std::initializer_list<compiler::EmittableRow>{});
  for (int i = 0; i < static_cast<int>(Opcode::kOpcodeCount); ++i) {
    const auto opcode = static_cast<Opcode>(i);
    if (opcode != Opcode::kSort)
      table->Set(
          {opcode, compiler::Emittability::kAlways, compiler::ElementTypeSet::All(), /*tuple_result=*/true});
  }
  rules.emittable = table;
  return rules;
}

int CountSteps(const StepProgram& program, ProgramStep::Kind kind) {
  int count = 0;
  for (const StepSequence& sequence : program.sequences) {
    for (const ProgramStep& step : sequence.steps) count += step.kind == kind;
  }
  return count;
}

TEST(StepLoweringTest, AFusedChainIsOneLaunchOfOneKernel) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  s = f32[1000] add(a, b)
  m = f32[1000] multiply(s, s)
  ROOT n = f32[1000] negate(m)
})");
  ASSERT_NE(module, nullptr);
  const StepLoweringRules rules = TestRules();
  ASSERT_TRUE(RunDevicePasses(*module, 2, rules).ok());
  StepProgram program;
  const Status status = LowerToStepProgram(std::move(module), rules, program);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(program.kernels.size(), 1u);
  ASSERT_EQ(program.sequences.size(), 1u);
  ASSERT_EQ(program.sequences[0].steps.size(), 1u);
  const ProgramStep& launch = program.sequences[0].steps[0];
  EXPECT_EQ(launch.kind, ProgramStep::Kind::kLaunch);
  ASSERT_EQ(launch.buffers.size(), 3u);  // two inputs, one output
  EXPECT_EQ(program.slots[static_cast<size_t>(launch.buffers[0])].kind, StepSlotKind::kParameter);
  EXPECT_EQ(program.slots[static_cast<size_t>(launch.buffers[1])].index, 1);
  // The output is written where the caller gets it: result 0, no scratch.
  EXPECT_EQ(program.slots[static_cast<size_t>(launch.buffers[2])].kind, StepSlotKind::kResult);
  EXPECT_EQ(program.slots[static_cast<size_t>(launch.buffers[2])].index, 0);
  EXPECT_EQ(program.slots[static_cast<size_t>(launch.buffers[2])].bytes, 4000);
  EXPECT_EQ(program.sequences[0].results, std::vector<int>{launch.buffers[2]});
  EXPECT_EQ(program.parameter_leaves.size(), 2u);
  EXPECT_EQ(program.scratch_bytes, 0);
}

TEST(StepLoweringTest, EqualKernelsAreCompiledOnce) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  x = f32[8] exponential(a)
  y = f32[8] exponential(x)
  ROOT t = (f32[8], f32[8]) tuple(x, y)
})");
  ASSERT_NE(module, nullptr);
  StepProgram program;
  ASSERT_TRUE(LowerToStepProgram(std::move(module), TestRules(), program).ok());
  EXPECT_EQ(CountSteps(program, ProgramStep::Kind::kLaunch), 2);
  EXPECT_EQ(program.kernels.size(), 1u);
  EXPECT_EQ(program.result_leaves.size(), 2u);
}

// A backend's library-call rule (the CUDA backend's dots through cuBLAS)
// makes the instruction a step of its own on its operands and output, not a
// kernel; what the rule leaves stays a kernel.
TEST(StepLoweringTest, LibraryCallsAreStepsOfTheirOwn) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[3,4] negate(d)
})");
  ASSERT_NE(module, nullptr);
  StepLoweringRules rules = TestRules();
  rules.library_call = [](const Instruction& instruction) { return instruction.opcode == Opcode::kDot; };
  ASSERT_TRUE(RunDevicePasses(*module, 2, rules).ok());
  StepProgram program;
  const Status status = LowerToStepProgram(std::move(module), rules, program);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_EQ(program.library_calls.size(), 1u);
  EXPECT_EQ(program.library_calls[0]->opcode, Opcode::kDot);
  EXPECT_EQ(program.kernels.size(), 1u);  // the negate
  ASSERT_EQ(program.sequences[0].steps.size(), 2u);
  const ProgramStep& call = program.sequences[0].steps[0];
  EXPECT_EQ(call.kind, ProgramStep::Kind::kLibraryCall);
  EXPECT_EQ(call.call, 0);
  ASSERT_EQ(call.buffers.size(), 3u);  // two operands, one output
  EXPECT_EQ(program.slots[static_cast<size_t>(call.buffers[0])].kind, StepSlotKind::kParameter);
  EXPECT_EQ(program.slots[static_cast<size_t>(call.buffers[2])].kind, StepSlotKind::kTemporary);
  EXPECT_EQ(program.slots[static_cast<size_t>(call.buffers[2])].bytes, 48);
  const ProgramStep& launch = program.sequences[0].steps[1];
  EXPECT_EQ(launch.kind, ProgramStep::Kind::kLaunch);
  EXPECT_EQ(launch.buffers[0], call.buffers[2]);
}

// Results computed into temporaries are placed in their own buffers; a
// parameter passed through, a constant, a value returned twice (its second
// time) and a reshape of a parameter (an alias of its slot) are copied out.
TEST(StepLoweringTest, ResultsComputedByStepsArePlacedTheRestCopied) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  x = f32[8] exponential(a)
  c = f32[2] constant({1, 2})
  r = f32[2,4] reshape(a)
  ROOT t = (f32[8], f32[8], f32[8], f32[2], f32[8], f32[2,4]) tuple(x, a, x, c, x, r)
})");
  ASSERT_NE(module, nullptr);
  StepProgram program;
  ASSERT_TRUE(LowerToStepProgram(std::move(module), TestRules(), program).ok());
  const std::vector<int>& results = program.sequences[0].results;
  ASSERT_EQ(results.size(), 6u);
  auto placed = [&](size_t i) {
    const StepSlot& slot = program.slots[static_cast<size_t>(results[i])];
    return slot.kind == StepSlotKind::kResult && slot.index == static_cast<int64_t>(i);
  };
  EXPECT_TRUE(placed(0));
  EXPECT_EQ(program.scratch_bytes, 0) << "a result slot takes no scratch";
  EXPECT_FALSE(placed(1)) << "a parameter";
  EXPECT_EQ(program.slots[static_cast<size_t>(results[1])].kind, StepSlotKind::kParameter);
  EXPECT_FALSE(placed(2)) << "x again";
  EXPECT_FALSE(placed(3)) << "a constant";
  EXPECT_FALSE(placed(4)) << "x a third time";
  EXPECT_FALSE(placed(5)) << "the parameter's slot under another shape";
}

TEST(StepLoweringTest, LoopsBranchesAndScratchBecomeTheirSteps) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  w = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}
ENTRY e {
  v = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, v)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  out = f32[4] get-tuple-element(loop), index=1
  z = f32[] constant(0)
  ROOT r = f32[] reduce(out, z), dimensions={0}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  StepProgram program;
  const Status status = LowerToStepProgram(std::move(module), TestRules(), program);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(CountSteps(program, ProgramStep::Kind::kWhile), 1);
  ASSERT_EQ(program.sequences.size(), 3u);  // entry, condition, body
  const ProgramStep* loop = nullptr;
  const ProgramStep* reduce = nullptr;
  for (const ProgramStep& step : program.sequences[0].steps) {
    if (step.kind == ProgramStep::Kind::kWhile) loop = &step;
    if (step.kind == ProgramStep::Kind::kLaunch) reduce = &step;
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(loop->nested.size(), 2u);
  EXPECT_EQ(loop->sources.size(), 2u);
  EXPECT_EQ(program.sequences[static_cast<size_t>(loop->nested[0])].results.size(), 1u);
  EXPECT_EQ(program.sequences[static_cast<size_t>(loop->nested[1])].parameters.size(), 2u);
  // The reduce's launch carries its scratch slot after its output.
  ASSERT_EQ(reduce->buffers.size(), 4u);  // operand, init, output, scratch
  EXPECT_EQ(program.slots[static_cast<size_t>(reduce->buffers[3])].bytes, 100);
  EXPECT_EQ(program.constants.size(), 4u);  // two in the entry, one in the condition, one in the body
  // The temporaries that remain lie in the scratch block at multiples of
  // 64 (the buffer assignment places them: step_buffer_reuse_test.cc).
  int64_t temporaries = 0;
  for (const StepSlot& slot : program.slots) {
    if (slot.kind != StepSlotKind::kTemporary) continue;
    ++temporaries;
    EXPECT_EQ(slot.offset % 64, 0);
    EXPECT_LE(slot.offset + slot.bytes, program.scratch_bytes);
  }
  EXPECT_GT(temporaries, 0);
  EXPECT_GT(program.scratch_bytes, 0);
  EXPECT_EQ(program.slots[static_cast<size_t>(reduce->buffers[3])].offset % 64, 0);
}

TEST(StepLoweringTest, RefusalsNameTheOpTheBackendAndTheReason) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  ROOT s = f32[8] sort(a), dimensions={0}, is_stable=true, to_apply=lt
}
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
})");
  ASSERT_NE(module, nullptr);
  StepProgram program;
  const Status status = LowerToStepProgram(std::move(module), TestRules(), program);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("sort 's'"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("testdevice backend"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("no sort kernel"), std::string::npos) << status.ToString();
}

TEST(StepLoweringTest, HostOnlyOpsAreRefusedButFeedsAndRngAreNot) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  ROOT c = f32[8] custom-call(a), custom_call_target="my_op"
})");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(NeedsHostOnDevice(*module->entry()->root()));
  StepProgram program;
  const Status status = LowerToStepProgram(std::move(module), TestRules(), program);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("needs the host runtime"), std::string::npos) << status.ToString();

  std::unique_ptr<Module> feeds = ParseLoweringModule(R"(HloModule m
ENTRY e {
  t = token[] after-all()
  in = (f32[4], token[]) infeed(t)
  d = f32[4] get-tuple-element(in), index=0
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[4] rng(lo, hi), distribution=rng_uniform
  u = f32[4] add(d, r)
  ROOT o = token[] outfeed(u, t)
})");
  ASSERT_NE(feeds, nullptr);
  for (const auto& instruction : feeds->entry()->instructions())
    EXPECT_FALSE(NeedsHostOnDevice(*instruction)) << instruction->name;
  StepProgram fed;
  const Status lowered = LowerToStepProgram(std::move(feeds), TestRules(), fed);
  ASSERT_TRUE(lowered.ok()) << lowered.ToString();
  EXPECT_EQ(CountSteps(fed, ProgramStep::Kind::kInfeed), 1);
  EXPECT_EQ(CountSteps(fed, ProgramStep::Kind::kOutfeed), 1);
}

TEST(StepLoweringTest, RulesWithoutAKernelCheckAreAnError) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  ROOT a = f32[8] parameter(0)
})");
  ASSERT_NE(module, nullptr);
  StepLoweringRules rules;
  rules.backend = "testdevice";
  StepProgram program;
  EXPECT_EQ(LowerToStepProgram(std::move(module), rules, program).code(), StatusCode::kInternal);
  StepProgram empty;
  EXPECT_EQ(LowerToStepProgram(nullptr, TestRules(), empty).code(), StatusCode::kInvalidArgument);
}

// The backend-neutral kernel description (core/compiler/kernel_description.h)
// the lowering makes once per distinct kernel: what DescribeKernel reads off
// a computation, and the linear grids every backend builds its own from
// (CPU row blocks, CUDA blocks x threads, Vulkan workgroups x local size).
TEST(KernelDescriptionTest, DescribesArgumentsAndResultLeavesOfTheComputation) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
ENTRY e {
  a = f32[4,8] parameter(0)
  b = s8[3] parameter(1)
  n = f32[4,8] negate(a)
  ROOT t = (f32[4,8], s8[3]) tuple(n, b)
})");
  ASSERT_NE(module, nullptr);
  const KernelDescription kernel = DescribeKernel(*module->entry(), "k0", 96);
  EXPECT_EQ(kernel.computation, module->entry());
  EXPECT_EQ(kernel.name, "k0");
  ASSERT_EQ(kernel.arguments.size(), 2u);
  EXPECT_EQ(kernel.arguments[0].shape.ToString(), "f32[4,8]");
  EXPECT_EQ(kernel.arguments[0].bytes, 4 * 8 * 4);
  EXPECT_EQ(kernel.arguments[1].bytes, 3);
  ASSERT_EQ(kernel.results.size(), 2u);
  EXPECT_EQ(kernel.results[0].shape.ToString(), "f32[4,8]");
  EXPECT_EQ(kernel.results[1].shape.ToString(), "s8[3]");
  EXPECT_EQ(kernel.scratch_bytes, 96);
  // No backend has chosen a grid yet: one iteration, one workgroup of one.
  EXPECT_EQ(kernel.grid.iterations, 1);
  EXPECT_EQ(kernel.grid.invocations(), 1);
}

TEST(KernelDescriptionTest, LinearGridCoversTheIterationsInWholeWorkgroups) {
  const KernelGrid exact = LinearGrid(1024, 256);
  EXPECT_EQ(exact.iterations, 1024);
  EXPECT_EQ(exact.workgroups[0], 4);
  EXPECT_EQ(exact.workgroup_size[0], 256);
  EXPECT_EQ(exact.workgroups[1] * exact.workgroups[2] * exact.workgroup_size[1] * exact.workgroup_size[2], 1);
  EXPECT_EQ(exact.invocations(), 1024);

  const KernelGrid ragged = LinearGrid(1000, 256);
  EXPECT_EQ(ragged.workgroups[0], 4);  // the last workgroup skips 24 iterations
  EXPECT_EQ(ragged.invocations(), 1024);

  const KernelGrid one_block = LinearGrid(7, 64);
  EXPECT_EQ(one_block.workgroups[0], 1);
}

TEST(KernelDescriptionTest, LinearGridCapsWorkgroupsAndKeepsEmptyGridsEmpty) {
  const KernelGrid capped = LinearGrid(1'000'000, 64, 100);
  EXPECT_EQ(capped.workgroups[0], 100);  // the invocations stride through the rest
  EXPECT_EQ(capped.iterations, 1'000'000);
  EXPECT_LT(capped.invocations(), capped.iterations);

  const KernelGrid empty = LinearGrid(0, 64);
  EXPECT_EQ(empty.workgroups[0], 0);
  EXPECT_EQ(empty.invocations(), 0);

  // A workgroup size below one is one; sizes near the limit do not overflow.
  EXPECT_EQ(LinearGrid(5, 0).workgroup_size[0], 1);
  EXPECT_EQ(LinearGrid(5, 0).workgroups[0], 5);
  const KernelGrid huge = LinearGrid(INT64_MAX, 2);
  EXPECT_EQ(huge.workgroups[0], INT64_MAX / 2 + 1);
  EXPECT_EQ(huge.invocations(), INT64_MAX);  // saturated
}

TEST(KernelDescriptionTest, StepLoweringDescribesEachDistinctKernelOnceWithItsScratch) {
  std::unique_ptr<Module> module = ParseLoweringModule(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[16,32] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16] reduce(a, z), dimensions={1}, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  StepProgram program;
  ASSERT_TRUE(LowerToStepProgram(std::move(module), TestRules(), program).ok());
  ASSERT_EQ(program.kernels.size(), 1u);
  const KernelDescription& kernel = program.kernels[0];
  EXPECT_EQ(kernel.scratch_bytes, 100);
  ASSERT_EQ(kernel.results.size(), 1u);
  EXPECT_EQ(kernel.results[0].shape.ToString(), "f32[16]");
  EXPECT_EQ(kernel.results[0].bytes, 64);
  ASSERT_FALSE(kernel.arguments.empty());
  EXPECT_EQ(kernel.arguments[0].shape.ToString(), "f32[16,32]");
}

}  // namespace
}  // namespace kiln
