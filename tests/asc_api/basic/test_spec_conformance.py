"""Every registered Spec x SoC x dtype, walked from the registry: a new spec gets these tests for free.

- an accepted dtype runs and a refused one raises ``unsupported``, for every spec, one SoC per architecture
  and every dtype fusekit has (a spec with a pair table: every (source, destination) pair), through its
  family's recipe in ``tests/spec_recipes.py``; a family or instruction without a recipe fails here;
- the spec names a row of the SoC's vector throughput table (AD-API 附录/Vector指令理论性能汇总.md) or
  says ``NO_FIGURE`` explicitly; a SoC without a table says so in its timing source;
- pyasc's name has a row in ``docs/coverage.md`` and one in README.md's instruction table;
- every ErrorKind names a sanitizer tool.
"""

from __future__ import annotations

import os

import pytest

from fusekit import asc
from fusekit.asc import coverage
from fusekit.asc.basic.spec import NO_FIGURE, REGISTRY
from fusekit.asc.errorkind import ErrorKind
from fusekit.sanitizer.findings import TOOLS
from fusekit.soc import SOCS
from fusekit.timing import load
from spec_recipes import recipe_for, recorded_ops, run_case
import support

ROOT = str(support.ROOT)
ONE_SOC_PER_ARCH = {soc.arch: name for name, soc in reversed(list(SOCS.items()))}
DTYPES = tuple(dt.name for dt in asc.dtypes.ALL)  # every element type a tensor can have


def _cases():
    """(name, soc, source dtype, destination dtype): one dtype twice for a spec without a pair table."""
    for name, spec in sorted(REGISTRY.items()):
        for arch, soc in sorted(ONE_SOC_PER_ARCH.items()):
            if spec.pairs is None:
                for dtype in DTYPES:
                    yield pytest.param(name, soc, dtype, dtype, id=f"{name}-{soc}-{dtype}")
            else:
                for src in DTYPES:
                    for dst in DTYPES:
                        yield pytest.param(name, soc, src, dst, id=f"{name}-{soc}-{src}-{dst}")


def _accepted(spec, arch: str, src: str, dst: str) -> bool:
    if spec.pairs is None:
        return spec.accepts(arch, dst)
    return (src, dst) in spec.pairs.get(arch, ())


@pytest.mark.parametrize("name, soc, src, dst", list(_cases()))
def test_an_accepted_dtype_runs_and_a_refused_one_raises_unsupported(name, soc, src, dst):
    """A dtype (pair) of the spec's table for the SoC's arch runs; any other is refused as ``unsupported``
    (the spec's table is the page's "数据类型" section: docs/developer-guide.md, "Design rules")."""
    spec, arch = REGISTRY[name], SOCS[soc].arch
    case = recipe_for(spec)(name, asc.dtypes.from_name(src), asc.dtypes.from_name(dst), arch)
    if _accepted(spec, arch, src, dst):
        ops = {i.op for i in run_case(case, soc).trace}
        assert recorded_ops(spec) <= ops, f"the recipe did not issue {name}: the Trace holds {sorted(ops)}"
    else:
        with pytest.raises(asc.KernelError) as err:
            run_case(case, soc)
        assert (err.value.op, err.value.kind) == (name, "unsupported"), err.value  # the instruction refuses it


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_spec_has_a_recipe(name):
    """A spec whose family (or, where the family's calls differ, whose name) has no recipe fails here."""
    try:
        recipe_for(REGISTRY[name])
    except LookupError as err:
        pytest.fail(str(err))


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


def _first_cells(lines) -> list[str]:
    return [line.split("|")[1].strip().strip("`") for line in lines if line.startswith("| `")]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_spec_has_a_documentation_row(name):
    """docs/coverage.md (generated from the registry, tests/meta/test_coverage.py) lists every spec's pyasc name,
    and the instruction reference's summary table (generated too) has exactly one row for it."""
    with open(os.path.join(ROOT, "docs", "coverage.md"), encoding="utf-8") as f:
        assert name in _first_cells(f)
    with open(os.path.join(ROOT, "docs", "reference", "instructions.md"), encoding="utf-8") as f:
        assert _first_cells(coverage.marked_block(f.read()).splitlines()).count(name) == 1


def test_every_error_kind_names_a_sanitizer_tool():
    """A KernelError kind becomes a finding of a real tool; a kind that is not a member is refused."""
    assert all(kind.tool in TOOLS for kind in ErrorKind)
    assert ErrorKind("deadlock").tool == "synccheck" and ErrorKind("unsupported") == "unsupported"
    with pytest.raises(ValueError):
        asc.KernelError("op", "detail", kind="out-of-bound")
