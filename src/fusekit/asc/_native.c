/* fusekit.asc._native: float16 arithmetic computed in float32 and rounded once to half.
 *
 * Why this is exact: for + - * / and sqrt, a result computed in a format of p' >= 2p + 2 significand
 * bits and then rounded to p bits equals the result rounded once to p bits (Figueroa, "When is double
 * rounding innocuous?", SIGNUM 1995). float32 has p' = 24 and half p = 11, so float32 arithmetic rounded
 * to nearest even into half is the correctly rounded half result: the bits numpy's float16 ufuncs give.
 *
 * NaNs: numpy's result for a NaN operand is that operand quieted, and when both are NaN it is the
 * second operand of add and mul and the first of sub and div (measured on numpy 1.26 and 2.4, x86-64:
 * its loops compute b + a and b * a). This file applies that rule explicitly instead of relying on the
 * order a compiler gives commutative operands; NaNs the hardware makes (inf - inf, sqrt(-1)) come from
 * the float32 operation, as in numpy. The casts keep numpy's software conversion: a NaN's payload is
 * shifted, not quieted, and a float32 NaN whose kept payload bits are all zero becomes half 0x7c01.
 *
 * Every element is a uint16 bit pattern (float32: uint32). Operands are C-contiguous buffers; the
 * caller (native.py) checks dtypes, shapes and overlap. Two paths: portable C on every compiler, and
 * AVX2 + F16C loops compiled with per-function target attributes and chosen at run time
 * (__builtin_cpu_supports), so a build runs on any x86-64 CPU. A block of 8 lanes holding a NaN takes
 * the portable path, which keeps the NaN rule in one place.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

/* mmad's column halves on two threads where POSIX threads exist, for products of at least this many steps */
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define MMAD_THREADS 1
#else
#define MMAD_THREADS 0
#endif
#define MMAD_THREAD_WORK (1 << 21)

enum { OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_DIV = 3 };

#define QUIET_F32 0x00400000u
#define HALF_MAX_BITS 0x7bffu /* 65504 */

/* ------------------------------------------------------------------------------------------------ */
/* Portable path                                                                                     */

static inline float f32_of_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t bits_of_f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline int half_is_nan(uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }

/* half -> float32 bits, exact; a NaN keeps its payload shifted left by 13 and is not quieted. */
static inline uint32_t half_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1fu) return sign | 0x7f800000u | (man << 13);
    if (exp != 0) return sign | ((exp + 112u) << 23) | (man << 13);
    if (man == 0) return sign;
    /* subnormal, man * 2**-24: shift the leading one up to the implicit bit's place */
    uint32_t shift = 0;
    while (!(man & 0x400u)) { man <<= 1; shift++; }
    return sign | ((113u - shift) << 23) | ((man & 0x3ffu) << 13);
}

/* float32 bits -> half, rounded to nearest even; overflow gives inf, NaN as the file comment says. */
static inline uint16_t f32_to_half(uint32_t f) {
    uint16_t sign = (uint16_t)((f >> 16) & 0x8000u);
    uint32_t a = f & 0x7fffffffu;
    if (a >= 0x7f800000u) {
        if (a == 0x7f800000u) return sign | 0x7c00u;
        uint16_t man = (uint16_t)((a >> 13) & 0x3ffu);
        return sign | 0x7c00u | (man ? man : 1u);
    }
    if (a >= 0x477ff000u) return sign | 0x7c00u; /* >= 65520: the tie between 65504 and 2**16 goes to inf */
    if (a >= 0x38800000u) {                      /* a normal half (>= 2**-14): rebias and round at bit 13 */
        uint32_t r = a - 0x38000000u;
        r += 0x0fffu + ((r >> 13) & 1u);
        return sign | (uint16_t)(r >> 13);
    }
    if (a <= 0x33000000u) return sign; /* <= 2**-25, half the smallest subnormal: ties to even 0 */
    /* a subnormal half: the significand with its implicit one, in units of 2**-24 */
    uint32_t exp = a >> 23, man = (a & 0x7fffffu) | 0x800000u, shift = 126u - exp;
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) q++;
    return sign | (uint16_t)q;
}

static inline uint16_t quiet_nan(uint16_t h) { return f32_to_half(half_to_f32(h) | QUIET_F32); }

/* the NaN operand that numpy's result carries (file comment), or 0 when neither is NaN */
static inline int nan_operand(int op, uint16_t a, uint16_t b, uint16_t *out) {
    int an = half_is_nan(a), bn = half_is_nan(b);
    if (!(an | bn)) return 0;
    if (op == OP_ADD || op == OP_MUL) *out = quiet_nan(bn ? b : a);
    else *out = quiet_nan(an ? a : b);
    return 1;
}

static inline uint16_t binary_one(int op, uint16_t a, uint16_t b) {
    uint16_t nan;
    if (nan_operand(op, a, b, &nan)) return nan;
    float x = f32_of_bits(half_to_f32(a)), y = f32_of_bits(half_to_f32(b)), r;
    switch (op) {
    case OP_ADD: r = x + y; break;
    case OP_SUB: r = x - y; break;
    case OP_MUL: r = x * y; break;
    default: r = x / y; break;
    }
    return f32_to_half(bits_of_f32(r));
}

static inline uint16_t sqrt_one(uint16_t a) {
    if (half_is_nan(a)) return quiet_nan(a);
    return f32_to_half(bits_of_f32(sqrtf(f32_of_bits(half_to_f32(a)))));
}

/* b == NULL: every lane takes the scalar s as its second operand */
static void binary_portable(int op, uint16_t *d, const uint16_t *a, const uint16_t *b, uint16_t s,
                            Py_ssize_t lo, Py_ssize_t n) {
    for (Py_ssize_t i = lo; i < n; i++) d[i] = binary_one(op, a[i], b ? b[i] : s);
}

static void sqrt_portable(uint16_t *d, const uint16_t *a, Py_ssize_t lo, Py_ssize_t n) {
    for (Py_ssize_t i = lo; i < n; i++) d[i] = sqrt_one(a[i]);
}

static void pairs_portable(uint16_t *d, const uint16_t *x, Py_ssize_t lo, Py_ssize_t n) {
    for (Py_ssize_t i = lo; i < n; i++) d[i] = binary_one(OP_ADD, x[2 * i], x[2 * i + 1]);
}

static void to_f32_portable(uint32_t *d, const uint16_t *a, Py_ssize_t lo, Py_ssize_t n) {
    for (Py_ssize_t i = lo; i < n; i++) d[i] = half_to_f32(a[i]);
}

static void to_half_portable(uint16_t *d, const uint32_t *a, Py_ssize_t lo, Py_ssize_t n) {
    for (Py_ssize_t i = lo; i < n; i++) d[i] = f32_to_half(a[i]);
}

/* ------------------------------------------------------------------------------------------------ */
/* AVX2 + F16C path (x86 with GCC or Clang); 8 lanes at a time                                       */

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_X86_SIMD 1
#include <immintrin.h>

#define SIMD __attribute__((target("avx2,f16c")))
#define ROUND_NEAREST (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* nonzero when one of the 8 halves is a NaN */
SIMD static inline int any_nan8(__m128i h) {
    __m128i mag = _mm_and_si128(h, _mm_set1_epi16(0x7fff));
    return _mm_movemask_epi8(_mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7c00)));
}

SIMD static inline __m256 apply8(int op, __m256 x, __m256 y) {
    switch (op) {
    case OP_ADD: return _mm256_add_ps(x, y);
    case OP_SUB: return _mm256_sub_ps(x, y);
    case OP_MUL: return _mm256_mul_ps(x, y);
    default: return _mm256_div_ps(x, y);
    }
}

SIMD static void binary_simd(int op, uint16_t *d, const uint16_t *a, const uint16_t *b, uint16_t s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    __m128i hs = _mm_set1_epi16((short)s);
    for (; i + 8 <= n; i += 8) {
        __m128i ha = _mm_loadu_si128((const __m128i *)(a + i));
        __m128i hb = b ? _mm_loadu_si128((const __m128i *)(b + i)) : hs;
        if (any_nan8(ha) | any_nan8(hb)) {
            binary_portable(op, d, a, b, s, i, i + 8);
            continue;
        }
        __m256 r = apply8(op, _mm256_cvtph_ps(ha), _mm256_cvtph_ps(hb));
        _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(r, ROUND_NEAREST));
    }
    binary_portable(op, d, a, b, s, i, n);
}

SIMD static void sqrt_simd(uint16_t *d, const uint16_t *a, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i ha = _mm_loadu_si128((const __m128i *)(a + i));
        if (any_nan8(ha)) {
            sqrt_portable(d, a, i, i + 8);
            continue;
        }
        __m256 r = _mm256_sqrt_ps(_mm256_cvtph_ps(ha));
        _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(r, ROUND_NEAREST));
    }
    sqrt_portable(d, a, i, n);
}

/* d[i] = x[2i] + x[2i+1]: the even and odd halves of 16 lanes split with 16-bit packs */
SIMD static void pairs_simd(uint16_t *d, const uint16_t *x, Py_ssize_t n) {
    Py_ssize_t i = 0;
    __m128i low16 = _mm_set1_epi32(0xffff);
    for (; i + 8 <= n; i += 8) {
        __m128i v0 = _mm_loadu_si128((const __m128i *)(x + 2 * i));
        __m128i v1 = _mm_loadu_si128((const __m128i *)(x + 2 * i + 8));
        __m128i even = _mm_packus_epi32(_mm_and_si128(v0, low16), _mm_and_si128(v1, low16));
        __m128i odd = _mm_packus_epi32(_mm_srli_epi32(v0, 16), _mm_srli_epi32(v1, 16));
        if (any_nan8(v0) | any_nan8(v1)) {
            pairs_portable(d, x, i, i + 8);
            continue;
        }
        __m256 r = _mm256_add_ps(_mm256_cvtph_ps(even), _mm256_cvtph_ps(odd));
        _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(r, ROUND_NEAREST));
    }
    pairs_portable(d, x, i, n);
}

SIMD static void to_f32_simd(uint32_t *d, const uint16_t *a, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i ha = _mm_loadu_si128((const __m128i *)(a + i));
        if (any_nan8(ha)) { /* F16C may quiet a signalling NaN; numpy keeps it */
            to_f32_portable(d, a, i, i + 8);
            continue;
        }
        _mm256_storeu_ps((float *)(d + i), _mm256_cvtph_ps(ha));
    }
    to_f32_portable(d, a, i, n);
}

SIMD static void to_half_simd(uint16_t *d, const uint32_t *a, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 x = _mm256_loadu_ps((const float *)(a + i));
        if (_mm256_movemask_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q))) { /* F16C quiets; numpy does not */
            to_half_portable(d, a, i, i + 8);
            continue;
        }
        _mm_storeu_si128((__m128i *)(d + i), _mm256_cvtps_ph(x, ROUND_NEAREST));
    }
    to_half_portable(d, a, i, n);
}

/* Rows [i0, i0 + R) x columns [j, j + 8) of mmad on one lane, the k steps of mmad_rows (below) with C in registers:
   wide, each step (acc + a * b) in double, rounded to float (the round trip through float keeps every step's
   rounding); else in float, over K steps [k0, k1) (MMAD_KC at most: B's panel of 8 columns stays in L1 across the row
   blocks). */
#define MMAD_ROWS 6
#define MMAD_KC 256 /* K steps per pass: B's panel of 256 x 32 B stays in L1 */
SIMD static inline __attribute__((always_inline)) void mmad_block(float *c, const float *a, const float *b,
                                                                  Py_ssize_t i0, const int R, Py_ssize_t j,
                                                                  Py_ssize_t k0, Py_ssize_t k1, Py_ssize_t k,
                                                                  Py_ssize_t n, int wide) {
    if (wide) {
        __m256d lo[MMAD_ROWS], hi[MMAD_ROWS];
        for (int r = 0; r < R; r++) {
            lo[r] = _mm256_cvtps_pd(_mm_loadu_ps(c + (i0 + r) * n + j));
            hi[r] = _mm256_cvtps_pd(_mm_loadu_ps(c + (i0 + r) * n + j + 4));
        }
        for (Py_ssize_t kk = k0; kk < k1; kk++) {
            const __m256d blo = _mm256_cvtps_pd(_mm_loadu_ps(b + kk * n + j));
            const __m256d bhi = _mm256_cvtps_pd(_mm_loadu_ps(b + kk * n + j + 4));
            for (int r = 0; r < R; r++) {
                const __m256d av = _mm256_set1_pd((double)a[(i0 + r) * k + kk]);
                lo[r] = _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_add_pd(lo[r], _mm256_mul_pd(av, blo))));
                hi[r] = _mm256_cvtps_pd(_mm256_cvtpd_ps(_mm256_add_pd(hi[r], _mm256_mul_pd(av, bhi))));
            }
        }
        for (int r = 0; r < R; r++) {
            _mm_storeu_ps(c + (i0 + r) * n + j, _mm256_cvtpd_ps(lo[r]));
            _mm_storeu_ps(c + (i0 + r) * n + j + 4, _mm256_cvtpd_ps(hi[r]));
        }
    } else {
        __m256 acc[MMAD_ROWS];
        for (int r = 0; r < R; r++) acc[r] = _mm256_loadu_ps(c + (i0 + r) * n + j);
        for (Py_ssize_t kk = k0; kk < k1; kk++) {
            const __m256 bv = _mm256_loadu_ps(b + kk * n + j);
            for (int r = 0; r < R; r++)
                acc[r] = _mm256_add_ps(acc[r], _mm256_mul_ps(_mm256_set1_ps(a[(i0 + r) * k + kk]), bv));
        }
        for (int r = 0; r < R; r++) _mm256_storeu_ps(c + (i0 + r) * n + j, acc[r]);
    }
}

/* Columns [j0, j1) of mmad on one lane in blocks of MMAD_ROWS rows x 8 columns (mmad_block). Returns the end of the
   columns done (j0 + a multiple of 8); mmad_rows does the rest. No FMA instruction: the target has none, so the
   product is rounded before the sum (exact for these products in any case). */
SIMD static Py_ssize_t mmad_simd(float *c, const float *a, const float *b, Py_ssize_t m, Py_ssize_t k, Py_ssize_t n,
                                 Py_ssize_t j0, Py_ssize_t j1, int wide) {
    const Py_ssize_t full = j0 + (j1 - j0) / 8 * 8, whole = m / MMAD_ROWS * MMAD_ROWS;
    for (Py_ssize_t k0 = 0; k0 < k; k0 += MMAD_KC) { /* C through memory between K chunks: the same bits */
        const Py_ssize_t k1 = k0 + MMAD_KC < k ? k0 + MMAD_KC : k;
        for (Py_ssize_t j = j0; j < full; j += 8) {
            for (Py_ssize_t i = 0; i < whole; i += MMAD_ROWS)
                mmad_block(c, a, b, i, MMAD_ROWS, j, k0, k1, k, n, wide);
            for (Py_ssize_t i = whole; i < m; i++) mmad_block(c, a, b, i, 1, j, k0, k1, k, n, wide);
        }
    }
    return full;
}

static int cpu_has_simd(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}
#else
#define HAVE_X86_SIMD 0
static int cpu_has_simd(void) { return 0; }
#endif

static int use_simd; /* set at import from the CPU; set_simd() switches it for the tests of both paths */

/* ------------------------------------------------------------------------------------------------ */
/* Dispatch                                                                                          */

static void binary_run(int op, uint16_t *d, const uint16_t *a, const uint16_t *b, uint16_t s, Py_ssize_t n) {
#if HAVE_X86_SIMD
    if (use_simd) { binary_simd(op, d, a, b, s, n); return; }
#endif
    binary_portable(op, d, a, b, s, 0, n);
}

static void pairs_run(uint16_t *d, const uint16_t *x, Py_ssize_t n) {
#if HAVE_X86_SIMD
    if (use_simd) { pairs_simd(d, x, n); return; }
#endif
    pairs_portable(d, x, 0, n);
}

/* saturation mode: +-inf -> +-65504, NaN -> +0 (fusekit.asc.overflow.saturate) */
static void saturate_run(uint16_t *d, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        uint16_t mag = d[i] & 0x7fffu;
        if (mag > 0x7c00u) d[i] = 0;
        else if (mag == 0x7c00u) d[i] = (uint16_t)((d[i] & 0x8000u) | HALF_MAX_BITS);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Python functions                                                                                  */

/* 1 when out's bytes and an operand's overlap, other than as the same bytes when same_ok: a loop that reads
 * and writes 8 lanes at a time is right only for those two cases (the caller lets numpy do the others) */
static int overlap(const Py_buffer *out, const Py_buffer *x, int same_ok) {
    uintptr_t o0 = (uintptr_t)out->buf, x0 = (uintptr_t)x->buf;
    if (out->len == 0 || x->len == 0) return 0;
    if (same_ok && o0 == x0 && out->len == x->len) return 0;
    return o0 < x0 + (uintptr_t)x->len && x0 < o0 + (uintptr_t)out->len;
}

static int elements(Py_buffer *buf, Py_ssize_t itemsize, Py_ssize_t *n, const char *what) {
    if (buf->len % itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes is not a whole number of %zd-byte elements", what, buf->len,
                     itemsize);
        return -1;
    }
    *n = buf->len / itemsize;
    return 0;
}

static PyObject *py_binary(PyObject *self, PyObject *args) {
    int op;
    Py_buffer d, a, b = {0};
    PyObject *other;
    if (!PyArg_ParseTuple(args, "iw*y*O", &op, &d, &a, &other)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n, na;
    uint16_t s = 0;
    int have_b = 0;
    if (op < OP_ADD || op > OP_DIV) {
        PyErr_Format(PyExc_ValueError, "binary: unknown op %d", op);
        goto done;
    }
    if (elements(&d, 2, &n, "binary out") || elements(&a, 2, &na, "binary a")) goto done;
    if (PyLong_Check(other)) {
        long v = PyLong_AsLong(other);
        if (v < 0 || v > 0xffff) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "binary: the scalar is a 16-bit pattern");
            goto done;
        }
        s = (uint16_t)v;
    } else {
        if (PyObject_GetBuffer(other, &b, PyBUF_SIMPLE) < 0) goto done;
        have_b = 1;
        if (b.len != a.len) {
            PyErr_SetString(PyExc_ValueError, "binary: a and b differ in length");
            goto done;
        }
    }
    if (na != n) {
        PyErr_SetString(PyExc_ValueError, "binary: out and a differ in length");
        goto done;
    }
    if (overlap(&d, &a, 1) || (have_b && overlap(&d, &b, 1))) {
        result = Py_NewRef(Py_False);
        goto done;
    }
    binary_run(op, (uint16_t *)d.buf, (const uint16_t *)a.buf, have_b ? (const uint16_t *)b.buf : NULL, s, n);
    result = Py_NewRef(Py_True);
done:
    if (have_b) PyBuffer_Release(&b);
    PyBuffer_Release(&a);
    PyBuffer_Release(&d);
    return result;
}

static PyObject *py_sqrt(PyObject *self, PyObject *args) {
    Py_buffer d, a;
    if (!PyArg_ParseTuple(args, "w*y*", &d, &a)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n, na;
    if (elements(&d, 2, &n, "sqrt out") || elements(&a, 2, &na, "sqrt a")) goto done;
    if (na != n) {
        PyErr_SetString(PyExc_ValueError, "sqrt: out and a differ in length");
        goto done;
    }
    if (overlap(&d, &a, 1)) {
        result = Py_NewRef(Py_False);
        goto done;
    }
#if HAVE_X86_SIMD
    if (use_simd) sqrt_simd((uint16_t *)d.buf, (const uint16_t *)a.buf, n);
    else
#endif
        sqrt_portable((uint16_t *)d.buf, (const uint16_t *)a.buf, 0, n);
    result = Py_NewRef(Py_True);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&d);
    return result;
}

/* tree_sum(out, x, saturate): out[r] = the pairwise tree over row r of x ([rows, width], width a power
 * of two >= 2, rows = len(out)); each level rounded to half, and saturated when asked. The rows are
 * contiguous and of even width, so one level of every row is one pairwise pass over the whole buffer. */
static PyObject *py_tree_sum(PyObject *self, PyObject *args) {
    Py_buffer d, x;
    int saturate;
    if (!PyArg_ParseTuple(args, "w*y*p", &d, &x, &saturate)) return NULL;
    PyObject *result = NULL;
    uint16_t *level = NULL;
    Py_ssize_t rows, total;
    if (elements(&d, 2, &rows, "tree_sum out") || elements(&x, 2, &total, "tree_sum x")) goto done;
    if (rows == 0 || total % rows) {
        PyErr_SetString(PyExc_ValueError, "tree_sum: x is not rows of equal width");
        goto done;
    }
    Py_ssize_t width = total / rows;
    if (width < 2 || (width & (width - 1))) {
        PyErr_Format(PyExc_ValueError, "tree_sum: the row width %zd is not a power of two >= 2", width);
        goto done;
    }
    level = (uint16_t *)PyMem_Malloc((size_t)(total / 2) * sizeof(uint16_t));
    if (!level) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t m = total / 2;
    pairs_run(level, (const uint16_t *)x.buf, m);
    if (saturate) saturate_run(level, m);
    for (; m > rows; m /= 2) { /* in place: level[i] is written after level[2i] and level[2i+1] are read */
        pairs_run(level, level, m / 2);
        if (saturate) saturate_run(level, m / 2);
    }
    memcpy(d.buf, level, (size_t)rows * sizeof(uint16_t));
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(level);
    PyBuffer_Release(&x);
    PyBuffer_Release(&d);
    return result;
}

/* acc (m x n) += a (m x k) @ b (k x n) for columns [j0, j1), element by element (see py_mmad). */
static void mmad_rows(float *cl, const float *al, const float *bl, Py_ssize_t m, Py_ssize_t k, Py_ssize_t n,
                      Py_ssize_t j0, Py_ssize_t j1, int wide) {
    for (Py_ssize_t i = 0; i < m; i++) {
        float *row = cl + i * n;
        for (Py_ssize_t kk = 0; kk < k; kk++) {
            const float av = al[i * k + kk], *brow = bl + kk * n;
            if (wide) {
                const double ad = (double)av;
                for (Py_ssize_t j = j0; j < j1; j++) row[j] = (float)((double)row[j] + ad * (double)brow[j]);
            } else {
                for (Py_ssize_t j = j0; j < j1; j++) row[j] = row[j] + av * brow[j];
            }
        }
    }
}

/* Columns [j0, j1) of every lane: each column's k steps are independent of the other columns', so column ranges
   can run on two threads and give the same bits. */
typedef struct {
    float *c;
    const float *a, *b;
    Py_ssize_t lanes, a_lanes, b_lanes, m, k, n, j0, j1;
    int wide;
} mmad_part;

static void *mmad_columns(void *arg) {
    const mmad_part *p = (const mmad_part *)arg;
    for (Py_ssize_t l = 0; l < p->lanes; l++) {
        const float *al = p->a + (p->a_lanes == 1 ? 0 : l) * p->m * p->k;
        const float *bl = p->b + (p->b_lanes == 1 ? 0 : l) * p->k * p->n;
        float *cl = p->c + l * p->m * p->n;
        Py_ssize_t done = p->j0;
#if HAVE_X86_SIMD
        if (use_simd) done = mmad_simd(cl, al, bl, p->m, p->k, p->n, p->j0, p->j1, p->wide);
#endif
        mmad_rows(cl, al, bl, p->m, p->k, p->n, done, p->j1, p->wide);
    }
    return NULL;
}

/* mmad(acc, a, b, lanes, a_lanes, b_lanes, m, k, n, wide): acc[l] (m x n float32, in place) += a[l] (m x k) @ b[l]
   (k x n), float32 operands, one rounding to float32 per addition, k ascending for every element (the order of
   fusekit.asc.cube.mmad.product). wide: each product and sum in double, rounded to float32 (float inputs; the
   product of two floats is exact in double); else in float (half / bfloat16 inputs, whose products are exact in
   float). An operand of one lane (a_lanes or b_lanes 1) serves every lane. A fused multiply-add gives the same
   bits, the products being exact. */
static PyObject *py_mmad(PyObject *self, PyObject *args) {
    Py_buffer c, a, b;
    Py_ssize_t lanes, a_lanes, b_lanes, m, k, n;
    int wide;
    if (!PyArg_ParseTuple(args, "w*y*y*nnnnnnp", &c, &a, &b, &lanes, &a_lanes, &b_lanes, &m, &k, &n, &wide))
        return NULL;
    PyObject *result = NULL;
    if (c.len != (Py_ssize_t)(lanes * m * n * 4) || a.len != (Py_ssize_t)(a_lanes * m * k * 4) ||
        b.len != (Py_ssize_t)(b_lanes * k * n * 4) || (a_lanes != 1 && a_lanes != lanes) ||
        (b_lanes != 1 && b_lanes != lanes)) {
        PyErr_SetString(PyExc_ValueError, "mmad: buffer sizes do not match lanes x m x k x n");
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    mmad_part whole = {(float *)c.buf, (const float *)a.buf, (const float *)b.buf, lanes, a_lanes, b_lanes, m, k, n,
                       0, n, wide};
    int split = 0;
#if MMAD_THREADS
    if (lanes * m * k * n >= MMAD_THREAD_WORK && n >= 16) { /* the upper half of the columns on a second thread */
        mmad_part upper = whole;
        upper.j0 = whole.j1 = n / 16 * 8;
        pthread_t helper;
        if (pthread_create(&helper, NULL, mmad_columns, &upper) == 0) {
            mmad_columns(&whole);
            pthread_join(helper, NULL);
            split = 1;
        } else {
            whole.j1 = n;
        }
    }
#endif
    if (!split) mmad_columns(&whole);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&b);
    PyBuffer_Release(&a);
    PyBuffer_Release(&c);
    return result;
}

static PyObject *py_to_float32(PyObject *self, PyObject *args) {
    Py_buffer d, a;
    if (!PyArg_ParseTuple(args, "w*y*", &d, &a)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n, na;
    if (elements(&d, 4, &n, "to_float32 out") || elements(&a, 2, &na, "to_float32 a")) goto done;
    if (na != n) {
        PyErr_SetString(PyExc_ValueError, "to_float32: out and a differ in length");
        goto done;
    }
    if (overlap(&d, &a, 0)) {
        result = Py_NewRef(Py_False);
        goto done;
    }
#if HAVE_X86_SIMD
    if (use_simd) to_f32_simd((uint32_t *)d.buf, (const uint16_t *)a.buf, n);
    else
#endif
        to_f32_portable((uint32_t *)d.buf, (const uint16_t *)a.buf, 0, n);
    result = Py_NewRef(Py_True);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&d);
    return result;
}

static PyObject *py_to_float16(PyObject *self, PyObject *args) {
    Py_buffer d, a;
    if (!PyArg_ParseTuple(args, "w*y*", &d, &a)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t n, na;
    if (elements(&d, 2, &n, "to_float16 out") || elements(&a, 4, &na, "to_float16 a")) goto done;
    if (na != n) {
        PyErr_SetString(PyExc_ValueError, "to_float16: out and a differ in length");
        goto done;
    }
    if (overlap(&d, &a, 0)) {
        result = Py_NewRef(Py_False);
        goto done;
    }
#if HAVE_X86_SIMD
    if (use_simd) to_half_simd((uint16_t *)d.buf, (const uint32_t *)a.buf, n);
    else
#endif
        to_half_portable((uint16_t *)d.buf, (const uint32_t *)a.buf, 0, n);
    result = Py_NewRef(Py_True);
done:
    PyBuffer_Release(&a);
    PyBuffer_Release(&d);
    return result;
}

static PyObject *py_isa(PyObject *self, PyObject *noargs) {
    return PyUnicode_FromString(use_simd ? "avx2+f16c" : "portable");
}

/* set_simd(flag) -> bool: use the SIMD loops (when the CPU has them) or the portable ones; returns the
 * previous setting. For the tests, which check both paths against numpy. */
static PyObject *py_set_simd(PyObject *self, PyObject *args) {
    int flag;
    if (!PyArg_ParseTuple(args, "p", &flag)) return NULL;
    int previous = use_simd;
    use_simd = flag && cpu_has_simd();
    return PyBool_FromLong(previous);
}

static PyMethodDef methods[] = {
    {"binary", py_binary, METH_VARARGS,
     "binary(op, out, a, b) -> bool: out = a op b on float16 bit patterns (op 0 add, 1 sub, 2 mul, 3 div); b "
     "is a buffer of a's length or one 16-bit pattern (int) for every lane. False, with nothing written, when "
     "out overlaps a or b other than as the same bytes."},
    {"sqrt", py_sqrt, METH_VARARGS,
     "sqrt(out, a) -> bool: out = sqrt(a) on float16 bit patterns; False as for binary."},
    {"tree_sum", py_tree_sum, METH_VARARGS,
     "tree_sum(out, x, saturate): the pairwise sum of each row of x (float16, width a power of two >= 2), "
     "every level rounded to half (and saturated to +-65504, NaN -> 0, when saturate)."},
    {"to_float32", py_to_float32, METH_VARARGS,
     "to_float32(out, a) -> bool: float16 -> float32, exact; False, with nothing written, when out overlaps a."},
    {"to_float16", py_to_float16, METH_VARARGS,
     "to_float16(out, a) -> bool: float32 -> float16, to nearest even; False as for to_float32."},
    {"mmad", py_mmad, METH_VARARGS,
     "mmad(acc, a, b, lanes, a_lanes, b_lanes, m, k, n, wide): acc += a @ b on float32 lanes, rounded to float32 "
     "after every addition, k ascending (wide: each step in double)."},
    {"isa", py_isa, METH_NOARGS, "isa() -> 'avx2+f16c' or 'portable': the loops in use."},
    {"set_simd", py_set_simd, METH_VARARGS, "set_simd(flag) -> previous flag: choose the SIMD or portable loops."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native",
    "float16 arithmetic through float32, rounded once (see fusekit.asc.native).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    use_simd = cpu_has_simd();
    return PyModule_Create(&module);
}
