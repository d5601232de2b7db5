"""The cube unit from C++ (include/fusekit/cube.h): a matmul in Ascend C gives the outputs and the Trace of its pyasc
twin (tests/cube/cube_kernels.py: matmul) for half and int8; its errors name the C++ call and line; the kernel type
comes from the declaration (__cube__, __mix__(c, v), KERNEL_TASK_TYPE_DEFAULT) and plans the launch as a pyasc
kernel's does, cross-core flags included; Fixpipe's cbufWorkspace form takes per-column scales from L1; asc-devkit's
own cube examples run with their own scripts when a checkout is at hand."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from cpp_paths import SOURCES

import fusekit
from fusekit import asc
from fusekit.asc import KernelError
from fusekit.cpp import CompileError, conformance, load

import twins
from cube.cube_kernels import ceil_to, conv2d, pack_conv2d, run_matmul

Q = asc.QuantModes


@pytest.fixture(scope="module")
def library():
    return load(SOURCES / "cube_matmul.cpp")


def _cpp_matmul(kernel, a, b, out_dtype, *, base_k, quant=Q.NoQuant, deq=0, bias=None, relu=False, barrier=True,
                hf32=False):
    """C = a @ b (+ bias) through a kernel of cube_matmul.cpp, with the arguments run_matmul gives the pyasc one."""
    (m, k), n = a.shape, b.shape[1]
    c = np.zeros((m, n), out_dtype)
    # the kernel's GlobalTensor<Bias> types the row (int32 for int8), whether it is read or not
    row = np.zeros(ceil_to(n, 16), np.int32 if a.dtype == np.int8 else np.float32)
    if bias is not None:
        row[:n] = bias
    result = kernel[1](a, np.ascontiguousarray(b.T), c, row, m, n, k, base_k, int(quant), deq, bias is not None, relu,
                       barrier, hf32)
    return c, result


def _float_reference(a, b, bias):
    """C in the order fusekit's Mmad documents (fusekit.asc.cube.mmad): from the bias row, the k products of each
    element added in ascending k, each sum rounded to float32 (half products are exact in float32)."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    acc = np.broadcast_to(np.float32(0) if bias is None else bias, (a.shape[0], b.shape[1])).astype(np.float32)
    for kk in range(a.shape[1]):
        acc = acc + a32[:, kk:kk + 1] * b32[kk:kk + 1, :]
    return acc


HALF_SCALE = 0x3F000000  # deq_scalar: M1 = 0.5 (bits 0-31 as a float, 随路量化.md 表1), no shift, no offset


# (kernel, A's dtype, C's dtype, quant, deq, bias, relu): half out as float and as half (F322F16 with ReLU), int8
# out as int32 and as half (DEQF16), with and without the bias row; m, k, n leave tails in every fractal dimension
# and in K's last step
CASES = [
    ("matmul_f16_f32", np.float16, np.float32, Q.NoQuant, 0, True, False),
    ("matmul_f16_f32", np.float16, np.float32, Q.NoQuant, 0, False, False),
    ("matmul_f16_f16", np.float16, np.float16, Q.F322F16, 0, True, True),
    ("matmul_s8_s32", np.int8, np.int32, Q.NoQuant, 0, True, False),
    ("matmul_s8_f16", np.int8, np.float16, Q.DEQF16, HALF_SCALE, False, False),
]


@pytest.mark.parametrize("kernel, dtype, out, quant, deq, with_bias, relu", CASES)
def test_matmul_same_outputs_and_trace_as_the_pyasc_twin(library, rng, kernel, dtype, out, quant, deq, with_bias,
                                                        relu):
    m, k, n = 40, 100, 40
    integer = np.dtype(dtype).kind == "i"
    base_k = 64 if integer else 32  # int8: two K steps (64, 36); half: four (32, 32, 32, 4)
    if integer:
        a, b = rng.integers(-8, 8, (m, k)).astype(dtype), rng.integers(-8, 8, (k, n)).astype(dtype)
        bias = rng.integers(-100, 100, n).astype(np.int32) if with_bias else None
    else:
        a, b = rng.uniform(-1, 1, (m, k)).astype(dtype), rng.uniform(-1, 1, (k, n)).astype(dtype)
        bias = rng.uniform(-1, 1, n).astype(np.float32) if with_bias else None
    given = dict(base_k=base_k, quant=quant, deq=deq, bias=bias, relu=relu)
    c_cpp, cpp = _cpp_matmul(library[kernel], a, b, out, **given)
    c_py, py = run_matmul(a, b, out, **given)
    # the NPU's result, independently of both runs
    if integer:
        exact = a.astype(np.int64) @ b.astype(np.int64) + (0 if bias is None else bias)
        expected = exact.astype(np.int32) if quant is Q.NoQuant else (exact.astype(np.float32) * np.float32(0.5)).astype(
            np.float16)
    else:
        acc = _float_reference(a, b, bias)
        expected = acc if quant is Q.NoQuant else np.maximum(acc, np.float32(0)).astype(np.float16)
    assert np.array_equal(c_cpp, expected) and np.array_equal(c_cpp.view(np.uint8), c_py.view(np.uint8))
    assert cpp.trace.core_kind == py.trace.core_kind == "AIC"
    assert twins.instructions(cpp.trace) == twins.instructions(py.trace) and all(cpp.trace.cores)
    ops = {i.op for i in cpp.trace.cores[0]}
    assert {"data_copy", "load_data", "mmad", "fixpipe"} <= ops


def test_hf32_matmul_same_as_the_pyasc_twin(library, rng):
    a, b = rng.uniform(-1, 1, (24, 40)).astype(np.float32), rng.uniform(-1, 1, (40, 32)).astype(np.float32)
    c_cpp, cpp = _cpp_matmul(library.matmul_f32_f32, a, b, np.float32, base_k=16, hf32=True)
    c_py, py = run_matmul(a, b, np.float32, base_k=16, hf32=True)
    c_fp32, _ = _cpp_matmul(library.matmul_f32_f32, a, b, np.float32, base_k=16)
    assert np.array_equal(c_cpp, c_py) and not np.array_equal(c_cpp, c_fp32)  # HF32 rounds the inputs: other bits
    assert cpp.trace.cores[0][0].op == "set_hf32_mode"
    assert twins.instructions(cpp.trace) == twins.instructions(py.trace)


def test_trace_and_errors_name_the_cpp_lines(library, rng):
    a, b = rng.uniform(-1, 1, (16, 32)).astype(np.float16), rng.uniform(-1, 1, (32, 16)).astype(np.float16)
    _, result = _cpp_matmul(library.matmul_f16_f32, a, b, np.float32, base_k=32)
    source = (SOURCES / "cube_matmul.cpp").read_text().splitlines()
    for op, call in (("mmad", "Mmad("), ("load_data", "LoadData("), ("fixpipe", "Fixpipe(")):
        instr = next(i for i in result.trace.cores[0] if i.op == op)
        assert instr.file.endswith("cube_matmul.cpp") and call in source[instr.line - 1], op


# a kernel's cube call that breaks a documented rule, and what the KernelError says
BAD_CALLS = [
    ("Mmad", "LocalTensor<int8_t> a(TPosition::A2, 0, 512), b(TPosition::B2, 0, 512);\n"
             "    LocalTensor<float> c(TPosition::CO1, 0, 256);\n"
             "    Mmad(c, a, b, MmadParams(16, 16, 32));", "int8 x int8 -> float32 is not a Mmad", "api"),
    ("Mmad", "LocalTensor<float> a(TPosition::A2, 0, 128), b(TPosition::B2, 0, 128);\n"
             "    LocalTensor<float> c(TPosition::CO1, 0, 256);\n"
             "    MmadParams p(16, 16, 8);\n"
             "    p.kDirectionAlign = true;\n"
             "    Mmad(c, a, b, p);", "kDirectionAlign = true", "unsupported"),
    ("LoadData", "GlobalTensor<float> g;\n"
                 "    g.SetGlobalBuffer((__gm__ float*)x, 256);\n"
                 "    LocalTensor<float> a(TPosition::A2, 0, 256);\n"
                 "    LoadData(a, g, LoadData2DParams{0, 1, 0, 0, 0, false, 0});", "GM -> L0 loads are not simulated",
     "api"),
    ("Fixpipe", "GlobalTensor<float> g;\n"
                "    g.SetGlobalBuffer((__gm__ float*)x, 256);\n"
                "    LocalTensor<float> c(TPosition::CO1, 0, 256);\n"
                "    Fixpipe(g, c, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t::F322F16));",
     "converts float32 -> float16, not float32 -> float32", "api"),
]


@pytest.mark.parametrize("call, code, message, kind", BAD_CALLS)
def test_a_cube_kernel_error_names_the_cpp_call_and_line(tmp_path, call, code, message, kind):
    source = tmp_path / "bad_cube.cpp"
    source.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                      f"__global__ __cube__ void bad(GM_ADDR x) {{\n    {code}\n}}\n")
    with pytest.raises(KernelError) as caught:
        load(source).bad[1](np.zeros(256, np.float32))
    error = caught.value
    lines = source.read_text().splitlines()
    assert error.op == call and error.file == str(source) and f"{call}(" in lines[error.line - 1]
    assert str(error).startswith(f"{call} on aic(0) at {source}:{error.line}: ") and message in str(error)
    assert error.kind.value == kind


@pytest.mark.parametrize("kernel", ["mix_ids", "mix_ids_task_type"])
def test_a_mix_declaration_plans_the_launch_as_pyasc_does(rng, kernel):
    library = load(SOURCES / "cube_kinds.cpp")
    assert library[kernel].options["kernel_type"] == "MIX_AIC_1_2"
    y_cpp, y_py = np.full(2 * 3 * 8, -1, np.float32), np.full(2 * 3 * 8, -1, np.float32)
    cpp = library[kernel][3](y_cpp).trace
    py = twins.mix_ids[3](y_py).trace
    # 3 blocks of two AIVs (GetBlockIdx 0..5, written to y) and one AIC each, AIVs first
    assert cpp.kinds == py.kinds == ("AIV",) * 6 + ("AIC",) * 3
    assert np.array_equal(y_cpp, np.repeat(np.arange(6, dtype=np.float32), 8)) and np.array_equal(y_cpp, y_py)
    assert twins.instructions(cpp) == twins.instructions(py)


def test_kernel_types_the_launch_refuses_name_the_cpp_declaration(library, tmp_path):
    a = np.zeros((16, 32), np.float16)
    with pytest.raises(KernelError) as caught:  # arch 2002: no separate AIC
        library.matmul_f16_f32[1](a, a, np.zeros((16, 16), np.float32), np.zeros(16, np.float32), 16, 16, 32, 32, 0, 0,
                                  False, False, True, False, soc="Ascend310P3")
    line = next(k for k, text in enumerate((SOURCES / "cube_matmul.cpp").read_text().splitlines(), 1)
                if "void matmul_f16_f32(" in text)
    assert str(caught.value).startswith(f"launch: __cube__ kernel matmul_f16_f32 (cube_matmul.cpp:{line}) on "
                                        "Ascend310P3: arch 2002 couples the cube unit with the vector unit")
    source = tmp_path / "odd_mix.cpp"
    source.write_text('#include "kernel_operator.h"\n__global__ __mix__(2, 1) void odd(GM_ADDR x) {}\n')
    with pytest.raises(KernelError, match=r"__mix__\(2, 1\) kernel odd \(odd_mix.cpp:2\): unknown kernel type"):
        load(source).odd[1](np.zeros(8, np.float32))


# asc-devkit's cube examples (examples/01_simd_cpp_api/03_basic_api/), run as their READMEs run them, judged by their
# own gen_data.py and verify_result.py (fusekit.cpp.conformance); found through $FUSEKIT_ASC_DEVKIT_CHECKOUT only
CHECKOUT = os.environ.get("FUSEKIT_ASC_DEVKIT_CHECKOUT")
BASIC_API = Path(CHECKOUT or ".") / "examples" / "01_simd_cpp_api" / "03_basic_api"


@pytest.mark.skipif(not CHECKOUT or not BASIC_API.is_dir(),
                    reason="no asc-devkit checkout (set FUSEKIT_ASC_DEVKIT_CHECKOUT to a clone of cann/asc-devkit)")
@pytest.mark.parametrize("example, scenario", [
    ("03_matrix_compute/mmad_gemv", None),      # M = 1: GEMV, A read as one ND row
    ("03_matrix_compute/mmad_unitflag", None),  # the default build (unitFlag off)
    ("03_matrix_compute/fixpipe_l0c2gm", 1),    # NZ2NZ, float
    ("03_matrix_compute/fixpipe_l0c2gm", 4),    # NZ2ND, float -> int8 with a scalar scale (QF322B8_PRE)
    ("03_matrix_compute/fixpipe_l0c2gm", 5),    # NZ2ND, float -> int8, per-column scales from L1 (cbufWorkspace)
    ("03_matrix_compute/fixpipe_l0c2gm", 7),    # NZ, float, channel split
    ("00_data_movement/data_copy_gm2l1", 1),    # an Nz input into L1 as it is; the bias and scale inputs nullptr
    ("00_data_movement/data_copy_gm2l1", 4),    # ND2NZ, with the bias row (L1 -> bias table)
    ("00_data_movement/data_copy_gm2l1", 5),    # ND2NZ, float -> int8 with per-column scales
])
def test_an_asc_devkit_cube_example_passes_its_own_verify_script(example, scenario):
    source = BASIC_API / example / f"{example.rsplit('/', 1)[1]}.asc"
    row = conformance.run_example(conformance.Example(source, scenario))
    assert row.verdict == "passed", f"{row.verdict}: {row.reason}"


PER_COLUMN = """#include "kernel_operator.h"
using namespace AscendC;
// C = A (16 x 32) x B (32 x 16), int8 -> int32, out as int8 through Fixpipe's per-column scales (VREQ8, one uint64
// per column in L1: the cbufWorkspace form), with the template arguments written out; static tensors, flags
__global__ __cube__ void per_column(GM_ADDR a, GM_ADDR bt, GM_ADDR scales, GM_ADDR c) {
    GlobalTensor<int8_t> aGm, bGm, cGm;
    GlobalTensor<uint64_t> sGm;
    aGm.SetGlobalBuffer((__gm__ int8_t*)a);
    bGm.SetGlobalBuffer((__gm__ int8_t*)bt);
    sGm.SetGlobalBuffer((__gm__ uint64_t*)scales);
    cGm.SetGlobalBuffer((__gm__ int8_t*)c);
    LocalTensor<int8_t> a1(TPosition::A1, 0, 512), b1(TPosition::B1, 512, 512);
    LocalTensor<uint64_t> ws(TPosition::C1, 1024, 16);
    LocalTensor<int8_t> a2(TPosition::A2, 0, 512), b2(TPosition::B2, 0, 512);
    LocalTensor<int32_t> c1(TPosition::CO1, 0, 256);
    DataCopy(a1, aGm, Nd2NzParams{1, 16, 32, 0, 32, 16, 1, 0});
    DataCopy(b1, bGm, Nd2NzParams{1, 16, 32, 0, 32, 16, 1, 0});
    DataCopy(ws, sGm, 16);
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    LoadData(a2, a1, LoadData2DParams{0, 1, 1, 0, 0, false, 0});
    LoadData(b2, b1, LoadData2DParams{0, 1, 1, 0, 0, false, 0});
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams{16, 16, 32, 0, false, true});
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    SetFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_FIX>(EVENT_ID0);
    Fixpipe<int8_t, int32_t, CFG_ROW_MAJOR>(cGm, c1, ws, FixpipeParamsV220(16, 16, 16, 16, QuantMode_t::VREQ8));
}
"""


def test_fixpipe_per_column_scales_from_l1(tmp_path, rng):
    source = tmp_path / "per_column.cpp"
    source.write_text(PER_COLUMN)
    a, b = rng.integers(-8, 8, (16, 32)).astype(np.int8), rng.integers(-8, 8, (32, 16)).astype(np.int8)
    m1 = np.float32(2.0) ** np.arange(-4, 12, dtype=np.float32)  # powers of two: no mantissa bits to drop
    scales = m1.view(np.uint32).astype(np.uint64) | np.uint64(1 << 46)  # bit 46: an int8 destination (随路量化.md 表1)
    c = np.zeros((16, 16), np.int8)
    kernel = load(source).per_column
    report = fusekit.sanitize(kernel)[1](a, np.ascontiguousarray(b.T), scales, c)
    assert report.ok, report.to_text()
    x = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32) * m1
    assert np.array_equal(c, np.clip(np.clip(np.rint(x), -256, 255), -128, 127).astype(np.int8))
    assert np.abs(x).max() > 127  # the larger scales saturate: the clip was exercised


def test_a_mix_kernel_with_cross_core_flags_matches_its_pyasc_twin(rng):
    kernel = load(SOURCES / "cube_kinds.cpp").matmul_leaky_relu
    blocks, tile = 3, twins.TILE
    a = rng.standard_normal((blocks * tile, tile)).astype(np.float16)
    b = rng.standard_normal((tile, tile)).astype(np.float16)
    bt = np.ascontiguousarray(b.T)
    runs = []
    for launch in (fusekit.sanitize(kernel), fusekit.sanitize(twins.matmul_leaky_relu)):
        work, y = np.zeros((blocks * tile, tile), np.float32), np.zeros((blocks * tile, tile), np.float32)
        report = launch[blocks](a, bt, work, y)
        assert report.ok, report.to_text()  # the flags order the AIC's Fixpipe before its AIVs' reads
        runs.append((y, report.trace))
    (y_cpp, cpp), (y_py, py) = runs
    acc = np.concatenate([_float_reference(a[k * tile:(k + 1) * tile], b, None) for k in range(blocks)])
    assert np.array_equal(y_cpp, np.where(acc >= 0, acc, acc * np.float32(0.1)).astype(np.float32))
    assert np.array_equal(y_cpp, y_py) and twins.instructions(cpp) == twins.instructions(py)
    assert cpp.kinds == ("AIV",) * 6 + ("AIC",) * 3


CONV = """#include "kernel_operator.h"
using namespace AscendC;
// conv2d through img2col (LoadData_3D.md): x (Cin 20 -> C1 2, 7 x 6) in NC1HWC0 half, a 3 x 3 filter, stride 1,
// pad 1, 24 output channels (N 32 in Nz); A's feature map and pad value from SetFmatrix / SetLoadDataPaddingValue
// (IsResetLoad3dConfig {false, false}), B (K x N in Nz) loaded into L0B as an H = K, W = 1 feature map
constexpr uint32_t C1 = 2, H = 7, W = 6, C0 = 16, K = C1 * 9 * C0, N = 24, NP = 32, M = 42, MP = 48;
constexpr IsResetLoad3dConfig FROM_REGISTERS = {false, false};
__global__ __cube__ void conv(GM_ADDR x, GM_ADDR wt, GM_ADDR y) {
    GlobalTensor<half> xGm, wGm;
    GlobalTensor<float> yGm;
    xGm.SetGlobalBuffer((__gm__ half*)x);
    wGm.SetGlobalBuffer((__gm__ half*)wt);
    yGm.SetGlobalBuffer((__gm__ float*)y);
    LocalTensor<half> fmap(TPosition::A1, 0, C1 * H * W * C0), weights(TPosition::B1, 3072, K * NP);
    LocalTensor<half> a2(TPosition::A2, 0, MP * K), b2(TPosition::B2, 0, K * NP);
    LocalTensor<float> c1(TPosition::CO1, 0, MP * NP);
    DataCopy(fmap, xGm, C1 * H * W * C0);
    DataCopy(weights, wGm, Nd2NzParams{1, K, NP, 0, NP, K, 1, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    uint8_t pads[PAD_SIZE] = {1, 1, 1, 1};
    SetFmatrix(H, W, pads, FmatrixMode::FMATRIX_LEFT);
    SetLoadDataPaddingValue(half(0));
    SetLoadDataRepeat({0, 1, 0});
    SetLoadDataBoundary(0);
    LoadData3DParamsV2<half> a;
    a.channelSize = C1 * C0;
    a.kExtension = K;
    a.mExtension = M;
    a.filterW = 3;
    a.filterH = 3;
    LoadData<half, FROM_REGISTERS>(a2, fmap, a);
    uint8_t none[PAD_SIZE] = {0, 0, 0, 0};
    LoadData(b2, weights, LoadData3DParamsV2<half>(none, K, 1, NP, NP, K, 0, 0, 1, 1, 1, 1, 1, 1, false, false, half(0)));
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams{M, N, K, 0, false, true});
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe(yGm, c1, FixpipeParamsV220(N, M, MP, N));
}
"""


def test_conv2d_through_img2col_same_bits_as_in_python(tmp_path, rng):
    """The img2col conv in C++ (SetFmatrix, SetLoadDataPaddingValue, LoadData<T, {false, false}>, LoadData3DParamsV2
    into L0B) gives the bits of the pyasc one (tests/cube/cube_kernels.py: conv2d), its sanitizer run clean."""
    x = rng.standard_normal((20, 7, 6)).astype(np.float16)
    weight = rng.standard_normal((24, 20, 3, 3)).astype(np.float16)
    source = tmp_path / "conv.cpp"
    source.write_text(CONV)
    y = np.zeros((42, 24), np.float32)
    report = fusekit.sanitize(load(source).conv)[1](*pack_conv2d(x, weight), y)
    assert report.ok, report.to_text()
    assert np.array_equal(y.reshape(7, 6, 24).transpose(2, 0, 1), conv2d(x, weight, (1, 1), (1, 1), (1, 1)))


TRANSPOSED_B = """#include "kernel_operator.h"
using namespace AscendC;
// C = A x B with B given K x N (not transposed) in GM: ND2NZ into L1 (Nz), then LoadDataWithTranspose into L0B's Zn
// (LoadDataWithTranspose.md: a half square is one 16 x 16 fractal, an int8 square two 16 x 32 fractals one above the
// other); every tensor from a LocalMemAllocator of its memory (LocalMemAllocator简介.md)
template <class T, class C, uint32_t M, uint32_t K, uint32_t N, uint32_t SQUARES>
__aicore__ inline void Run(GM_ADDR a, GM_ADDR b, GM_ADDR c) {
    GlobalTensor<T> aGm, bGm;
    GlobalTensor<C> cGm;
    aGm.SetGlobalBuffer((__gm__ T*)a);
    bGm.SetGlobalBuffer((__gm__ T*)b);
    cGm.SetGlobalBuffer((__gm__ C*)c);
    LocalMemAllocator<Hardware::L1> l1;
    LocalMemAllocator<Hardware::L0A> l0a;
    LocalMemAllocator<Hardware::L0B> l0b;
    LocalMemAllocator<Hardware::L0C> l0c;
    LocalTensor<T> a1 = l1.Alloc<TPosition::A1, T>(M * K), b1 = l1.Alloc<TPosition::B1, T>(K * N);
    LocalTensor<T> a2 = l0a.Alloc<TPosition::A2, T>(M * K);
    LocalTensor<T> b2 = l0b.Alloc<TPosition::B2, T>(K * N);
    LocalTensor<C> c1 = l0c.Alloc<C>(M * N);  // without pos: the memory's own (CO1)
    DataCopy(a1, aGm, Nd2NzParams{1, M, K, 0, K, M, 1, 0});
    DataCopy(b1, bGm, Nd2NzParams{1, K, N, 0, N, K, 1, 0});
    SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
    LoadData(a2, a1, LoadData2DParams{0, K * sizeof(T) / 32, 1, 0, 0, false, 0});
    LoadDataWithTranspose(b2, b1, LoadData2dTransposeParams{0, SQUARES, 1, 0, 0});
    SetFlag<HardEvent::MTE1_M>(EVENT_ID0);
    WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
    Mmad(c1, a2, b2, MmadParams{M, N, K, 0, false, true});
    SetFlag<HardEvent::M_FIX>(EVENT_ID0);
    WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
    Fixpipe(cGm, c1, FixpipeParamsV220(N, M, M, N));
}
// half: B 32 x 16 is two squares (k blocks); int8: B 32 x 32 is one 32 x 32 square
__global__ __cube__ void half_b(GM_ADDR a, GM_ADDR b, GM_ADDR c) { Run<half, float, 16, 32, 16, 2>(a, b, c); }
__global__ __cube__ void int8_b(GM_ADDR a, GM_ADDR b, GM_ADDR c) { Run<int8_t, int32_t, 16, 32, 32, 1>(a, b, c); }
"""


@pytest.mark.parametrize("kernel, dtype, out, n", [("half_b", np.float16, np.float32, 16),
                                                   ("int8_b", np.int8, np.int32, 32)])
def test_load_data_with_transpose_from_cpp_loads_b_as_given(tmp_path, rng, kernel, dtype, out, n):
    source = tmp_path / "transposed_b.cpp"
    source.write_text(TRANSPOSED_B)
    a, b = rng.integers(-8, 8, (16, 32)).astype(dtype), rng.integers(-8, 8, (32, n)).astype(dtype)
    c = np.zeros((16, n), out)
    report = fusekit.sanitize(load(source)[kernel])[1](a, b, c)
    assert report.ok, report.to_text()
    assert np.array_equal(c, a.astype(np.int64) @ b.astype(np.int64))  # small integers: exact in every dtype


def test_load_data_with_transpose_refusals_name_the_cpp_call(tmp_path):
    source = tmp_path / "bad_transpose.cpp"
    source.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                      "__global__ __cube__ void bad(GM_ADDR x) {\n"
                      "    LocalTensor<half> a(TPosition::A1, 0, 256), b(TPosition::B1, 512, 256);\n"
                      "    LoadDataWithTranspose(a, b, LoadData2dTransposeParams{0, 1, 0, 0, 0});\n}\n")
    with pytest.raises(KernelError) as caught:
        load(source).bad[1](np.zeros(8, np.float32))
    assert caught.value.op == "LoadDataWithTranspose" and caught.value.line == 5
    assert "L0A / L0B (TPosition.A2 / B2)" in str(caught.value)


def test_int4b_t_compiles_where_named_and_is_refused_as_a_tensor(tmp_path):
    """asc-devkit's samples branch on IsSameType<T, int4b_t>: that compiles; a tensor of it stops the compile with
    the reason (fusekit has no 4-bit dtype)."""
    named = tmp_path / "int4_named.cpp"
    named.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                     "template <class T> __aicore__ inline uint32_t C0() { return IsSameType<T, int4b_t>::value ? 64 : "
                     "32 / sizeof(T); }\n"
                     "__global__ __cube__ void c0(GM_ADDR x) {\n    GlobalTensor<int32_t> g;\n"
                     "    g.SetGlobalBuffer((__gm__ int32_t*)x);\n    g.SetValue(0, C0<int8_t>());\n"
                     "    g.SetValue(1, C0<half>());\n}\n")
    x = np.zeros(8, np.int32)
    load(named).c0[1](x)
    assert x[:2].tolist() == [32, 16]
    tensor = tmp_path / "int4_tensor.cpp"
    tensor.write_text('#include "kernel_operator.h"\nusing namespace AscendC;\n'
                      "__global__ __cube__ void t(GM_ADDR x) {\n    LocalTensor<int4b_t> a(TPosition::A1, 0, 64);\n}\n")
    with pytest.raises(CompileError, match=r"int4b_t tensors \(4-bit integers\) are not simulated by fusekit"):
        load(tensor)


# the static-tensor samples (LocalMemAllocator<Hardware::L1 / L0A / L0B / L0C>) and load_data_l12l0's scenarios that
# use only what is simulated (1 and 2 are int4b_t; 13 writes past its L0B tensor: docs/cube.md)
SIMD = Path(CHECKOUT or ".") / "examples" / "01_simd_cpp_api"


@pytest.mark.skipif(not CHECKOUT or not SIMD.is_dir(),
                    reason="no asc-devkit checkout (set FUSEKIT_ASC_DEVKIT_CHECKOUT to a clone of cann/asc-devkit)")
@pytest.mark.parametrize("example, scenario", [
    ("00_introduction/02_matrix/matmul_basic_api", None),                       # LocalMemAllocator<L1 ...>
    ("00_introduction/03_fusion_operation/matmul_leakyrelu_basic_api", None),   # ... in a mix kernel
    ("03_basic_api/03_matrix_compute/load_data_l12l0", 3),                      # int8, Load2D
    ("03_basic_api/03_matrix_compute/load_data_l12l0", 5),                      # int8, LoadDataWithTranspose
    ("03_basic_api/03_matrix_compute/load_data_l12l0", 9),                      # half, LoadDataWithTranspose
    ("03_basic_api/03_matrix_compute/load_data_l12l0", 11),                     # float, Load2D
])
def test_more_asc_devkit_cube_examples_pass_their_own_verify_script(example, scenario):
    source = SIMD / example / f"{example.rsplit('/', 1)[1]}.asc"
    row = conformance.run_example(conformance.Example(source, scenario))
    assert row.verdict == "passed", f"{row.verdict}: {row.reason}"


NATIVE_GM = """#include "kernel_operator.h"
using namespace AscendC;
// asc-devkit's CopyTiling: the kernel's own C++ reads its tiling through the GM pointer (fusekit.cpp.memory maps
// each GM buffer's bytes at its device address); `past` reads 64 KiB past the end of x, in the unmapped gap
struct Tiling { uint32_t m, n, scale; };
__global__ __cube__ void copy_tiling(GM_ADDR tilingGm, GM_ADDR y) {
    Tiling tiling;
    uint32_t* dst = reinterpret_cast<uint32_t*>(&tiling);
    auto src = reinterpret_cast<__gm__ uint32_t*>(tilingGm);
    for (uint32_t i = 0; i < sizeof(Tiling) / sizeof(uint32_t); ++i) dst[i] = *(src + i);
    *(src + 3) = tiling.m * tiling.n;  // a native write lands in the buffer too
    GlobalTensor<uint32_t> out;
    out.SetGlobalBuffer((__gm__ uint32_t*)y);
    out.SetValue(0, tiling.m * tiling.scale);
    out.SetValue(1, tiling.n * tiling.scale);
}
__global__ __cube__ void past(GM_ADDR x, GM_ADDR y) {
    GlobalTensor<uint32_t> out;
    out.SetGlobalBuffer((__gm__ uint32_t*)y);
    out.SetValue(0, *(reinterpret_cast<__gm__ volatile uint32_t*>(x) + 16384));
}
"""


def test_a_kernels_own_cpp_reads_and_writes_gm_through_its_pointer(tmp_path):
    source = tmp_path / "native_gm.cpp"
    source.write_text(NATIVE_GM)
    library = load(source)
    tiling, y = np.array([3, 5, 7, 0], np.uint32), np.zeros(8, np.uint32)
    library.copy_tiling[1](tiling, y)
    assert y[:2].tolist() == [21, 35] and tiling[3] == 15
    with pytest.raises(KernelError, match=r"crashed \(SIGSEGV\)"):  # past the buffer: a KernelError, not a dead process
        library.past[1](np.zeros(8, np.uint32), y)
