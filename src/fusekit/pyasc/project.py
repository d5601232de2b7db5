"""A CANN custom-operator project for a shipped operator, in msopgen's layout (seed article section 2.3).

    DIR/
      op_info.json                  the prototype
      CMakeLists.txt, build.sh      build.sh has CANN's msopgen generate the CMake scaffolding for
                                    op_info.json, overlays the sources below, and builds the package
      op_host/<op>_tiling.h         the TilingData struct (BEGIN_TILING_DATA_DEF): fusekit.tiling's fields + attrs
      op_host/<op>.cpp              OpDef from op_info.json, the tiling function, shape/dtype inference
      op_kernel/<op>.cpp            the kernel emitted by pyasc per dtype, behind the CANN entry point
      README.md

The CMake scaffolding (cmake/, op_host/CMakeLists.txt with the proto and aclnn targets, ...) is
CANN's own, so it comes from msopgen rather than from here. The host tiling is fusekit.tiling's
algorithm in C++; TILE_LENGTH and BUFFER_NUM are the compile-time constants the kernel was
emitted with. The OpDef lists the prototype's dtypes that pyasc can emit (not bfloat16). Building
needs CANN and was never tried here; the generated sources are checked for structure only
(``tests/pyasc/test_pyasc_bridge.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields
from pathlib import Path

from fusekit import tiling
from fusekit.pyasc.emit import EMITTABLE, Emitted, emit
from fusekit.files import write_atomic
from fusekit.pyasc.opdef import OpDef, load_op_info

GE_TYPES = {"float16": "ge::DT_FLOAT16", "float32": "ge::DT_FLOAT", "bfloat16": "ge::DT_BF16", "int8": "ge::DT_INT8",
            "int16": "ge::DT_INT16", "int32": "ge::DT_INT32", "int64": "ge::DT_INT64", "uint8": "ge::DT_UINT8",
            "uint16": "ge::DT_UINT16", "uint32": "ge::DT_UINT32", "uint64": "ge::DT_UINT64"}
C_TYPES = {"float16": "half", "float32": "float"}
ATTR_TYPES = {"float": ("Float", "float"), "int": ("Int", "int64_t"), "bool": ("Bool", "bool")}
AIV_ONLY = "KERNEL_TYPE_AIV_ONLY"  # the kernel type of a kernel of vector instructions only (runs on AIV cores)


def write_project(op: str, out_dir: "str | Path", *, buffer_num: int = 2) -> list[Path]:
    """Write the project of ``op`` (an operator with an op_info.json) to ``out_dir``; returns the files.

    Raises:
        PyascMissing: pyasc is not installed (emitting the kernel needs it).
        ValueError: the operator has no prototype.
    """
    info = Path(__file__).parents[1] / "ops" / op / "op_info.json"
    if not info.is_file():
        raise ValueError(f"{op} has no op_info.json prototype, so it cannot become a CANN operator project")
    opdef = load_op_info(info)
    dtypes = [d for d in opdef.dtypes if d in EMITTABLE]
    kernels = {d: emit(op, d, buffer_num=buffer_num)[0] for d in dtypes}
    return write_project_files(
        Path(out_dir), opdef.op_type, opdef.kernel_name, prototype=_prototype_json(info, opdef, dtypes),
        tiling_header=tiling_header(opdef), host=host_source(opdef, dtypes, kernels), kernel=kernel_source(opdef, kernels),
        dtypes=dtypes, dropped=[d for d in opdef.dtypes if d not in dtypes])


def _prototype_json(info: Path, opdef: OpDef, dtypes: list[str]) -> str:
    """op_info.json with only the type/format columns of the emitted dtypes, so that msopgen and the OpDef agree."""
    raw = json.loads(info.read_text(encoding="utf-8"))
    keep = [i for i, d in enumerate(opdef.inputs[0].dtypes) if d in dtypes]
    for op in raw if isinstance(raw, list) else [raw]:
        for tensor in op.get("input_desc", []) + op.get("output_desc", []):
            tensor["type"] = [tensor["type"][i] for i in keep]
            tensor["format"] = [tensor["format"][i] for i in keep]
    return json.dumps(raw, indent=2) + "\n"


def tiling_fields(opdef: OpDef) -> list[tuple[str, str]]:
    """(C type, name) of the TilingData struct: fusekit.tiling.TilingData's fields, then the attributes."""
    out = [("uint32_t", f.name) for f in fields(tiling.TilingData)]
    return out + [(ATTR_TYPES[a.type][1], a.name) for a in opdef.attrs]


def tiling_header(opdef: OpDef) -> str:
    struct = f"{opdef.op_type}TilingData"
    lines = [f"// TilingData of {opdef.op_type}: the fields of fusekit.tiling.TilingData, then the attributes.",
             "#pragma once", '#include "register/tilingdata_base.h"', "", "namespace optiling {",
             f"BEGIN_TILING_DATA_DEF({struct})"]
    lines += [f"TILING_DATA_FIELD_DEF({ctype}, {field});" for ctype, field in tiling_fields(opdef)]
    lines += ["END_TILING_DATA_DEF;", f"REGISTER_TILING_DATA_CLASS({opdef.op_type}, {struct})", "}  // namespace optiling",
              ""]
    return "\n".join(lines)


def host_source(opdef: OpDef, dtypes: list[str], kernels: dict[str, Emitted]) -> str:
    """op_host: the tiling function (fusekit.tiling in C++), inference, and the OpDef of op_info.json."""
    name, op = opdef.kernel_name, opdef.op_type
    tiles = "\n".join(f"    if (dtype == {GE_TYPES[d]}) {{ size = {2 if d == 'float16' else 4}; tile = "
                      f"{kernels[d].constants['TILE_LENGTH']}; key = {i + 1}; }}" for i, d in enumerate(dtypes))
    attrs = "\n".join(f"    tiling.set_{a.name}(*context->GetAttrs()->GetAttrPointer<{ATTR_TYPES[a.type][1]}>({i}));"
                      for i, a in enumerate(opdef.attrs))
    columns = [i for i, d in enumerate(opdef.inputs[0].dtypes) if d in dtypes]
    tensors = []
    for kind, descs in (("Input", opdef.inputs), ("Output", opdef.outputs)):
        for t in descs:
            types = ", ".join(GE_TYPES[t.dtypes[c]] for c in columns)
            formats = ", ".join(f"ge::FORMAT_{t.formats[c]}" for c in columns)
            tensors.append(f'        this->{kind}("{t.name}")\n            .ParamType({t.param_type.upper()})\n'
                           f"            .DataType({{{types}}})\n            .Format({{{formats}}});")
    attr_defs = "\n".join(f'        this->Attr("{a.name}").AttrType({a.param_type.upper()}).{ATTR_TYPES[a.type][0]}();'
                          for a in opdef.attrs)
    buffer_num = next(iter(kernels.values())).constants["BUFFER_NUM"]
    return _HOST.format(name=name, op=op, tiles=tiles, attrs=attrs, tensors="\n".join(tensors), attr_defs=attr_defs,
                        min_bytes=tiling.MIN_BYTES_PER_CORE, align=tiling.GM_ALIGN_BYTES, buffer_num=buffer_num,
                        queues=len(opdef.inputs) + len(opdef.outputs))


def kernel_source(opdef: OpDef, kernels: dict[str, Emitted]) -> str:
    """op_kernel: each emitted kernel as an inline function, dispatched by tiling key from the CANN entry."""
    name = opdef.kernel_name
    gm = [t.name for t in opdef.inputs + opdef.outputs]
    device_fields = list(tiling.TilingData(*[0] * len(fields(tiling.TilingData))).kernel_args())
    dispatched = []
    for dtype, kernel in kernels.items():
        args = [f"(__gm__ {C_TYPES[dtype]}*){g}" for g in gm] + [f"t.{f}" for f in device_fields]
        args += [f"t.{a.name}" for a in opdef.attrs]
        dispatched.append(Dispatched(f"{name}_{dtype}", kernel.cpp, args,
                                     f"traced by pyasc from fusekit's kernel.py: {dtype}, {kernel.constants}"))
    return kernel_entry(name, gm, dispatched)


@dataclass(frozen=True)
class Dispatched:
    """One traced kernel behind a CANN entry point: selected by its tiling key (its place, from 1).

    Attributes:
        function: the inline device function's name.
        cpp: pyasc's Ascend C of the kernel (its global entry becomes ``function``).
        args: the C++ arguments of the call (GM pointers, then tiling fields).
        comment: a line saying where the kernel came from.
    """

    function: str
    cpp: str
    args: list[str]
    comment: str


def kernel_entry(name: str, gm: list[str], kernels: list[Dispatched], kernel_type: str = AIV_ONLY) -> str:
    """op_kernel/<name>.cpp: ``kernels`` as inline functions and the CANN entry point ``name`` (GM
    parameters ``gm``, then workspace and tiling) that calls the one its tiling key selects.

    ``kernel_type`` is the entry's ``KERNEL_TASK_TYPE_DEFAULT`` (asc-devkit, "核函数定义"): a vector-only
    kernel is :data:`AIV_ONLY`; a kernel with cube instructions would be a mix or AIC type.
    """
    bodies = [f"// {k.comment}\n" + inline_kernel(k.cpp, k.function) for k in kernels]
    calls = [f"    {'if' if key == 1 else 'else if'} (TILING_KEY_IS({key})) {{\n"
             f"        {k.function}({', '.join(k.args)});\n    }}" for key, k in enumerate(kernels, start=1)]
    params = ", ".join(f"GM_ADDR {g}" for g in gm)
    return ('#include "kernel_operator.h"\n\n' + "\n\n".join(bodies) +
            f'\n\nextern "C" __global__ __aicore__ void {name}({params}, GM_ADDR workspace, GM_ADDR tiling)\n{{\n'
            f"    KERNEL_TASK_TYPE_DEFAULT({kernel_type});\n    GET_TILING_DATA(t, tiling);\n"
            + "\n".join(calls) + "\n}\n")


def inline_kernel(cpp: str, function: str) -> str:
    """pyasc's global entry as an inline device function without the ffts pointer (AIV-only kernel)."""
    body = cpp.replace('#include "kernel_operator.h"\n', "")
    body = re.sub(r'extern "C"\s+__global__ __aicore__ void \w+\(', f"__aicore__ inline void {function}(", body)
    body = re.sub(r",\s*__gm__ uint64_t\* v\d+_ffts_addr", "", body)
    return re.sub(r"\s*set_ffts_base_addr\(\*v\d+_ffts_addr\);", "", body).strip()


def write_project_files(out: Path, op_type: str, name: str, *, prototype: str, tiling_header: str, host: str,
                        kernel: str, dtypes: list[str], dropped: list[str], readme_note: str = "") -> list[Path]:
    """Write a CANN custom-operator project (the layout of the module doc) of the operator ``op_type``
    (snake_case ``name``) to ``out``: the given sources, and the CMake, build script and README every
    fusekit project shares (``readme_note`` ends the README). Returns the files written."""
    return write_files(out, {
        "op_info.json": prototype,
        f"op_host/{name}_tiling.h": tiling_header,
        f"op_host/{name}.cpp": host,
        f"op_kernel/{name}.cpp": kernel,
        "CMakeLists.txt": _TOP_CMAKE.format(op=op_type),
        "build.sh": _BUILD.format(name=name),
        "README.md": _README.format(op=op_type, name=name, dtypes=", ".join(dtypes), dropped=", ".join(dropped) or "none")
        + readme_note,
    })


def write_files(out: Path, files: dict) -> list[Path]:
    """Write a project's ``files`` ({relative path: text}) under ``out``, each atomically, build.sh executable.

    Returns:
        The paths written. Raises OSError as :func:`fusekit.files.write_atomic` does.
    """
    written = []
    for relative, text in files.items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, lambda f, text=text: f.write(text.encode()))
        written.append(path)
    (out / "build.sh").chmod(0o755)
    return written

# the host file's parts every fusekit operator shares: saving the TilingData, and the OpDef registration
HOST_TILING_SAVE = """{attrs}
    context->SetBlockDim(block_dim);
    context->SetTilingKey(key);
    tiling.SaveToBuffer(context->GetRawTilingData()->GetData(), context->GetRawTilingData()->GetCapacity());
    context->GetRawTilingData()->SetDataSize(tiling.GetDataSize());
    size_t* workspace = context->GetWorkspaceSizes(1);
    workspace[0] = 0;
    return ge::GRAPH_SUCCESS;
}}
}}  // namespace optiling
"""

HOST_OPDEF = """namespace ops {{
class {op} : public OpDef {{
public:
    explicit {op}(const char* name) : OpDef(name)
    {{
{tensors}
{attr_defs}
        this->SetInferShape(ge::InferShape).SetInferDataType(ge::InferDataType);
        this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
    }}
}};
OP_ADD({op});
}}  // namespace ops
"""

_HOST = """// {op}: host side generated by fusekit from op_info.json (tiling = fusekit.tiling in C++).
#include "{name}_tiling.h"
#include "register/op_def_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {{
static ge::graphStatus TilingFunc(gert::TilingContext* context)
{{
    {op}TilingData tiling;
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    uint32_t cores = platform.GetCoreNumAiv();
    int64_t elements = context->GetInputShape(0)->GetStorageShape().GetShapeSize();
    for (size_t i = 1; i < context->GetComputeNodeInputNum(); ++i) {{
        if (context->GetInputShape(i)->GetStorageShape().GetShapeSize() != elements) {{
            return ge::GRAPH_FAILED;  // inputs of different sizes: the kernel would read past the smaller one
        }}
    }}
    if (elements < 0 || elements > INT32_MAX) {{
        return ge::GRAPH_FAILED;  // the kernel's lengths are int32: split larger inputs (fusekit.tiling.split_launches)
    }}
    uint32_t total = static_cast<uint32_t>(elements);
    ge::DataType dtype = context->GetInputDesc(0)->GetDataType();
    uint32_t size = 2, tile = 0, key = 0;  // TILE_LENGTH is the kernel's compile-time constant
{tiles}
    if (key == 0) {{
        return ge::GRAPH_FAILED;
    }}
    uint32_t align = {align} / size;  // per-core ranges start 512 B-aligned
    uint32_t wanted = static_cast<uint32_t>((static_cast<uint64_t>(total) * size + {min_bytes} - 1) / {min_bytes});  // >= one 512 B block a core
    uint32_t used = wanted < cores ? (wanted > 0 ? wanted : 1) : cores;
    uint32_t block = ((total + used - 1) / used + align - 1) / align * align;
    uint32_t block_dim = total == 0 ? 1 : (total + block - 1) / block;  // an empty input: one core, no tiles
    if (block_dim == 1) {{
        block = total;
    }}
    uint32_t last = total - (block_dim - 1) * block;
    tiling.set_total_length(total);
    tiling.set_block_dim(block_dim);
    tiling.set_block_length(block);
    tiling.set_tile_length(tile);
    tiling.set_tile_num(block / tile);
    tiling.set_tail_length(block % tile);
    tiling.set_last_block_length(last);
    tiling.set_last_tile_num(last / tile);
    tiling.set_last_tail_length(last % tile);
    tiling.set_buffer_num({buffer_num});
    tiling.set_ub_bytes({queues} * {buffer_num} * tile * size);
""" + HOST_TILING_SAVE + """
namespace ge {{
static ge::graphStatus InferShape(gert::InferShapeContext* context)
{{
    *context->GetOutputShape(0) = *context->GetInputShape(0);
    return GRAPH_SUCCESS;
}}

static ge::graphStatus InferDataType(gert::InferDataTypeContext* context)
{{
    context->SetOutputDataType(0, context->GetInputDataType(0));
    return GRAPH_SUCCESS;
}}
}}  // namespace ge

""" + HOST_OPDEF

_TOP_CMAKE = """# {op} custom operator. CANN's msopgen generates the CMake scaffolding (cmake/, op_host/CMakeLists.txt
# with the proto and aclnn targets, op_kernel/CMakeLists.txt, CMakePresets.json) from op_info.json:
# build with ./build.sh, which does that, overlays op_host/ and op_kernel/ from here and builds.
cmake_minimum_required(VERSION 3.16.0)
project(opp)
if(NOT EXISTS ${{CMAKE_CURRENT_SOURCE_DIR}}/cmake/config.cmake)
    message(FATAL_ERROR "CANN's op-project scaffolding is missing: run ./build.sh (it calls msopgen)")
endif()
include(cmake/config.cmake)
include(cmake/func.cmake)
include(cmake/intf.cmake)
add_subdirectory(op_host)
add_subdirectory(op_kernel)
"""

_BUILD = """#!/bin/bash
# Build the operator package with CANN (source <ascend-toolkit>/set_env.sh first). SOC defaults to Ascend910B1.
set -euo pipefail
cd "$(dirname "$0")"
SOC="${{SOC:-Ascend910B1}}"
if [ -z "${{ASCEND_HOME_PATH:-}}" ] || ! command -v msopgen >/dev/null; then
    echo "needs CANN: source <ascend-toolkit>/set_env.sh (ASCEND_HOME_PATH and msopgen)" >&2
    exit 1
fi
rm -rf .msopgen
msopgen gen -i op_info.json -c "ai_core-${{SOC}}" -lan cpp -out .msopgen
cp op_host/{name}.cpp op_host/{name}_tiling.h .msopgen/op_host/
cp op_kernel/{name}.cpp .msopgen/op_kernel/
(cd .msopgen && bash build.sh)
echo "package: $(ls .msopgen/build_out/*.run 2>/dev/null)"
"""

_README = """# {op} custom operator (generated by fusekit)

- `op_host/{name}.cpp`: OpDef from `op_info.json`, tiling function (fusekit.tiling in C++), shape inference.
- `op_host/{name}_tiling.h`: TilingData struct.
- `op_kernel/{name}.cpp`: the kernel traced by pyasc from fusekit's kernel source, one function per dtype.

Dtypes: {dtypes} (left out, pyasc cannot emit them: {dropped}).

Build with CANN (not tried when this was generated: no CANN or NPU was available): `bash build.sh`
runs `msopgen gen -i op_info.json` for CANN's CMake scaffolding, copies these sources over its
generated ones and builds; install the `.run` package from `.msopgen/build_out/`, then call
`aclnn{op}`.
"""
