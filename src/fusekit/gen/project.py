"""A generated operator as Ascend C: its kernel traced by Huawei's pyasc, and its CANN custom-operator project.

:func:`emit` traces one variant's kernel file (the text fusekit runs) with pyasc into MLIR and Ascend C,
as :mod:`fusekit.emit` does for FusedAddScale: nothing is compiled, and pyasc's kernel cache points
at a temporary directory for the duration. The compile-time constants (TILE_LENGTH, or TILE_ROWS /
ROW_PAD / LOG_ROWS / RTMP of a row-tiled kernel, and BUFFER_NUM) are those of a real launch of the
operator's *canonical layout*:

- an elementwise operator: every input of the output's shape, ``EXAMPLE_ELEMENTS`` elements;
- a row-tiled one (last-axis reductions, or (C,) inputs such as bias, gamma, beta, mask, per-channel
  scale / offset): rows of ``row`` elements (default 4096), the (C,) inputs one row. ROW_PAD is
  compiled in, so the kernel takes rows whose 32 B-padded length is ROW_PAD; the project's tiling
  function refuses other row lengths (emit again with another ``row``).

:func:`write_project` writes msopgen's layout (see :mod:`fusekit.project`, whose CMake, build script
and inlining it reuses): ``op_info.json`` (the dtypes pyasc can emit), ``op_host/<op>_tiling.h``
(TilingData: fusekit.tiling's fields, ``row``/``gm_row``/``inv_row`` for a row-tiled kernel, then the
attributes), ``op_host/<op>.cpp`` (OpDef, the tiling function -- fusekit.gen's host planning in C++ --
and shape / dtype inference) and ``op_kernel/<op>.cpp`` (one traced kernel per dtype behind the CANN
entry, dispatched by tiling key). Building needs CANN and was never tried here; the host tiling is compiled
against stand-ins for the CANN headers and checked against the simulated kernel in
``tests/test_gen_project_cpp.py``.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np

from fusekit.asc import dtypes
from fusekit.emit import EMITTABLE, Emitted, _check_dtype, _no_pyasc_cache, _trace, _write
from fusekit.project import HOST_OPDEF, HOST_TILING_SAVE, write_files

from .op import GeneratedOp
from .source import ROW_RESERVED, TILING_FIELDS

EXAMPLE_ELEMENTS = 2**22   # an elementwise launch large enough that the tile is the UB-limited one
ROW = 4096                 # default row length of a row-tiled operator's canonical layout
ROW_INPUTS = ("bias", "gamma", "beta", "mask", "scale", "offset")  # the catalogue's (C,) inputs
KERNEL_MODULES = ("fusekit.ops.elementwise", "fusekit.gen.device")  # helpers a generated kernel imports
C_TYPES = {"float16": "half", "float32": "float", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
           "uint8": "uint8_t", "bfloat16": "bfloat16_t"}


def layout(op: GeneratedOp, dtype: str, row: int = ROW) -> list:
    """Zero arrays of the canonical layout of ``op`` for the floating dtype ``dtype`` (see module doc)."""
    from .lower import natural_dtypes

    gm = natural_dtypes(op.graph, dtype)
    rowwise = op._is_rows(frozenset()) or any(n.name in ROW_INPUTS for n in op.graph.inputs)
    shape = (max(EXAMPLE_ELEMENTS // row, 1), row) if rowwise else (EXAMPLE_ELEMENTS,)
    return [np.zeros(shape[-1:] if rowwise and n.name in ROW_INPUTS else shape, dtypes.as_dtype(gm[n.name]).np)
            for n in op.graph.inputs]


def launch_of(op: GeneratedOp, dtype: str, precision: str | None = None, soc=None, *, row: int = ROW,
              buffer_num: int = 2, arrays: list | None = None):
    """(variant, block_dim, kernel arguments, TilingData) of the launch for ``arrays`` (default: the canonical
    layout's), without running it."""
    arrays = layout(op, dtype, row) if arrays is None else arrays
    seen = []
    attrs = {a.name: 1.0 for a in op.graph.attrs}
    result = op.run(*arrays, soc=soc, precision=precision, buffer_num=buffer_num, dtype=dtype,
                    launcher=lambda kernel, block_dim, args, kwargs, spec: seen.append((block_dim, kwargs)), **attrs)
    block_dim, kwargs = seen[0]
    return result.variant, block_dim, kwargs, result.tilings[0]


def emit(op: GeneratedOp, dtype: str = "float16", precision: str = "native", soc=None, *, row: int = ROW,
         buffer_num: int = 2, out_dir: "str | Path | None" = None, arrays: list | None = None) -> Emitted:
    """Trace ``op``'s kernel for GM dtype ``dtype`` with pyasc: the variant and compile-time constants of a
    launch on ``arrays`` (numpy arrays: their shapes pick the broadcasts; default the canonical layout, see
    module doc).

    Files written to ``out_dir``: ``<op>_kernel.cpp``, ``<op>.mlir``, ``<op>.lowered.mlir``.

    Raises:
        PyascMissing: pyasc is not installed (the message has the install command).
        ValueError: bfloat16 (pyasc 1.1.1 has none), a dtype the operator does not take, a bad row length.
        GraphError: the expression cannot be generated for this dtype / precision / SoC.
    """
    from fusekit.bridge import load_rebound, require_pyasc

    _check_dtype(dtype)
    if dtype not in op.dtypes:
        raise ValueError(f"{op.name} takes {', '.join(op.dtypes)}, not {dtype}")
    var, _, kwargs, _ = launch_of(op, dtype, precision, soc, row=row, buffer_num=buffer_num, arrays=arrays)
    params = inspect.signature(var.kernel.fn).parameters
    constants = {k: kwargs[k] for k, p in params.items() if "ConstExpr" in str(p.annotation)}
    asc = require_pyasc()  # after the arguments are known good, so their errors show without pyasc
    jit = getattr(load_rebound(var.path, asc, also=KERNEL_MODULES), op.name)
    with _no_pyasc_cache():
        result = _trace(asc, var.kernel, dtype, constants, jit=jit, gm_dtypes=var.program.gm_dtypes)
    if out_dir is not None:
        result.files = _write(Path(out_dir), result)
    return result


def emittable(op: GeneratedOp) -> list[str]:
    """The operator's dtypes that pyasc can emit (not bfloat16)."""
    return [d for d in op.dtypes if d in EMITTABLE]


def write_project(op: GeneratedOp, out_dir: "str | Path", *, row: int = ROW, buffer_num: int = 2) -> list[Path]:
    """Write the CANN custom-operator project of ``op`` to ``out_dir`` (see module doc); returns the files.

    Raises:
        PyascMissing: pyasc is not installed.
        ValueError: the operator has no dtype pyasc can emit.
    """
    from fusekit.project import _BUILD, _README, _TOP_CMAKE

    kept = emittable(op)
    if not kept:
        raise ValueError(f"{op.name} takes only {', '.join(op.dtypes)}, which pyasc 1.1.1 cannot emit")
    launches = {d: launch_of(op, d, "native" if _native(op, d) else "fp32", row=row, buffer_num=buffer_num)
                for d in kept}
    kernels = {d: emit(op, d, "native" if _native(op, d) else "fp32", row=row, buffer_num=buffer_num) for d in kept}
    info = op.op_info()
    columns = [i for i, d in enumerate(op.dtypes) if d in kept]
    for tensor in info[0]["input_desc"] + info[0]["output_desc"]:
        tensor["type"] = [tensor["type"][i] for i in columns]
        tensor["format"] = [tensor["format"][i] for i in columns]
    name, out = op.name, Path(out_dir)
    files = {
        "op_info.json": json.dumps(info, indent=2) + "\n",
        f"op_host/{name}_tiling.h": tiling_header(op, launches),
        f"op_host/{name}.cpp": host_source(op, kept, launches),
        f"op_kernel/{name}.cpp": kernel_source(op, kept, launches, kernels),
        "CMakeLists.txt": _TOP_CMAKE.format(op=op.op_type),
        "build.sh": _BUILD.format(name=name),
        "README.md": _README.format(op=op.op_type, name=name, dtypes=", ".join(kept),
                                    dropped=", ".join(d for d in op.dtypes if d not in kept) or "none")
        + f"\nGenerated by fusekit.gen from `{op.graph.text()}`" + (
            f"; row-tiled, compiled for rows of {row} elements (ROW_PAD "
            f"{next(iter(launches.values()))[2]['ROW_PAD']}).\n" if _rows(launches) else ".\n"),
    }
    return write_files(out, files)


def _native(op: GeneratedOp, dtype: str) -> bool:
    from fusekit.soc import get_soc

    return op.resolve_precision(None, dtype, get_soc(None)) == "native"


def _rows(launches: dict) -> bool:
    return next(iter(launches.values()))[0].program.rows


def tiling_fields(op: GeneratedOp, launches: dict) -> list[tuple[str, str]]:
    """(C type, name) of the TilingData struct: fusekit.tiling.TilingData's fields, row geometry, attributes."""
    from dataclasses import fields

    from fusekit import tiling

    out = [("uint32_t", f.name) for f in fields(tiling.TilingData)]
    if _rows(launches):
        out += [("uint32_t", "row"), ("uint32_t", "gm_row"), ("float", "inv_row")]
    return out + [("float", a.name) for a in op.graph.attrs]


def tiling_header(op: GeneratedOp, launches: dict) -> str:
    struct = f"{op.op_type}TilingData"
    lines = [f"// TilingData of {op.op_type} (fusekit.gen): fusekit.tiling's fields"
             + (" (in rows), the row geometry" if _rows(launches) else "") + ", then the attributes.",
             "#pragma once", '#include "register/tilingdata_base.h"', "", "namespace optiling {",
             f"BEGIN_TILING_DATA_DEF({struct})"]
    lines += [f"TILING_DATA_FIELD_DEF({ctype}, {field});" for ctype, field in tiling_fields(op, launches)]
    lines += ["END_TILING_DATA_DEF;", f"REGISTER_TILING_DATA_CLASS({op.op_type}, {struct})", "}  // namespace optiling", ""]
    return "\n".join(lines)


GE_TYPES = {"float16": "ge::DT_FLOAT16", "float32": "ge::DT_FLOAT", "bfloat16": "ge::DT_BF16", "int8": "ge::DT_INT8",
            "int16": "ge::DT_INT16", "int32": "ge::DT_INT32", "uint8": "ge::DT_UINT8"}


def _key_tensor(op: GeneratedOp, kept: list[str], launches: dict) -> "tuple[str, int] | None":
    """The first tensor whose dtype differs between the kept columns: (name, input index or -1 - output index)."""
    gm = {d: launches[d][0].program.gm_dtypes for d in kept}
    names = [n.name for n in op.graph.inputs] + list(op.graph.output_names)
    for i, k in enumerate(names):
        if len({gm[d][k] for d in kept}) > 1:
            return k, i if i < len(op.graph.inputs) else -1 - (i - len(op.graph.inputs))
    return None


def host_source(op: GeneratedOp, kept: list[str], launches: dict) -> str:
    """op_host: the tiling function (fusekit.gen's planning in C++), shape / dtype inference and the OpDef."""
    rows = _rows(launches)
    inputs = [n.name for n in op.graph.inputs]
    key = _key_tensor(op, kept, launches)
    keyed = []
    for i, d in enumerate(kept):
        var, _, kw, plan = launches[d]
        gm = var.program.gm_dtypes
        sizes = {k: dtypes.as_dtype(gm[k]).sizeof() for k in inputs + list(op.graph.output_names)}
        cond = "true" if key is None else f"dtype == {GE_TYPES[gm[key[0]]]}"
        if rows:
            step = "step = 1;" + "".join(f" step = Step(gm_row * {b}) > step ? Step(gm_row * {b}) : step;"
                                         for b in sorted({sizes[k] for k in op.graph.output_names}))  # lcm of powers of 2
            widths = sorted({sizes[k] for k in inputs})
            gaps = " || ".join(f"{kw['ROW_PAD']} * {s} > (row * {s} + 31) / 32 * 32" for s in widths)
            keyed.append(f"    {'if' if i == 0 else 'else if'} ({cond}) {{  // {d}\n"
                         f"        key = {i + 1}; tile = {kw['TILE_ROWS']};\n"
                         f"        if ((row + {32 // min(sizes.values())} - 1) / {32 // min(sizes.values())} * "
                         f"{32 // min(sizes.values())} != {kw['ROW_PAD']} || {gaps}) {{\n"
                         f"            return ge::GRAPH_FAILED;  // the kernel is compiled for rows padded to "
                         f"{kw['ROW_PAD']} elements: emit it again for this row length\n        }}\n"
                         f"        {step}\n        ub = {plan.ub_bytes};\n    }}")
        else:
            narrow = min(sizes.values())
            keyed.append(f"    {'if' if i == 0 else 'else if'} ({cond}) {{  // {d}\n"
                         f"        key = {i + 1}; size = {narrow}; tile = {kw['TILE_LENGTH']}; ub = "
                         f"{plan.ub_bytes};\n    }}")
    attrs = "\n".join(f"    tiling.set_{a.name}(*context->GetAttrs()->GetAttrPointer<float>({i}));"
                      for i, a in enumerate(op.graph.attrs))
    dtype_read = ("    ge::DataType dtype = " + (f"context->GetInputDesc({key[1]})->GetDataType();" if key and key[1] >= 0
                  else f"context->GetOutputDesc({-1 - key[1]})->GetDataType();" if key else "ge::DT_UNDEFINED;")
                  + "\n    (void)dtype;")
    info = op.op_info()[0]
    columns = [i for i, d in enumerate(op.dtypes) if d in kept]
    from fusekit.opdef import _DTYPES
    tensors = []
    for kind, descs in (("Input", info["input_desc"]), ("Output", info["output_desc"])):
        for t in descs:
            types = ", ".join(GE_TYPES[_DTYPES[t["type"][c]]] for c in columns)
            formats = ", ".join("ge::FORMAT_ND" for _ in columns)
            tensors.append(f'        this->{kind}("{t["name"]}")\n            .ParamType(REQUIRED)\n'
                           f"            .DataType({{{types}}})\n            .Format({{{formats}}});")
    attr_defs = "\n".join(f'        this->Attr("{a.name}").AttrType('
                          + ("REQUIRED).Float();" if op.graph.defaults[a.name] is None
                             else f"OPTIONAL).Float({op.graph.defaults[a.name]!r});")
                          for a in op.graph.attrs)
    infer = "\n".join(f"    *context->GetOutputShape({i}) = *context->GetInputShape(0);"
                      for i in range(len(op.graph.output_names)))
    out_types = []
    for i, name in enumerate(op.graph.output_names):
        for d in kept:
            gm = launches[d][0].program.gm_dtypes
            cond = "true" if key is None or key[1] < 0 else \
                f"context->GetInputDataType({key[1]}) == {GE_TYPES[gm[key[0]]]}"
            out_types.append(f"    if ({cond}) {{ context->SetOutputDataType({i}, {GE_TYPES[gm[name]]}); }}")
    template = _ROW_TILING if rows else _FLAT_TILING
    tiling_body = template.format(keyed="\n".join(keyed), dtype_read=dtype_read,
                                  checks=_shape_checks(op, launches))
    return _HOST.format(name=op.name, op=op.op_type, tiling=tiling_body, attrs=attrs, tensors="\n".join(tensors),
                        attr_defs=attr_defs, infer_shape=infer, infer_dtype="\n".join(out_types),
                        buffer_num=next(iter(launches.values()))[2]["BUFFER_NUM"])


def _shape_checks(op: GeneratedOp, launches: dict) -> str:
    """C++ checks that the inputs have the canonical layout's sizes (full, or one row for a (C,) input)."""
    var = next(iter(launches.values()))[0]
    lines = []
    for i, n in enumerate(op.graph.inputs):
        want = "row" if n.name in var.program.broadcast else "elements"
        lines.append(f"    if (context->GetInputShape({i})->GetStorageShape().GetShapeSize() != {want}) {{\n"
                     f"        return ge::GRAPH_FAILED;  // {n.name} must have {'one row' if want == 'row' else 'the output'}"
                     f"'s size (the kernel reads it at those offsets)\n    }}")
    return "\n".join(lines)


def kernel_source(op: GeneratedOp, kept: list[str], launches: dict, kernels: dict) -> str:
    """op_kernel: each traced kernel as an inline function, dispatched by tiling key from the CANN entry."""
    from fusekit.project import _inline

    gm_names = [n.name for n in op.graph.inputs] + list(op.graph.output_names)
    bodies, calls = [], []
    fields = {"ROW": "t.row", "GM_ROW": "t.gm_row", "inv_row": "t.inv_row"}
    for key, d in enumerate(kept, start=1):
        var, _, _, _ = launches[d]
        gm = var.program.gm_dtypes
        args = []
        for name, p in inspect.signature(var.kernel.fn).parameters.items():
            text = str(p.annotation)
            if "ConstExpr" in text:
                continue
            if "GlobalAddress" in text:
                args.append(f"(__gm__ {C_TYPES[gm[name]]}*){name}")
            elif name in TILING_FIELDS:
                args.append(f"t.{name}")
            elif name in fields:
                args.append(fields[name])
            else:
                args.append(f"t.{name[:-1] if name.endswith('_') and name[:-1] in ROW_RESERVED else name}")  # an attribute
        bodies.append(f"// traced by pyasc from fusekit.gen's kernel file: {d}, {kernels[d].constants}\n"
                      + _inline(kernels[d].cpp, f"{op.name}_{d}"))
        calls.append(f"    {'if' if key == 1 else 'else if'} (TILING_KEY_IS({key})) {{\n"
                     f"        {op.name}_{d}({', '.join(args)});\n    }}")
    params = ", ".join(f"GM_ADDR {g}" for g in gm_names)
    return ('#include "kernel_operator.h"\n\n' + "\n\n".join(bodies) +
            f'\n\nextern "C" __global__ __aicore__ void {op.name}({params}, GM_ADDR workspace, GM_ADDR tiling)\n{{\n'
            "    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);\n    GET_TILING_DATA(t, tiling);\n"
            + "\n".join(calls) + "\n}\n")


_FLAT_TILING = """    int64_t elements = context->GetOutputShape(0)->GetStorageShape().GetShapeSize();
{checks}
    if (elements < 0 || elements > INT32_MAX) {{
        return ge::GRAPH_FAILED;  // the kernel's lengths are int32: split larger inputs (fusekit.tiling.split_launches)
    }}
    uint32_t total = static_cast<uint32_t>(elements);
{dtype_read}
    uint32_t size = 2, tile = 0, key = 0, ub = 0;  // size: the narrowest GM dtype; TILE_LENGTH is compiled in
{keyed}
    if (key == 0) {{
        return ge::GRAPH_FAILED;
    }}
    uint32_t align = 512 / size;  // per-core ranges start 512 B-aligned (fusekit.tiling)
    uint32_t wanted = static_cast<uint32_t>((static_cast<uint64_t>(total) * size + 511) / 512);
    uint32_t used = wanted < cores ? (wanted > 0 ? wanted : 1) : cores;
    uint32_t block = ((total + used - 1) / used + align - 1) / align * align;
    uint32_t block_dim = total == 0 ? 1 : (total + block - 1) / block;
    if (block_dim == 1) {{
        block = total;
    }}
    uint32_t last = total - (block_dim - 1) * block;"""

_ROW_TILING = """    auto shape = context->GetOutputShape(0)->GetStorageShape();
    int64_t elements = shape.GetShapeSize();
    uint32_t row = shape.GetDimNum() == 0 ? 1 : static_cast<uint32_t>(shape.GetDim(shape.GetDimNum() - 1));
{checks}
    if (elements < 0 || elements > INT32_MAX || row == 0) {{
        return ge::GRAPH_FAILED;  // int32 lengths, and rows of at least one element
    }}
    uint32_t total = static_cast<uint32_t>(elements) / row;  // the tiling counts rows
    uint32_t gm_row = row;  // DataCopyPad moves unpadded rows (Ascend910B)
{dtype_read}
    uint32_t tile = 0, key = 0, step = 1, ub = 0;  // TILE_ROWS (tile) and ROW_PAD are compiled in
{keyed}
    if (key == 0) {{
        return ge::GRAPH_FAILED;
    }}
    // every core's rows start on a 32 B block of every output: no two cores write one GM block
    uint32_t used = total < cores ? (total > 0 ? total : 1) : cores;
    uint32_t block = (total + used - 1) / used;
    block = (block + step - 1) / step * step;
    block = block < total ? block : total;
    uint32_t block_dim = total == 0 ? 1 : (total + block - 1) / block;
    uint32_t last = total - (block_dim - 1) * block;
    tiling.set_row(row);
    tiling.set_gm_row(gm_row);
    tiling.set_inv_row(1.0f / static_cast<float>(row));"""

_HOST = """// {op}: host side generated by fusekit.gen (tiling = fusekit.gen's host planning in C++).
#include <cstdint>
#include "{name}_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {{
static uint32_t Step(uint32_t bytes)  // rows per 32 B block boundary: 32 / gcd(bytes, 32)
{{
    uint32_t a = bytes % 32, b = 32;
    while (a != 0) {{ uint32_t r = b % a; b = a; a = r; }}
    return 32 / b;
}}

static ge::graphStatus TilingFunc(gert::TilingContext* context)
{{
    {op}TilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t cores = platform.GetCoreNumAiv();
{tiling}
    (void)Step;
    tiling.set_total_length(total);
    tiling.set_block_dim(block_dim);
    tiling.set_block_length(block);
    tiling.set_tile_length(tile);
    tiling.set_tile_num(tile == 0 ? 0 : block / tile);
    tiling.set_tail_length(tile == 0 ? 0 : block % tile);
    tiling.set_last_block_length(last);
    tiling.set_last_tile_num(tile == 0 ? 0 : last / tile);
    tiling.set_last_tail_length(tile == 0 ? 0 : last % tile);
    tiling.set_buffer_num({buffer_num});
    tiling.set_ub_bytes(ub);
""" + HOST_TILING_SAVE + """
namespace ge {{
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{{
{infer_shape}
    return GRAPH_SUCCESS;
}}

static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{{
{infer_dtype}
    return GRAPH_SUCCESS;
}}
}}  // namespace ge

""" + HOST_OPDEF
