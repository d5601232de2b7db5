"""One :class:`Spec` per vector instruction, and the registry that the families fill.

A spec holds an instruction's facts in one place (``docs/developer-guide.md``, "Design rules"):
its pyasc name, its Ascend C name, its family, its pipe, the dtypes it accepts per NPU
architecture (from the "数据类型" section of its AD-API page), its numpy semantics and its cost
row. Execution (:mod:`.execute`), the per-SoC dtype tables (:func:`dtypes_for`, :func:`supports`), ``asc.__all__``
and the timing model read specs, never instruction names.

To add an instruction: ``register(Spec(...))`` in its family file and bind the pyasc function
(see ``docs/developer-guide.md``, "Adding an instruction").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping

from ..trace import Pipe

# Architectures (``SoC.arch``): 2201 = Atlas A2/A3 (910B), 2002 = Atlas inference series (310P).
ARCHES = ("2201", "2002")

# Named dtype sets, as the AD-API pages list them (``int16_t, half, int32_t, float`` ...).
F16_F32 = frozenset({"float16", "float32"})
ARITH = frozenset({"float16", "float32", "int16", "int32"})
INT16 = frozenset({"int16", "uint16"})


def destinations(pairs: Mapping[str, frozenset]) -> Mapping[str, frozenset]:
    """The destination dtypes of a (source, destination) pair table, per architecture."""
    return MappingProxyType({arch: frozenset(d for _, d in pair) for arch, pair in pairs.items()})


def same_on_all(dtypes) -> Mapping[str, frozenset]:
    """A dtype table that is the same on every architecture fusekit simulates."""
    return MappingProxyType({arch: frozenset(dtypes) for arch in ARCHES})


@dataclass(frozen=True)
class Spec:
    """The facts of one vector instruction.

    Attributes:
        name: pyasc name (``"add"``); also the Trace's ``Instr.op``.
        cpp: Ascend C name (``"Add"``); recorded as ``Instr.cost`` so the timing model can look
            up the instruction's throughput (AD-API 附录/Vector指令理论性能汇总.md is keyed by it).
        family: the pyasc family file it belongs to (``"vec_binary"``, ``"vec_unary"`` ...).
        dtypes: architecture (``"2201"``, ``"2002"``) -> dtype names the destination may have;
            an architecture that is missing does not have the instruction.
        pairs: for instructions whose sources and destination differ in dtype (MulCast,
            AddReluCast, MulAddDst ...): architecture -> {(source dtype, destination dtype)}; None
            when every operand has the destination's dtype.
        compute: numpy semantics: takes the gathered source lanes (1-D arrays, lane-aligned;
            plus the destination's current lanes when ``reads_dst``) and returns the result lanes,
            which are rounded once to the destination dtype.
        pipe: the pipe that executes it (PIPE_V for every vector instruction).
        cost: the row of the SoC's vector throughput table that costs it (AD-API
            附录/Vector指令理论性能汇总.md, keyed by Ascend C name: by default ``cpp``; the page's
            newer name where it renamed an interface, 接口变更说明.md), or :data:`NO_FIGURE` where the
            page gives none. ``tests/asc_api/basic/test_spec_conformance.py`` checks that every row exists.
        reads_dst: the destination is also a source (MulAddDst, FusedMulAdd, Axpy ...).
        in_place_src1: the 通用地址重叠约束 exception: a later repeat may read what an earlier
            repeat wrote when that operand is src1 and src1's or dst's repeat stride is 0
            (Add, Sub, Mul, Max, Min, AddRelu, SubRelu with half, int32, float).
        arithmetic: the result is computed, so the overflow mode applies to it (False for a plain
            copy of bits such as Duplicate's scalar fill).
        source: the AD-API page(s) the facts come from.
        doc: the semantics in one line, for the generated docstring (``dst[i] = src0[i] + src1[i]``).
    """

    name: str
    cpp: str
    family: str
    dtypes: Mapping[str, frozenset]
    compute: Callable | None = field(default=None, repr=False, compare=False)
    pairs: Mapping[str, frozenset] | None = None
    pipe: Pipe = Pipe.V
    cost: str = ""
    reads_dst: bool = False
    in_place_src1: bool = False
    arithmetic: bool = True
    source: str = ""
    doc: str = ""

    def __post_init__(self):
        if not self.cost:
            object.__setattr__(self, "cost", self.cpp)  # the throughput page is keyed by the Ascend C name

    def accepts(self, arch: str, dtype_name: str) -> bool:
        """Whether the instruction takes ``dtype_name`` on architecture ``arch``."""
        return dtype_name in self.dtypes.get(arch, ())


# Spec.cost of an instruction the throughput page gives no figure for: the timing model charges one
# 256 B repeat per cycle (``fusekit.timing.schedule.vector_cycles``).
NO_FIGURE = "no documented figure: default"

REGISTRY: dict[str, Spec] = {}
_BY_CPP: dict[str, Spec] = {}  # Ascend C name -> spec: ``Instr.cost`` records it
API: dict[str, object] = {}  # name -> what ``fusekit.asc`` exports: the instructions and their helper types


def register(spec: Spec) -> Spec:
    """Add ``spec`` to the registry (one name, one spec) and return it."""
    if spec.name in REGISTRY and REGISTRY[spec.name] != spec:
        raise ValueError(f"vector instruction {spec.name!r} is registered twice")
    REGISTRY[spec.name] = spec
    _BY_CPP[spec.cpp] = spec
    return spec


def export(obj, name: str | None = None):
    """Export ``obj`` from ``fusekit.asc`` under ``name`` (default its ``__name__``); returns it."""
    API[name or obj.__name__] = obj
    return obj


def cost_row(cpp: str, op: str = "") -> str | None:
    """The throughput-table row of an instruction recorded with ``Instr.cost == cpp``, its Ascend C name
    (``""``: the spec named ``op``); None where its spec says :data:`NO_FIGURE` or there is no spec."""
    spec = _BY_CPP.get(cpp) if cpp else REGISTRY.get(op)
    return None if spec is None or spec.cost == NO_FIGURE else spec.cost


def dtypes_for(arch: str) -> Mapping[str, frozenset]:
    """Instruction name -> dtype names it accepts on ``arch`` (``SoC.arch``), from each spec's "数据类型" table.

    The SoC files hold only the SoC's own figures; which dtypes an instruction takes is the spec's fact,
    so the per-SoC view is read here. Import it from :mod:`fusekit.asc.basic`, which registers every family."""
    return MappingProxyType({name: spec.dtypes[arch] for name, spec in REGISTRY.items() if arch in spec.dtypes})


def supports(soc, op: str, dtype_name: str) -> bool:
    """Whether vector instruction ``op`` accepts ``dtype_name`` on ``soc`` (a :class:`fusekit.soc.SoC`)'s architecture."""
    spec = REGISTRY.get(op)
    return spec is not None and dtype_name in spec.dtypes.get(soc.arch, ())
