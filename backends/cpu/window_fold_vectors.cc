#include "backends/cpu/window_fold_vectors.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/avx512_lanes.h"

namespace kiln::cpu {
namespace {

#if defined(__x86_64__)
// One step of the fold: op(held, next), the interpreter's, held first.
template <typename T, Opcode kReducer>
KILN_AVX512_LANES inline typename Avx512Lanes<T>::Vector FoldStep(typename Avx512Lanes<T>::Vector held,
                                                                  typename Avx512Lanes<T>::Vector next) {
  using L = Avx512Lanes<T>;
  if constexpr (kReducer == Opcode::kMaximum) {
    return L::Maximum(held, next);
  } else if constexpr (kReducer == Opcode::kMinimum) {
    return L::Minimum(held, next);
  } else if constexpr (kReducer == Opcode::kAdd) {
    return L::Add(held, next);
  } else {
    static_assert(kReducer == Opcode::kMultiply);
    return L::Mul(held, next);
  }
}

// The epilogue on a folded vector: op(held, scalar), or held. One branch
// per stored vector, the same one every time.
template <typename T>
KILN_AVX512_LANES inline typename Avx512Lanes<T>::Vector Finish(typename Avx512Lanes<T>::Vector held,
                                                                std::optional<Opcode> op,
                                                                typename Avx512Lanes<T>::Vector scalar) {
  using L = Avx512Lanes<T>;
  if (!op) return held;
  switch (*op) {
    case Opcode::kAdd: return L::Add(held, scalar);
    case Opcode::kSubtract: return L::Sub(held, scalar);
    case Opcode::kMultiply: return L::Mul(held, scalar);
    case Opcode::kDivide: return L::Div(held, scalar);
    default: return held;
  }
}

// Four vectors of lanes of each of kPositions output positions at a time:
// each window row's step depends on the last one (a max step is a compare
// and a masked max, 8 cycles), so the more independent chains, the busier
// the vector unit; two positions side by side make eight. With kStream,
// whole vectors at 64-byte aligned addresses are stored non-temporally (no
// read of the line first, no cache line kept).
template <typename T, Opcode kReducer, bool kStream, int kPositions>
KILN_AVX512_LANES inline void FoldPositions(const T* const* rows, size_t taps, T initial, int64_t n,
                                            T* const* out, const WindowFoldEpilogue<T>& epilogue) {
  using L = Avx512Lanes<T>;
  using Vector = typename L::Vector;
  constexpr int64_t kChains = 4;
  const Vector start = L::Set(initial);
  const Vector scalar = L::Set(epilogue.scalar);
  int64_t c = 0;
  for (; c + kChains * L::kCount <= n; c += kChains * L::kCount) {
    Vector held[kPositions][kChains];
    for (int p = 0; p < kPositions; ++p) {
      for (int64_t v = 0; v < kChains; ++v) held[p][v] = start;
    }
    for (size_t k = 0; k < taps; ++k) {
      for (int p = 0; p < kPositions; ++p) {
        const T* row = rows[static_cast<size_t>(p) * taps + k] + c;
        for (int64_t v = 0; v < kChains; ++v)
          held[p][v] = FoldStep<T, kReducer>(held[p][v], L::Load(row + v * L::kCount));
      }
    }
    for (int p = 0; p < kPositions; ++p) {
      for (int64_t v = 0; v < kChains; ++v) held[p][v] = Finish<T>(held[p][v], epilogue.op, scalar);
      T* to = out[p] + c;
      if (kStream && reinterpret_cast<uintptr_t>(to) % 64 == 0) {
        for (int64_t v = 0; v < kChains; ++v) L::StoreStreaming(to + v * L::kCount, held[p][v]);
      } else {
        for (int64_t v = 0; v < kChains; ++v) L::Store(to + v * L::kCount, held[p][v]);
      }
    }
  }
  for (; c < n; c += L::kCount) {
    const auto mask = L::Prefix(std::min<int64_t>(L::kCount, n - c));
    Vector held[kPositions];
    for (int p = 0; p < kPositions; ++p) held[p] = start;
    for (size_t k = 0; k < taps; ++k) {
      for (int p = 0; p < kPositions; ++p)
        held[p] = FoldStep<T, kReducer>(held[p], L::Load(mask, rows[static_cast<size_t>(p) * taps + k] + c));
    }
    for (int p = 0; p < kPositions; ++p) L::Store(out[p] + c, mask, Finish<T>(held[p], epilogue.op, scalar));
  }
}

template <typename T, Opcode kReducer, bool kStream>
KILN_AVX512_LANES void FoldWindowRows(const T* const* rows, size_t taps, size_t positions, T initial,
                                      int64_t n, T* const* out, const WindowFoldEpilogue<T>& epilogue) {
  if (positions == 2) {
    FoldPositions<T, kReducer, kStream, 2>(rows, taps, initial, n, out, epilogue);
  } else {
    FoldPositions<T, kReducer, kStream, 1>(rows, taps, initial, n, out, epilogue);
  }
}
#endif  // __x86_64__

}  // namespace

template <typename T>
WindowFoldRows<T> FindWindowFoldRows(Opcode reducer, bool stream_stores) {
#if defined(__x86_64__)
  if (!HasAvx512Lanes()) return nullptr;
  switch (reducer) {
    case Opcode::kMaximum:
      return stream_stores ? &FoldWindowRows<T, Opcode::kMaximum, true>
                           : &FoldWindowRows<T, Opcode::kMaximum, false>;
    case Opcode::kMinimum:
      return stream_stores ? &FoldWindowRows<T, Opcode::kMinimum, true>
                           : &FoldWindowRows<T, Opcode::kMinimum, false>;
    case Opcode::kAdd:
      return stream_stores ? &FoldWindowRows<T, Opcode::kAdd, true> : &FoldWindowRows<T, Opcode::kAdd, false>;
    case Opcode::kMultiply:
      return stream_stores ? &FoldWindowRows<T, Opcode::kMultiply, true>
                           : &FoldWindowRows<T, Opcode::kMultiply, false>;
    default: break;
  }
#else
  (void)reducer;
  (void)stream_stores;
#endif
  return nullptr;
}

void FenceStreamedWindowStores() { FenceStreamedStores(); }

namespace {
#if defined(__x86_64__)
KILN_AVX512_LANES void StreamWindowResultLines(char* to, const char* from, size_t lines) {
  for (size_t i = 0; i < lines; ++i) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(to + i * 64), _mm512_loadu_si512(from + i * 64));
  }
}

KILN_AVX512_LANES void FillWindowLines(char* to, const unsigned char* pattern, size_t lines) {
  const __m512i line = _mm512_loadu_si512(pattern);
  for (size_t i = 0; i < lines; ++i) _mm512_storeu_si512(to + i * 64, line);
}
#endif
}  // namespace

void FillWindowRow(void* to, const void* value, size_t element_bytes, size_t count) {
  auto* out = static_cast<char*>(to);
  size_t done = 0;
#if defined(__x86_64__)
  if (HasAvx512Lanes() && element_bytes > 0 && 64 % element_bytes == 0) {
    // 64 bytes of the element repeated: a line holds whole elements.
    unsigned char pattern[64];
    for (size_t b = 0; b < 64; b += element_bytes) std::memcpy(pattern + b, value, element_bytes);
    const size_t lines = count * element_bytes / 64;
    FillWindowLines(out, pattern, lines);
    done = lines * 64 / element_bytes;
  }
#endif
  for (size_t i = done; i < count; ++i) std::memcpy(out + i * element_bytes, value, element_bytes);
}

void StoreWindowResultRow(void* to, const void* from, size_t bytes, bool stream) {
  auto* out = static_cast<char*>(to);
  const auto* in = static_cast<const char*>(from);
#if defined(__x86_64__)
  if (stream && HasAvx512Lanes()) {
    const size_t head = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(out) % 64) % 64);
    std::memcpy(out, in, head);
    const size_t lines = (bytes - head) / 64;
    StreamWindowResultLines(out + head, in + head, lines);
    const size_t done = head + lines * 64;
    std::memcpy(out + done, in + done, bytes - done);
    return;
  }
#else
  (void)stream;
#endif
  std::memcpy(out, in, bytes);
}

template WindowFoldRows<float> FindWindowFoldRows<float>(Opcode, bool);
template WindowFoldRows<double> FindWindowFoldRows<double>(Opcode, bool);

}  // namespace kiln::cpu
