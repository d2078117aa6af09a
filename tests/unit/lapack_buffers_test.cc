// RunLapackCall on caller-owned buffers (core/interpreter/lapack_calls.h),
// as the cpu backend's lapack thunk calls it: results it does not compute
// are zeros whatever the buffers held, a factor may be computed in its
// operand's own buffer, and CheckLapackCall refuses what RunLapackCall
// would, without LAPACK.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/builtin_custom_calls.h"
#include "core/hlo_parser.h"
#include "core/interpreter/lapack_calls.h"
#include "tests/unit/test_util.h"

namespace kiln {
namespace {

using interpreter::CheckLapackCall;
using interpreter::LapackBuffers;
using interpreter::RunLapackCall;

// The module's root, a custom call to a built-in LAPACK target.
struct Call {
  std::unique_ptr<Module> module;
  const Instruction* instruction = nullptr;
  const BuiltinCustomCall* target = nullptr;
};

Call ParseCall(const std::string& operands, const std::string& call) {
  Call parsed;
  StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule("HloModule lapack\n\nENTRY main {\n" + operands + "  ROOT call = " + call + "\n}\n");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return parsed;
  parsed.module = std::move(module).value();
  parsed.instruction = parsed.module->entry()->root();
  parsed.target = FindBuiltinCustomCall(parsed.instruction->attrs.custom_call_target);
  EXPECT_NE(parsed.target, nullptr);
  return parsed;
}

constexpr float kGarbage = std::numeric_limits<float>::quiet_NaN();

std::vector<float> Matrix(int n, float diagonal) {
  std::vector<float> values(static_cast<size_t>(n) * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      values[static_cast<size_t>(r * n + c)] = r == c ? diagonal : 1.0f / (1 + r + c);
  return values;
}

TEST(LapackBuffersTest, SingularValuesOnlyLeaveZerosInTheVectorsWhateverTheBuffersHeld) {
  Call call = ParseCall("  a = f32[5,5] parameter(0)\n",
                        "(f32[5,5], f32[5], f32[5,5], f32[5,5], s32[]) custom-call(a), "
                        "custom_call_target=\"lapack_sgesdd_ffi\", api_version=API_VERSION_TYPED_FFI, "
                        "backend_config={mode = 78 : ui8}");
  ASSERT_NE(call.target, nullptr);
  std::vector<float> a = Matrix(5, 3), factor(25, kGarbage), values(5, kGarbage), u(25, kGarbage),
                     vt(25, kGarbage);
  int32_t info = -7;
  LapackBuffers buffers{{a.data()}, {factor.data(), values.data(), u.data(), vt.data(), &info}};
  KILN_ASSERT_OK(RunLapackCall(*call.target, *call.instruction, buffers));
  EXPECT_EQ(info, 0);
  for (float value : values) EXPECT_TRUE(std::isfinite(value)) << value;
  for (float value : u) EXPECT_EQ(value, 0.0f);
  for (float value : vt) EXPECT_EQ(value, 0.0f);
}

TEST(LapackBuffersTest, EigenvaluesOnlyLeaveZerosInTheVectorsWhateverTheBuffersHeld) {
  Call call = ParseCall("  a = f32[4,4] parameter(0)\n",
                        "(f32[4], f32[4], c64[4,4], c64[4,4], s32[]) custom-call(a), "
                        "custom_call_target=\"lapack_sgeev_ffi\", api_version=API_VERSION_TYPED_FFI, "
                        "backend_config={compute_left = 78 : ui8, compute_right = 78 : ui8}");
  ASSERT_NE(call.target, nullptr);
  std::vector<float> a = Matrix(4, 2), real(4, kGarbage), imaginary(4, kGarbage), left(32, kGarbage),
                     right(32, kGarbage);
  int32_t info = -7;
  LapackBuffers buffers{{a.data()}, {real.data(), imaginary.data(), left.data(), right.data(), &info}};
  KILN_ASSERT_OK(RunLapackCall(*call.target, *call.instruction, buffers));
  EXPECT_EQ(info, 0);
  for (float value : left) EXPECT_EQ(value, 0.0f);
  for (float value : right) EXPECT_EQ(value, 0.0f);
}

TEST(LapackBuffersTest, SchurFormWithoutVectorsLeavesZerosInThem) {
  Call call = ParseCall("  a = f32[4,4] parameter(0)\n",
                        "(f32[4,4], f32[4,4], f32[4], f32[4], s32[], s32[]) custom-call(a), "
                        "custom_call_target=\"lapack_sgees_ffi\", api_version=API_VERSION_TYPED_FFI, "
                        "backend_config={mode = 78 : ui8, sort = 78 : ui8}");
  ASSERT_NE(call.target, nullptr);
  std::vector<float> a = Matrix(4, 2), t(16, kGarbage), z(16, kGarbage), real(4), imaginary(4);
  int32_t sdim = -7, info = -7;
  LapackBuffers buffers{{a.data()}, {t.data(), z.data(), real.data(), imaginary.data(), &sdim, &info}};
  KILN_ASSERT_OK(RunLapackCall(*call.target, *call.instruction, buffers));
  EXPECT_EQ(info, 0);
  for (float value : z) EXPECT_EQ(value, 0.0f);
}

TEST(LapackBuffersTest, ACholeskyFactorInItsOperandsBufferIsTheOneComputedBeside) {
  Call call = ParseCall("  a = f32[2,6,6] parameter(0)\n",
                        "(f32[2,6,6], s32[2]) custom-call(a), custom_call_target=\"lapack_spotrf_ffi\", "
                        "output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, "
                        "backend_config={uplo = 76 : ui8}");
  ASSERT_NE(call.target, nullptr);
  std::vector<float> a = Matrix(6, 8);
  const std::vector<float> second = Matrix(6, 5);
  a.insert(a.end(), second.begin(), second.end());
  std::vector<float> beside(a.size(), kGarbage), in_place = a;
  int32_t info_beside[2] = {-7, -7}, info_in_place[2] = {-7, -7};
  KILN_ASSERT_OK(RunLapackCall(*call.target, *call.instruction,
                               LapackBuffers{{a.data()}, {beside.data(), info_beside}}));
  KILN_ASSERT_OK(RunLapackCall(*call.target, *call.instruction,
                               LapackBuffers{{in_place.data()}, {in_place.data(), info_in_place}}));
  EXPECT_EQ(info_beside[0], 0);
  EXPECT_EQ(info_beside[1], 0);
  EXPECT_EQ(std::memcmp(beside.data(), in_place.data(), beside.size() * sizeof(float)), 0);
  EXPECT_EQ(info_in_place[0], 0);
  EXPECT_EQ(info_in_place[1], 0);
  // The factor is L with L L^T = A: its first column is A's first column
  // over the square root of A's corner.
  for (int r = 0; r < 6; ++r)
    EXPECT_FLOAT_EQ(beside[static_cast<size_t>(r * 6)], a[static_cast<size_t>(r * 6)] / std::sqrt(8.0f));
}

TEST(LapackBuffersTest, TheWrongNumberOfArraysIsAnInternalErrorNamingTheCall) {
  Call call = ParseCall("  a = f32[3,3] parameter(0)\n",
                        "(f32[3,3], s32[]) custom-call(a), custom_call_target=\"lapack_spotrf_ffi\", "
                        "api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}");
  ASSERT_NE(call.target, nullptr);
  std::vector<float> a = Matrix(3, 4), factor(9);
  const Status status =
      RunLapackCall(*call.target, *call.instruction, LapackBuffers{{a.data()}, {factor.data()}});
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("lapack_spotrf_ffi"), std::string::npos) << status.ToString();
}

TEST(LapackBuffersTest, CheckRefusesWhatRunWouldWithoutTouchingAnyArray) {
  Call good =
      ParseCall("  a = f64[2,3,3] parameter(0)\n",
                "(f64[2,3,3], f64[2,3], s32[2]) custom-call(a), custom_call_target=\"lapack_dsyevd_ffi\", "
                "api_version=API_VERSION_TYPED_FFI, backend_config={mode = 86 : ui8, uplo = 76 : ui8}");
  ASSERT_NE(good.target, nullptr);
  KILN_ASSERT_OK(CheckLapackCall(*good.target, *good.instruction));
  Call bad_letter = ParseCall("  a = f64[2,3,3] parameter(0)\n",
                              "(f64[2,3,3], f64[2,3], s32[2]) custom-call(a), "
                              "custom_call_target=\"lapack_dsyevd_ffi\", api_version=API_VERSION_TYPED_FFI, "
                              "backend_config={mode = 86 : ui8, uplo = 88 : ui8}");
  ASSERT_NE(bad_letter.target, nullptr);
  const Status letter = CheckLapackCall(*bad_letter.target, *bad_letter.instruction);
  EXPECT_EQ(letter.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(letter.message().find("uplo = 88"), std::string::npos) << letter.ToString();
  Call bad_shape = ParseCall("  a = f64[2,3,3] parameter(0)\n",
                             "(f64[2,3,3], f64[2,4], s32[2]) custom-call(a), "
                             "custom_call_target=\"lapack_dsyevd_ffi\", api_version=API_VERSION_TYPED_FFI, "
                             "backend_config={mode = 86 : ui8, uplo = 76 : ui8}");
  ASSERT_NE(bad_shape.target, nullptr);
  const Status shape = CheckLapackCall(*bad_shape.target, *bad_shape.instruction);
  EXPECT_EQ(shape.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(shape.message().find("lapack_dsyevd_ffi"), std::string::npos) << shape.ToString();
}

}  // namespace
}  // namespace kiln
