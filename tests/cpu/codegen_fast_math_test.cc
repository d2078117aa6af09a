// The fast exp on whole vectors, as the vector variants of hosts without
// AVX-512 compute it (kernels on this host may use vscalefps instead, which
// the elementwise tests cover): built straight into a JIT module and compared
// with std::exp, subnormal results, overflow and NaN included.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/cpu/codegen/jit.h"
#include "backends/llvm/fast_math_ir.h"

namespace kiln::cpu::testing {
namespace {

using VectorFunction = void (*)(const float* input, float* output);

// Defines `name`: void(const float*, float*), storing exp of `lanes` floats.
Status EmitVectorExp(llvm::Module& module, const std::string& name, unsigned lanes) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* pointer = llvm::PointerType::getUnqual(context);
  auto* function = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {pointer, pointer}, false),
      llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Type* vector = llvm::FixedVectorType::get(b.getFloatTy(), lanes);
  llvm::Value* x = b.CreateAlignedLoad(vector, function->getArg(0), llvm::Align(4));
  b.CreateAlignedStore(llvm_ir::EmitFastExp(b, x), function->getArg(1), llvm::Align(4));
  b.CreateRetVoid();
  return OkStatus();
}

// Distance in units in the last place between two finite floats of one sign.
int64_t UlpDistance(float a, float b) {
  int32_t ia = 0, ib = 0;
  std::memcpy(&ia, &a, sizeof(float));
  std::memcpy(&ib, &b, sizeof(float));
  return std::abs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

std::vector<float> Inputs() {
  std::vector<float> inputs = {std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               0.0f,
                               -0.0f,
                               1e-40f,
                               88.7228f,
                               88.7229f,
                               -87.3365f,
                               -103.97f,
                               -103.98f,
                               1e30f,
                               -1e30f};
  for (int i = 0; i <= 2000; ++i) inputs.push_back(-110.0f + 200.0f * static_cast<float>(i) / 2000.0f);
  return inputs;
}

TEST(CodegenFastMath, VectorExpMatchesLibmInEveryWidth) {
  auto jit = codegen::Jit::Create(3, "");
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  const unsigned widths[] = {4, 8, 16};
  std::vector<codegen::ModuleJob> jobs(1);
  jobs[0].emit = [&](llvm::Module& module) -> Status {
    for (unsigned lanes : widths)
      KILN_RETURN_IF_ERROR(EmitVectorExp(module, "exp_" + std::to_string(lanes), lanes));
    return OkStatus();
  };
  int cached = 0;
  auto code = (*jit)->AddModules(jobs, &cached);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  std::vector<float> inputs = Inputs();
  inputs.resize((inputs.size() + 15) / 16 * 16, 1.0f);
  for (unsigned lanes : widths) {
    auto address = (*code)->Lookup("exp_" + std::to_string(lanes));
    ASSERT_TRUE(address.ok()) << address.status().ToString();
    const auto function = reinterpret_cast<VectorFunction>(*address);
    std::vector<float> outputs(inputs.size());
    for (size_t i = 0; i < inputs.size(); i += lanes) function(&inputs[i], &outputs[i]);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float expected = static_cast<float>(std::exp(static_cast<double>(inputs[i])));
      const std::string what = std::to_string(lanes) + " lanes, exp(" + std::to_string(inputs[i]) + ")";
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(outputs[i])) << what << " = " << outputs[i];
      } else if (std::isinf(expected) || expected == 0.0f) {
        EXPECT_EQ(outputs[i], expected) << what;
      } else {
        EXPECT_LE(UlpDistance(outputs[i], expected), 2) << what << ": " << outputs[i] << " vs " << expected;
      }
    }
  }
}

}  // namespace
}  // namespace kiln::cpu::testing
