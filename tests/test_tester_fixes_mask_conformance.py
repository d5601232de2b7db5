"""Tester findings (issues 9 / 11): mask ranges, ``fusekit conformance`` behaviour, adv error hints.

Mask facts (asc-devkit docs/zh/api/SIMD-API/基础API/Memory矢量计算/SIMD计算说明/掩码.md 表5 and
掩码操作/SetVectorMask.md): a continuous mask is in [0, 128] (16-bit) / [0, 64] (32-bit), "mask超出范围按照
对应数据类型下mask最大值计算" (a larger one runs as the maximum) and 0 is a NOP; a bit mask for 32-bit
operands has maskHigh = 0 ("当操作数为32位时，maskHigh为0").
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.runtime import KernelError
from fusekit.pyasc import conformance

sys.path.insert(0, __import__("os").path.dirname(__file__))
from vector_harness import run  # noqa: E402

F32, F16 = np.float32, np.float16


# ------------------------------------------------------------------ 1. mask ranges

def test_bit_mask_with_high_bits_on_a_32_bit_type_is_refused_citing_the_page():
    a = np.arange(64, dtype=F32)
    with pytest.raises(KernelError, match="maskHigh must be 0.*掩码.md") as info:
        run(lambda d, x, y: asc.add(d, x, y, [1, 1], 1, asc.BinaryRepeatParams()), a.copy(), a, a)
    assert info.value.kind == "mask-range"
    # [low, 0] and [low] are the documented forms and run
    for mask in ([0b101, 0], [0b101]):
        out, _ = run(lambda d, x, y: asc.add(d, x, y, mask, 1, asc.BinaryRepeatParams()), np.zeros(64, F32), a, a)
        want = np.zeros(64, F32)
        want[[0, 2]] = 2 * a[[0, 2]]
        np.testing.assert_array_equal(out, want)


def test_set_vector_mask_refuses_high_bits_for_32_bit_types():
    a = np.arange(64, dtype=F32)

    def body(d, x, y):
        asc.set_vector_mask(1, 1, dtype=asc.float32, mode=asc.MaskMode.NORMAL)

    with pytest.raises(KernelError, match="maskHigh must be 0"):
        run(body, a.copy(), a, a)


def test_half_bit_mask_may_use_both_words():
    a = np.ones(128, F16)
    out, _ = run(lambda d, x, y: asc.add(d, x, y, [0, 1 << 63], 1, asc.BinaryRepeatParams()), np.zeros(128, F16), a, a)
    assert out[127] == 2 and not out[:127].any()


@pytest.mark.parametrize("dtype,mask,lanes", [(F16, 129, 128), (F32, 65, 64)])
def test_continuous_mask_past_the_lanes_runs_as_the_maximum_as_documented(dtype, mask, lanes):
    # 掩码.md 表5: "连续模式下，mask超出范围按照对应数据类型下mask最大值计算" - documented, not an error
    a = np.arange(lanes, dtype=dtype)
    out, _ = run(lambda d, x, y: asc.add(d, x, y, mask, 1, asc.BinaryRepeatParams()), np.zeros(lanes, dtype), a, a)
    np.testing.assert_array_equal(out, a + a)


def test_counter_mode_bit_mask_is_an_element_count_not_a_lane_mask():
    # 掩码.md 接口内设置Mask / Counter模式: mask[0] (the low 64 bits) is the element count, e.g. {130, 0}
    a = np.ones(192, F32)

    def body(d, x, y):
        asc.set_mask_count()
        asc.add(d, x, y, [130, 0], 1, asc.BinaryRepeatParams())
        asc.set_mask_norm()

    out, _ = run(body, np.zeros(192, F32), a, a)
    assert (out[:130] == 2).all() and not out[130:].any()


# ------------------------------------------------------------------ 3. adv error hints

def test_rmsnorm_hint_names_the_minimum_when_the_buffer_is_below_it():
    sys.path.insert(0, __import__("os").path.dirname(__file__))
    from test_adv_norm import run as rms_run

    h, size = 64, 4
    need = asc.adv.get_rms_norm_max_min_tmp_size([1, 2, h], size)[1]
    tiling = asc.adv.get_rms_norm_tiling_info([1, 2, h], [1, 2, h], need, size)
    with pytest.raises(KernelError) as info:
        rms_run(np.ones((1, 2, h), F32), np.ones(h, F32), tmp=need - 32, tiling=tiling)
    assert f"at least the minimum {need} B" in str(info.value)
    assert f"get_rms_norm_tiling_info(..., {need - 32}" not in str(info.value)  # that call itself would raise
    with pytest.raises(ValueError, match="below the minimum"):
        asc.adv.get_rms_norm_tiling_info([1, 2, h], [1, 2, h], need - 32, size)


def test_softmax_tiling_func_in_a_kernel_is_a_kernel_error_with_the_line():
    a = np.zeros(64, F32)
    too_little = (8 + 64 + 64) * 4 - 1  # get_softmax_min_tmp_size([4, 64], 4) - 1

    def body(d, x, y):
        asc.adv.softmax_tiling_func([4, 64], 4, too_little)

    with pytest.raises(KernelError, match="below") as info:
        run(body, a.copy(), a, a)
    assert info.value.line and info.value.file
    with pytest.raises(ValueError, match="below"):  # on the host: a ValueError, as before
        asc.adv.softmax_tiling_func([4, 64], 4, too_little)


# ------------------------------------------------------------------ 2. fusekit conformance

def _cli(*args, env=None):
    import os
    e = {k: v for k, v in os.environ.items() if k != conformance.CHECKOUT_ENV}
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "fusekit.cli", "conformance", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=e)


def test_missing_path_and_file_without_tests_are_one_line_rc_2(tmp_path):
    out = _cli(tmp_path / "nope.py")
    assert out.returncode == 2 and "no such file" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    empty = tmp_path / "test_empty.py"
    empty.write_text("x = 1\n")
    out = _cli(empty)
    assert out.returncode == 2 and "no tests found" in out.stderr


def test_no_checkout_and_a_bad_variable_are_errors(tmp_path):
    out = _cli()
    assert out.returncode == 2 and conformance.CHECKOUT_ENV in out.stderr
    out = _cli(env={conformance.CHECKOUT_ENV: str(tmp_path)})
    assert out.returncode == 2 and "not a pyasc checkout" in out.stderr
    with pytest.raises(ValueError, match="not a pyasc checkout"):
        conformance.find_checkout(tmp_path)


def _fake_suite(tmp_path):
    """A pyasc-like test file of our own: a passing kernel, a failing one, an unseeded random draw."""
    (tmp_path / "test_fake.py").write_text(textwrap.dedent('''
        import numpy as np
        import asc

        @asc.jit
        def k(x: asc.GlobalAddress, y: asc.GlobalAddress):
            pipe = asc.TPipe()
            buf = asc.TBuf(asc.TPosition.VECCALC)
            pipe.init_buffer(buf=buf, num=256)
            xg = asc.GlobalTensor(); xg.set_global_buffer(x, 64)
            yg = asc.GlobalTensor(); yg.set_global_buffer(y, 64)
            t = buf.get(asc.float32)
            asc.data_copy(t, xg, 64)
            asc.pipe_barrier(asc.PipeID.PIPE_ALL)
            asc.data_copy(yg, t, 64)

        def test_pass():
            x = np.arange(64, dtype=np.float32); y = np.zeros(64, np.float32)
            k[1](x, y)
            assert (y == x).all()

        def test_fail():
            assert False, "boom" + "\\n" * 50

        def test_random():
            print("DRAW", np.random.rand())
    '''))
    return tmp_path / "test_fake.py"


def test_table_without_tracebacks_exit_status_and_no_sanitize(tmp_path):
    path = _fake_suite(tmp_path)
    out = _cli(path)
    assert "fusekit conformance" in out.stdout and "Traceback" not in out.stdout and "boom\n\n" not in out.stdout
    assert "_ test_fail _" not in out.stdout  # pytest's FAILURES section
    assert "--verbose" in out.stdout
    assert out.returncode == 1  # test_fail is a "failed" row
    line = next(x for x in out.stdout.splitlines() if "test_pass" in x)
    assert "passed" in line and "sanitizer: clean" in line
    out = _cli(path, "--no-sanitize")
    line = next(x for x in out.stdout.splitlines() if "test_pass" in x)
    assert "sanitizer: not run (--no-sanitize)" in line
    out = _cli(str(path) + "::test_pass")
    assert out.returncode == 0, out.stdout[-2000:]


def test_runs_are_seeded_per_test(tmp_path):
    path = _fake_suite(tmp_path)
    draws = []
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "fusekit.pyasc_plugin", "-p", "no:cacheprovider", "-q", "-s",
             str(path) + "::test_random"], capture_output=True, text=True, timeout=300, cwd=tmp_path)
        draws.append(next(x for x in out.stdout.splitlines() if "DRAW" in x))
    assert draws[0] == draws[1]


def test_aipp_is_out_of_scope_with_its_reason():
    try:
        asc.set_aipp_functions
    except AttributeError as exc:
        result, reason = conformance.explain(exc)
    assert result == "out of scope" and "AIPP" in reason and "does not simulate it yet" not in reason


def test_mask_range_kernel_error_is_a_sample_defect():
    exc = KernelError("add", "bit mask ... maskHigh must be 0", kind="mask-range")
    result, reason = conformance.explain(exc)
    assert result == "sample defect" and "maskHigh" in reason
