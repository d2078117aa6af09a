// The CUDA backend's sort and topk kernels (sort_emitter.h) give the
// interpreter's results. No GPU runs here and the fake driver cannot
// execute PTX, so the kernel's own IR runs on this host
// (host_kernel_harness.h), launch by launch as a GPU runs it: each thread
// of a tile block as a thread of its own, meeting the others at a
// std::barrier, and the threads of the other modes one after another.
// Small tiles (4 .. 16 elements) take rows of a few hundred elements through
// every mode: tiles sorted, merges across tiles and within them, the gather.
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/sort_emitter.h"
#include "core/hlo_parser.h"
#include "tests/cuda/host_kernel_harness.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// Emits `instruction`'s kernel with `tile`, runs its launches on `inputs`
// and returns the outputs' bytes.
StatusOr<std::vector<std::vector<uint8_t>>> RunKernelOnHost(const Instruction& instruction, int64_t tile,
                                                            const std::vector<Literal>& inputs) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("sort_host", *context);
  const bool top_k = instruction.opcode == Opcode::kTopK;
  KILN_ASSIGN_OR_RETURN(cuda::PtxKernel kernel,
                        top_k ? cuda::EmitTopKKernel(*module, instruction, "sorter", tile)
                              : cuda::EmitSortKernel(*module, instruction, "sorter", tile));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<cuda_test::HostKernels> host,
                        cuda_test::HostKernels::Compile(std::move(context), std::move(module), {"sorter"}));

  // Buffers: the inputs, the outputs (poisoned, so an element no thread
  // writes shows) and the scratch.
  std::vector<std::vector<uint8_t>> buffers;
  for (const Literal& input : inputs) buffers.emplace_back(input.raw().begin(), input.raw().end());
  std::vector<Shape> outputs;
  if (instruction.shape.IsTuple()) {
    outputs = instruction.shape.tuple_shapes();
  } else {
    outputs.push_back(instruction.shape);
  }
  for (const Shape& output : outputs)
    buffers.emplace_back(static_cast<size_t>(DenseBytes(output)), uint8_t{0xA5});
  buffers.emplace_back(static_cast<size_t>(cuda::SortScratchBytes(instruction)) + 4, uint8_t{0x5A});
  if (static_cast<int>(buffers.size()) != kernel.buffer_count)
    return Internal(buffers.size(), " buffers for a kernel of ", kernel.buffer_count);
  for (const KernelLaunch& launch : kernel.launches) {
    std::vector<uint64_t> arguments;
    for (std::vector<uint8_t>& buffer : buffers)
      arguments.push_back(reinterpret_cast<uint64_t>(buffer.data()));
    for (int64_t argument : launch.parameters) arguments.push_back(static_cast<uint64_t>(argument));
    const auto mode = static_cast<BitonicLaunchMode>(launch.parameters[0]);
    // Only a tile's modes meet at barriers: the others run faster one
    // thread after another.
    const bool tiles = mode == BitonicLaunchMode::kSortTiles || mode == BitonicLaunchMode::kMergeWithinTiles;
    for (int64_t block = 0; block < launch.grid.workgroups[0]; ++block) {
      KILN_RETURN_IF_ERROR(host->RunBlock(
          "sorter", arguments, block, static_cast<int>(launch.grid.workgroup_size[0]),
          tiles ? cuda_test::BlockThreads::kTogether : cuda_test::BlockThreads::kOneAfterAnother));
    }
  }
  return std::vector<std::vector<uint8_t>>(buffers.begin() + static_cast<std::ptrdiff_t>(inputs.size()),
                                           buffers.end() - 1);
}

// Runs `text` on the interpreter and as the kernel's IR with each tile;
// every output is the same to the bit.
void ExpectInterpretersResults(const std::string& text, const std::vector<Literal>& inputs,
                               const std::vector<int64_t>& tiles) {
  SCOPED_TRACE(text);
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Module> module, ParseHloModule(text));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected,
                            testing::ExecuteLeaves(*interpreter, *module, inputs));
  for (int64_t tile : tiles) {
    SCOPED_TRACE("tile " + std::to_string(tile));
    KILN_ASSERT_OK_AND_ASSIGN(std::vector<std::vector<uint8_t>> got,
                              RunKernelOnHost(*module->entry()->root(), tile, inputs));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const auto want = expected[i].raw();
      ASSERT_EQ(got[i].size(), want.size()) << "output " << i;
      size_t differing = 0;
      for (size_t byte = 0; byte < want.size(); ++byte) differing += got[i][byte] != want[byte];
      EXPECT_EQ(differing, 0u) << "output " << i << ": " << differing << " of " << want.size()
                               << " bytes differ from the interpreter's";
    }
  }
}

// Values from a few distinct ones (so that ties meet), NaN, -0 and the
// infinities among them.
Literal FewFloats(const std::vector<int64_t>& dims, std::mt19937& random) {
  const float kChoices[] = {1.0f,
                            -1.0f,
                            0.0f,
                            -0.0f,
                            2.5f,
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            7.0f};
  Literal literal(Shape(ElementType::kF32, dims));
  for (float& value : literal.data<float>()) value = kChoices[random() % std::size(kChoices)];
  return literal;
}

Literal Iota(const std::vector<int64_t>& dims) {
  Literal literal(Shape(ElementType::kS32, dims));
  int32_t next = 0;
  for (int32_t& value : literal.data<int32_t>()) value = next++;
  return literal;
}

// JAX's comparator for jnp.sort / argsort: NaNs and -0 made canonical, a
// total order, the second operand carried along (argsort's indices).
std::string JaxSort(const std::string& dims, int dimension) {
  return "HloModule jax_sort\ncompare {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n  zero = f32[] constant(0)\n"
         "  a_plus = f32[] add(a, zero)\n  b_plus = f32[] add(b, zero)\n  nan = f32[] constant(nan)\n"
         "  a_nan = pred[] compare(a_plus, a_plus), direction=NE\n"
         "  b_nan = pred[] compare(b_plus, b_plus), direction=NE\n"
         "  a_canonical = f32[] select(a_nan, nan, a_plus)\n  b_canonical = f32[] select(b_nan, nan, "
         "b_plus)\n"
         "  ROOT lt = pred[] compare(a_canonical, b_canonical), direction=LT, type=TOTALORDER\n}\n"
         "ENTRY main {\n  x = f32" +
         dims + " parameter(0)\n  k = s32" + dims + " parameter(1)\n  ROOT s = (f32" + dims + ", s32" + dims +
         ") sort(x, k), dimensions={" + std::to_string(dimension) + "}, to_apply=compare\n}\n";
}

TEST(SortIrTest, JaxSortOfOneRowMatchesTheInterpreterThroughEveryMode) {
  std::mt19937 random(11);
  for (int64_t length : {1, 2, 3, 5, 16, 17, 100, 300}) {
    const std::vector<int64_t> dims = {length};
    ExpectInterpretersResults(JaxSort("[" + std::to_string(length) + "]", 0),
                              {FewFloats(dims, random), Iota(dims)}, {4, 8, 2048});
  }
}

TEST(SortIrTest, SeveralRowsAndAnyDimensionMatchTheInterpreter) {
  std::mt19937 random(12);
  // Rows along the last dimension, along the first (strided) and the middle.
  ExpectInterpretersResults(JaxSort("[3,40]", 1), {FewFloats({3, 40}, random), Iota({3, 40})}, {4, 16});
  ExpectInterpretersResults(JaxSort("[37,3]", 0), {FewFloats({37, 3}, random), Iota({37, 3})}, {4, 2048});
  ExpectInterpretersResults(JaxSort("[2,21,3]", 1), {FewFloats({2, 21, 3}, random), Iota({2, 21, 3})}, {8});
}

TEST(SortIrTest, DescendingIntegersWithTiesStayStable) {
  // Keys from 0..4 (many ties), sorted descending by a GT comparator: ties
  // keep the element order (the interpreter's stable sort).
  const std::string text = R"(HloModule descending
greater {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  i = u8[] parameter(2)
  j = u8[] parameter(3)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY main {
  x = s32[4,70] parameter(0)
  y = u8[4,70] parameter(1)
  ROOT s = (s32[4,70], u8[4,70]) sort(x, y), dimensions={1}, to_apply=greater
})";
  std::mt19937 random(13);
  Literal keys(Shape(ElementType::kS32, {4, 70}));
  for (int32_t& value : keys.data<int32_t>()) value = static_cast<int32_t>(random() % 5);
  Literal payload(Shape(ElementType::kU8, {4, 70}));
  uint8_t next = 0;
  for (uint8_t& value : payload.data<uint8_t>()) value = next++;
  ExpectInterpretersResults(text, {std::move(keys), std::move(payload)}, {2, 8, 2048});
}

TEST(SortIrTest, TopKMatchesTheInterpreterWithTiesByIndex) {
  std::mt19937 random(14);
  for (const char* largest : {"true", "false"}) {
    const std::string text = std::string("HloModule topk\nENTRY main {\n  x = f32[5,100] parameter(0)\n") +
                             "  ROOT t = (f32[5,7], s32[5,7]) topk(x), k=7, largest=" + largest + "\n}\n";
    ExpectInterpretersResults(text, {FewFloats({5, 100}, random)}, {4, 16, 2048});
  }
  const std::string integers =
      "HloModule topk\nENTRY main {\n  x = u8[3,33] parameter(0)\n"
      "  ROOT t = (u8[3,33], s32[3,33]) topk(x), k=33, largest=true\n}\n";
  Literal bytes(Shape(ElementType::kU8, {3, 33}));
  for (uint8_t& value : bytes.data<uint8_t>()) value = static_cast<uint8_t>(250 + random() % 6);
  ExpectInterpretersResults(integers, {std::move(bytes)}, {4, 2048});
}

}  // namespace
}  // namespace kiln
