"""The CANN project's host tiling (C++) against fusekit.gen's host planning, and driving the real kernel.

``op_host/<op>.cpp`` is compiled with g++ against small stand-ins for the CANN host headers
(``tests/data/cann_stub/cann_stub.h``: TilingContext, the TilingData macros, OpDef), its TilingFunc is
run for several shapes and core counts, and (1) the per-core split must equal the Python planner's (for a
row-tiled operator also the row geometry: ROW_PAD, TILE_ROWS, LOG_ROWS, RTMP, the UB bytes), and the C++ must
refuse exactly the shapes the Python planner refuses, (2) the kernel, launched on the simulator with exactly
the C++ TilingData and the compile-time constants the project was emitted with (BUFFER_NUM, an elementwise
kernel's TILE_LENGTH), must compute the operator bit for bit as its hardware model does. A row-tiled project is
written once and serves every row length that fits UB. Needs pyasc (to write the project) and a C++ compiler;
skipped otherwise.
"""

import importlib.util
import shutil
import subprocess

import numpy as np
import pytest

from fusekit.asc import launch
from fusekit.gen import catalogue as cat
from fusekit.gen import project
from fusekit.gen.op import _arg
from support import TESTS

HAVE_PYASC = importlib.util.find_spec("asc") is not None
CXX = shutil.which("g++") or shutil.which("c++")
pytestmark = pytest.mark.skipif(not (HAVE_PYASC and CXX), reason="needs pyasc (to write the project) and g++")
STUB = TESTS / "data" / "cann_stub" / "cann_stub.h"
GE = {"float16": 1, "float32": 0, "int8": 2, "int32": 3}
# a row-tiled kernel's row geometry: kernel parameter -> TilingData field (the project's dispatcher passes these)
ROW_ARGS = {"ROW": "row", "GM_ROW": "gm_row", "ROW_PAD": "row_pad", "TILE_ROWS": "tile_length", "LOG_ROWS": "log_rows",
            "RTMP": "rtmp"}


def _build(op, tmp_path, buffer_num=2):
    root = tmp_path / f"p{buffer_num}"
    project.write_project(op, root, buffer_num=buffer_num)  # the canonical layout: rows of 4096 elements
    inc = tmp_path / "inc"
    for header in ("register/tilingdata_base.h", "register/op_def_registry.h", "tiling/platform/platform_ascendc.h"):
        (inc / header).parent.mkdir(parents=True, exist_ok=True)
        (inc / header).write_text(f'#include "{STUB}"\n')
    launches = {d: project.launch_of(op, d, buffer_num=buffer_num) for d in project.emittable(op)}
    fields = [f for _, f in project.tiling_fields(op, launches)]
    prints = "\n".join(f'    std::printf("{f} %.9g\\n", (double)t.{f});' for f in fields)
    main = f'''#include "{root}/op_host/{op.name}.cpp"
#include <cstdio>
#include <cstdlib>
uint32_t g_cores = 48;
int main(int argc, char** argv) {{
    // argv: cores dtype-of-input-0 output-dims... -- input sizes... -- attrs...
    gert::TilingContext ctx;
    g_cores = std::atoi(argv[1]);
    int i = 3;
    gert::StorageShape out;
    for (; std::string(argv[i]) != "--"; ++i) out.s.dims.push_back(std::atoll(argv[i]));
    ctx.out.push_back(out);
    for (++i; std::string(argv[i]) != "--"; ++i) {{
        gert::StorageShape s; s.s.dims.push_back(std::atoll(argv[i])); ctx.in.push_back(s);
        ctx.in_desc.push_back({{static_cast<ge::DataType>(std::atoi(argv[2]))}});
    }}
    for (++i; i < argc; ++i) ctx.attrs.v.push_back(std::atof(argv[i]));
    if (optiling::TilingFunc(&ctx) != ge::GRAPH_SUCCESS) {{ std::printf("FAILED\\n"); return 0; }}
    optiling::{op.op_type}TilingData t;
    std::memcpy(&t, ctx.raw.buf, sizeof t);
    std::printf("key %llu\\nblock_dim_ctx %u\\n", (unsigned long long)ctx.key, ctx.block_dim);
{prints}
}}
'''
    (tmp_path / "main.cpp").write_text(main.replace('#include <cstdio>', '#include <cstdio>\n#include <string>'))
    exe = tmp_path / f"tiling{buffer_num}"
    subprocess.run([CXX, "-std=c++17", "-O0", "-w", f"-I{inc}", str(tmp_path / "main.cpp"), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    return exe, launches


def _tiling(exe, cores, dtype_code, shape, sizes, attrs):
    args = [str(exe), str(cores), str(dtype_code), *map(str, shape), "--", *map(str, sizes), "--", *map(str, attrs)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout.split()
    if out == ["FAILED"]:
        return None
    return {k: float(v) for k, v in zip(out[0::2], out[1::2])}


def _arrays(op, dtype, shape, rng):
    from fusekit.gen.lower import natural_dtypes

    gm = natural_dtypes(op.graph, dtype)
    out = []
    for n in op.graph.inputs:
        s = shape[-1:] if n.name in project.ROW_INPUTS and len(shape) > 1 else shape
        dt = np.dtype(gm[n.name]) if gm[n.name] != "float16" else np.dtype(np.float16)
        out.append((rng.standard_normal(s) * (8 if dt.kind == "f" else 50)).astype(dt))
    return out


CASES = {  # op: shapes of its output; a row-tiled op's project is written once, for rows of 4096 elements
    "swiglu": [(1,), (1000,), (2**16 + 3,)],
    "quantize": [(17,), (5000,)],
    "dequantize": [(257,), (40000,)],
    # float32 rows of 5120 and 8192 do not fit UB: both planners refuse them
    "add_rms_norm": [(1, 4096), (37, 1000), (300, 256), (3, 5120), (2, 8192)],
    # float32 rows of 11008 do not fit UB
    "scaled_masked_softmax": [(9, 1000), (100, 256), (3, 5120), (2, 11008)],
    # (C,) inputs, no reduction; rows of 1000 elements are not whole 32 B blocks of the float inputs while the int8
    # output pads them to 1024: refused
    "quantize_per_channel": [(5, 4096), (37, 1000), (3, 4128)],
}


@pytest.mark.parametrize("name", list(CASES))
def test_cpp_host_tiling_drives_the_kernel_like_fusekit_gen(tmp_path, monkeypatch, name):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    op = cat.get(name)
    exe, launches = _build(op, tmp_path)
    rng = np.random.default_rng(0)
    served = refused = 0
    for dtype in project.emittable(op):
        var, _, compiled, _ = launches[dtype]
        constants = {k: v for k, v in compiled.items() if k in ("TILE_LENGTH", "BUFFER_NUM")}
        program = var.program
        key_dtype = program.gm_dtypes[op.graph.inputs[0].name]
        attrs = {a.name: 0.5 for a in op.graph.attrs}
        for shape in CASES[name]:
            for cores in (1, 7, 48):
                arrays = _arrays(op, dtype, shape, rng)
                t = _tiling(exe, cores, GE[key_dtype], shape, [a.size for a in arrays], attrs.values())
                # (1) the per-core split and the row geometry are the Python planner's; refused where it refuses
                seen = []
                try:
                    plan = op.run(*arrays, core_num=cores, dtype=dtype, launcher=lambda *a: seen.append(a),
                                  **attrs).tilings[0]
                except ValueError:
                    assert t is None, (name, dtype, shape, cores, t)
                    refused += 1
                    continue
                assert t is not None, (name, dtype, shape, cores)
                served += 1
                _, block_dim, _, kwargs, _ = seen[0]
                assert t["block_dim"] == t["block_dim_ctx"] == block_dim, (shape, cores, t)
                assert t["block_length"] == kwargs["block_length"]
                assert t["last_block_length"] == kwargs["last_block_length"]
                if program.rows:
                    for param, field in ROW_ARGS.items():
                        assert t[field] == kwargs[param], (name, dtype, shape, cores, param)
                    assert t["ub_bytes"] == plan.ub_bytes <= 184 * 1024  # TOTAL_VEC_LOCAL_SIZE on 910B
                    assert 2 ** t["log_rows"] >= t["tile_length"] > 2 ** (t["log_rows"] - 1)
                # (2) the kernel, given exactly the C++ TilingData, computes the operator
                tile = t["tile_length"]
                if not program.rows:
                    assert tile == constants["TILE_LENGTH"]
                assert (t["tile_num"], t["tail_length"]) == divmod(t["block_length"], tile)
                args = {f: int(t[f]) for f in ("block_length", "tile_num", "tail_length", "last_block_length",
                                               "last_tile_num", "last_tail_length")}
                named = dict(zip([n.name for n in op.graph.inputs], arrays))
                gm = [named[k].reshape(-1) for k in list(program.inputs) + list(program.broadcast)]
                outs = {k: np.zeros(int(np.prod(shape)), np.dtype(program.gm_dtypes[k]) if program.gm_dtypes[k]
                                    != "float16" else np.float16) for k in program.outputs}
                scalars = {_arg(k): t[k] for k in attrs}
                if program.rows:
                    scalars.update({param: int(t[field]) for param, field in ROW_ARGS.items()})
                    if "inv_row" in program.scalars:  # a mean's 1 / C
                        scalars["inv_row"] = t["inv_row"]
                launch(var.kernel, int(t["block_dim"]), tuple(gm) + tuple(outs.values()),
                       dict(args, **scalars, **constants))
                want = op.reference("hardware", *arrays, **attrs)
                for k, y in outs.items():
                    np.testing.assert_array_equal(y.view(np.uint8), want[k].reshape(-1).view(np.uint8),
                                                  err_msg=f"{name} {dtype} {shape} cores={cores} {k}")
    assert served and (refused or not launches[next(iter(launches))][0].program.rows)


def test_one_project_serves_every_row_length_that_fits_ub(tmp_path, monkeypatch):
    """AddRmsNorm float16: x, residual, y, x_sum are 4 queues x BUFFER_NUM x 2 B per element of a UB row, gamma
    2 B staged once + 2 B replicated per row, plus a 32 B row value per row and a 32 B reduction buffer: with
    BUFFER_NUM=2, 20 B x ROW_PAD + 64 B must fit 184 KiB (TOTAL_VEC_LOCAL_SIZE): rows up to 9408 elements;
    with BUFFER_NUM=1, 12 B x ROW_PAD + 64 B: up to 15696."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    ub = 184 * 1024

    def served(exe, row, rows=4):
        return _tiling(exe, 48, GE["float16"], (rows, row), [rows * row, rows * row, row], [1e-6]) is not None
    exe, _ = _build(cat.add_rms_norm, tmp_path)
    for row in (1, 15, 1000, 4096, 5120, 8192, 9408, 9416, 11008, 16384):
        row_pad = -(-row // 16) * 16
        assert served(exe, row) == (20 * row_pad + 64 <= ub), row
    assert served(exe, 4096, rows=1) and served(exe, 1000, rows=100000)
    assert _tiling(exe, 48, GE["float16"], (4, 4096), [4 * 4096, 4 * 4096, 4 * 4096], [1e-6]) is None  # gamma not (C,)
    exe1, _ = _build(cat.add_rms_norm, tmp_path, buffer_num=1)
    for row in (11008, 15696, 15712):
        assert served(exe1, row) == (12 * -(-row // 16) * 16 + 64 <= ub), row
