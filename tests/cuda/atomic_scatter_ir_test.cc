// The CUDA backend's atomic scatter (atomic_scatter_emitter.h) gives the
// interpreter's results. No GPU runs here and the fake driver cannot
// execute PTX, so the kernel's own IR runs on this host
// (host_kernel_harness.h), launch by launch and block by block as a GPU
// runs it, a thread per update element. The cases have duplicate indices,
// windows partly or wholly out of bounds (skipped), indices fused into
// the kernel (JAX's wrap of negative indices) and 2-D windows; float
// values are small integers, so every order of the additions gives the
// same sum and the results compare to the bit.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/atomic_scatter_emitter.h"
#include "core/hlo_parser.h"
#include "tests/cuda/host_kernel_harness.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

// Runs every `host_threads`-th block of `launch` from `first` on.
Status RunScatterBlocks(const cuda_test::HostKernels& host, const KernelLaunch& launch,
                        const std::vector<uint64_t>& arguments, int64_t first, int64_t host_threads) {
  for (int64_t block = first; block < launch.grid.workgroups[0]; block += host_threads) {
    KILN_RETURN_IF_ERROR(host.RunBlock("scatter", arguments, block,
                                       static_cast<int>(launch.grid.workgroup_size[0]),
                                       cuda_test::BlockThreads::kOneAfterAnother));
  }
  return OkStatus();
}

// The kernel of `module`'s entry computation, its launches run on
// `inputs`; the output's bytes, and the kernel through `kernel`. A
// launch's blocks are shared among `host_threads` host threads running at
// once, so that their atomics race as a GPU's blocks do.
StatusOr<std::vector<uint8_t>> RunAtomicScatterOnHost(const Module& module,
                                                      const std::vector<Literal>& inputs,
                                                      cuda::PtxKernel* kernel, int64_t host_threads = 1) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto llvm_module = std::make_unique<llvm::Module>("atomic_scatter_host", *context);
  KILN_ASSIGN_OR_RETURN(*kernel, cuda::EmitAtomicScatterKernel(*llvm_module, *module.entry(), "scatter"));
  KILN_ASSIGN_OR_RETURN(
      std::unique_ptr<cuda_test::HostKernels> host,
      cuda_test::HostKernels::Compile(std::move(context), std::move(llvm_module), {"scatter"}));
  std::vector<std::vector<uint8_t>> buffers;
  for (const Literal& input : inputs) buffers.emplace_back(input.raw().begin(), input.raw().end());
  // Poisoned, so an element the copy misses shows.
  buffers.emplace_back(static_cast<size_t>(DenseBytes(module.entry()->root()->shape)), uint8_t{0xA5});
  if (static_cast<int>(buffers.size()) != kernel->buffer_count)
    return Internal(buffers.size(), " buffers for a kernel of ", kernel->buffer_count);
  for (const KernelLaunch& launch : kernel->launches) {
    std::vector<uint64_t> arguments;
    for (std::vector<uint8_t>& buffer : buffers)
      arguments.push_back(reinterpret_cast<uint64_t>(buffer.data()));
    for (int64_t parameter : launch.parameters) arguments.push_back(static_cast<uint64_t>(parameter));
    std::vector<Status> ran(static_cast<size_t>(host_threads), OkStatus());
    std::vector<std::thread> threads;
    std::latch started(host_threads);  // so that the threads' blocks overlap
    for (int64_t first = 1; first < host_threads; ++first) {
      threads.emplace_back([&, first] {
        started.arrive_and_wait();
        ran[static_cast<size_t>(first)] = RunScatterBlocks(*host, launch, arguments, first, host_threads);
      });
    }
    started.arrive_and_wait();
    ran[0] = RunScatterBlocks(*host, launch, arguments, 0, host_threads);
    for (std::thread& thread : threads) thread.join();
    for (const Status& status : ran) KILN_RETURN_IF_ERROR(status);
  }
  return buffers.back();
}

// Small integers of `shape`'s type, from -4 to 4 (0 to 8 unsigned).
Literal SmallIntegers(const Shape& shape, std::mt19937& random) {
  Literal literal(shape);
  auto fill = [&](auto* values) {
    for (auto& value : std::span(values, static_cast<size_t>(shape.element_count())))
      value = static_cast<std::remove_reference_t<decltype(value)>>(static_cast<int>(random() % 9) - 4);
  };
  switch (shape.element_type()) {
    case ElementType::kF32: fill(literal.data<float>().data()); break;
    case ElementType::kF64: fill(literal.data<double>().data()); break;
    case ElementType::kS32: fill(literal.data<int32_t>().data()); break;
    case ElementType::kS64: fill(literal.data<int64_t>().data()); break;
    case ElementType::kU32: fill(literal.data<uint32_t>().data()); break;
    case ElementType::kU64: fill(literal.data<uint64_t>().data()); break;
    case ElementType::kS8: fill(literal.data<int8_t>().data()); break;
    case ElementType::kU8: fill(literal.data<uint8_t>().data()); break;
    case ElementType::kS16: fill(literal.data<int16_t>().data()); break;
    case ElementType::kU16: fill(literal.data<uint16_t>().data()); break;
    default: ADD_FAILURE() << "no small integers of " << shape.ToString();
  }
  return literal;
}

Literal Indices(const std::vector<int64_t>& dims, const std::vector<int32_t>& values) {
  Literal literal(Shape(ElementType::kS32, dims));
  EXPECT_EQ(literal.data<int32_t>().size(), values.size());
  std::memcpy(literal.data<int32_t>().data(), values.data(), values.size() * sizeof(int32_t));
  return literal;
}

// Runs `text` (operand, indices, updates as parameters 0, 1, 2) on the
// interpreter and as the atomic scatter's IR: the same bytes. The
// launches are the copy over the output and a thread per update.
// `make_values(shape)` gives the operand, then the updates.
using MakeValues = std::function<Literal(const Shape&)>;

void ExpectInterpretersResultOn(const std::string& text, const Literal& indices,
                                const MakeValues& make_values, int64_t host_threads = 1) {
  SCOPED_TRACE(text);
  std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
  ASSERT_NE(module, nullptr);
  const Instruction& scatter = *module->entry()->root();
  ASSERT_TRUE(cuda::RunsAsAtomicScatter(*module->entry()));
  std::vector<Literal> inputs;
  inputs.push_back(make_values(scatter.operand(0)->shape));
  inputs.push_back(indices);
  inputs.push_back(make_values(scatter.operand(2)->shape));
  KILN_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Backend> interpreter, CreateBackend("interpreter"));
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<Literal> expected,
                            testing::ExecuteLeaves(*interpreter, *module, inputs));
  ASSERT_EQ(expected.size(), 1u);
  cuda::PtxKernel kernel;
  KILN_ASSERT_OK_AND_ASSIGN(std::vector<uint8_t> got,
                            RunAtomicScatterOnHost(*module, inputs, &kernel, host_threads));
  ASSERT_EQ(kernel.launches.size(), 2u);
  EXPECT_EQ(kernel.launches[0].parameters,
            (std::vector<int64_t>{scatter.shape.element_count(), cuda::kAtomicScatterCopyMode}));
  EXPECT_EQ(kernel.launches[1].parameters, (std::vector<int64_t>{scatter.operand(2)->shape.element_count(),
                                                                 cuda::kAtomicScatterUpdateMode}));
  EXPECT_GE(kernel.launches[1].grid.invocations(), scatter.operand(2)->shape.element_count());
  const auto want = expected[0].raw();
  ASSERT_EQ(got.size(), want.size());
  size_t differing = 0, first = want.size();
  for (size_t byte = 0; byte < want.size(); ++byte) {
    if (got[byte] == want[byte]) continue;
    ++differing;
    first = std::min(first, byte);
  }
  EXPECT_EQ(differing, 0u) << differing << " of " << want.size()
                           << " bytes differ from the interpreter's, the first at byte " << first << ": "
                           << int{got[first]} << " for " << int{want[first]};
}

void ExpectInterpretersResult(const std::string& text, const Literal& indices, uint32_t seed = 1) {
  std::mt19937 random(seed);
  ExpectInterpretersResultOn(text, indices, [&](const Shape& shape) { return SmallIntegers(shape, random); });
}

// Rows of updates added into rows of the operand, as jnp's x.at[i].add(u)
// exports it: negative indices wrapped in the kernel, then any index out
// of [0, rows) skipped.
std::string RowScatterWithRoot(const std::string& type, const std::string& root, int64_t rows,
                               int64_t updates, int64_t width) {
  const std::string r = std::to_string(rows), n = std::to_string(updates), w = std::to_string(width);
  return "HloModule row_scatter\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
         "[] parameter(1)\n  ROOT c = " + type + "[] " + root + "\n}\nENTRY main {\n  x = " + type + "[" + r +
         "," + w + "] parameter(0)\n  i = s32[" + n + "] parameter(1)\n  u = " + type + "[" + n + "," + w +
         "] parameter(2)\n  zero = s32[] constant(0)\n  zeros = s32[" + n +
         "] broadcast(zero), dimensions={}\n  negative = pred[" + n +
         "] compare(i, zeros), direction=LT\n  size = s32[] constant(" + r + ")\n  sizes = s32[" + n +
         "] broadcast(size), dimensions={}\n  wrapped = s32[" + n + "] add(i, sizes)\n  j = s32[" + n +
         "] select(negative, wrapped, i)\n  k = s32[" + n + ",1] reshape(j)\n  ROOT s = " + type + "[" + r +
         "," + w +
         "] scatter(x, k, u), update_window_dims={1}, inserted_window_dims={0}, "
         "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
}

std::string RowScatter(const std::string& type, const std::string& combine, int64_t rows, int64_t updates,
                       int64_t width) {
  return RowScatterWithRoot(type, combine + "(a, b)", rows, updates, width);
}

// Row 3 four times, row 9 through -1, and 10, 57 and -11 (-1 after the
// wrap) out of bounds.
const std::vector<int32_t> kRowIndices = {3, 0, 3, -1, 10, 3, 9, 57, -11, 5, 3, 0};

TEST(AtomicScatterIrTest, F32RowsAddLikeJaxWithDuplicatesAndOutOfBounds) {
  ExpectInterpretersResult(RowScatter("f32", "add", 10, 12, 4), Indices({12}, kRowIndices));
}

// More threads than a block: the update launch spans blocks.
TEST(AtomicScatterIrTest, F32AddOverSeveralBlocks) {
  std::vector<int32_t> indices(300);
  for (size_t k = 0; k < indices.size(); ++k) indices[k] = static_cast<int32_t>((k * 7) % 23) - 2;
  ExpectInterpretersResult(RowScatter("f32", "add", 20, 300, 3), Indices({300}, indices));
}

// The products through compare-and-swap (PTX has no atomic multiply).
TEST(AtomicScatterIrTest, IntegerAndDoubleCombinersWithAtomicForms) {
  const struct {
    const char* type;
    const char* combine;
  } cases[] = {{"s32", "add"},     {"s32", "maximum"}, {"s32", "minimum"}, {"s32", "and"},
               {"u32", "minimum"}, {"u32", "maximum"}, {"u32", "or"},      {"s64", "xor"},
               {"s64", "add"},     {"u64", "add"},     {"f64", "add"},     {"s32", "multiply"},
               {"u64", "multiply"}};
  uint32_t seed = 7;
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.type) + " " + c.combine);
    ExpectInterpretersResult(RowScatter(c.type, c.combine, 10, 12, 4), Indices({12}, kRowIndices), seed++);
  }
}

// Elements of 8 and 16 bits are swapped in the 32-bit word around them:
// elements 0 to 3 (one word of u8, two of u16) each take 16 updates in
// turn, so every swap has neighbours that other updates change, and a
// swap that does not keep their bits loses those updates.
TEST(AtomicScatterIrTest, NarrowIntegersKeepTheirNeighboursInTheWord) {
  std::vector<int32_t> indices;
  for (int32_t k = 0; k < 64; ++k) indices.push_back(k % 4);
  indices.insert(indices.end(), {5, -2, 8, -9, 7, 5});  // -2 is 6; 8 and -9 (-1) do not fit
  const int64_t count = static_cast<int64_t>(indices.size());
  uint32_t seed = 11;
  for (const char* type : {"s8", "u8", "s16", "u16"}) {
    for (const char* combine : {"add", "multiply", "minimum", "maximum", "and", "or", "xor"}) {
      SCOPED_TRACE(std::string(type) + " " + combine);
      // 8 elements: whole words, so no swap reaches past the buffer.
      ExpectInterpretersResult(RowScatter(type, combine, 8, count, 1), Indices({count}, indices), seed++);
    }
  }
}

// The update launch's 256 blocks run on four host threads at once, every
// update on one of elements 0 to 3 (one word of u8, two of 16 bits), so
// swaps of one word race for real, some fail and are redone with what
// the word then holds: no update of an element or of its neighbours is
// lost.
TEST(AtomicScatterIrTest, RacingBlocksLoseNoUpdateInASharedWord) {
  std::vector<int32_t> indices(256 * 256);
  for (size_t k = 0; k < indices.size(); ++k) indices[k] = static_cast<int32_t>(k % 4);
  const auto count = static_cast<int64_t>(indices.size());
  uint32_t seed = 17;
  for (const char* type : {"u8", "s8", "s16", "u16"}) {
    for (const char* combine : {"add", "xor"}) {
      SCOPED_TRACE(std::string(type) + " " + combine);
      std::mt19937 random(seed++);
      ExpectInterpretersResultOn(
          RowScatter(type, combine, 8, count, 1), Indices({count}, indices),
          [&](const Shape& shape) { return SmallIntegers(shape, random); }, /*host_threads=*/4);
    }
  }
}

// Bit patterns of `type`: small numbers that add exactly, both zeros,
// and with `special` the infinities and NaNs of three payloads.
std::vector<uint64_t> FloatPool(ElementType type, bool special) {
  const double numbers[] = {0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 2.0, -2.0};
  std::vector<uint64_t> pool;
  for (double number : numbers) {
    switch (type) {
      case ElementType::kF64: pool.push_back(std::bit_cast<uint64_t>(number)); break;
      case ElementType::kF32: pool.push_back(std::bit_cast<uint32_t>(static_cast<float>(number))); break;
      // f16 and bf16 of these numbers are the top bits of their f32 or
      // f64 pattern.
      case ElementType::kBF16:
        pool.push_back(std::bit_cast<uint32_t>(static_cast<float>(number)) >> 16);
        break;
      case ElementType::kF16: {
        const uint64_t bits = std::bit_cast<uint64_t>(number);
        const uint64_t exponent = (bits >> 52) & 0x7ff;
        const uint64_t half_exponent = exponent == 0 ? 0 : exponent - 1023 + 15;
        pool.push_back(((bits >> 48) & 0x8000) | (half_exponent << 10) | ((bits >> 42) & 0x3ff));
        break;
      }
      default: ADD_FAILURE() << "no float pool of " << ElementTypeName(type);
    }
  }
  if (!special) return pool;
  switch (type) {
    case ElementType::kF64:
      pool.insert(pool.end(), {0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff8000000000001,
                               0xfff8000000000002});
      break;
    case ElementType::kF32:
      pool.insert(pool.end(), {0x7f800000, 0xff800000, 0x7fc00000, 0x7fc00001, 0xffc00002});
      break;
    // Kiln's bf16 stores make every NaN sign | 0x7fc0 (element_ir.cc), the
    // operand's copy too, so only the sign tells its NaNs apart.
    case ElementType::kBF16: pool.insert(pool.end(), {0x7f80, 0xff80, 0x7fc0, 0xffc0}); break;
    case ElementType::kF16: pool.insert(pool.end(), {0x7c00, 0xfc00, 0x7e00, 0x7e01, 0xfe02}); break;
    default: break;
  }
  return pool;
}

// A literal of `shape` whose elements are drawn from `pool` (bit patterns).
Literal FromPool(const Shape& shape, const std::vector<uint64_t>& pool, std::mt19937& random) {
  Literal literal(shape);
  const auto width = static_cast<size_t>(ByteWidth(shape.element_type()));
  std::span<uint8_t> bytes = literal.raw();
  for (size_t at = 0; at + width <= bytes.size(); at += width) {
    const uint64_t bits = pool[random() % pool.size()];
    std::memcpy(&bytes[at], &bits, width);  // little-endian: the low bytes
  }
  return literal;
}

const std::vector<int32_t> kCrowdedIndices = {0, 1, 2, 3, 1, 0, 3, 2, 0, 0, 1, 1, 2, 2, 3, 3, 7, 6, 5,
                                              4, 0, 3, 1, 2, 9, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, -1};

// Float minimum and maximum through compare-and-swap, with NaNs of
// several payloads, infinities and both zeros among the operand and the
// updates: a step keeps a NaN element, else takes a NaN update, and on a
// tie (+0 against -0) takes the update, as the interpreter's step does,
// whichever way round the combiner names its parameters. f16 and bf16
// elements share words with their neighbours.
TEST(AtomicScatterIrTest, FloatMinimumAndMaximumPropagateNaNAndOrderZerosAsTheInterpreter) {
  const int64_t count = static_cast<int64_t>(kCrowdedIndices.size());
  uint32_t seed = 3;
  for (ElementType type : {ElementType::kF32, ElementType::kF64, ElementType::kF16, ElementType::kBF16}) {
    const std::vector<uint64_t> pool = FloatPool(type, /*special=*/true);
    for (const char* root : {"maximum(a, b)", "maximum(b, a)", "minimum(a, b)", "minimum(b, a)"}) {
      for (int draw = 0; draw < 4; ++draw) {
        SCOPED_TRACE(std::string(ElementTypeName(type)) + " " + root + " draw " + std::to_string(draw));
        std::mt19937 random(seed++);
        ExpectInterpretersResultOn(RowScatterWithRoot(std::string(ElementTypeName(type)), root, 8, count, 1),
                                   Indices({count}, kCrowdedIndices),
                                   [&](const Shape& shape) { return FromPool(shape, pool, random); });
      }
    }
  }
}

// f16 and bf16 sums through compare-and-swap, each step computed in f32
// and rounded once: small multiples of 1/2 with both zeros, so every
// order of the additions gives the same bits.
TEST(AtomicScatterIrTest, HalfAndBfloat16AddsRoundEachStep) {
  const int64_t count = static_cast<int64_t>(kCrowdedIndices.size());
  uint32_t seed = 5;
  for (ElementType type : {ElementType::kF16, ElementType::kBF16}) {
    const std::vector<uint64_t> pool = FloatPool(type, /*special=*/false);
    for (const char* root : {"add(a, b)", "add(b, a)"}) {
      SCOPED_TRACE(std::string(ElementTypeName(type)) + " " + root);
      std::mt19937 random(seed++);
      ExpectInterpretersResultOn(RowScatterWithRoot(std::string(ElementTypeName(type)), root, 8, count, 2),
                                 Indices({count}, kCrowdedIndices),
                                 [&](const Shape& shape) { return FromPool(shape, pool, random); });
    }
  }
}

// 2-D windows at 2-D starts: (0,0) twice, (4,2) just fits, (5,0) and
// (1,3) stick out by one, (-1,0) starts before the operand.
TEST(AtomicScatterIrTest, S32TwoDimensionalWindowsSkipThoseThatDoNotFit) {
  const std::string text = R"(HloModule window_scatter
combine {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = s32[] add(b, a)
}
ENTRY main {
  x = s32[6,5] parameter(0)
  i = s32[7,2] parameter(1)
  u = s32[7,2,3] parameter(2)
  ROOT s = s32[6,5] scatter(x, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=combine
}
)";
  ExpectInterpretersResult(text, Indices({7, 2}, {0, 0, 0, 0, 4, 2, 5, 0, 1, 3, -1, 0, 2, 1}));
}

// Combiners that are not commutative, float products (the order of
// duplicates decides where they overflow) and pred keep the serial kernel.
TEST(AtomicScatterIrTest, OtherCombinersHaveNoAtomicForm) {
  const struct {
    const char* type;
    const char* root;
  } cases[] = {{"f32", "multiply(a, b)"}, {"f64", "multiply(b, a)"}, {"f16", "multiply(a, b)"},
               {"s32", "subtract(a, b)"}, {"s8", "subtract(a, b)"},  {"f16", "divide(a, b)"},
               {"s32", "add(a, a)"},      {"pred", "or(a, b)"}};
  for (const auto& c : cases) {
    const std::string type = c.type;
    const std::string text = "HloModule serial\ncombine {\n  a = " + type + "[] parameter(0)\n  b = " + type +
                             "[] parameter(1)\n  ROOT c = " + type + "[] " + c.root +
                             "\n}\nENTRY main {\n  x = " + type +
                             "[4] parameter(0)\n  i = s32[3,1] parameter(1)\n"
                             "  u = " +
                             type + "[3] parameter(2)\n  ROOT s = " + type +
                             "[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, "
                             "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine\n}\n";
    std::unique_ptr<Module> module = testing::ParseHloOrFail(text);
    ASSERT_NE(module, nullptr) << text;
    EXPECT_FALSE(cuda::RunsAsAtomicScatter(*module->entry())) << c.type << " " << c.root;
  }
  // An assignment (the update replaces the element) neither.
  std::unique_ptr<Module> assign = testing::ParseHloOrFail(R"(HloModule assign
combine {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
ENTRY main {
  x = f32[4] parameter(0)
  i = s32[3,1] parameter(1)
  u = f32[3] parameter(2)
  ROOT s = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=combine
}
)");
  ASSERT_NE(assign, nullptr);
  EXPECT_FALSE(cuda::RunsAsAtomicScatter(*assign->entry()));
}

}  // namespace
}  // namespace kiln
