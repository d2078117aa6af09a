// The KernelCompiler itself: refusing what it cannot emit, several kernels
// per module, empty outputs, and the object cache.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <llvm/Support/CommandLine.h>
#include <llvm/Support/raw_ostream.h>

#include "tests/cpu/codegen_test_util.h"

namespace kiln::cpu::testing {
namespace {

// Complex dots multiply and add in their own type (as the interpreter
// does), so they are kernels like real ones; the conformance corpus checks
// their values (complex64_matmul_sum, complex128_arith).
TEST(CodegenCompiler, ComplexDotIsAKernel) {
  auto module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = c64[2,3] parameter(0)
  b = c64[3,4] parameter(1)
  ROOT d = c64[2,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const Status emittable = SharedCompiler().CheckEmittable(*(*module)->entry());
  EXPECT_TRUE(emittable.ok()) << emittable.ToString();
  KernelDescription request = DescribeKernel(*(*module)->entry(), "dot_kernel");
  auto compiled = SharedCompiler().Compile(std::span<const KernelDescription>(&request, 1));
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  ASSERT_EQ((*compiled)->kernels().size(), 1u);
  EXPECT_NE((*compiled)->kernels()[0].function, nullptr);
}

// A complex dot whose operands are not of its own type is not one.
TEST(CodegenCompiler, CheckEmittableRefusesMixedComplexDot) {
  Module module("m");
  auto computation = std::make_unique<Computation>("e");
  auto parameter = [&](int64_t number, Shape shape) {
    auto instruction = std::make_unique<Instruction>();
    instruction->opcode = Opcode::kParameter;
    instruction->name = "p" + std::to_string(number);
    instruction->shape = std::move(shape);
    instruction->attrs.parameter_number = number;
    return computation->AddInstruction(std::move(instruction));
  };
  Instruction* a = parameter(0, Shape(ElementType::kC64, {2, 3}));
  Instruction* b = parameter(1, Shape(ElementType::kC128, {3, 4}));
  auto dot = std::make_unique<Instruction>();
  dot->opcode = Opcode::kDot;
  dot->name = "d";
  dot->shape = Shape(ElementType::kC64, {2, 4});
  dot->operands = {a, b};
  dot->attrs.dot->lhs_contracting_dimensions = {1};
  dot->attrs.dot->rhs_contracting_dimensions = {0};
  computation->set_root(computation->AddInstruction(std::move(dot)));
  Computation* entry = module.AddComputation(std::move(computation));
  Status status = SharedCompiler().CheckEmittable(*entry);
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("dot"), std::string::npos) << status.message();
}

// Complex numbers have no one bit pattern to reinterpret as another type.
TEST(CodegenCompiler, CheckEmittableRefusesOrderingComplexNumbers) {
  auto module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = c64[4] parameter(0)
  ROOT n = c64[4] bitcast-convert(a)
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  Status status = SharedCompiler().CheckEmittable(*(*module)->entry());
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  EXPECT_NE(status.message().find("complex"), std::string::npos) << status.message();
}

// s32 multiplication as kernels do it: two's-complement wrap-around.
int32_t WrappingMultiply(int32_t value, int32_t factor) {
  return static_cast<int32_t>(static_cast<uint32_t>(value) * static_cast<uint32_t>(factor));
}

std::unique_ptr<Module> ScaleModule(int factor) {
  auto module = ParseHloModule("HloModule m\nENTRY e {\n  a = s32[100] parameter(0)\n  k = s32[] constant(" +
                               std::to_string(factor) +
                               ")\n  b = s32[100] broadcast(k), dimensions={}\n"
                               "  ROOT r = s32[100] multiply(a, b)\n}\n");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? std::move(*module) : nullptr;
}

// More kernels than compile threads: they are split over several modules
// compiled at once, and every kernel must still be found under its own name.
TEST(CodegenCompiler, ManyKernelsSplitOverParallelModules) {
  const int count = 3 * KernelCompileThreads() + 2;
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<KernelDescription> requests;
  for (int i = 0; i < count; ++i) {
    modules.push_back(ScaleModule(i + 1));
    ASSERT_NE(modules.back(), nullptr);
    requests.push_back(DescribeKernel(*modules.back()->entry(), "scale_" + std::to_string(i)));
  }
  auto compiled = SharedCompiler().Compile(requests);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  ASSERT_EQ((*compiled)->kernels().size(), static_cast<size_t>(count));
  Literal input = MakeInput(Shape(ElementType::kS32, {100}), 7, -1000, 1000);
  for (int k = 0; k < count; ++k) {
    Literal output(Shape(ElementType::kS32, {100}));
    void* buffers[] = {const_cast<uint8_t*>(input.raw().data()), output.raw().data()};
    RunInPieces((*compiled)->kernels()[k], buffers, 3);
    for (int i = 0; i < 100; ++i)
      ASSERT_EQ(output.data<int32_t>()[i], WrappingMultiply(input.data<int32_t>()[i], k + 1)) << k;
  }
}

TEST(CodegenCompiler, EmptyOutputRunsNothing) {
  CompareWithInterpreter(
      "HloModule m\nENTRY e {\n  a = f32[0,5] parameter(0)\n  ROOT n = f32[0,5] negate(a)\n}\n",
      {Literal(Shape(ElementType::kF32, {0, 5}))}, "empty");
}

TEST(CodegenCompiler, LargeArraySplitsIntoManyIterations) {
  auto module = ParseHloModule(
      "HloModule m\nENTRY e {\n  a = f32[100000] parameter(0)\n  ROOT n = f32[100000] exponential(a)\n}\n");
  ASSERT_TRUE(module.ok());
  auto compiled = CompileEntry(**module);
  ASSERT_TRUE(compiled.ok());
  EXPECT_GT((*compiled)->kernels()[0].parallel_extent, 1);
  EXPECT_GT((*compiled)->kernels()[0].bytes_per_iteration, 0);
  CompareWithInterpreter(
      "HloModule m\nENTRY e {\n  a = f32[100000] parameter(0)\n  ROOT n = f32[100000] exponential(a)\n}\n",
      {MakeInput(Shape(ElementType::kF32, {100000}), 4, -50, 50)}, "large");
}

TEST(CodegenCompiler, ObjectCacheHitsOnSecondCompile) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("kiln_codegen_cache_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  auto module =
      ParseHloModule("HloModule m\nENTRY e {\n  a = f32[64] parameter(0)\n  ROOT n = f32[64] tanh(a)\n}\n");
  ASSERT_TRUE(module.ok());
  KernelCompilerOptions options;
  options.cache_dir = directory.string();
  auto compiler = KernelCompiler::Create(options);
  ASSERT_TRUE(compiler.ok()) << compiler.status().ToString();
  KernelDescription request = DescribeKernel(*(*module)->entry(), "cached");
  Literal input = MakeInput(Shape(ElementType::kF32, {64}), 5);
  std::vector<Literal> results;
  for (int round = 0; round < 2; ++round) {
    auto compiled = (*compiler)->Compile(std::span<const KernelDescription>(&request, 1));
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    EXPECT_EQ((*compiler)->cache_hits(), round);
    results.push_back(RunCompiled(**compiled, **module, {input}, 1)[0]);
  }
  EXPECT_TRUE(results[0] == results[1]);
  EXPECT_FALSE(std::filesystem::is_empty(directory));
  std::filesystem::remove_all(directory);
}

TEST(CodegenCompiler, CacheDirectoryFromEnvironment) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("kiln_codegen_env_cache_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  ASSERT_EQ(::setenv("KILN_CACHE_DIR", directory.c_str(), 1), 0);
  auto compiler = KernelCompiler::Create({});
  ::unsetenv("KILN_CACHE_DIR");
  ASSERT_TRUE(compiler.ok()) << compiler.status().ToString();
  auto module =
      ParseHloModule("HloModule m\nENTRY e {\n  a = s16[9] parameter(0)\n  ROOT n = s16[9] not(a)\n}\n");
  ASSERT_TRUE(module.ok());
  KernelDescription request = DescribeKernel(*(*module)->entry(), "from_env");
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE((*compiler)->Compile(std::span<const KernelDescription>(&request, 1)).ok());
  }
  EXPECT_EQ((*compiler)->cache_hits(), 1);
  EXPECT_TRUE(std::filesystem::exists(directory));
  std::filesystem::remove_all(directory);
}

// A call whose kernels span several modules is a hit only when every
// module's object comes from the cache.
TEST(CodegenCompiler, ObjectCacheHitsForEverySplitModule) {
  const std::filesystem::path directory = std::filesystem::temp_directory_path() /
                                          ("kiln_codegen_split_cache_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(directory);
  KernelCompilerOptions options;
  options.cache_dir = directory.string();
  auto compiler = KernelCompiler::Create(options);
  ASSERT_TRUE(compiler.ok()) << compiler.status().ToString();
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<KernelDescription> requests;
  for (int i = 0; i < 5; ++i) {
    modules.push_back(ScaleModule(i + 2));
    ASSERT_NE(modules.back(), nullptr);
    requests.push_back(DescribeKernel(*modules.back()->entry(), "cached_scale_" + std::to_string(i)));
  }
  Literal input = MakeInput(Shape(ElementType::kS32, {100}), 8, -1000, 1000);
  for (int round = 0; round < 2; ++round) {
    auto compiled = (*compiler)->Compile(requests);
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    EXPECT_EQ((*compiler)->cache_hits(), round);
    Literal output(Shape(ElementType::kS32, {100}));
    void* buffers[] = {const_cast<uint8_t*>(input.raw().data()), output.raw().data()};
    RunInPieces((*compiled)->kernels()[4], buffers, 2);
    for (int i = 0; i < 100; ++i)
      ASSERT_EQ(output.data<int32_t>()[i], WrappingMultiply(input.data<int32_t>()[i], 6));
  }
  std::filesystem::remove_all(directory);
}

// Loop strength reduction is skipped in code generation (jit.cc says why):
// once a compiler exists, LLVM's process-wide option is set.
TEST(CodegenCompiler, CodeGenerationSkipsLoopStrengthReduction) {
  SharedCompiler();
  llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
  auto found = options.find("disable-lsr");
  ASSERT_NE(found, options.end());
  auto* disable = dynamic_cast<llvm::cl::opt<bool>*>(found->second);
  ASSERT_NE(disable, nullptr);
  EXPECT_TRUE(disable->getValue());
  // A host program may still give the option on its command line.
  const char* arguments[] = {"host", "-disable-lsr=false"};
  EXPECT_TRUE(llvm::cl::ParseCommandLineOptions(2, arguments, "", &llvm::nulls()));
  EXPECT_FALSE(disable->getValue());
  disable->setValue(true);
}

TEST(CodegenCompiler, RejectsBadOptimizationLevel) {
  KernelCompilerOptions options;
  options.optimization_level = 7;
  EXPECT_EQ(KernelCompiler::Create(options).status().code(), StatusCode::kInvalidArgument);
}
}  // namespace
}  // namespace kiln::cpu::testing
