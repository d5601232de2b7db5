"""A generated operator as Ascend C: its kernel traced by Huawei's pyasc, and its CANN custom-operator project.

:func:`emit` traces one variant's kernel file (the text fusekit runs) with pyasc into MLIR and Ascend C,
as :mod:`fusekit.pyasc.emit` does for FusedAddScale: nothing is compiled, and pyasc's kernel cache points
at a temporary directory for the duration. The compile-time constants (TILE_LENGTH of an elementwise
kernel, and BUFFER_NUM) are those of a real launch of the operator's *canonical layout*:

- an elementwise operator: every input of the output's shape, ``EXAMPLE_ELEMENTS`` elements;
- a row-tiled one (last-axis reductions, or (C,) inputs such as bias, gamma, beta, mask, per-channel
  scale / offset): rows of ``row`` elements (default 4096), the (C,) inputs one row. Only the variant
  (which inputs are broadcast) comes from this layout: the row geometry -- ROW, GM_ROW, ROW_PAD,
  TILE_ROWS, LOG_ROWS, RTMP -- are ``int`` kernel arguments, so the traced kernel takes any row length.

:func:`write_project` writes msopgen's layout (see :mod:`fusekit.pyasc.project`, whose CMake, build script
and inlining it reuses): ``op_info.json`` (the dtypes pyasc can emit), ``op_host/<op>_tiling.h``
(TilingData: fusekit.tiling's fields, then ``row``/``gm_row``/``inv_row``/``row_pad``/``log_rows``/``rtmp``
for a row-tiled kernel -- ``tile_length`` is TILE_ROWS --, then the attributes), ``op_host/<op>.cpp``
(OpDef, the tiling function -- fusekit.gen's host planning in C++ -- and shape / dtype inference) and
``op_kernel/<op>.cpp`` (one traced kernel per dtype behind the CANN entry, dispatched by tiling key).

A row-tiled project serves every row length: its tiling function computes the row geometry from the
input shape as ``GeneratedOp._run_rows`` does (UB rows padded to 32 B, the reductions' temp buffer, the
rows per tile that fit the SoC's UB, at most 4095, the per-core split on 32 B GM blocks) for the SoC it
was generated for (Ascend910B1: DataCopyPad moves unpadded GM rows), and refuses what that refuses: a row
too long for one row to fit UB, rows that are not whole 32 B blocks of a wider input while a narrower
tensor pads them, more than 2^31 - 1 elements. Building needs CANN and was never tried here; the host
tiling is compiled against stand-ins for the CANN headers and checked against the simulated kernel, for
several row lengths of one project, in ``tests/gen/test_gen_project_cpp.py``.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np

from fusekit.asc import dtypes
from fusekit.pyasc.bridge import load_rebound, require_pyasc
from fusekit.pyasc.emit import EMITTABLE, Emitted, check_dtype, no_pyasc_cache, trace_kernel, write_emitted
from fusekit.pyasc.opdef import MSOPGEN_DTYPES
from fusekit.pyasc.project import HOST_OPDEF, HOST_TILING_SAVE, Dispatched, kernel_entry, write_project_files
from fusekit.soc import get_soc

from .graph import GraphError
from .op import GeneratedOp
from .source import ROW_RESERVED, TILING_FIELDS

EXAMPLE_ELEMENTS = 2**22   # an elementwise launch large enough that the tile is the UB-limited one
ROW = 4096                 # row length of a row-tiled operator's canonical layout (the one traced)
ROW_INPUTS = ("bias", "gamma", "beta", "mask", "scale", "offset")  # the catalogue's (C,) inputs
KERNEL_MODULES = ("fusekit.ops.elementwise", "fusekit.gen.device")  # helpers a generated kernel imports
# a row-tiled kernel's int parameters that are not fusekit.tiling's fields -> their TilingData field
ROW_FIELDS = {"ROW": "row", "GM_ROW": "gm_row", "ROW_PAD": "row_pad", "TILE_ROWS": "tile_length",
              "LOG_ROWS": "log_rows", "RTMP": "rtmp"}
C_TYPES = {"float16": "half", "float32": "float", "int8": "int8_t", "int16": "int16_t", "int32": "int32_t",
           "uint8": "uint8_t", "bfloat16": "bfloat16_t"}


def layout(op: GeneratedOp, dtype: str, row: int = ROW) -> list:
    """Zero arrays of the canonical layout of ``op`` for the floating dtype ``dtype`` (see module doc)."""
    from .lower import natural_dtypes

    gm = natural_dtypes(op.graph, dtype)
    rowwise = op.is_rows(frozenset()) or any(n.name in ROW_INPUTS for n in op.graph.inputs)
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
    launch on ``arrays`` (numpy arrays: their shapes pick the broadcasts; default the canonical layout with
    rows of ``row`` elements, see module doc). A row-tiled kernel's row geometry is not compiled in: the
    traced kernel takes any row length.

    Files written to ``out_dir``: ``<op>_kernel.cpp``, ``<op>.mlir``, ``<op>.lowered.mlir``.

    Raises:
        PyascMissing: pyasc is not installed (the message has the install command).
        ValueError: bfloat16 (pyasc 1.1.1 has none), a dtype the operator does not take, a bad row length.
        GraphError: the expression cannot be generated for this dtype / precision / SoC.
    """
    _vector_only(op)
    check_dtype(dtype)
    if dtype not in op.dtypes:
        raise ValueError(f"{op.name} takes {', '.join(op.dtypes)}, not {dtype}")
    var, _, kwargs, _ = launch_of(op, dtype, precision, soc, row=row, buffer_num=buffer_num, arrays=arrays)
    params = inspect.signature(var.kernel.fn).parameters
    constants = {k: kwargs[k] for k, p in params.items() if "ConstExpr" in str(p.annotation)}
    asc = require_pyasc()  # after the arguments are known good, so their errors show without pyasc
    jit = getattr(load_rebound(var.path, asc, also=KERNEL_MODULES), op.name)
    with no_pyasc_cache():
        result = trace_kernel(asc, var.kernel, dtype, constants, jit=jit, gm_dtypes=var.program.gm_dtypes)
    if out_dir is not None:
        result.files = write_emitted(Path(out_dir), result)
    return result


def _vector_only(op: GeneratedOp) -> None:
    """Refuse a matmul operator: its AIC / MIX_AIC_1_2 kernel and the cube plan's host tiling are not traced or
    written as a CANN project yet (fusekit.gen.cube)."""
    if op.cube is not None:
        raise GraphError(f"{op.name} holds a matmul: emitting its AIC / MIX_AIC_1_2 kernel and a CANN project with "
                         "the cube's host tiling is not generated yet; fusekit run / profile / tune take it, and "
                         "the variant of a run (run(...).variant.source, .path) is its pyasc source")


def emittable(op: GeneratedOp) -> list[str]:
    """The operator's dtypes that pyasc can emit (not bfloat16)."""
    return [d for d in op.dtypes if d in EMITTABLE]


def write_project(op: GeneratedOp, out_dir: "str | Path", *, row: int = ROW, buffer_num: int = 2) -> list[Path]:
    """Write the CANN custom-operator project of ``op`` to ``out_dir`` (see module doc); returns the files.
    ``row`` is the row length of the layout traced; the project's tiling takes any row length that fits UB.

    Raises:
        PyascMissing: pyasc is not installed.
        ValueError: the operator has no dtype pyasc can emit.
    """
    _vector_only(op)
    kept = emittable(op)
    if not kept:
        raise ValueError(f"{op.name} takes only {', '.join(op.dtypes)}, which pyasc 1.1.1 cannot emit")
    launches = {d: launch_of(op, d, "native" if native(op, d) else "fp32", row=row, buffer_num=buffer_num)
                for d in kept}
    kernels = {d: emit(op, d, "native" if native(op, d) else "fp32", row=row, buffer_num=buffer_num) for d in kept}
    info = op.op_info()
    columns = [i for i, d in enumerate(op.dtypes) if d in kept]
    for tensor in info[0]["input_desc"] + info[0]["output_desc"]:
        tensor["type"] = [tensor["type"][i] for i in columns]
        tensor["format"] = [tensor["format"][i] for i in columns]
    note = f"\nGenerated by fusekit.gen from `{op.graph.text()}`" + (
        "; row-tiled: the tiling function computes the row geometry (ROW_PAD, TILE_ROWS, LOG_ROWS, RTMP) "
        "from the input's last axis, so any row length whose row fits UB is served.\n" if _rows(launches) else ".\n")
    return write_project_files(
        Path(out_dir), op.op_type, op.name, prototype=json.dumps(info, indent=2) + "\n",
        tiling_header=tiling_header(op, launches), host=host_source(op, kept, launches),
        kernel=kernel_source(op, kept, launches, kernels), dtypes=kept, dropped=[d for d in op.dtypes if d not in kept],
        readme_note=note)


def native(op: GeneratedOp, dtype: str) -> bool:
    """Whether ``op`` computes natively in ``dtype`` (its default precision on the default SoC)."""
    return op.resolve_precision(None, dtype, get_soc(None)) == "native"


def _rows(launches: dict) -> bool:
    return next(iter(launches.values()))[0].program.rows


def tiling_fields(op: GeneratedOp, launches: dict) -> list[tuple[str, str]]:
    """(C type, name) of the TilingData struct: fusekit.tiling.TilingData's fields (``tile_length`` is TILE_ROWS
    in a row-tiled kernel), the row geometry, the attributes."""
    from dataclasses import fields

    from fusekit import tiling

    out = [("uint32_t", f.name) for f in fields(tiling.TilingData)]
    if _rows(launches):
        out += [("uint32_t", f) for f in ROW_FIELDS.values() if f != "tile_length"] + [("float", "inv_row")]
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
            keyed.append(f"    {'if' if i == 0 else 'else if'} ({cond}) {{  // {d}\n        key = {i + 1};\n"
                         f"{_row_geometry(var.program, kw['BUFFER_NUM'], get_soc(None))}\n    }}")
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
    tensors = []
    for kind, descs in (("Input", info["input_desc"]), ("Output", info["output_desc"])):
        for t in descs:
            types = ", ".join(GE_TYPES[MSOPGEN_DTYPES[t["type"][c]]] for c in columns)
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
    spec = get_soc(None)
    tiling_body = template.format(keyed="\n".join(keyed), dtype_read=dtype_read, checks=_shape_checks(op, launches),
                                  soc=spec.name, ub_bytes=spec.ub_tiling_bytes)
    return _HOST.format(name=op.name, op=op.op_type, tiling=tiling_body, attrs=attrs, tensors="\n".join(tensors),
                        attr_defs=attr_defs, infer_shape=infer, infer_dtype="\n".join(out_types),
                        buffer_num=next(iter(launches.values()))[2]["BUFFER_NUM"])


def _row_geometry(program, buffer_num: int, spec) -> str:
    """C++ statements of one dtype's branch of a row-tiled TilingFunc: ``row_pad``, ``step``, ``rtmp``, ``per_row``
    and ``fixed`` (UB bytes per row of a tile, and per tile) for rows of ``width`` elements, computed as
    ``GeneratedOp._run_rows`` computes them for ``program`` on ``spec`` (its byte counts folded in); returns
    ge::GRAPH_FAILED where that raises for the rows' 32 B blocks."""
    from fusekit.asc.basic.vec_reduce import tmp_elements
    from .device import tile_form_rtmp
    from .source import tile_form_row

    def size(k):
        return dtypes.as_dtype(program.gm_dtypes[k]).sizeof()
    cols = [k for k in program.inputs if k in program.columns]
    tensors = [k for k in program.inputs if k not in program.columns]
    bcs, outs = list(program.broadcast), list(program.outputs)
    granule = 32 // min(size(k) for k in tensors + bcs + outs)
    csize = dtypes.as_dtype(program.compute).sizeof()
    epb = 32 // csize
    # ReduceSum/Max/Min's temp buffer for r repeats (tmp_elements, count form, no index) is ceil_to(c * r, epb),
    # c in {0, 1, 2} by op and arch: find c, check the form over a range of r; the largest c is the maximum
    c = 0
    for name in program.reductions:
        k = tmp_elements(name, spec.arch, csize, epb, True, False) // epb
        if any(tmp_elements(name, spec.arch, csize, r, True, False) != -(-k * r // epb) * epb
               for r in range(1, 9 * epb)):
            raise RuntimeError(f"{name}'s temp buffer on arch {spec.arch} is not ceil_to(c * repeats, {epb}): "
                               "update fusekit.gen.project._row_geometry")
        c = max(c, k)
    # (the narrowest dtype's rows are whole blocks by construction)
    gaps = " || ".join(f"row_pad * {b} > (width * {b} + 31) / 32 * 32"
                       for b in sorted({size(k) for k in tensors + bcs} - {32 // granule}))
    per_elem = (buffer_num * sum(size(k) for k in tensors + outs) + program.slots * program.slot_bytes
                + sum(dtypes.as_dtype(program.broadcast[k].dtype).sizeof() for k in bcs))
    per_row = [f"row_pad * {per_elem}", buffer_num * sum(size(k) for k in cols) + 32 * program.row_slots]
    fixed = [f"row_pad * {max([size(k) for k in bcs] + [0])}", f"rtmp * {csize}", 32 * buffer_num * len(cols)]
    if tile_form_row(program) and program.row_slots:  # the tile form's row-value slots: 8-row groups (Brcb)
        fixed.append(f"(width <= {tile_form_row(program)} ? {7 * 32 * program.row_slots} : 0)")
    if program.mask_slots:  # where: slots rounded up to 256 elements, bit masks of 1/8 B per element
        per_row.append(f"row_pad * {program.mask_slots} / 8")
        fixed.append(program.slots * program.slot_bytes * 255 + 64 * program.mask_slots)
    def total(terms):
        return " + ".join(str(t) for t in terms if t not in (0, "row_pad * 0"))
    body = [f"row_pad = (width + {granule - 1}) / {granule} * {granule};  // UB rows: whole 32 B blocks",
            *([f"if ({gaps}) {{",
               "    return ge::GRAPH_FAILED;  // the padded UB rows of a wider input would hold undefined lanes",
               "}"] if gaps else []),
            *(f"step = Step(gm_row * {b}) > step ? Step(gm_row * {b}) : step;"  # the lcm of powers of 2
              for b in sorted({size(k) for k in outs})),
            *([f"rtmp = ({c} * ((width * {csize} + 255) / 256) + {epb - 1}) / {epb} * {epb};  // for ceil(row / 256 B) "
               "repeats"] if c else []),
            *([f"rtmp = width <= {tile_form_row(program)} && rtmp < {tile_form_rtmp(csize)} ? {tile_form_rtmp(csize)}"
               " : rtmp;  // the tile form's row values (fusekit.gen.device.reduce_rows)"]
              if tile_form_row(program) and program.reductions else []),
            f"rtmp = ((rtmp > 1 ? rtmp : 1) * {csize} + 31) / 32 * 32 / {csize};  // the reductions' temp buffer",
            f"per_row = {total(per_row)};  // UB bytes per row of a tile",
            f"fixed = {total(fixed)};  // UB bytes per core besides the tiles"]
    return "\n".join("        " + line for line in body)


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
    gm_names = [n.name for n in op.graph.inputs] + list(op.graph.output_names)
    dispatched = []
    fields = {k: f"t.{f}" for k, f in ROW_FIELDS.items()} | {"inv_row": "t.inv_row"}
    for d in kept:
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
        dispatched.append(Dispatched(f"{op.name}_{d}", kernels[d].cpp, args,
                                     f"traced by pyasc from fusekit.gen's kernel file: {d}, {kernels[d].constants}"))
    return kernel_entry(op.name, gm_names, dispatched)


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
    uint32_t gm_row = row;  // DataCopyPad moves unpadded rows ({soc})
{dtype_read}
    // the row geometry of fusekit.gen.op.GeneratedOp._run_rows, in 64 bits
    const int64_t ub_bytes = {ub_bytes};  // {soc}'s UB for tiling (TOTAL_VEC_LOCAL_SIZE)
    int64_t width = row, row_pad = 0, rtmp = 0, per_row = 0, fixed = 0;
    uint32_t key = 0, step = 1;
{keyed}
    if (key == 0) {{
        return ge::GRAPH_FAILED;
    }}
    int64_t fit = fixed >= ub_bytes ? 0 : (ub_bytes - fixed) / per_row;  // rows per tile that fit UB
    fit = fit < 4095 ? fit : 4095;
    if (fit < 1) {{
        return ge::GRAPH_FAILED;  // one row does not fit UB: split the last axis, or lower BUFFER_NUM
    }}
    // every core's rows start on a 32 B block of every output: no two cores write one GM block
    uint32_t used = total < cores ? (total > 0 ? total : 1) : cores;
    uint32_t block = (total + used - 1) / used;
    block = (block + step - 1) / step * step;
    block = block < total ? block : total;
    uint32_t block_dim = total == 0 ? 1 : (total + block - 1) / block;
    uint32_t last = total - (block_dim - 1) * block;
    uint32_t tile = total == 0 ? 1 : static_cast<uint32_t>(fit < block ? fit : block);  // TILE_ROWS
    uint32_t ub = static_cast<uint32_t>(per_row * tile + fixed);
    uint32_t log_rows = 0;  // ceil(log2 TILE_ROWS): the doublings that replicate a (C,) row over a tile
    while ((1u << log_rows) < tile) {{
        ++log_rows;
    }}
    tiling.set_row(row);
    tiling.set_gm_row(gm_row);
    tiling.set_inv_row(1.0f / static_cast<float>(row));
    tiling.set_row_pad(static_cast<uint32_t>(row_pad));
    tiling.set_log_rows(log_rows);
    tiling.set_rtmp(static_cast<uint32_t>(rtmp));"""

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
