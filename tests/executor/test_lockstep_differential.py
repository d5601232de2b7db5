"""The lockstep executor gives what the reference executor gives, bit for bit (issue 20).

The reference executor runs a launch's cores one after another in block order; the lockstep executor (the default of
``fusekit.asc.launch``) runs the cores that follow one instruction stream as one group
(``fusekit.asc.lockstep``). On every kernel it accepts, the outputs (bytes), the Trace (every field of every Instr of
every core, compared with ``==``), the overflows, the end states and any KernelError must be the reference's: the
reference executor is the model here. Each test also checks that the lockstep executor really ran where it should
(``Trace.executor``), so that a silent fall back cannot make it pass.

Kernels: the shipped FusedAddScale (tails included), every operator of the generated catalogue x dtype x SoC (a
sample by default, all with ``-m slow``), the sanitizer corpus (``tests/corpus``), the pyasc kernels
(``tests/pyasc_kernels``) and random kernels: sequences of the instructions the lockstep executor runs, over per-core
data and offsets, with branches on the block index and on UB values (hypothesis).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fusekit
from fusekit import asc
from fusekit.asc import launch
from fusekit.cli.generated import inputs
from fusekit.gen import catalogue as cat
from fusekit.ops.fused_add_scale import run as fused_add_scale
from fusekit.soc import SOCS

from corpus import all_cases
from lockstep_harness import compare
from support import TESTS, gm_view, ub_buf

ROWS = {"add_rms_norm", "layer_norm", "scaled_masked_softmax", "bias_gelu", "bias_gelu_erf", "quantize_per_channel"}
ATTRS = {"fused_add_scale": {"scale": 1.5}, "axpby": {"a": 0.5, "b": 2.0}, "clamp": {"lo": -1.0, "hi": 1.0},
         "quantize": {"scale": 20.0}, "dequantize": {"scale": 0.01}, "dequantize_int8": {"scale": 0.01},
         "quantize_per_channel": {}, "scaled_masked_softmax": {"scale": 0.125}}


# -- FusedAddScale, with and without tails ---------------------------------------------------------------------

@pytest.mark.parametrize("n, dtype, precision, cores", [
    (1_000_003, "float16", None, None),    # the last core's unaligned tail: data_copy_pad both ways
    (196_640, "float32", None, None),
    (48 * 4096 + 100, "bfloat16", "fp32", None),  # Cast to float32 and back
    (4096, "float16", None, 3),
    (777, "float16", None, 8),
])
def test_fused_add_scale(n, dtype, precision, cores):
    def make():
        rng = np.random.default_rng(n)
        x1, x2 = (rng.standard_normal(n, dtype=np.float32) for _ in range(2))
        if dtype == "bfloat16":
            from ml_dtypes import bfloat16
            return [x1.astype(bfloat16), x2.astype(bfloat16)]
        return [x1.astype(dtype), x2.astype(dtype)]

    options = {} if cores is None else {"core_num": cores}
    compare(make, lambda x1, x2: fused_add_scale(x1, x2, 1.5, precision=precision, **options))


# -- the generated catalogue: every op x dtype x SoC ----------------------------------------------------------

def _catalogue_cases():
    # the vector operators (the cube's, AIC_ONLY and mix kernels, are test_lockstep_cube.py's)
    vector = {name: op for name, op in cat.CATALOGUE.items() if op.cube is None}
    cases = [(name, dtype, soc) for name, op in vector.items() for dtype in op.dtypes for soc in SOCS]
    # the default run: each op once, its dtypes and the SoCs taken in turn (all of them with -m slow)
    sample, socs = [], itertools.cycle(SOCS)
    for name, op in vector.items():
        for dtype in op.dtypes:
            sample.append((name, dtype, next(socs)))
    sample = [c for k, c in enumerate(sample) if k % 3 == 0]
    return [pytest.param(*c, marks=() if c in sample else pytest.mark.slow, id="-".join(c)) for c in cases]


@pytest.mark.parametrize("name, dtype, soc", _catalogue_cases())
def test_catalogue(name, dtype, soc):
    op = cat.get(name)
    shape = (96, 512) if name in ROWS else (48 * 1024 + 40,)
    got = compare(lambda: inputs(op, shape, dtype), lambda *arrays: op.run(*arrays, soc=soc, **ATTRS.get(name, {})),
                  lockstep=None)
    if not isinstance(got, Exception):
        assert all(r.trace.executor == "lockstep" for r in got.launches), \
            [r.trace.fallback for r in got.launches]


# -- the sanitizer corpus, as plain launches --------------------------------------------------------------------

CORPUS = all_cases()
# corpus kernels whose plain launch the lockstep executor must take (the others fall back: races, cross-core
# synchronisation, errors)
LOCKSTEP_CORPUS = {"core_split_aligned", "core_split_unaligned"}


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus(case):
    def make():
        args, kwargs = case.args(case.size)
        return [list(args), dict(kwargs)]

    got = compare(make, lambda args, kwargs: launch(case.kernel, case.cores, tuple(args), kwargs, strict=case.strict,
                                                    soc=case.soc, device_output=None),
                  lockstep=True if case.name in LOCKSTEP_CORPUS else None)
    assert got is not None


# -- the pyasc kernels ------------------------------------------------------------------------------------------

def test_pyasc_scale_by():
    kernel = fusekit.simulate(TESTS / "pyasc_kernels" / "scale_by.py", "scale_by")
    compare(lambda: [np.arange(4 * 1024, dtype=np.float16), np.zeros(4 * 1024, np.float16)],
            lambda x, y: kernel[4](x, y, 1024, 0.5, 256))


def test_pyasc_vadd_flags():
    kernel = fusekit.simulate(TESTS / "pyasc_kernels" / "vadd_flags.py", "vadd_flags")

    def make():
        rng = np.random.default_rng(3)
        return [rng.standard_normal(8 * 512).astype(np.float32), rng.standard_normal(8 * 512).astype(np.float32),
                np.zeros(8 * 512, np.float32)]

    compare(make, lambda x, y, z: kernel[8](x, y, z, 512))


# -- random kernels ---------------------------------------------------------------------------------------------

BINARY = ("add", "sub", "mul", "div", "max", "min")  # and the mask (split) form of each
WITH_SCALAR = ("adds", "muls", "maxs", "mins")
UNARY = ("exp", "abs", "sqrt", "relu", "reciprocal", "rsqrt", "ln")
REDUCE = ("reduce_sum", "reduce_max", "reduce_min")
BUFS = 3  # UB buffers of N elements; a fourth one is the reductions' shared_tmp_buffer


@asc.jit
def _scalar(bufs, source):
    """A scalar operand: a constant, or one element of a UB buffer (one value per core: a lane value)."""
    if source[0] == "const":
        return source[1]
    return bufs[source[1]].get_value(source[2])


@asc.jit
def _program(x: asc.GlobalAddress, y: asc.GlobalAddress, PROGRAM: asc.ConstExpr, N: asc.ConstExpr[int],
             LAYOUT: asc.ConstExpr[str]):
    """Each core's N elements of x (placed by LAYOUT) through PROGRAM's instructions, stored at the same place of y."""
    idx = asc.get_block_idx()
    last = asc.get_block_num() - 1
    n = N
    if LAYOUT == "reversed":
        start = (last - idx) * N  # equally spaced, but downwards: not one strided view (the cores split)
    else:
        start = idx * N
        if LAYOUT == "short_last" and idx == last:
            n = N // 2
    xg = gm_view(x + start, n)
    yg = gm_view(y + start, n)
    pipe = asc.TPipe()
    bufs = (ub_buf(pipe, x.dtype, N), ub_buf(pipe, x.dtype, N), ub_buf(pipe, x.dtype, N))
    tmp = ub_buf(pipe, x.dtype, 2 * N + 256)
    size = x.dtype.sizeof()
    for step in PROGRAM:
        kind = step[0]
        if kind == "load":
            if n * size % 32 == 0:
                asc.data_copy(bufs[step[1]], xg, n)
            else:
                asc.data_copy_pad(bufs[step[1]], xg, asc.DataCopyExtParams(1, n * size, 0, 0, 0),
                                  asc.DataCopyPadExtParams(x.dtype, False, 0, 0, 0))
        elif kind == "store":
            if n * size % 32 == 0:
                asc.data_copy(yg, bufs[step[1]], n)
            else:
                asc.data_copy_pad(yg, bufs[step[1]], asc.DataCopyExtParams(1, n * size, 0, 0, 0))
        elif kind == "blocks_in":  # DataCopyParams: two blocks of half the tile each (lane indices in the Effect)
            asc.data_copy(bufs[step[1]], xg, asc.DataCopyParams(2, n * size // 64, 0, 0))
        elif kind == "blocks_out":
            asc.data_copy(yg, bufs[step[1]], asc.DataCopyParams(2, n * size // 64, 0, 0))
        elif kind == "binary":
            getattr(asc, step[1])(bufs[step[2]], bufs[step[3]], bufs[step[4]], step[5])
        elif kind == "split":  # the mask form: one repeat, the lanes the mask selects (an int: the first ones)
            mask, pair = step[5]  # pair: the [low, high] bit form (a kernel that calls isinstance runs on the reference)
            mask = list(mask) if pair else mask
            getattr(asc, step[1])(bufs[step[2]], bufs[step[3]], bufs[step[4]], mask, 1,
                                  asc.BinaryRepeatParams(1, 1, 1, 8, 8, 8))
        elif kind == "scalar":
            getattr(asc, step[1])(bufs[step[2]], bufs[step[3]], _scalar(bufs, step[5]), step[4])
        elif kind == "unary":
            getattr(asc, step[1])(bufs[step[2]], bufs[step[3]], step[4])
        elif kind == "duplicate":
            asc.duplicate(bufs[step[1]], _scalar(bufs, step[3]), step[2])
        elif kind == "reduce":
            getattr(asc, step[1])(bufs[step[2]][step[4]:], bufs[step[3]], tmp, step[5])
        elif kind == "set_value":
            bufs[step[1]].set_value(step[2], _scalar(bufs, step[3]))
        elif kind == "if_value":  # a branch on UB data: the cores whose element is positive go one way
            if bufs[step[1]].get_value(step[2]) > 0:
                asc.adds(bufs[step[1]], bufs[step[1]], 1.0, N)
        elif kind == "if_core":  # a branch on the block index
            if idx % step[1] == 0:
                asc.muls(bufs[0], bufs[0], 2.0, N)


def _programs(n: int):
    buf = st.integers(0, BUFS - 1)
    count = st.sampled_from([0, 1, 7, n // 2, n])
    element = st.integers(0, n - 1)
    scalar = st.one_of(st.tuples(st.just("const"), st.sampled_from([0.5, -2.0, 3.0])),
                       st.tuples(st.just("ub"), buf, element))
    step = st.one_of(
        st.tuples(st.just("load"), buf), st.tuples(st.just("store"), buf),
        st.tuples(st.just("binary"), st.sampled_from(BINARY), buf, buf, buf, count),
        st.tuples(st.just("split"), st.sampled_from(BINARY), buf, buf, buf,
                  st.sampled_from([(1, False), (16, False), (32, False), ((0x5555_5555_5555_5555, 0), True)])),
        st.tuples(st.sampled_from(["blocks_in", "blocks_out"]), buf),
        st.tuples(st.just("scalar"), st.sampled_from(WITH_SCALAR), buf, buf, count, scalar),
        st.tuples(st.just("unary"), st.sampled_from(UNARY), buf, buf, count),
        st.tuples(st.just("duplicate"), buf, count, scalar),
        st.tuples(st.just("reduce"), st.sampled_from(REDUCE), buf, buf, st.sampled_from([0, 16, 32]), count),
        st.tuples(st.just("set_value"), buf, element, scalar),
        st.tuples(st.just("if_value"), buf, element),
        st.tuples(st.just("if_core"), st.sampled_from([2, 3])),
    )
    head = st.lists(st.tuples(st.just("load"), buf), min_size=1, max_size=3)
    return st.builds(lambda h, body, tail: tuple(h + body + tail), head, st.lists(step, max_size=10),
                     st.lists(st.tuples(st.just("store"), buf), min_size=1, max_size=2))


@st.composite
def _cases(draw):
    n = draw(st.sampled_from([64, 128]))
    return (draw(_programs(n)), n, draw(st.sampled_from([2, 3, 5, 8])), draw(st.sampled_from(["float16", "float32"])),
            draw(st.sampled_from(["rows", "reversed", "short_last"])), draw(st.integers(0, 2**16)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_random_kernels(case):
    program, n, cores, dtype, layout, seed = case

    def make():
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(cores * n).astype(dtype)
        return [x, rng.standard_normal(cores * n).astype(dtype)]

    compare(make, lambda x, y: launch(_program, cores, (x, y, program, n, layout)))
