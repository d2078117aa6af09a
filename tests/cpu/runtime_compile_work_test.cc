// What a CPU compile does once that it once did twice or for nothing (issue
// 13: compile time linear in program size, with a small constant): the
// module given up to CompileModule is rewritten in place of a copy, the
// input's shapes are inferred once, and the interpreter plans only what a
// library call runs.
#include "core/passes/pipeline.h"
#include "core/work_count.h"
#include "tests/cpu/runtime_test_util.h"

namespace kiln::cpu {
namespace {

const CompiledProgram& CompiledProgramOf(const Executable& executable) {
  return static_cast<const CpuExecutable&>(executable).program();
}

constexpr char kElementwise[] = R"(HloModule elementwise
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[8] add(x, y)
  n = f32[8] negate(s)
  ROOT m = f32[8] multiply(n, x)
})";

std::vector<Literal> ElementwiseArguments() {
  return {Literal::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8}),
          Literal::FromVector<float>({8, 7, 6, 5, 4, 3, 2, 1})};
}

// (x + y) * -x with the arguments above.
Literal ElementwiseResult() { return Literal::FromVector<float>({-9, -18, -27, -36, -45, -54, -63, -72}); }

TEST(RuntimeCompileWorkTest, CompileModuleRewritesTheModuleItIsGiven) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kElementwise);
  ASSERT_NE(module, nullptr);
  module->set_name("compile_module_keeps_it");  // not a program the cache already holds
  const Module* given = module.get();
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable,
                            cpu.CompileModule(std::move(module), CompileOptions()));
  EXPECT_EQ(CompiledProgramOf(*executable).module.get(), given);  // no copy
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                            testing::RunExecutable(cpu, *executable, ElementwiseArguments()));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], ElementwiseResult());
}

TEST(RuntimeCompileWorkTest, CompileLeavesTheCallersModuleAsItWas) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kElementwise);
  ASSERT_NE(module, nullptr);
  module->set_name("compile_copies_it");
  const std::string before = module->ToString();
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  EXPECT_NE(CompiledProgramOf(*executable).module.get(), module.get());
  EXPECT_EQ(module->ToString(), before);  // the passes (fusion) rewrote the copy
}

TEST(RuntimeCompileWorkTest, CompileModuleRefusesNoModule) {
  CpuBackend cpu;
  const StatusOr<std::unique_ptr<Executable>> compiled = cpu.CompileModule(nullptr, CompileOptions());
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(compiled.status().message().find("no module"), std::string::npos) << compiled.status().ToString();
}

// Compile verifies its input in full, every shape inferred again; the module
// its passes made is checked for structure only, unless a debug build or
// KILN_VERIFY_PASSES asks for the full check as well.
TEST(RuntimeCompileWorkTest, CompileInfersTheInputsShapesOnce) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kElementwise);
  ASSERT_NE(module, nullptr);
  module->set_name("compile_infers_once");
  const uint64_t input_instructions = module->entry()->instructions().size();
  CpuBackend cpu;
  const uint64_t before = ShapesVerified();
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const uint64_t inferred = ShapesVerified() - before;
  if (VerifyOptimisedModules()) {
    EXPECT_GT(inferred, input_instructions) << "the optimised module is verified as well";
  } else {
    EXPECT_EQ(inferred, input_instructions);
  }
}

TEST(RuntimeCompileWorkTest, NoInterpreterPlanForAProgramOfKernelsOnly) {
  std::unique_ptr<Module> module = testing::ParseOrDie(kElementwise);
  ASSERT_NE(module, nullptr);
  module->set_name("kernels_only");
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const CompiledProgram& program = CompiledProgramOf(*executable);
  ASSERT_EQ(program.statistics.thunks.count("library"), 0u);
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                            testing::RunExecutable(cpu, *executable, ElementwiseArguments()));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], ElementwiseResult());
  ASSERT_NE(program.library_plan, nullptr);
  EXPECT_EQ(program.library_plan->planned(), 0u);
}

// replica-id runs through the interpreter (a library call on a computation of
// that one instruction): that computation is planned when it first runs, and
// nothing else is.
TEST(RuntimeCompileWorkTest, TheInterpreterPlansWhatALibraryCallRunsWhenItRuns) {
  std::unique_ptr<Module> module = testing::ParseOrDie(R"(HloModule library_call
ENTRY e {
  x = f32[8] parameter(0)
  r = u32[] replica-id()
  c = f32[] convert(r)
  b = f32[8] broadcast(c), dimensions={}
  ROOT s = f32[8] add(x, b)
})");
  ASSERT_NE(module, nullptr);
  CpuBackend cpu;
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Executable> executable, cpu.Compile(*module, CompileOptions()));
  const CompiledProgram& program = CompiledProgramOf(*executable);
  ASSERT_EQ(program.statistics.thunks.at("library"), 1);
  ASSERT_NE(program.library_plan, nullptr);
  EXPECT_EQ(program.library_plan->planned(), 0u);  // nothing planned at compile time
  const std::vector<Literal> arguments = {Literal::FromVector<float>({1, 2, 3, 4, 5, 6, 7, 8})};
  for (int run = 0; run < 2; ++run) {
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> results,
                              testing::RunExecutable(cpu, *executable, arguments));
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0], arguments[0]);  // replica 0
    EXPECT_EQ(program.library_plan->planned(), 1u) << "run " << run;
  }
}

}  // namespace
}  // namespace kiln::cpu
