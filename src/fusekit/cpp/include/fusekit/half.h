// half and bfloat16_t for C++ kernels (written for fusekit; not a CANN header).
//
// IEEE 754 binary16 and bfloat16 as 16-bit storage; arithmetic goes through float and rounds once to nearest even,
// which for + - * / is the correctly rounded 16-bit result (float's 24 bits >= 2 * 11 + 2: the double-rounding bound,
// docs/ascendc-model.md). The NPU's scalar unit computes half the same way (IEEE 754 rounding to nearest).
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "bridge.h"  // Dtype: the element type names the simulator knows

namespace fusekit {

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

// float -> binary16, round to nearest even; NaN stays NaN (quiet, top payload bits kept), overflow gives inf
inline uint16_t half_from_float(float f) {
    uint32_t x = float_bits(f);
    uint16_t sign = uint16_t((x >> 16) & 0x8000u);
    uint32_t a = x & 0x7fffffffu;
    if (a >= 0x7f800000u) return uint16_t(sign | (a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : 0x7c00u));
    if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 (half-way above 65504) rounds to inf
    if (a < 0x38800000u) {  // below 2^-14: a multiple of 2^-24; adding 0.5 (ulp 2^-24) rounds it there, to even
        return uint16_t(sign | (float_bits(bits_float(a) + 0.5f) - 0x3f000000u));
    }
    uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);  // to nearest even at bit 13 (a carry moves the exponent)
    return uint16_t(sign | ((rounded - 0x38000000u) >> 13));  // exponent bias 127 -> 15
}

inline float half_to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) return bits_float(sign) + (sign ? -1.0f : 1.0f) * float(m) * 5.9604644775390625e-8f;  // m * 2^-24
    if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
    return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

// float -> bfloat16, round to nearest even; NaN stays NaN (quiet)
inline uint16_t bfloat16_from_float(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
    return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bfloat16_to_float(uint16_t b) { return bits_float(uint32_t(b) << 16); }

// A 16-bit float type: storage plus conversions; arithmetic through float.
template <uint16_t (*From)(float), float (*To)(uint16_t)> struct Float16Bits {
    uint16_t bits;
    Float16Bits() = default;
    template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
    Float16Bits(T v) : bits(From(static_cast<float>(v))) {}
    operator float() const { return To(bits); }
    Float16Bits& operator+=(float v) { return *this = float(*this) + v; }
    Float16Bits& operator-=(float v) { return *this = float(*this) - v; }
    Float16Bits& operator*=(float v) { return *this = float(*this) * v; }
    Float16Bits& operator/=(float v) { return *this = float(*this) / v; }
    Float16Bits operator-() const { Float16Bits r; r.bits = uint16_t(bits ^ 0x8000u); return r; }
};

}  // namespace fusekit

using half = fusekit::Float16Bits<fusekit::half_from_float, fusekit::half_to_float>;
using bfloat16_t = fusekit::Float16Bits<fusekit::bfloat16_from_float, fusekit::bfloat16_to_float>;

namespace fusekit {
template <> struct Dtype<half> { static constexpr const char* name = "float16"; };
template <> struct Dtype<bfloat16_t> { static constexpr const char* name = "bfloat16"; };
}  // namespace fusekit
