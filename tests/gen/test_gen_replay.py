"""Replay (fusekit.gen.replay): a signature's later calls take the operator's hardware model and the first call's
Traces; each must equal a fresh simulation of the same call, bit for bit, and anything value-dependent simulates."""

import warnings

import numpy as np
import pytest

import fusekit
from fusekit.cli.generated import inputs
from fusekit.gen import catalogue as cat

CASES = [  # (catalogue op, output shape, dtype, attributes): elementwise, broadcast rows, row reductions, the cube
    ("swiglu", (3000,), "float16", {}),
    ("bias_gelu", (8, 300), "bfloat16", {}),
    ("add_rms_norm", (16, 512), "float16", {}),
    ("scaled_masked_softmax", (32, 128), "float32", {"scale": 0.125}),
    ("layer_norm", (8, 256), "float16", {}),
    ("clamp", (4096,), "float32", {"lo": -0.5, "hi": 0.5}),  # compares: the CmpMask register in the end state
]


def _matmul_inputs(name: str, seed: int) -> list:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((40, 64)).astype(np.float16)
    w = rng.standard_normal((64, 48)).astype(np.float16)
    bias = rng.standard_normal(48).astype(np.float16)
    if name == "matmul_swiglu":
        return [x, w, rng.standard_normal((64, 48)).astype(np.float16)]
    if name == "attention_score":
        return [x, rng.standard_normal((48, 64)).astype(np.float16), rng.standard_normal((40, 48)).astype(np.float16)]
    return [x, w, bias]


CUBE = [("matmul_bias_gelu", {}), ("matmul_swiglu", {}), ("attention_score", {"scale": 0.125}),
        ("matmul_bias_relu_quant", {"scale": 0.05})]


def _specials(arrays: list) -> list:
    """The same arrays with NaN, inf and -0.0 sprinkled in (floating ones)."""
    out = []
    for a in arrays:
        a = a.copy()
        if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
            flat = a.reshape(-1)
            flat[::97], flat[5::101], flat[7::89] = np.nan, np.inf, -0.0
        out.append(a)
    return out


def _same(replayed, simulated) -> None:
    assert replayed.outputs.keys() == simulated.outputs.keys()
    for k, y in simulated.outputs.items():
        got = replayed.outputs[k]
        assert got.dtype == y.dtype and got.shape == y.shape
        assert np.ascontiguousarray(got).view(np.uint8).tobytes() == np.ascontiguousarray(y).view(np.uint8).tobytes()
    assert [r.trace for r in replayed.launches] == [r.trace for r in simulated.launches]
    assert all(r.trace.executor == "replay" for r in replayed.launches)


def _check(op, first: list, second: list, **attrs) -> None:
    op._replays.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fusekit.PrecisionWarning)
        warm = op.run(*first, replay=True, **attrs)  # simulated: the signature's first call
        assert all(r.trace.executor != "replay" for r in warm.launches)
        replayed = op.run(*second, replay=True, **attrs)
        _same(replayed, op.run(*second, **attrs))
    # one set of per-core lists, expanded once (Trace.relabelled)
    assert all(r.trace.cores is w.trace.cores for r, w in zip(replayed.launches, warm.launches))


@pytest.mark.parametrize("name, shape, dtype, attrs", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("specials", [False, True], ids=["normal", "nan-inf"])
def test_a_replayed_call_equals_its_simulation(name, shape, dtype, attrs, specials):
    op = cat.get(name)
    second = inputs(op, shape, dtype, seed=2)
    _check(op, inputs(op, shape, dtype, seed=1), _specials(second) if specials else second, **attrs)


@pytest.mark.parametrize("name, attrs", CUBE, ids=[c[0] for c in CUBE])
def test_a_replayed_cube_operator_equals_its_simulation(name, attrs):
    _check(cat.get(name), _matmul_inputs(name, 1), _matmul_inputs(name, 2), **attrs)


def test_a_row_sum_that_overflows_on_a_replayed_signature_is_simulated_and_warned():
    """Trace.overflows depends on the values: the call simulates, and the warning names the kernel's line."""
    op = cat.get("add_rms_norm")
    op._replays.clear()
    rng = np.random.default_rng(3)
    small = [(rng.standard_normal((4, 1024)) * 0.05).astype(np.float16) for _ in range(2)]
    big = [(rng.standard_normal((4, 1024)) * 6).astype(np.float16) for _ in range(2)]
    gamma = np.ones(1024, np.float16)
    op.run(*small, gamma, replay=True)
    with pytest.warns(fusekit.PrecisionWarning, match=r"reduce_sum at .*\.py:\d+ overflowed"):
        run = op.run(*big, gamma, replay=True)
    assert run.launches[0].trace.overflows and run.launches[0].trace.executor != "replay"


def test_a_model_that_disagrees_never_replays(monkeypatch):
    """A model that is not the simulator's bits (a generator bug) leaves its signature simulated on every call."""
    op = cat.get("swiglu")
    op._replays.clear()
    a, b = inputs(op, (2048,), "float16", seed=1)
    real = op.reference
    monkeypatch.setattr(op, "reference", lambda *args, **kw: {k: v + 1 for k, v in real(*args, **kw).items()})
    op.run(a, b, replay=True)
    again = op.run(b, a, replay=True)
    assert again.launches[0].trace.executor != "replay"
    np.testing.assert_array_equal(again.y.view(np.uint16), op.run(b, a).y.view(np.uint16))


def test_a_new_signature_or_a_launch_option_simulates():
    op = cat.get("swiglu")
    op._replays.clear()
    a, b = inputs(op, (2048,), "float16", seed=1)
    op.run(a, b, replay=True)
    assert op.run(a, b, replay=True).launches[0].trace.executor == "replay"
    c, d = inputs(op, (4096,), "float16", seed=1)
    assert op.run(c, d, replay=True).launches[0].trace.executor != "replay"  # another shape: its first call
    assert op.run(a, b, replay=True, core_num=4).launches[0].trace.executor != "replay"
    sampled = op.run(a, b, replay=True, sample_cores=True)  # not a keyed option: always the simulator
    assert sampled.launches[0].trace.executor != "replay" and sampled.launches[0].trace.stand_ins


def test_the_cache_keeps_the_latest_signatures():
    from fusekit.gen import replay

    op = cat.get("add_relu")
    op._replays.clear()
    for n in range(replay.SIGNATURES + 3):
        op.run(*inputs(op, (64 * (n + 1),), "float16"), replay=True)
    assert len(op._replays) == replay.SIGNATURES


@pytest.mark.parametrize("replay", [False, True], ids=["simulated", "replayed"])
def test_a_cube_operator_warns_alike_simulated_or_replayed(replay):
    """Outputs that overflow float16 from finite inputs warn on both paths (GeneratedOp._warn_overflow)."""
    op = cat.get("matmul_bias")
    op._replays.clear()
    x, w, bias = _matmul_inputs("matmul_bias", 1)
    op.run(x, w, bias, replay=True)
    big = ((x * 300).astype(np.float16), (w * 300).astype(np.float16), bias)
    exact = big[0].astype(np.float64) @ big[1].astype(np.float64) + bias
    assert (np.abs(exact) > float(np.finfo(np.float16).max)).any()  # independent: float16 cannot hold the result
    with pytest.warns(fusekit.PrecisionWarning, match="inf or NaN from finite inputs"):
        op.run(*big, replay=replay)
