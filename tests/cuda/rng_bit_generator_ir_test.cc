// The CUDA backend's rng-bit-generator kernel gives the interpreter's bits.
// No GPU runs here and the fake driver cannot execute PTX, so the check is
// on the kernel's own IR: the per-thread function the GPU entry inlines
// (rng_bit_generator_emitter.h) is target-neutral, and compiled for this
// host with LLVM's JIT it must give, thread by thread, the new state and the
// bits the interpreter gives for the same state. What only a GPU can check
// is the NVPTX lowering of that IR and the launch (grid, parameters); ptxas
// accepts the PTX (cuda.rng_bit_generator_ptx).
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/cuda/ptx_export.h"
#include "backends/cuda/rng_bit_generator_emitter.h"
#include "core/hlo_parser.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using ElementFunction = void (*)(const uint64_t* state, uint64_t* new_state, void* bits, int64_t element);

std::string GeneratorModule(const std::string& state, const std::string& bits, const std::string& algorithm) {
  return "HloModule rbg\n\nENTRY main {\n  s = " + state + " parameter(0)\n  ROOT r = (" + state + ", " +
         bits + ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
}

// Runs the emitted element function on the host for every thread; returns
// the new state and the bits' bytes.
struct HostRun {
  std::vector<uint64_t> new_state;
  std::vector<uint8_t> bits;
};
StatusOr<HostRun> RunOnHost(const Instruction& generator, const std::vector<uint64_t>& state) {
  static const bool initialised = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialised;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("rbg_host", *context);
  KILN_ASSIGN_OR_RETURN(const int64_t threads,
                        cuda::EmitRngBitGeneratorElement(*module, generator, "rbg_element"));
  std::string problems;
  llvm::raw_string_ostream out(problems);
  if (llvm::verifyModule(*module, &out)) return Internal("invalid IR: ", problems);
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) return Internal("LLJIT: ", llvm::toString(jit.takeError()));
  module->setDataLayout((*jit)->getDataLayout());
  if (llvm::Error error =
          (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    return Internal("addIRModule: ", llvm::toString(std::move(error)));
  auto symbol = (*jit)->lookup("rbg_element");
  if (!symbol) return Internal("lookup: ", llvm::toString(symbol.takeError()));
  auto function = symbol->toPtr<ElementFunction>();
  const Shape& bits_shape = generator.shape.tuple_shapes(1);
  HostRun run;
  // Poisoned, so an element no thread writes shows.
  run.new_state.assign(state.size(), 0xDEADBEEFDEADBEEFull);
  run.bits.assign(static_cast<size_t>(bits_shape.element_count() * BitWidth(bits_shape.element_type()) / 8),
                  0xA5);
  for (int64_t i = 0; i < threads; ++i) function(state.data(), run.new_state.data(), run.bits.data(), i);
  return run;
}

struct Case {
  const char* state;
  const char* bits;
  const char* algorithm;
  std::vector<uint64_t> words;
};

TEST(RngBitGeneratorIrTest, HostCompiledKernelIrGivesTheInterpretersBits) {
  const std::vector<Case> cases = {
      // Threefry, 32-bit words: the first even dimension is split in halves.
      {"u64[2]", "u32[4,5]", "rng_three_fry", {0x0123456789ABCDEFull, 42}},
      // An odd split (the largest dimension, 7), and 16- and 8-bit elements.
      {"u64[2]", "u16[3,7]", "rng_three_fry", {7, 0xFFFFFFFFFFFFFFF0ull}},
      {"u64[2]", "u8[5]", "rng_three_fry", {99, 3}},
      {"u64[2]", "u32[]", "rng_three_fry", {1, 2}},
      {"u64[2]", "u64[3,3]", "rng_three_fry", {0xCAFEF00Dull, 1000}},
      // Philox with a two-word state (the key is the counter's high word).
      {"u64[2]", "u32[3,5]", "rng_philox", {0x1111222233334444ull, 5}},
      {"u64[2]", "u8[7]", "rng_default", {12345, 0}},
      // Philox with a three-word state; the counter's low word wraps, so the
      // blocks past the wrap and the new state carry into the high word.
      {"u64[3]", "u64[5]", "rng_philox", {0xABCDEF, 0xFFFFFFFFFFFFFFFEull, 77}},
      {"u64[3]", "s32[2,6]", "rng_philox", {3, 9, 0xFFFFFFFFFFFFFFFFull}},
      {"u64[3]", "u16[9]", "rng_philox", {0, 0, 0}},
  };
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  for (const Case& c : cases) {
    const std::string text = GeneratorModule(c.state, c.bits, c.algorithm);
    SCOPED_TRACE(text);
    KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
    Literal state(Shape(ElementType::kU64, {static_cast<int64_t>(c.words.size())}));
    std::memcpy(state.data<uint64_t>().data(), c.words.data(), c.words.size() * sizeof(uint64_t));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected,
                              testing::ExecuteLeaves(*interpreter, *module, std::vector<Literal>{state}));
    ASSERT_EQ(expected.size(), 2u);
    KILN_ASSERT_OK_AND_ASSIGN(HostRun got, RunOnHost(*module->entry()->root(), c.words));
    for (size_t i = 0; i < c.words.size(); ++i)
      EXPECT_EQ(got.new_state[i], expected[0].data<uint64_t>()[i]) << "state word " << i;
    const auto want = expected[1].raw();
    ASSERT_EQ(got.bits.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(static_cast<int>(got.bits[i]), static_cast<int>(static_cast<uint8_t>(want[i])))
          << "byte " << i;
  }
}

TEST(RngBitGeneratorIrTest, KernelIsOneEntryWithAThreadPerElementOrStateWord) {
  const std::string text = GeneratorModule("u64[3]", "u32[2]", "rng_philox");
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_ASSERT_OK_AND_ASSIGN(cuda::PtxExport exported,
                            cuda::ExportPtx(*module, *cuda::ParsePtxTarget("sm_80")));
  ASSERT_EQ(exported.kernels.size(), 1u) << exported.ptx;
  EXPECT_EQ(exported.kernels[0].parallel_extent, 3);  // the state's three words outnumber the two elements
  EXPECT_EQ(exported.kernels[0].buffer_count, 3);
  EXPECT_NE(exported.ptx.find(".entry " + exported.kernels[0].name), std::string::npos) << exported.ptx;
  EXPECT_EQ(exported.ptx.find("call.uni"), std::string::npos) << "the element function should be inlined";
}

}  // namespace
}  // namespace kiln
