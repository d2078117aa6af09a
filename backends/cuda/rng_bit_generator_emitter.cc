#include "backends/cuda/rng_bit_generator_emitter.h"

#include <algorithm>
#include <array>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/gpu_entry.h"
#include "core/rng_bit_layout.h"

namespace kiln::cuda {
namespace {

using Words = std::vector<llvm::Value*>;  // i32 each

llvm::Value* Low32(llvm::IRBuilder<>& b, llvm::Value* word64) {
  return b.CreateTrunc(word64, b.getInt32Ty());
}
llvm::Value* High32(llvm::IRBuilder<>& b, llvm::Value* word64) {
  return b.CreateTrunc(b.CreateLShr(word64, 32), b.getInt32Ty());
}

// Threefry-2x32 with 20 rounds, as core/interpreter/rng.cc computes it.
Words Threefry(llvm::IRBuilder<>& b, llvm::Value* k0, llvm::Value* k1, llvm::Value* c0, llvm::Value* c1) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const std::array<llvm::Value*, 3> ks = {k0, k1, b.CreateXor(b.getInt32(0x1BD11BDAu), b.CreateXor(k0, k1))};
  llvm::Value* x0 = b.CreateAdd(c0, ks[0]);
  llvm::Value* x1 = b.CreateAdd(c1, ks[1]);
  for (int round = 0; round < 20; ++round) {
    const int r = kRotations[round % 8];
    x0 = b.CreateAdd(x0, x1);
    x1 = b.CreateOr(b.CreateShl(x1, static_cast<uint64_t>(r)),
                    b.CreateLShr(x1, static_cast<uint64_t>(32 - r)));
    x1 = b.CreateXor(x1, x0);
    if (round % 4 == 3) {
      const int injection = round / 4 + 1;
      x0 = b.CreateAdd(x0, ks[static_cast<size_t>(injection % 3)]);
      x1 = b.CreateAdd(x1, b.CreateAdd(ks[static_cast<size_t>((injection + 1) % 3)],
                                       b.getInt32(static_cast<uint32_t>(injection))));
    }
  }
  return {x0, x1};
}

// Philox-4x32 with 10 rounds, as core/interpreter/rng.cc computes it.
Words Philox(llvm::IRBuilder<>& b, llvm::Value* k0, llvm::Value* k1, Words c) {
  llvm::Type* i64 = b.getInt64Ty();
  for (int round = 0; round < 10; ++round) {
    llvm::Value* product0 = b.CreateMul(b.getInt64(0xD2511F53u), b.CreateZExt(c[0], i64));
    llvm::Value* product1 = b.CreateMul(b.getInt64(0xCD9E8D57u), b.CreateZExt(c[2], i64));
    c = {b.CreateXor(b.CreateXor(High32(b, product1), c[1]), k0), Low32(b, product1),
         b.CreateXor(b.CreateXor(High32(b, product0), c[3]), k1), Low32(b, product0)};
    k0 = b.CreateAdd(k0, b.getInt32(0x9E3779B9u));
    k1 = b.CreateAdd(k1, b.getInt32(0xBB67AE85u));
  }
  return c;
}

// words[index] for an i32 `index` below words.size().
llvm::Value* Pick(llvm::IRBuilder<>& b, const Words& words, llvm::Value* index) {
  llvm::Value* picked = words[0];
  for (size_t i = 1; i < words.size(); ++i)
    picked = b.CreateSelect(b.CreateICmpEQ(index, b.getInt32(static_cast<uint32_t>(i))), words[i], picked);
  return picked;
}

// The counter block and first word element `element` (i64) takes: the IR
// form of RngBitSourceOf (core/rng_bit_layout.cc).
std::pair<llvm::Value*, llvm::Value*> SourceOf(llvm::IRBuilder<>& b, const RngBitLayout& layout,
                                               llvm::Value* element) {
  auto i64 = [&](int64_t value) { return b.getInt64(static_cast<uint64_t>(value)); };
  auto word = [&](llvm::Value* value) { return b.CreateTrunc(value, b.getInt32Ty()); };
  if (layout.algorithm == RngAlgorithm::kPhilox) {
    if (layout.element_word_bits == 64)
      return {b.CreateUDiv(element, i64(2)), word(b.CreateMul(b.CreateURem(element, i64(2)), i64(2)))};
    return {b.CreateUDiv(element, i64(4)), word(b.CreateURem(element, i64(4)))};
  }
  if (layout.element_word_bits == 64) return {element, b.getInt32(0)};
  if (layout.split_dim < 0) return {i64(0), b.getInt32(0)};
  llvm::Value* stride = i64(layout.split_stride);
  llvm::Value* extent = i64(layout.split_extent);
  llvm::Value* inner = b.CreateURem(element, stride);
  llvm::Value* along = b.CreateURem(b.CreateUDiv(element, stride), extent);
  llvm::Value* outer = b.CreateUDiv(b.CreateUDiv(element, stride), extent);
  llvm::Value* halves = i64((layout.split_extent + 1) / 2);
  llvm::Value* block = b.CreateAdd(
      b.CreateMul(b.CreateAdd(b.CreateMul(outer, halves), b.CreateUDiv(along, i64(2))), stride), inner);
  return {block, word(b.CreateURem(along, i64(2)))};
}

}  // namespace

Status CheckRngBitGeneratorEmittable(const Instruction& generator) {
  if (generator.opcode != Opcode::kRngBitGenerator || generator.operands.size() != 1)
    return Unimplemented("cuda: rng-bit-generator needs one state operand");
  const Shape& state = generator.operand(0)->shape;
  const Shape& shape = generator.shape;
  if (!state.IsArray() || state.element_type() != ElementType::kU64 || state.rank() != 1 ||
      !shape.IsTuple() || shape.tuple_shapes().size() != 2 || !shape.tuple_shapes(0).IsArray() ||
      shape.tuple_shapes(0).element_count() != state.element_count() || !shape.tuple_shapes(1).IsArray())
    return Unimplemented("cuda: rng-bit-generator needs a u64[n] state and a (u64[n], bits) result, got ",
                         state.ToString(), " -> ", shape.ToString());
  StatusOr<RngBitLayout> layout =
      PlanRngBits(generator.attrs.rng_algorithm, state.element_count(), shape.tuple_shapes(1));
  if (!layout.ok()) return Unimplemented("cuda: ", layout.status().message());
  return OkStatus();
}

StatusOr<int64_t> EmitRngBitGeneratorElement(llvm::Module& module, const Instruction& generator,
                                             const std::string& name) {
  KILN_RETURN_IF_ERROR(CheckRngBitGeneratorEmittable(generator));
  const int64_t n = generator.operand(0)->shape.element_count();
  const Shape& bits_shape = generator.shape.tuple_shapes(1);
  KILN_ASSIGN_OR_RETURN(const RngBitLayout layout, PlanRngBits(generator.attrs.rng_algorithm, n, bits_shape));
  const bool philox = layout.algorithm == RngAlgorithm::kPhilox;
  const int64_t count = bits_shape.element_count();

  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  auto* function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr, ptr, i64}, false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* state = function->getArg(0);
  llvm::Value* new_state = function->getArg(1);
  llvm::Value* bits = function->getArg(2);
  llvm::Value* element = function->getArg(3);
  auto* entry = llvm::BasicBlock::Create(context, "entry", function);
  auto* write_state = llvm::BasicBlock::Create(context, "write_state", function);
  auto* after_state = llvm::BasicBlock::Create(context, "after_state", function);
  auto* write_bits = llvm::BasicBlock::Create(context, "write_bits", function);
  auto* done = llvm::BasicBlock::Create(context, "done", function);
  llvm::IRBuilder<> b(entry);
  auto state_word = [&](int64_t i) {
    return b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, state, static_cast<uint64_t>(i)));
  };
  llvm::Value* key = state_word(0);
  llvm::Value* counter = state_word(1);
  llvm::Value* advanced = b.CreateAdd(counter, b.getInt64(layout.blocks));
  b.CreateCondBr(b.CreateICmpULT(element, b.getInt64(static_cast<uint64_t>(n))), write_state, after_state);

  // The new state: the counter advanced by the blocks the output used (a
  // three-word Philox state carries into its high word; XLA's two-word one
  // drops the carry).
  b.SetInsertPoint(write_state);
  llvm::Value* kept = b.CreateLoad(i64, b.CreateInBoundsGEP(i64, state, element));
  llvm::Value* updated = b.CreateSelect(b.CreateICmpEQ(element, b.getInt64(1)), advanced, kept);
  if (philox && n == 3) {
    llvm::Value* carry = b.CreateZExt(b.CreateICmpULT(advanced, counter), i64);
    updated = b.CreateSelect(b.CreateICmpEQ(element, b.getInt64(2)), b.CreateAdd(kept, carry), updated);
  }
  b.CreateStore(updated, b.CreateInBoundsGEP(i64, new_state, element));
  b.CreateBr(after_state);

  b.SetInsertPoint(after_state);
  b.CreateCondBr(b.CreateICmpULT(element, b.getInt64(static_cast<uint64_t>(count))), write_bits, done);

  b.SetInsertPoint(write_bits);
  const auto [block, word] = SourceOf(b, layout, element);
  llvm::Value* k0 = Low32(b, key);
  llvm::Value* k1 = High32(b, key);
  llvm::Value* low = b.CreateAdd(counter, block);
  Words words;
  if (philox) {
    // XLA's two-word Philox state is reversed: the key is the counter's high word.
    llvm::Value* high = n == 3 ? state_word(2) : key;
    high = b.CreateAdd(high, b.CreateZExt(b.CreateICmpULT(low, counter), i64));
    words = Philox(b, k0, k1, {Low32(b, low), High32(b, low), Low32(b, high), High32(b, high)});
  } else {
    words = Threefry(b, k0, k1, Low32(b, low), High32(b, low));
  }
  llvm::Value* first = Pick(b, words, word);
  const int width = BitWidth(bits_shape.element_type());
  llvm::Value* value = nullptr;
  if (width == 64) {
    // The next word (of the block's, cyclically) is the high half.
    llvm::Value* next =
        b.CreateURem(b.CreateAdd(word, b.getInt32(1)), b.getInt32(static_cast<uint32_t>(words.size())));
    llvm::Value* second = Pick(b, words, next);
    value = b.CreateOr(b.CreateZExt(first, i64), b.CreateShl(b.CreateZExt(second, i64), 32));
  } else {
    // A narrow element is its word's low bits.
    value = b.CreateTrunc(first, b.getIntNTy(static_cast<unsigned>(width)));
  }
  b.CreateStore(value, b.CreateInBoundsGEP(value->getType(), bits, element));
  b.CreateBr(done);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return std::max(n, count);
}

StatusOr<int64_t> EmitRngBitGeneratorKernel(llvm::Module& module, const Instruction& generator,
                                            const std::string& name) {
  const std::string element_name = name + ".element";
  KILN_ASSIGN_OR_RETURN(const int64_t threads, EmitRngBitGeneratorElement(module, generator, element_name));
  llvm::Function* element = module.getFunction(element_name);
  GpuEntry entry = BeginGpuEntry(module, name, 3);
  entry.builder->CreateCall(element, {entry.function->getArg(0), entry.function->getArg(1),
                                      entry.function->getArg(2), entry.thread});
  FinishGpuEntry(entry);
  element->setLinkage(llvm::GlobalValue::InternalLinkage);
  element->addFnAttr(llvm::Attribute::AlwaysInline);
  return threads;
}

}  // namespace kiln::cuda
