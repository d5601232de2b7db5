"""fusekit's own Ascend C headers: the generated part is current, half and bfloat16_t convert as IEEE 754 says."""

import ctypes

import ml_dtypes
import numpy as np

from fusekit.cpp import compiler, headers

CONVERSIONS = """
#include "fusekit/half.h"
extern "C" void to_half(const float* in, uint16_t* out, int n) { for (int i = 0; i < n; ++i) out[i] = fusekit::half_from_float(in[i]); }
extern "C" void from_half(const uint16_t* in, float* out, int n) { for (int i = 0; i < n; ++i) out[i] = fusekit::half_to_float(in[i]); }
extern "C" void to_bf16(const float* in, uint16_t* out, int n) { for (int i = 0; i < n; ++i) out[i] = fusekit::bfloat16_from_float(in[i]); }
"""


def test_generated_header_is_current():
    assert headers.GENERATED.read_text() == headers.text(), "run python -m fusekit.cpp.headers"


def _conversions():
    dll = ctypes.CDLL(str(compiler.build(CONVERSIONS, compiler.INCLUDE).path))
    return dll


def _call(fn, values: np.ndarray, out_dtype) -> np.ndarray:
    out = np.empty(values.size, out_dtype)
    fn(values.ctypes.data_as(ctypes.c_void_p), out.ctypes.data_as(ctypes.c_void_p), ctypes.c_int(values.size))
    return out


def test_every_half_converts_to_float_exactly():
    bits = np.arange(1 << 16, dtype=np.uint16)
    got = _call(_conversions().from_half, bits, np.float32)
    expected = bits.view(np.float16).astype(np.float32)
    nan = np.isnan(expected)
    assert np.array_equal(got[~nan].view(np.uint32), expected[~nan].view(np.uint32)) and np.isnan(got[nan]).all()


def test_float_to_half_and_bfloat16_round_to_nearest_even(rng):
    # every float16 and bfloat16 value, the half-way points between neighbours, and random floats of all exponents
    with np.errstate(invalid="ignore", over="ignore"):  # inf - inf and the overflowing casts are meant
        halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
        bf16 = (np.arange(1 << 16, dtype=np.uint32) << 16).view(np.float32)
        ties = ((np.arange(1 << 16, dtype=np.uint32) << 16) | 0x8000).view(np.float32)
        random = rng.integers(0, 1 << 32, 1 << 18, dtype=np.uint64).astype(np.uint32).view(np.float32)
        floats = np.concatenate([halves, bf16, ties, random, (halves[:-1] + halves[1:]) / 2]).astype(np.float32)
        finite = ~np.isnan(floats)
        lib = _conversions()
        got = _call(lib.to_half, floats, np.uint16)
        assert np.array_equal(got[finite], floats[finite].astype(np.float16).view(np.uint16))
        assert np.isnan(got[~finite].view(np.float16)).all()
        got = _call(lib.to_bf16, floats, np.uint16)
        assert np.array_equal(got[finite], floats[finite].astype(ml_dtypes.bfloat16).view(np.uint16))
        assert np.isnan(got[~finite].view(ml_dtypes.bfloat16).astype(np.float32)).all()
