"""TQue discipline fusekit.asc enforces: alloc / enque / deque / free, leaks at kernel end.

Each test launches a small ``@asc.jit`` kernel and checks either the numbers it produces or the
KernelError it raises (message, core, kernel file:line, tensor, element range); error locations are
checked against marker comments (``# <name>``) on kernel source lines. (Split from test_asc_rules.py.)
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from fusekit import asc

from support import gm_view, line_of, raises_at


# ---------------------------------------------------------------------------------------------
# Queues: alloc / enque / deque / free discipline
# ---------------------------------------------------------------------------------------------

@asc.jit
def queue_kernel(x: asc.GlobalAddress, MODE: asc.ConstExpr[str], LEAK_CORE: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    q_in = asc.TQue(asc.TPosition.VECIN, 1)
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    if MODE == "uninit":
        q_in.alloc_tensor(asc.float16)  # <uninit>
    pipe.init_buffer(que=q_in, num=2, len=64)
    pipe.init_buffer(que=q_out, num=1, len=64)
    xg = gm_view(x, 32)
    if MODE == "ok":  # a correct double-buffered round trip, twice
        for _ in range(2):
            a = q_in.alloc_tensor(asc.float16)
            b = q_in.alloc_tensor(asc.float16)
            asc.data_copy(a, xg, 32)
            q_in.enque(a)
            a = q_in.deque(asc.float16)
            q_in.enque(b)
            q_in.free_tensor(a)
            b = q_in.deque(asc.float16)
            q_in.free_tensor(b)
    if MODE == "alloc_beyond":
        a = q_in.alloc_tensor(asc.float16)
        b = q_in.alloc_tensor(asc.float16)
        q_in.alloc_tensor(asc.float16)  # <alloc_beyond>
    if MODE == "deque_empty":
        q_in.deque(asc.float16)  # <deque_empty>
    if MODE == "enque_other":
        t = q_out.alloc_tensor(asc.float16)
        q_in.enque(t)  # <enque_other>
    if MODE == "enque_twice":
        t = q_in.alloc_tensor(asc.float16)
        q_in.enque(t)
        q_in.enque(t)  # <enque_twice>
    if MODE == "double_free":
        t = q_in.alloc_tensor(asc.float16)
        q_in.free_tensor(t)
        q_in.free_tensor(t)  # <double_free>
    if MODE == "free_enqueued":
        t = q_in.alloc_tensor(asc.float16)
        q_in.enque(t)
        q_in.free_tensor(t)  # <free_enqueued>
    if MODE == "beyond_depth":
        a = q_in.alloc_tensor(asc.float16)
        b = q_in.alloc_tensor(asc.float16)
        q_in.enque(a)
        q_in.enque(b)  # <beyond_depth>
    if MODE == "free_sub":
        t = q_in.alloc_tensor(asc.float16)
        q_in.free_tensor(t[16:])  # <free_sub>
    if MODE == "leak" and asc.get_block_idx() == LEAK_CORE:
        t = q_in.alloc_tensor(asc.float16)  # <leak>


QUEUE_ERRORS = [
    ("uninit", r"q_in has no buffers: call pipe\.init_buffer", "q_in"),
    ("alloc_beyond", r"q_in: all 2 buffers are in use .*alloc waits forever", "q_in"),
    ("deque_empty", r"q_in is empty.*deadlock.*waits forever", "q_in"),
    ("enque_other", r"q_out\[0\] belongs to q_out, not q_in", "q_out[0]"),
    ("enque_twice", r"q_in\[0\] is enqueued .*only a tensor from alloc_tensor or deque can be enqueued, once", "q_in[0]"),
    ("double_free", r"double free: q_in\[0\] was already freed", "q_in[0]"),
    ("free_enqueued", r"q_in\[0\] is still enqueued .*deque it before freeing", "q_in[0]"),
    ("beyond_depth", r"q_in already holds 1 tensor\(s\), its depth", "q_in[1]"),
    ("free_sub", r"not a buffer of q_in.*not a sub-tensor", "q_in[0][16:]"),
]


@pytest.mark.parametrize("mode, match, tensor", QUEUE_ERRORS)
def test_queue_misuse_raises(mode, match, tensor):
    with raises_at(queue_kernel, mode, match) as info:
        queue_kernel[1](np.zeros(32, np.float16), mode, 0)
    assert info.value.tensor == (tensor or "")


def test_queue_correct_use_passes():
    result = queue_kernel[1](np.zeros(32, np.float16), "ok", 0)
    assert result.trace.ops() == {"alloc_tensor": 4, "data_copy": 2, "enque": 4, "deque": 4, "free_tensor": 4}


@pytest.mark.parametrize("core", [0, 1])
def test_tensor_held_at_kernel_end_is_a_leak(core):
    with pytest.raises(asc.KernelError, match=r"^kernel end on aiv\(\d\) at .*test_fwk_queue_rules\.py:"
                                              rf"{line_of(queue_kernel, 'leak')}: q_in\[0\] is still allocated .*every "
                                              "alloc_tensor needs a free_tensor") as info:
        queue_kernel[2](np.zeros(32, np.float16), "leak", core)
    assert (info.value.core, info.value.tensor) == (core, "q_in[0]")


@asc.jit
def leak_with_sync_all_kernel():
    pipe = asc.TPipe()
    q = asc.TQue(asc.TPosition.VECIN, 1)
    pipe.init_buffer(que=q, num=1, len=64)
    q.alloc_tensor(asc.float16)
    asc.sync_all()


@pytest.mark.parametrize("kernel, args", [(queue_kernel, (np.zeros(32, np.float16), "leak", 0)),
                                          (leak_with_sync_all_kernel, ())], ids=["sequential", "scheduler"])
def test_leak_error_points_at_kernel_source(kernel, args):
    with pytest.raises(asc.KernelError, match="still allocated") as info:
        kernel[1](*args)
    lines, first = inspect.getsourcelines(kernel.fn)
    assert info.value.file == __file__ and first <= info.value.line < first + len(lines), str(info.value)
