"""The generator's artefacts and graph errors, fixes from a fresh-venv tester (issue 12): artefact names msopgen
can find, casts a SoC lacks refused when generated, misspelt attributes named, numpy scalars as 0-d inputs, numpy's
reduction default refused, and matrix products / indexing refused with a GraphError."""

import json
import re

import numpy as np
import pytest

import fusekit
from fusekit.asc import KernelError
from fusekit.asc.names import snake_case
from fusekit.cli import main as cli_main
from fusekit.gen import catalogue as cat
from fusekit.gen.graph import GraphError


# the vector operators: GeneratedOp.write writes the vector lowering's kernel; a cube operator's kernel depends on
# its inputs' layout (a (N,) bias in Mmad, a 0-d scale in Fixpipe) and is its run's variant (fusekit.gen.cube)
@pytest.mark.parametrize("name", [name for name, op in cat.CATALOGUE.items() if op.cube is None])
def test_written_artefacts_name_the_kernel_as_msopgen_looks_it_up(tmp_path, name):
    """Regression: fresh-venv tester report, issue 12."""
    op = cat.get(name)
    op.write(tmp_path)
    op_type = json.loads((tmp_path / "op_info.json").read_text())[0]["op"]
    kernels = re.findall(r"^def (\w+)\(", (tmp_path / "kernel.py").read_text(), re.M)
    assert snake_case(op_type) in kernels  # msopgen: the kernel function is the OpType in snake_case


@pytest.mark.parametrize("name", ["swiglu", "geglu"])
def test_fusekit_check_accepts_a_written_glu_kernel(tmp_path, capsys, name):
    """Regression: fresh-venv tester report, issue 12."""
    cat.get(name).write(tmp_path)
    assert cli_main(["check", str(tmp_path / "kernel.py"), "--sizes", "17,4096"]) == 0, capsys.readouterr()


def test_a_name_msopgen_cannot_find_is_refused_when_writing_artefacts(tmp_path):
    """Regression: fresh-venv tester report, issue 12."""
    op = fusekit.define_op("x * 2", name="doubleIt")
    assert np.array_equal(op(np.ones(4, np.float16)), np.full(4, 2, np.float16))  # simulating is fine
    with pytest.raises(GraphError, match="'double_it'"):
        op.write(tmp_path)


@pytest.mark.parametrize("target", ["int16", "int32"])
def test_a_cast_the_soc_lacks_is_a_graph_error_not_a_kernel_error(target):
    """Regression: fresh-venv tester report, issue 12."""
    op = fusekit.define_op(f"cast(x * 3.0, '{target}')", name=f"to_{target}")
    x = np.linspace(-100, 100, 64).astype(np.float32)
    with pytest.raises(GraphError, match=f"no float32 -> {target}"):
        op(x, soc="Ascend310P3")
    y = op(x, soc="Ascend910B1")  # A2 has the direct Cast (Cast.md 数据类型), rint
    assert np.array_equal(y, np.rint(x.astype(np.float64) * 3).astype(target))


def test_a_rounding_the_soc_lacks_is_a_graph_error():
    """Regression: fresh-venv tester report, issue 12."""
    op = fusekit.define_op("cast(x, 'int16', rounding='floor')", name="floor16")
    with pytest.raises(GraphError, match="does not round CAST_FLOOR"):
        op(np.ones(16, np.float16), soc="Ascend310P3")  # 310P's half -> int16 takes CAST_RINT only
    assert np.array_equal(op(np.full(16, -1.5, np.float16)), np.full(16, -2, np.int16))


def test_quantize_still_runs_on_310p():
    """Regression: fresh-venv tester report, issue 12."""
    x = np.linspace(-3, 3, 257).astype(np.float16)
    y = cat.quantize(x, scale=20.0, soc="Ascend310P3")
    assert np.array_equal(y, np.clip(np.rint(x.astype(np.float64) * 20), -128, 127).astype(np.int8))


def test_a_misspelt_attribute_names_the_operator_and_its_attributes():
    """Regression: fresh-venv tester report, issue 12."""
    x = np.ones((2, 64), np.float16)
    with pytest.raises(TypeError, match="add_rms_norm has no attribute or launch option 'epsilon' .*'eps'"):
        cat.add_rms_norm(x, x, np.ones(64, np.float16), epsilon=1e-5)


def test_a_numpy_scalar_is_a_zero_d_input():
    """Regression: fresh-venv tester report, issue 12."""
    x = np.arange(8, dtype=np.float16)
    y = cat.axpby(x, np.float16(3), a=0.5, b=2.0)
    assert np.array_equal(y, (x.astype(np.float64) * 0.5 + 6).astype(np.float16))


@pytest.mark.parametrize("body, match", [
    (lambda x: fusekit.sum(x), "axis=-1"),
    (lambda x: fusekit.mean(x, keepdims=True), "axis=-1"),
    (lambda x: x @ x, "matrix product"),
    (lambda x: x[0] * 2, "indexing"),
])
def test_numpy_spellings_the_generator_cannot_make_are_graph_errors(body, match):
    """Regression: fresh-venv tester report, issue 12."""
    with pytest.raises(GraphError, match=match):
        fusekit.op(body, name="t")


def test_kernel_errors_are_not_raised_for_310p_casts_of_int8_targets():
    """Regression: fresh-venv tester report, issue 12."""
    op = fusekit.define_op("cast(x * 3.0, 'int8')", name="to_i8")
    x = np.linspace(-100, 100, 64).astype(np.float32)
    try:
        y = op(x, soc="Ascend310P3")
    except KernelError as exc:  # pragma: no cover - the failure this guards against
        pytest.fail(str(exc))
    assert np.array_equal(y, np.clip(np.rint(x.astype(np.float64) * 3), -128, 127).astype(np.int8))
