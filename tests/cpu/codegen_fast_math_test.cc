// The fast exp on whole vectors, as the vector variants of hosts without
// AVX-512 compute it (kernels on this host may use vscalefps instead, which
// the elementwise tests cover): built straight into a JIT module and compared
// with std::exp, subnormal results, overflow and NaN included. The fast
// log1p likewise, against std::log1p near 0, near -1 and over the range.
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

using ScalarFunction = float (*)(float);

// Defines `name`: float(float), returning llvm_ir::EmitFastLog1p of its argument.
Status EmitScalarLog1p(llvm::Module& module, const std::string& name) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* f32 = llvm::Type::getFloatTy(context);
  auto* function = llvm::Function::Create(llvm::FunctionType::get(f32, {f32}, false),
                                          llvm::GlobalValue::ExternalLinkage, name, module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  b.CreateRet(llvm_ir::EmitFastLog1p(b, function->getArg(0)));
  return OkStatus();
}

TEST(CodegenFastMath, Log1pMatchesLibm) {
  auto jit = codegen::Jit::Create(3, "");
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  std::vector<codegen::ModuleJob> jobs(1);
  jobs[0].emit = [&](llvm::Module& module) { return EmitScalarLog1p(module, "log1p_fast"); };
  int cached = 0;
  auto code = (*jit)->AddModules(jobs, &cached);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  auto address = (*code)->Lookup("log1p_fast");
  ASSERT_TRUE(address.ok()) << address.status().ToString();
  const auto log1p_fast = reinterpret_cast<ScalarFunction>(*address);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<float> inputs = {0.0f,    -0.0f,  1e-45f,  -1e-45f,  1e-38f,
                               -1e-38f, 1e-10f, -1e-10f, 5.96e-8f, -5.96e-8f,
                               1e-7f,   -1e-7f, -0.5f,   -1.0f,    -1.5f,
                               -kInf,   kInf,   1e38f,   3.4e38f,  std::numeric_limits<float>::quiet_NaN()};
  // -w*w for w near 1, as erf_inv computes it for JAX's normal samples.
  for (int i = 1; i <= 1000; ++i) inputs.push_back(-1.0f + std::ldexp(static_cast<float>(i), -24));
  for (int i = 0; i <= 4000; ++i) inputs.push_back(-0.9999f + 2.0f * static_cast<float>(i) / 4000.0f);
  for (int i = -40; i <= 38; ++i) inputs.push_back(std::pow(10.0f, static_cast<float>(i)) * 1.2345f);
  for (int i = -40; i <= -1; ++i) inputs.push_back(-std::pow(10.0f, static_cast<float>(i)) * 1.2345f);
  for (float x : inputs) {
    const float expected = static_cast<float>(std::log1p(static_cast<double>(x)));
    const float actual = log1p_fast(x);
    const std::string what = "log1p(" + std::to_string(x) + ") = " + std::to_string(actual);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(actual)) << what;
    } else if (std::isinf(expected) || expected == 0.0f) {
      EXPECT_EQ(actual, expected) << what;
      EXPECT_EQ(std::signbit(actual), std::signbit(expected)) << what;
    } else {
      EXPECT_LE(UlpDistance(actual, expected), 4) << what << " vs " << expected;
    }
  }
}

}  // namespace
}  // namespace kiln::cpu::testing
