"""A dequeued tensor may be enqueued again (pyasc's generalization/basic/test_axpy.py does it): EnQue.md
约束说明 lists none, and asc-devkit impl/basic_api/kernel_tquebind_impl.h EnQue asserts the buffer is
OCCUPIED (from AllocTensor) or DEQUE (from DeQue). Enqueuing an enqueued or freed tensor stays an error.
"""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit import asc


@asc.jit
def requeue(z: asc.GlobalAddress, N: asc.ConstExpr[int], TWICE: asc.ConstExpr[bool]):
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z, N)
    pipe = asc.TPipe()
    q_out = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=q_out, num=1, len=N * 4)
    t = q_out.alloc_tensor(asc.float32)
    asc.duplicate(t, 3.0, N)          # PIPE_V fills the VECOUT buffer (an MTE2 fill would need its own MTE2->V sync)
    q_out.enque(t)
    t = q_out.deque(asc.float32)
    asc.muls(t, t, 2.0, N)
    q_out.enque(t)                    # the dequeued tensor goes back in: legal
    if TWICE:
        q_out.enque(t)                # enqueued twice without a deque: illegal
    t = q_out.deque(asc.float32)
    asc.data_copy(zg, t, N)
    q_out.free_tensor(t)


def test_a_dequeued_tensor_can_be_enqueued_again():
    z = np.zeros(64, np.float32)
    asc.launch(requeue, 1, (z, 64, False))
    np.testing.assert_array_equal(z, np.full(64, 6.0, np.float32))
    report = fusekit.sanitize(requeue)[1](np.zeros(64, np.float32), 64, False)
    assert report.ok, report.to_text()


def test_an_enqueued_tensor_cannot_be_enqueued_again():
    with pytest.raises(asc.KernelError, match="is enqueued .*only a tensor from alloc_tensor or deque"):
        asc.launch(requeue, 1, (np.zeros(64, np.float32), 64, True))
