"""Every registered Spec x SoC x dtype, walked from the registry: a new spec gets these tests for free.

- an accepted dtype runs and a refused one raises ``unsupported`` (the count form of the families whose
  call is uniform; the others name the test file that covers their dtypes, so a new family fails here
  until it gets a recipe or names one);
- the spec names a row of the SoC's vector throughput table (AD-API 附录/Vector指令理论性能汇总.md) or
  says ``NO_FIGURE`` explicitly; a SoC without a table says so in its timing source;
- pyasc's name has a row in ``docs/coverage.md``;
- every ErrorKind names a sanitizer tool.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from fusekit import asc
from fusekit.asc.basic.spec import NO_FIGURE, REGISTRY
from fusekit.asc.errorkind import ErrorKind
from fusekit.sanitizer.findings import TOOLS
from fusekit.soc import SOCS
from fusekit.timing import load
from vector_harness import run
import support

ROOT = str(support.ROOT)
ONE_SOC_PER_ARCH = {soc.arch: name for name, soc in reversed(list(SOCS.items()))}
DTYPES = ("float16", "float32", "bfloat16", "int8", "uint8", "int16", "uint16", "int32", "uint32")

# family -> how its count form is called on (dst, src0, src1) UB tensors of n elements
CALLS = {
    "vec_binary": lambda f, n: lambda d, a, b: f(d, a, b, n),
    "vec_unary": lambda f, n: lambda d, a, b: f(d, a, n),
    "vec_binary_scalar": lambda f, n: lambda d, a, b: f(d, a, 1, n),
}
# families whose calls differ per instruction: the test files (in this folder) that walk their dtypes
COVERED_BY = {
    "vec_reduce": "test_vec_reduce.py", "proposal": "test_vec_rearrange_sort.py", "vec_cmpsel": "test_vec_cmpsel.py",
    "vec_vconv": "test_vec_vconv_cast.py", "vec_gather": "test_vec_rearrange_gather.py",
    "vec_duplicate": "test_vec_arith.py", "vec_ternary_scalar": "test_vec_arith.py",
    "vec_brcb": "test_vec_rearrange_copy.py", "vec_copy": "test_vec_rearrange_copy.py",
    "vec_gather_mask": "test_vec_rearrange_gather_mask.py", "vec_scatter": "test_vec_rearrange_gather.py",
    "vec_transpose": "test_vec_rearrange_copy.py", "vec_5hd": "test_vec_5hd.py", "vec_bilinear": "test_vec_bilinear.py",
}
# specs of a uniform family that need more than their operands (a register, or operands of other dtypes)
NEEDS_SETUP = {name for name, spec in REGISTRY.items() if spec.pairs is not None}


def _cases():
    for name, spec in sorted(REGISTRY.items()):
        if spec.family not in CALLS or name in NEEDS_SETUP:
            continue
        for arch, soc in sorted(ONE_SOC_PER_ARCH.items()):
            for dtype in DTYPES:
                yield pytest.param(name, soc, dtype, id=f"{name}-{soc}-{dtype}")


@pytest.mark.parametrize("name, soc, dtype", list(_cases()))
def test_an_accepted_dtype_runs_and_a_refused_one_raises_unsupported(name, soc, dtype):
    """The count form runs for every dtype the spec accepts on the SoC's arch and is refused otherwise."""
    spec = REGISTRY[name]
    n = 256 // np.dtype(asc.dtypes.as_dtype(dtype).np).itemsize
    x = np.ones(n, asc.dtypes.as_dtype(dtype).np)
    body = CALLS[spec.family](getattr(asc, name), n)
    if spec.accepts(SOCS[soc].arch, dtype):
        run(body, np.zeros_like(x), x, x, soc=soc)
    else:
        with pytest.raises(asc.KernelError) as err:
            run(body, np.zeros_like(x), x, x, soc=soc)
        assert err.value.kind == "unsupported", err.value


def test_every_family_has_a_recipe_or_names_its_dtype_tests():
    """A family added to the registry needs a CALLS recipe here or a test file that walks its dtypes."""
    for spec in REGISTRY.values():
        assert spec.family in CALLS or spec.family in COVERED_BY, f"{spec.name}: family {spec.family} uncovered"
    for path in COVERED_BY.values():
        assert os.path.exists(os.path.join(os.path.dirname(__file__), path)), path


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_spec_names_its_cost_row_or_says_there_is_none(name):
    """Spec.cost is a row of each table-bearing SoC's throughput table, or NO_FIGURE."""
    spec = REGISTRY[name]
    for soc in SOCS:
        params = load(soc)
        if not params.vector_throughput_table:
            assert params.sources["vector_throughput_table"], f"{soc} has no throughput table and does not say why"
            continue
        if spec.cost != NO_FIGURE and SOCS[soc].arch in spec.dtypes:
            assert spec.cost in params.elements_per_cycle, f"{name}: row {spec.cost!r} is not in {soc}'s table"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_spec_has_a_documentation_row(name):
    """docs/coverage.md (generated from the registry, tests/test_coverage.py) lists every spec's pyasc name."""
    with open(os.path.join(ROOT, "docs", "coverage.md"), encoding="utf-8") as f:
        rows = {line.split("|")[1].strip().strip("`") for line in f if line.startswith("| `")}
    assert name in rows


def test_every_error_kind_names_a_sanitizer_tool():
    """A KernelError kind becomes a finding of a real tool; a kind that is not a member is refused."""
    assert all(kind.tool in TOOLS for kind in ErrorKind)
    assert ErrorKind("deadlock").tool == "synccheck" and ErrorKind("unsupported") == "unsupported"
    with pytest.raises(ValueError):
        asc.KernelError("op", "detail", kind="out-of-bound")
