"""C++ kernels on the simulator: the same outputs and Trace as their pyasc twins, launched through fusekit's
launch API (numpy and torch arguments, sanitize, profile), with errors in the C++ source's terms."""

import time

import numpy as np
import pytest
from cpp_paths import SOURCES

import fusekit
from fusekit.asc import KernelError
from fusekit.cpp import CompileError, load

import twins

N, TILE, SCALE = 4096, 256, 1.5


@pytest.fixture(scope="module")
def library():
    return load(SOURCES / "fused_add_scale.cpp")


def _inputs(rng, n=N):
    return rng.uniform(-4, 4, n).astype(np.float16), rng.uniform(-4, 4, n).astype(np.float16)


def test_same_outputs_and_trace_as_the_pyasc_twin(library, rng):
    x1, x2 = _inputs(rng)
    y_cpp, y_py = np.zeros_like(x1), np.zeros_like(x1)
    cpp = library.fused_add_scale[8](x1, x2, y_cpp, N, TILE, SCALE).trace
    py = twins.fused_add_scale[8](x1, x2, y_py, N, TILE, SCALE).trace
    # the NPU's float16 arithmetic, independently: Add rounds the sum to float16, Muls the product
    expected = ((x1.astype(np.float32) + x2).astype(np.float16).astype(np.float32) * np.float32(SCALE)).astype(np.float16)
    assert np.array_equal(y_cpp.view(np.uint16), expected.view(np.uint16))
    assert np.array_equal(y_cpp.view(np.uint16), y_py.view(np.uint16))
    assert twins.instructions(cpp) == twins.instructions(py) and all(cpp.cores)


def test_trace_names_the_cpp_source_lines(library, rng):
    x1, x2 = _inputs(rng)
    trace = library.fused_add_scale[2](x1, x2, np.zeros_like(x1), N, TILE, SCALE).trace
    source = (SOURCES / "fused_add_scale.cpp").read_text().splitlines()
    adds = [i for i in trace.cores[0] if i.op == "add"]
    assert adds and all(i.file.endswith("fused_add_scale.cpp") for i in adds)
    assert "Add(y, a, b, tileLength)" in source[adds[0].line - 1]


def test_torch_arguments(library, rng):
    torch = pytest.importorskip("torch")
    x1, x2 = _inputs(rng)
    y = torch.zeros(N, dtype=torch.float16)
    library.fused_add_scale[8](torch.from_numpy(x1), torch.from_numpy(x2), y, N, TILE, SCALE)
    expected = np.zeros_like(x1)
    library.fused_add_scale[8](x1, x2, expected, N, TILE, SCALE)
    assert np.array_equal(y.numpy().view(np.uint16), expected.view(np.uint16))


def test_sanitize_and_profile_take_a_cpp_kernel(library, rng):
    x1, x2 = _inputs(rng)
    report = fusekit.sanitize(library.fused_add_scale)[8](x1, x2, np.zeros_like(x1), N, TILE, SCALE)
    assert report.ok, report.to_text()
    prof = fusekit.profile(library.fused_add_scale)[8](x1, x2, np.zeros_like(x1), N, TILE, SCALE)
    assert prof.kernel_time_us > 0


def test_kernel_error_names_the_cpp_file_line_and_core(library, rng):
    x1, x2 = _inputs(rng)
    with pytest.raises(KernelError) as caught:  # a tile of 100 halves is 200 B: not a whole 32 B block
        library.fused_add_scale[8](x1, x2, np.zeros_like(x1), N, 100, SCALE)
    error = caught.value
    assert error.file.endswith("fused_add_scale.cpp") and error.core == 0
    line = (SOURCES / "fused_add_scale.cpp").read_text().splitlines()[error.line - 1]
    assert "DataCopy" in line and str(error).startswith("DataCopy on aiv(0)")


@pytest.mark.parametrize("value, message", [(-1, "does not fit"), (2 ** 32, "does not fit"), (1.5, "takes an integer")])
def test_scalar_arguments_are_checked_against_the_cpp_type(library, rng, value, message):
    x1, x2 = _inputs(rng)
    with pytest.raises((TypeError, ValueError), match=message):
        library.fused_add_scale[8](x1, x2, np.zeros_like(x1), value, TILE, SCALE)


def test_wrong_argument_count_and_kinds(library, rng):
    x1, x2 = _inputs(rng)
    with pytest.raises(TypeError, match="fused_add_scale"):
        library.fused_add_scale[8](x1, x2, np.zeros_like(x1), N, TILE)
    with pytest.raises(TypeError, match="takes a numpy array"):
        library.fused_add_scale[8](x1, 3, np.zeros_like(x1), N, TILE, SCALE)
    with pytest.raises(KeyError, match="has no __global__ kernel 'nope'; it has fused_add_scale"):
        library["nope"]


def test_cached_rebuild_is_under_a_second():
    started = time.perf_counter()
    again = load(SOURCES / "fused_add_scale.cpp")
    assert again.build.cached and time.perf_counter() - started < 1.0


def test_a_call_fusekit_does_not_simulate_fails_at_compile_time_naming_it(tmp_path):
    source = tmp_path / "k.cpp"
    source.write_text('#include "kernel_operator.h"\n__global__ __aicore__ void k(GM_ADDR x) {\n'
                      "    AscendC::MmadWithSparse(x);\n}\n")
    with pytest.raises(CompileError) as caught:
        load(source)
    text = str(caught.value)
    assert f"{source}:3:" in text and "note: AscendC::MmadWithSparse is not simulated" in text


@pytest.mark.parametrize("code, hint", [
    ("AscendC::TPipe pipe; pipe.SyncIO();", "queues order the stages"),
    ("AscendC::TPipe pipe; AscendC::TQue<AscendC::TPosition::VECIN, 1> q; auto t = q.AllocTensor();",
     "needs its template argument"),
    ("data_copy(x, x, 8);", "in C++ it is AscendC::DataCopy"),
])
def test_compile_errors_name_the_users_line_with_a_hint(tmp_path, code, hint):
    source = tmp_path / "k.cpp"
    source.write_text(f'#include "kernel_operator.h"\n__global__ __aicore__ void k(GM_ADDR x) {{\n    {code}\n}}\n')
    with pytest.raises(CompileError) as caught:
        load(source)
    text = str(caught.value)
    assert f"{source}:3:" in text and hint in text
    assert "include/kernel_operator.h" not in text.splitlines()[0]


def test_no_compiler_names_the_install_command(tmp_path, monkeypatch):
    from fusekit.cpp import compiler

    monkeypatch.setenv("CXX", str(tmp_path / "no-such-g++"))
    compiler.compiler.cache_clear()
    try:
        with pytest.raises(CompileError, match="apt install g\\+\\+"):
            load(SOURCES / "fused_add_scale.cpp")
    finally:
        compiler.compiler.cache_clear()


MASK_FORM = """#include "kernel_operator.h"
__global__ __aicore__ void masked(GM_ADDR x, GM_ADDR y) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3072);
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 256);
    yg.SetGlobalBuffer((__gm__ float*)y, 256);
    AscendC::LocalTensor<float> a = buf.Get<float>(), b = a[256], c = a[512];
    AscendC::DataCopy(a, xg, 256);
    AscendC::Duplicate(b, 0.0f, 256);
    AscendC::Duplicate(c, 0.0f, 256);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(b, a, a, 32, 4, {1, 1, 1, 8, 8, 8});            // a braced BinaryRepeatParams
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(c, b, 3.0f, 16, 2, {2, 1, 8, 8});              // a braced UnaryRepeatParams
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(yg, c, 256);
}
"""


def test_mask_forms_with_braced_repeat_params(tmp_path, rng):
    source = tmp_path / "masked.cpp"
    source.write_text(MASK_FORM)
    x = rng.uniform(-4, 4, 256).astype(np.float32)
    y = np.zeros_like(x)
    load(source).masked[1](x, y)
    # Add: 4 repeats of the first 32 of 64 floats (repeat stride 8 blocks); x + x is exact
    b = np.zeros(256, np.float32)
    for r in range(4):
        b[r * 64:r * 64 + 32] = x[r * 64:r * 64 + 32] * 2
    # Muls: 2 repeats of 16 lanes, source blocks of 8 floats one after another, destination every other block
    expected = np.zeros(256, np.float32)
    for r in range(2):
        for lane in range(16):
            block, within = divmod(lane, 8)
            expected[r * 64 + 2 * block * 8 + within] = b[r * 64 + block * 8 + within] * np.float32(3)
    assert np.array_equal(y, expected)


PIPE_PTR = """#include "kernel_operator.h"
__aicore__ inline void CopyThrough(AscendC::LocalTensor<float>& t, AscendC::GlobalTensor<float>& x,
                                   AscendC::GlobalTensor<float>& y) {
    AscendC::DataCopy(t, x, 64);
    int32_t id = GetTPipePtr()->FetchEventID(AscendC::HardEvent::MTE2_MTE3);  // the kernel's TPipe, reached globally
    AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(id);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(id);
    AscendC::DataCopy(y, t, 64);
}
__global__ __aicore__ void through(GM_ADDR x, GM_ADDR y) {
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 256);
    AscendC::GlobalTensor<float> xg, yg;
    xg.SetGlobalBuffer((__gm__ float*)x, 64);
    yg.SetGlobalBuffer((__gm__ float*)y, 64);
    AscendC::LocalTensor<float> t = buf.Get<float>();
    CopyThrough(t, xg, yg);
}
"""


def test_get_tpipe_ptr_reaches_the_kernels_pipe(tmp_path, rng):
    source = tmp_path / "through.cpp"
    source.write_text(PIPE_PTR)
    x = rng.uniform(-1, 1, 64).astype(np.float32)
    y = np.zeros_like(x)
    report = fusekit.sanitize(load(source).through)[1](x, y)
    assert report.ok, report.to_text()
    assert np.array_equal(x, y)


@pytest.mark.parametrize("check", ['ASSERT(n % 8 == 0 && "n is whole blocks");',
                                   'ascendc_assert(n % 8 == 0, "n is whole blocks");'])
def test_kernel_assertions_stop_the_launch_at_their_line(tmp_path, check):
    source = tmp_path / "asserting.cpp"
    source.write_text('#include "kernel_operator.h"\n__global__ __aicore__ void k(GM_ADDR x, uint32_t n) {\n'
                      f"    {check}\n}}\n")
    kernel = load(source).k
    kernel[1](np.zeros(8, np.float32), 16)
    with pytest.raises(KernelError, match=r"ASSERT on aiv\(0\) at .*asserting.cpp:3: .*is false"):
        kernel[1](np.zeros(8, np.float32), 12)


CRASHING = """#include "kernel_operator.h"
extern "C" __global__ __aicore__ void crash(GM_ADDR x, uint32_t mode) {
    AscendC::TPipe pipe;
    if (AscendC::GetBlockIdx() == 1) {
        if (mode == 1) { volatile int* p = nullptr; *p = 1; }
        if (mode == 2) { volatile uint32_t zero = 0; volatile uint32_t q = 5 / zero; (void)q; }
        if (mode == 3) { ((volatile float*)x)[262144] = 3; }  // 1 MiB past x: the unmapped gap after its buffer
    }
}
"""


@pytest.mark.parametrize("mode, signal", [(1, "SIGSEGV"), (2, "SIGFPE"), (3, "SIGSEGV")])
def test_a_crash_in_kernel_code_is_a_kernel_error_and_python_goes_on(tmp_path, mode, signal):
    source = tmp_path / "crash.cpp"
    source.write_text(CRASHING)
    kernel = load(source).crash
    with pytest.raises(KernelError) as caught:
        kernel[2](np.zeros(8, np.float32), mode)
    assert caught.value.core == 1 and caught.value.line == 4 and f"crashed ({signal})" in str(caught.value)
    kernel[2](np.zeros(8, np.float32), 0)  # the library and the process are fine


CHOSEN = """#include "kernel_operator.h"
#define KERNEL_ARGS GM_ADDR x, uint32_t n
#if SCENARIO_NUM == 1
__global__ __aicore__ void kern(KERNEL_ARGS) { AscendC::GetBlockIdx(); }
#else
__global__ __aicore__ void kern(GM_ADDR x) { AscendC::GetBlockIdx(); }
#endif
#if 0
__global__ __aicore__ void old_kernel(GM_ADDR x) {}
#endif
"""


@pytest.mark.parametrize("defines, params, line", [({"SCENARIO_NUM": "1"}, ("x", "n"), 4), ({}, ("x",), 6)])
def test_kernels_are_the_ones_the_preprocessor_keeps(tmp_path, defines, params, line):
    source = tmp_path / "chosen.cpp"
    source.write_text(CHOSEN)
    library = load(source, defines)
    assert list(library.kernels) == ["kern"] and library.kern.decl.params == params and library.kern.decl.line == line


NULL_INPUT = """#include "kernel_operator.h"
using namespace AscendC;
__global__ __aicore__ void k(GM_ADDR x, GM_ADDR unused, uint32_t read) {
    GlobalTensor<float> xg, ug;
    xg.SetGlobalBuffer((__gm__ float*)x, 64);
    ug.SetGlobalBuffer((__gm__ float*)unused);  // nullptr: legal until the tensor is used
    LocalTensor<float> t(TPosition::VECCALC, 0, 64);
    DataCopy(t, read ? ug : xg, 64);
    SetFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    WaitFlag<HardEvent::MTE2_MTE3>(EVENT_ID0);
    DataCopy(xg, t, 64);
}
"""


def test_a_null_input_is_refused_only_where_a_call_uses_it(tmp_path):
    source = tmp_path / "null_input.cpp"
    source.write_text(NULL_INPUT)
    kernel = load(source).k
    x = np.arange(64, dtype=np.float32)
    kernel[1](x, None, 0)
    assert np.array_equal(x, np.arange(64, dtype=np.float32))
    with pytest.raises(KernelError) as caught:
        kernel[1](x, None, 1)
    assert caught.value.op == "DataCopy" and caught.value.line == 8 and "given nullptr" in str(caught.value)


def test_the_std_subset_ascend_c_documents(tmp_path):
    # AscendC::Std (Utils-API/CPP标准库): the type traits at compile time, abs / sqrt / max / min and tuple in a
    # kernel's scalar code, the results written to GM; expected values from the pages (sqrt of an int64_t truncates)
    source = tmp_path / "k.cpp"
    source.write_text('''#include "kernel_operator.h"
static_assert(AscendC::Std::is_integral<const int>::value && !AscendC::Std::is_integral<float>::value);
static_assert(AscendC::Std::is_same_v<AscendC::Std::remove_cv_t<const volatile int>, int>);
static_assert(AscendC::Std::is_floating_point<double>::value && AscendC::Std::is_void<const void>::value);
__global__ __aicore__ void k(GM_ADDR y) {
    AscendC::GlobalTensor<int64_t> yGm;
    yGm.SetGlobalBuffer((__gm__ int64_t*)y, 8);
    auto t = AscendC::Std::make_tuple(int64_t(-7), int64_t(10));
    yGm.SetValue(0, AscendC::Std::abs(AscendC::Std::get<0>(t)));
    yGm.SetValue(1, AscendC::Std::sqrt(AscendC::Std::get<1>(t)));
    yGm.SetValue(2, AscendC::Std::max(int64_t(3), int64_t(9)));
    yGm.SetValue(3, AscendC::Std::min(int64_t(3), int64_t(9)));
    yGm.SetValue(4, int64_t(AscendC::Std::sqrt(2.25f) * 100));
    AscendC::DataCacheCleanAndInvalid<int64_t, AscendC::CacheLine::ENTIRE_DATA_CACHE>(yGm);
}
''')
    y = np.zeros(8, np.int64)
    load(source).k[1](y)
    assert y[:5].tolist() == [7, 3, 9, 3, 150]
