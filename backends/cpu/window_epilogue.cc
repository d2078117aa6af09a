#include "backends/cpu/window_epilogue.h"

#include <cstring>
#include <type_traits>

#include "core/interpreter/scalar_ops.h"

namespace kiln::cpu {
namespace {

template <typename T, typename Op>
[[gnu::always_inline]] inline void EpilogueLoop(T* __restrict data, int64_t n, T scalar, Op op) {
  for (int64_t i = 0; i < n; ++i) data[i] = op(data[i], scalar);
}

#if defined(__x86_64__)
// The same loop compiled for AVX2: x86-64's baseline is 4 floats per
// divide, and a division's throughput, not memory, then bounds average
// pooling.
template <typename T, typename Op>
__attribute__((target("avx2,fma"))) void EpilogueLoopAvx2(T* __restrict data, int64_t n, T scalar, Op op) {
  EpilogueLoop(data, n, scalar, op);
}

bool WindowEpilogueHasAvx2() {
  static const bool has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has_avx2;
}
#endif

}  // namespace

bool IsWindowEpilogue(ElementType type, Opcode op) {
  return IsFloating(type) &&
         (op == Opcode::kAdd || op == Opcode::kSubtract || op == Opcode::kMultiply || op == Opcode::kDivide);
}

Status ApplyWindowEpilogue(ElementType type, Opcode op, void* data, int64_t n, const void* scalar) {
  if (!IsWindowEpilogue(type, op))
    return Internal("cpu window epilogue: ", OpcodeName(op), " on ", ElementTypeName(type), " is not one");
  Status status = OkStatus();
  DispatchElementType(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (interpreter::kIsFloat<T>) {
      T value;
      std::memcpy(static_cast<void*>(&value), scalar, sizeof(T));
      status = interpreter::WithBinaryOp<T>(op, [&](auto apply) {
#if defined(__x86_64__)
        if constexpr (std::is_floating_point_v<T>) {
          if (WindowEpilogueHasAvx2()) return EpilogueLoopAvx2(static_cast<T*>(data), n, value, apply);
        }
#endif
        EpilogueLoop(static_cast<T*>(data), n, value, apply);
      });
    }
  });
  return status;
}

}  // namespace kiln::cpu
