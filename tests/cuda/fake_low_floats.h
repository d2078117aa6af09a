// Half and bfloat16 conversions for the fake libraries (fake_cublas,
// fake_cudnn), which compute on the host what the real ones do on a GPU.
#pragma once

#include <cstdint>
#include <cstring>

namespace kiln::cuda::fake {

inline float HalfToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t{bits & 0x8000u} << 16;
  const int exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ffu;
  float magnitude = 0;
  if (exponent == 0) {
    magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? __builtin_inff() : __builtin_nanf("");
  } else {
    magnitude =
        (1.0f + static_cast<float>(mantissa) * 0x1p-10f) * static_cast<float>(1 << exponent) * 0x1p-15f;
  }
  return sign != 0 ? -magnitude : magnitude;
}

// Round to nearest even through an exact scaling (enough for a test double).
inline uint16_t FloatToHalf(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const float magnitude = value < 0 ? -value : value;
  if (magnitude != magnitude) return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 65520.0f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x1p-14f) {  // subnormal: units of 2^-24
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(__builtin_nearbyintf(magnitude * 0x1p24f)));
  }
  int exponent = 0;
  const float fraction = __builtin_frexpf(magnitude, &exponent);                       // [0.5, 1)
  auto significand = static_cast<uint32_t>(__builtin_nearbyintf(fraction * 2048.0f));  // 11 bits
  if (significand == 2048) {
    significand = 1024;
    ++exponent;
  }
  const uint32_t biased = static_cast<uint32_t>(exponent - 1 + 15);
  if (biased >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (biased << 10) | (significand & 0x3ffu));
}

inline float BfloatToFloat(uint16_t bits) {
  const uint32_t widened = uint32_t{bits} << 16;
  float value = 0;
  std::memcpy(&value, &widened, sizeof(value));
  return value;
}

inline uint16_t FloatToBfloat(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  if (value != value) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace kiln::cuda::fake
