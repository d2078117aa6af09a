#include "backends/cuda/convolution_gemm_emitter.h"

#include <array>
#include <vector>

#include <llvm/IR/Constants.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include "backends/cuda/gpu_entry.h"
#include "backends/llvm/element_ir.h"
#include "backends/llvm/loop_ir.h"
#include "backends/llvm/window_ir.h"

namespace kiln::cuda {
namespace {

static_assert(kConvolutionThreads == kThreadsPerBlock, "a convolution block is a Kiln block");

// Threads along the tile's n and m.
constexpr int64_t kGemmThreadsN = kConvolutionTileN / kConvolutionThreadN;
constexpr int64_t kGemmThreadsM = kConvolutionTileM / kConvolutionThreadM;
// Elements of the A and B tiles each thread stages per step, and how far
// apart a thread's elements lie: along k (B, and A staged along m) or
// along m (A staged along k).
constexpr int64_t kLoadsA = kConvolutionTileM * kConvolutionTileK / kConvolutionThreads;
constexpr int64_t kLoadsB = kConvolutionTileN * kConvolutionTileK / kConvolutionThreads;
constexpr int64_t kLoadStrideA = kConvolutionThreads / kConvolutionTileM;
constexpr int64_t kLoadRowStrideA = kConvolutionThreads / kConvolutionTileK;
constexpr int64_t kLoadStrideB = kConvolutionThreads / kConvolutionTileN;
constexpr int64_t kLoadColumnStrideB = kConvolutionThreads / kConvolutionTileK;
static_assert(kLoadsA * kConvolutionThreads == kConvolutionTileM * kConvolutionTileK);
static_assert(kLoadsB * kConvolutionThreads == kConvolutionTileN * kConvolutionTileK);

llvm::GlobalVariable* SharedTile(llvm::Module& module, const std::string& name, int64_t elements) {
  llvm::Type* type =
      llvm::ArrayType::get(llvm::Type::getFloatTy(module.getContext()), static_cast<uint64_t>(elements));
  auto* tile = new llvm::GlobalVariable(module, type, /*isConstant=*/false,
                                        llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(type), name,
                                        nullptr, llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/3);
  tile->setAlignment(llvm::Align(16));
  return tile;
}

// Where output row m (of the GEMM) lies: its batch and output position
// along each spatial dimension (row-major, the last fastest).
struct ConvolutionGemmRow {
  llvm::Value* batch = nullptr;
  std::vector<llvm::Value*> positions;
};

ConvolutionGemmRow DecomposeGemmRow(llvm::IRBuilder<>& b, const ConvolutionGemmPlan& plan, llvm::Value* m) {
  ConvolutionGemmRow row;
  row.batch = b.CreateUDiv(m, b.getInt64(plan.output_spatial_elements));
  llvm::Value* rest = b.CreateURem(m, b.getInt64(plan.output_spatial_elements));
  row.positions.resize(plan.spatial.size());
  for (size_t d = plan.spatial.size(); d-- > 0;) {
    const int64_t extent = plan.spatial[d].output_extent;
    row.positions[d] = d == 0 ? rest : b.CreateURem(rest, b.getInt64(extent));
    if (d > 0) rest = b.CreateUDiv(rest, b.getInt64(extent));
  }
  return row;
}

// Where column k (of A, row of B) lies: the group's input feature and the
// window position along each spatial dimension (row-major, the last
// fastest), the feature or the window position running fastest along k as
// the plan says (window_minor_depth).
struct ConvolutionGemmDepth {
  llvm::Value* feature = nullptr;
  std::vector<llvm::Value*> taps;
};

ConvolutionGemmDepth DecomposeGemmDepth(llvm::IRBuilder<>& b, const ConvolutionGemmPlan& plan,
                                        llvm::Value* k) {
  ConvolutionGemmDepth depth;
  llvm::Value* rest = nullptr;
  if (plan.window_minor_depth) {
    depth.feature = b.CreateUDiv(k, b.getInt64(plan.window_elements));
    rest = b.CreateURem(k, b.getInt64(plan.window_elements));
  } else {
    depth.feature = b.CreateURem(k, b.getInt64(plan.group_input_features));
    rest = b.CreateUDiv(k, b.getInt64(plan.group_input_features));
  }
  depth.taps.resize(plan.spatial.size());
  for (size_t d = plan.spatial.size(); d-- > 0;) {
    const int64_t size = plan.spatial[d].window_size;
    depth.taps[d] = d == 0 ? rest : b.CreateURem(rest, b.getInt64(size));
    if (d > 0) rest = b.CreateUDiv(rest, b.getInt64(size));
  }
  return depth;
}

}  // namespace

StatusOr<ConvolutionGemmPlan> PlanConvolutionGemmKernel(const Computation& kernel) {
  const Instruction* root = kernel.root();
  if (root == nullptr || root->opcode != Opcode::kConvolution)
    return Unimplemented("cuda: the kernel's root is not a convolution");
  for (const Instruction* operand : root->operands) {
    if (operand->opcode != Opcode::kParameter)
      return Unimplemented("cuda: the implicit-GEMM convolution reads its operands as they are");
  }
  return PlanConvolutionGemm(*root);
}

StatusOr<PtxKernel> EmitConvolutionGemmKernel(llvm::Module& module, const Computation& kernel,
                                              const ConvolutionGemmPlan& plan, const std::string& name) {
  const Instruction& convolution = *kernel.root();
  const int parameters = static_cast<int>(kernel.parameters().size());
  const int buffer_count = parameters + 1;
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::Type* i64 = llvm::Type::getInt64Ty(context);
  llvm::Type* f32 = llvm::Type::getFloatTy(context);
  std::vector<llvm::Type*> params(static_cast<size_t>(buffer_count), ptr);
  params.push_back(i64);  // the extent, as every Kiln kernel takes (gpu_entry.h)
  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false),
                             llvm::GlobalValue::ExternalLinkage, name, module);
  function->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context, "entry", function);
  llvm::IRBuilder<> b(entry);
  llvm::Value* input =
      function->getArg(static_cast<unsigned>(convolution.operand(0)->attrs.parameter_number));
  llvm::Value* filter =
      function->getArg(static_cast<unsigned>(convolution.operand(1)->attrs.parameter_number));
  llvm::Value* output = function->getArg(static_cast<unsigned>(parameters));
  llvm::GlobalVariable* tile_a = SharedTile(module, name + ".a_tile", kConvolutionTileK * kConvolutionTileM);
  llvm::GlobalVariable* tile_b = SharedTile(module, name + ".b_tile", kConvolutionTileK * kConvolutionTileN);

  // The register block, promoted out of memory by the optimiser.
  constexpr int64_t kAccumulators = kConvolutionThreadM * kConvolutionThreadN;
  std::array<llvm::Value*, kAccumulators> sums{};
  for (llvm::Value*& sum : sums) {
    sum = b.CreateAlloca(f32, nullptr, "conv.sum");
    b.CreateStore(llvm::ConstantFP::get(f32, 0.0), sum);
  }
  auto special = [&](llvm::Intrinsic::ID id) { return b.CreateZExt(b.CreateIntrinsic(id, {}, {}), i64); };
  llvm::Value* thread = special(llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x);
  llvm::Value* block = special(llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x);
  const int64_t tiles_per_group = plan.m_tiles() * plan.n_tiles();
  llvm::Value* group = b.CreateUDiv(block, b.getInt64(tiles_per_group), "group");
  llvm::Value* tile = b.CreateURem(block, b.getInt64(tiles_per_group));
  llvm::Value* m_start =
      b.CreateMul(b.CreateUDiv(tile, b.getInt64(plan.n_tiles())), b.getInt64(kConvolutionTileM));
  llvm::Value* n_start =
      b.CreateMul(b.CreateURem(tile, b.getInt64(plan.n_tiles())), b.getInt64(kConvolutionTileN));
  // The group's first output feature (also its filter's).
  llvm::Value* group_feature = b.CreateMul(group, b.getInt64(plan.n));

  // The A elements this thread stages at every step: their rows (where
  // their windows start) and their depths within the step. Neighbouring
  // threads take neighbouring k where the input's features are contiguous
  // (k runs input features first, then window positions, whose last
  // dimension is contiguous too), so a warp reads a few runs of memory;
  // else neighbouring rows (output positions, contiguous in NCHW-like
  // inputs).
  struct StagedInput {
    llvm::Value* row = nullptr;    // within the tile
    llvm::Value* depth = nullptr;  // within the step
    llvm::Value* real = nullptr;   // the row is < M
    ConvolutionGemmRow place;
    llvm::Value* base = nullptr;  // the offset of its batch and group
  };
  std::vector<StagedInput> staged(static_cast<size_t>(kLoadsA));
  for (int64_t r = 0; r < kLoadsA; ++r) {
    StagedInput& a = staged[static_cast<size_t>(r)];
    if (plan.stage_input_along_k) {
      a.row =
          b.CreateAdd(b.CreateUDiv(thread, b.getInt64(kConvolutionTileK)), b.getInt64(r * kLoadRowStrideA));
      a.depth = b.CreateURem(thread, b.getInt64(kConvolutionTileK));
    } else {
      a.row = b.CreateURem(thread, b.getInt64(kConvolutionTileM));
      a.depth =
          b.CreateAdd(b.CreateUDiv(thread, b.getInt64(kConvolutionTileM)), b.getInt64(r * kLoadStrideA));
    }
    llvm::Value* m = b.CreateAdd(m_start, a.row);
    a.real = b.CreateICmpULT(m, b.getInt64(plan.m));
    a.place = DecomposeGemmRow(b, plan, m);
    a.base = b.CreateAdd(b.CreateMul(group, b.getInt64(plan.input_group_stride)),
                         b.CreateMul(a.place.batch, b.getInt64(plan.input_batch_stride)));
  }
  // The B elements this thread stages at every step: neighbouring threads
  // take neighbouring k where the filter is contiguous along k
  // (stage_filter_along_k), else neighbouring output features.
  struct StagedFilter {
    llvm::Value* column = nullptr;  // within the tile
    llvm::Value* depth = nullptr;   // within the step
    llvm::Value* real = nullptr;    // the column is < N
    llvm::Value* base = nullptr;    // the offset of its output feature
  };
  std::vector<StagedFilter> staged_filter(static_cast<size_t>(kLoadsB));
  for (int64_t r = 0; r < kLoadsB; ++r) {
    StagedFilter& w = staged_filter[static_cast<size_t>(r)];
    if (plan.stage_filter_along_k) {
      w.column = b.CreateAdd(b.CreateUDiv(thread, b.getInt64(kConvolutionTileK)),
                             b.getInt64(r * kLoadColumnStrideB));
      w.depth = b.CreateURem(thread, b.getInt64(kConvolutionTileK));
    } else {
      w.column = b.CreateURem(thread, b.getInt64(kConvolutionTileN));
      w.depth =
          b.CreateAdd(b.CreateUDiv(thread, b.getInt64(kConvolutionTileN)), b.getInt64(r * kLoadStrideB));
    }
    llvm::Value* n = b.CreateAdd(n_start, w.column);
    w.real = b.CreateICmpULT(n, b.getInt64(plan.n));
    w.base = b.CreateMul(b.CreateAdd(group_feature, n), b.getInt64(plan.kernel_output_feature_stride));
  }
  // This thread's register block: rows ty + kGemmThreadsM i, columns tx + kGemmThreadsN j.
  llvm::Value* tx = b.CreateURem(thread, b.getInt64(kGemmThreadsN));
  llvm::Value* ty = b.CreateUDiv(thread, b.getInt64(kGemmThreadsN));

  // A load of `type` at element `offset` of `buffer` where `real`, else 0
  // (offset 0, always in the array, is read instead).
  auto load_or_zero = [&](ElementType type, llvm::Value* buffer, llvm::Value* offset, llvm::Value* real) {
    llvm::Type* storage = llvm_ir::StorageType(context, type);
    llvm::Value* safe = b.CreateSelect(real, offset, b.getInt64(0));
    llvm::Value* value = llvm_ir::LoadElement(b, type, b.CreateInBoundsGEP(storage, buffer, safe));
    return b.CreateSelect(real, value, llvm::ConstantFP::get(f32, 0.0));
  };
  auto barrier = [&] { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); };
  const int64_t steps = (plan.k + kConvolutionTileK - 1) / kConvolutionTileK;
  KILN_RETURN_IF_ERROR(llvm_ir::EmitCountedLoop(
      b, b.getInt64(0), b.getInt64(steps), "conv.step", [&](llvm::Value* step) -> Status {
        llvm::Value* k_start = b.CreateMul(step, b.getInt64(kConvolutionTileK));
        for (const StagedInput& a : staged) {
          llvm::Value* k = b.CreateAdd(k_start, a.depth);
          llvm::Value* real = b.CreateAnd(a.real, b.CreateICmpULT(k, b.getInt64(plan.k)));
          const ConvolutionGemmDepth place = DecomposeGemmDepth(b, plan, k);
          llvm::Value* offset =
              b.CreateAdd(a.base, b.CreateMul(place.feature, b.getInt64(plan.input_feature_stride)));
          for (size_t d = 0; d < plan.spatial.size(); ++d) {
            const ConvolutionGemmSpatial& s = plan.spatial[d];
            WindowDimension w;
            w.size = s.window_size;
            w.stride = s.stride;
            w.padding_low = s.padding_low;
            w.window_dilation = s.window_dilation;
            w.base_dilation = s.base_dilation;
            llvm::Value* position = llvm_ir::EmitWindowInputPosition(
                b, w, s.input_extent, a.place.positions[d], place.taps[d], &real);
            offset = b.CreateAdd(offset, b.CreateMul(position, b.getInt64(s.input_stride)));
          }
          llvm::Value* value = load_or_zero(plan.input_type, input, offset, real);
          b.CreateStore(value, b.CreateInBoundsGEP(
                                   f32, tile_a,
                                   b.CreateAdd(b.CreateMul(a.depth, b.getInt64(kConvolutionTileM)), a.row)));
        }
        for (const StagedFilter& w : staged_filter) {
          llvm::Value* k = b.CreateAdd(k_start, w.depth);
          llvm::Value* real = b.CreateAnd(w.real, b.CreateICmpULT(k, b.getInt64(plan.k)));
          const ConvolutionGemmDepth place = DecomposeGemmDepth(b, plan, k);
          llvm::Value* offset =
              b.CreateAdd(w.base, b.CreateMul(place.feature, b.getInt64(plan.kernel_input_feature_stride)));
          for (size_t d = 0; d < plan.spatial.size(); ++d) {
            const ConvolutionGemmSpatial& s = plan.spatial[d];
            llvm::Value* tap =
                s.window_reversal ? b.CreateSub(b.getInt64(s.window_size - 1), place.taps[d]) : place.taps[d];
            offset = b.CreateAdd(offset, b.CreateMul(tap, b.getInt64(s.kernel_stride)));
          }
          llvm::Value* value = load_or_zero(plan.kernel_type, filter, offset, real);
          b.CreateStore(
              value,
              b.CreateInBoundsGEP(
                  f32, tile_b, b.CreateAdd(b.CreateMul(w.depth, b.getInt64(kConvolutionTileN)), w.column)));
        }
        barrier();
        for (int64_t depth = 0; depth < kConvolutionTileK; ++depth) {
          std::array<llvm::Value*, kConvolutionThreadM> a{};
          std::array<llvm::Value*, kConvolutionThreadN> w{};
          for (int64_t i = 0; i < kConvolutionThreadM; ++i) {
            llvm::Value* at = b.CreateAdd(ty, b.getInt64(depth * kConvolutionTileM + i * kGemmThreadsM));
            a[static_cast<size_t>(i)] = b.CreateLoad(f32, b.CreateInBoundsGEP(f32, tile_a, at));
          }
          for (int64_t j = 0; j < kConvolutionThreadN; ++j) {
            llvm::Value* at = b.CreateAdd(tx, b.getInt64(depth * kConvolutionTileN + j * kGemmThreadsN));
            w[static_cast<size_t>(j)] = b.CreateLoad(f32, b.CreateInBoundsGEP(f32, tile_b, at));
          }
          for (int64_t i = 0; i < kConvolutionThreadM; ++i) {
            for (int64_t j = 0; j < kConvolutionThreadN; ++j) {
              llvm::Value* sum = sums[static_cast<size_t>(i * kConvolutionThreadN + j)];
              llvm::Value* added = b.CreateIntrinsic(
                  llvm::Intrinsic::fmuladd, {f32},
                  {a[static_cast<size_t>(i)], w[static_cast<size_t>(j)], b.CreateLoad(f32, sum)});
              b.CreateStore(added, sum);
            }
          }
        }
        barrier();
        return OkStatus();
      }));

  // Each output of the register block that lies in C, rounded once.
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context, "conv.done", function);
  llvm::Type* output_storage = llvm_ir::StorageType(context, plan.output_type);
  for (int64_t i = 0; i < kConvolutionThreadM; ++i) {
    llvm::Value* m = b.CreateAdd(m_start, b.CreateAdd(ty, b.getInt64(i * kGemmThreadsM)));
    const ConvolutionGemmRow place = DecomposeGemmRow(b, plan, m);
    llvm::Value* row_offset = b.CreateMul(place.batch, b.getInt64(plan.output_batch_stride));
    for (size_t d = 0; d < plan.spatial.size(); ++d)
      row_offset =
          b.CreateAdd(row_offset, b.CreateMul(place.positions[d], b.getInt64(plan.spatial[d].output_stride)));
    llvm::Value* row_real = b.CreateICmpULT(m, b.getInt64(plan.m));
    for (int64_t j = 0; j < kConvolutionThreadN; ++j) {
      llvm::Value* n = b.CreateAdd(n_start, b.CreateAdd(tx, b.getInt64(j * kGemmThreadsN)));
      llvm::Value* real = b.CreateAnd(row_real, b.CreateICmpULT(n, b.getInt64(plan.n)));
      llvm::BasicBlock* write = llvm::BasicBlock::Create(context, "conv.write", function);
      llvm::BasicBlock* next = llvm::BasicBlock::Create(context, "conv.next", function);
      b.CreateCondBr(real, write, next);
      b.SetInsertPoint(write);
      llvm::Value* offset = b.CreateAdd(
          row_offset, b.CreateMul(b.CreateAdd(group_feature, n), b.getInt64(plan.output_feature_stride)));
      llvm::Value* sum = b.CreateLoad(f32, sums[static_cast<size_t>(i * kConvolutionThreadN + j)]);
      llvm_ir::StoreElement(b, plan.output_type, sum, b.CreateInBoundsGEP(output_storage, output, offset));
      b.CreateBr(next);
      b.SetInsertPoint(next);
    }
  }
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  MarkGpuKernel(module, *function);

  PtxKernel result;
  result.name = name;
  result.parallel_extent = plan.blocks() * kConvolutionThreads;
  result.buffer_count = buffer_count;
  return result;
}

}  // namespace kiln::cuda
