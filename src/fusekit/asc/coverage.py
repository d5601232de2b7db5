"""Coverage of pyasc 1.1.1's ``asc`` names by the simulator: ``python -m fusekit.asc.coverage [out.md]``.

Every public name of pyasc's ``asc`` (``pyasc_names.json``, see :mod:`fusekit.asc.names`) is either
simulated (exported by ``fusekit.asc``), out of scope with a reason (:data:`OUT_OF_SCOPE`: the cube
unit, AIPP, the advanced APIs of issue 11, pyasc's compiler and host plumbing), or in scope and
not simulated yet (:data:`NOT_YET`, with the issue item that adds it). :func:`unlisted` returns
the names in none of the three; ``tests/meta/test_coverage.py`` fails when it is not empty. A kernel
calling a name fusekit lacks gets "pyasc has asc.X; fusekit does not simulate it yet" with the
reason below (:func:`reason`, used by :func:`fusekit.asc.names.unknown`).

It also renders the registry's vector instructions with their dtypes per architecture
(:func:`instruction_table`), the summary table of the instruction reference (docs/reference/instructions.md,
between its instruction markers), which ``python tools/instruction_reference.py`` writes;
``tests/meta/test_instruction_reference.py`` fails when it is stale.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from .names import PYASC_VERSION, pyasc_names

CUBE = ("issue 22 (the cube unit): not simulated yet; fusekit simulates the basic cube API (mmad, load_data 2D, "
        "load_data_with_transpose, fixpipe, data_copy with Nd2NzParams, init_const_value) and asc.adv.Matmul, on AIC "
        "and mix kernels (fusekit.asc.cube, fusekit.asc.adv.matmul; docs/cube.md)")
AIPP = "AIPP (image pre-processing on the AI Core's MTE2), not part of the vector core"
ADV = ("the advanced APIs (asc.adv): the vector side is simulated (fusekit.asc.adv: math functions, quant, concat, "
       "extract, softmax, rmsnorm); matmul is the cube unit, not simulated")
HOST = "pyasc's compiler / launch plumbing, not a kernel API (fusekit launches with kernel[n](...))"
PROFILING = "profiling / instruction-cache hints with no effect a CPU simulation could show"
MODULE = "a sub-module of pyasc's package, not an API"
HCCL = ("HCCL collective-communication context (GetHcclContext / SetHcclContext: buffers of other devices), not "
        "part of a single vector core")

_PATTERNS = [  # (regex on the name, reason), first match wins
    (r"^(Aipp|set_aipp_functions$)", AIPP),
    (r"^(load_image_to_local|LoadImageToLocal)", AIPP),
    (r"^adv$", ADV),
    (r"^(CodegenOptions|CompileOptions|LaunchOptions|Hardware|codegen|common|core|language|lib|property|inline|"
     r"runtime|jit_options)$", HOST),
    (r"^lan_all$", MODULE),
    (r"^(get_hccl_context|set_hccl_context)$", HCCL),
    (r"^(metrics_prof_start|metrics_prof_stop|icache_preload|get_icache_preload_status|data_cache_preload|"
     r"dump_acc_chk_point|get_program_counter)$", PROFILING),
]

NOT_YET = {  # in scope (issue 9), not simulated yet: name -> what adds it (an exported name counts as simulated)
    **dict.fromkeys(["ListTensorDesc", "TensorDesc"],
                    "issue 9 item 8: not simulated yet (a tensor list is GM data holding GM pointers; fusekit's GM "
                    "buffers have no numeric addresses, and ListTensorDesc.md gives the layout only as a figure)"),
    **dict.fromkeys(["mrg_sort4", "rp_sort16", "proposal_concat", "proposal_extract", "load_data_with_sparse"],
                    "issue 9 item 5 (data rearrangement): not simulated yet"),
}


# in scope, not simulated yet, by pattern: the cube API beyond what fusekit.asc.cube simulates
_NOT_YET_PATTERNS = [
    (r"^(mmad|load_data|LoadData|fixpipe|Fixpipe|Mmad|Nd2Nz|Nz2Nd|DataCopyCO12|CubeFormat|CO2Layout|TOTAL_L[01C]|"
     r"set_load_data|set_fix_pipe|set_hf32|set_mm_layout|MatmulConfigMode|IterateMode|IterateOrder|ScheduleType|"
     r"LayoutMode|BatchMode|DEFAULT_C0_SIZE|QuantModes$)", CUBE),
]


def reason(name: str) -> str | None:
    """Why fusekit does not simulate ``asc.<name>`` (out of scope or not yet), or None when unlisted."""
    for pattern, why in _PATTERNS:
        if re.search(pattern, name):
            return f"out of scope: {why}"
    for pattern, why in _NOT_YET_PATTERNS:
        if re.search(pattern, name):
            return why
    return NOT_YET.get(name)


def _forms(obj) -> str:
    """Call forms of a simulated name: its Python signature, or the family's forms for a vector instruction."""
    from .basic.spec import REGISTRY

    spec = REGISTRY.get(getattr(obj, "__name__", ""))
    if spec is not None:
        return FAMILY_FORMS.get(spec.family, spec.family)
    if inspect.isclass(obj):
        return "class"
    try:
        return f"({', '.join(str(p) for p in inspect.signature(obj).parameters.values())})"
    except (TypeError, ValueError):
        return "constant"


FAMILY_FORMS = {
    "vec_binary": "count (dst, src0, src1, count); split (..., mask int | [hi, lo], repeat_times, BinaryRepeatParams)",
    "vec_binary_scalar": "count (dst, src, scalar, count); split (..., mask, repeat_times, UnaryRepeatParams)",
    "vec_unary": "count (dst, src, count); split (..., mask, repeat_times, UnaryRepeatParams)",
    "vec_ternary_scalar": "count (dst, src, scalar, count); split (..., mask, repeat_times, UnaryRepeatParams)",
    "vec_vconv": "count and split forms with round_mode (see the page)",
    "vec_duplicate": "count (dst, scalar, count); split (..., mask, repeat_times, dst_blk_stride, dst_rep_stride)",
    "vec_reduce": "count and split forms, as each page lists",
    "vec_cmpsel": "count and split forms with cmp_mode / sel_mode",
    "vec_5hd": "(dst_list, src_list, TransDataTo5HDParams) with 16 LocalTensors or 16 addresses; (dst, src, params) "
               "with uint64 address tensors",
    "vec_bilinear": "(dst, src0, src0_offset, src1, mask int | [hi, lo], h_repeat, repeat_mode, dst_blk_stride, "
                    "v_r_offset, v_repeat, shared_tmp_buffer)",
}


def rows() -> list[tuple[str, str, str]]:
    """(name, forms, status) for every ``asc`` name of pyasc 1.1.1, sorted by name."""
    from fusekit import asc

    out = []
    for name in sorted(pyasc_names()["asc"]):
        if name in dir(asc):
            out.append((name, _forms(getattr(asc, name)), "simulated"))
        else:
            out.append((name, "", reason(name) or "UNLISTED"))
    return out


def unlisted() -> list[str]:
    """pyasc names that are neither simulated nor listed with a reason (must be empty)."""
    return [name for name, _, status in rows() if status == "UNLISTED"]


def markdown() -> str:
    """The coverage table as Markdown (docs/coverage.md)."""
    table = rows()
    simulated = sum(status == "simulated" for _, _, status in table)
    lines = [f"# pyasc {PYASC_VERSION} coverage", "",
             f"Generated by `python -m fusekit.asc.coverage docs/coverage.md` from `pyasc_names.json`: "
             f"{simulated} of {len(table)} `asc` names simulated.", "",
             "| name | call forms | status |", "|---|---|---|"]
    lines += [f"| `{n}` | {f.replace('|', '&#124;')} | {s} |" for n, f, s in table]
    return "\n".join(lines) + "\n"


TABLE_BEGIN = "<!-- instructions: generated by `python tools/instruction_reference.py`; do not edit -->"
TABLE_END = "<!-- /instructions -->"


def _dtype_cell(spec, arch: str) -> str:
    """One architecture's dtypes of ``spec`` (its (source -> destination) pairs where it has a pair table)."""
    if spec.pairs is not None:
        return ", ".join(f"{s} -> {d}" for s, d in sorted(spec.pairs.get(arch, ()))) or "-"
    return ", ".join(sorted(spec.dtypes.get(arch, ()))) or "-"


def instruction_table() -> str:
    """The vector instructions of the registry (``fusekit.asc.basic.spec.REGISTRY``) as a Markdown table, one
    row per spec sorted by family then pyasc name: the Ascend C name, the dtypes (or dtype pairs) per
    architecture from the spec (its page's "数据类型" section; "-": the architecture lacks the instruction)
    and the page. The instruction reference holds it between :data:`TABLE_BEGIN` and :data:`TABLE_END`."""
    from fusekit.soc import SOCS

    from .basic.spec import ARCHES, REGISTRY

    socs = "; ".join(f"{arch}: {', '.join(n for n, soc in SOCS.items() if soc.arch == arch)}" for arch in ARCHES)
    lines = [f"{len(REGISTRY)} vector instructions; SoCs per architecture: {socs}.", "",
             "| instruction | Ascend C | family | " + " | ".join(f"dtypes on {a}" for a in ARCHES) + " | page |",
             "|---|---|---|" + "---|" * len(ARCHES) + "---|"]
    for spec in sorted(REGISTRY.values(), key=lambda s: (s.family, s.name)):
        cells = [f"`{spec.name}`", spec.cpp, spec.family, *(_dtype_cell(spec, a) for a in ARCHES), spec.source]
        lines.append("| " + " | ".join(c.replace("|", "&#124;") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def marked_block(text: str) -> str:
    """The text between the instruction markers of a page (ValueError when they are missing)."""
    start, end = text.find(TABLE_BEGIN), text.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"the page lacks the markers {TABLE_BEGIN!r} ... {TABLE_END!r}")
    return text[start + len(TABLE_BEGIN):end].strip("\n") + "\n"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(markdown(), encoding="utf-8")
    else:
        print(markdown(), end="")
