"""Generated operators as Ascend C: pyasc traces every catalogue kernel (CI job 2 has pyasc), the CANN project
(OpDef, TilingData, op_kernel dispatch, op_info.json), and ``fusekit emit`` for generated operators."""

import importlib.util
import json
import os
import re
import sys

import pytest

from fusekit.pyasc.bridge import PyascMissing
from fusekit.cli import main as cli_main
from fusekit.pyasc.emit import EMITTABLE
from fusekit.gen import catalogue as cat
from fusekit.gen import project
from fusekit.pyasc.opdef import load_op_info

HAVE_PYASC = importlib.util.find_spec("asc") is not None
needs_pyasc = pytest.mark.skipif(not HAVE_PYASC, reason="pyasc is not installed (pip install 'ascend-fusekit[pyasc]')")
C_TYPES = {"float16": "half", "float32": "float", "int8": "int8_t", "int32": "int32_t"}
# fusekit.gen instruction -> the Ascend C call pyasc must translate it to (AD-API names)
SPECIAL = {"bcast": "Duplicate", "padded": "Duplicate", "ln": "Ln", "rows_muls": "Muls", "rows_adds": "Adds"}
# a row-tiled kernel's int parameters beyond the tiling fields, and the TilingData fields the project passes them
ROW_GEOMETRY = {"ROW": "row", "GM_ROW": "gm_row", "TILE_ROWS": "tile_length", "ROW_PAD": "row_pad",
                "LOG_ROWS": "log_rows", "RTMP": "rtmp"}


def _camel(op: str) -> str:
    return SPECIAL.get(op) or "".join(p.capitalize() for p in op.split("_"))


# the vector operators: emit and --project refuse a cube one in one line (fusekit.gen.project._vector_only; its
# AIC / mix kernel is not traced nor its host tiling generated yet), which tests/gen_cube/test_gen_cube_cli checks
VECTOR = [name for name, op in cat.CATALOGUE.items() if op.cube is None]
CASES = [(name, d) for name in VECTOR for d in cat.CATALOGUE[name].dtypes if d in EMITTABLE]


@needs_pyasc
@pytest.mark.parametrize("name,dtype", CASES)
def test_every_catalogue_kernel_emits_ascend_c(tmp_path, monkeypatch, name, dtype):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path / "cache"))
    op = cat.get(name)
    precision = "native" if project.native(op, dtype) else "fp32"
    result = project.emit(op, dtype, precision, out_dir=tmp_path / "out")
    var, _, kwargs, _ = project.launch_of(op, dtype, precision)
    gm = var.program.gm_dtypes
    # the entry point takes every GM tensor in its own dtype, then the int32 tiling fields
    ptrs = re.search(rf'extern "C"\s+__global__ __aicore__ void {name}\(([^)]*)\)', result.cpp).group(1)
    typed = re.findall(r"__gm__ (\w+)\* v\d+_(\w+)", ptrs)
    assert [(t, n) for t, n in typed if n != "ffts_addr"] == [(C_TYPES[gm[k]], k) for k in
                                                               list(var.program.inputs) + list(var.program.broadcast)
                                                               + list(var.program.outputs)]
    calls = set(re.findall(r"AscendC::(\w+)", result.cpp))
    for ins in var.program.instrs:  # every vector instruction of the program became its Ascend C call
        assert _camel(ins.op) in calls, (ins.op, sorted(calls))
    assert {"TQue", "TPipe", "DataCopy", "GetBlockIdx"} <= calls
    if var.program.rows:  # the row geometry is the launch's: int32 parameters of the entry, nothing compiled in
        assert result.constants == {"BUFFER_NUM": 2}
        assert [p for p in ROW_GEOMETRY if re.search(rf"int32_t v\d+_{p}\b", ptrs)] == list(ROW_GEOMETRY)
    else:
        assert f"c{kwargs['TILE_LENGTH']}_i32" in result.cpp  # the tile length is compiled in
    assert sorted(p.name for p in result.files) == sorted([f"{name}_kernel.cpp", f"{name}.mlir", f"{name}.lowered.mlir"])
    # nothing was compiled, so nothing may be cached
    assert not (tmp_path / "home" / ".pyasc").exists() and not (tmp_path / "cache").exists()


def _signature(cpp: str, function: str) -> list[str]:
    params = re.search(rf"void {function}\(([^)]*)\)", cpp).group(1)
    return [p.strip() for p in params.split(",")]


@needs_pyasc
@pytest.mark.parametrize("name", VECTOR)
def test_every_catalogue_op_becomes_a_cann_project(tmp_path, monkeypatch, name):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    op = cat.get(name)
    files = project.write_project(op, tmp_path / "p")
    root = tmp_path / "p"
    assert {str(f.relative_to(root)) for f in files} == {
        "op_info.json", f"op_host/{name}_tiling.h", f"op_host/{name}.cpp", f"op_kernel/{name}.cpp", "CMakeLists.txt",
        "build.sh", "README.md"}
    assert os.access(root / "build.sh", os.X_OK)
    kept = [d for d in op.dtypes if d in EMITTABLE]
    proto = load_op_info(root / "op_info.json")  # msopgen's rules (fusekit.pyasc.opdef)
    assert proto.op_type == op.op_type
    assert [t.name for t in proto.inputs] == [n.name for n in op.graph.inputs]
    assert [t.name for t in proto.outputs] == list(op.graph.output_names)
    assert len(proto.inputs[0].dtypes) == len(kept)
    host = (root / "op_host" / f"{name}.cpp").read_text()
    for t in proto.inputs:
        assert f'this->Input("{t.name}")' in host
    for a in op.graph.attrs:
        default = op.graph.defaults[a.name]
        assert (f'this->Attr("{a.name}").AttrType(REQUIRED).Float();' if default is None
                else f'this->Attr("{a.name}").AttrType(OPTIONAL).Float({default!r});') in host
    assert f"class {op.op_type} : public OpDef" in host and f"OP_ADD({op.op_type});" in host
    header = (root / "op_host" / f"{name}_tiling.h").read_text()
    fields = [f for _, f in re.findall(r"TILING_DATA_FIELD_DEF\((\w+), (\w+)\);", header)]
    kernel = (root / "op_kernel" / f"{name}.cpp").read_text()
    proto_rows = project.launch_of(op, kept[0])[0].program.rows
    if proto_rows:
        assert {"row", "gm_row", "inv_row", "row_pad", "log_rows", "rtmp", "tile_length"} <= set(fields)
    for key, dtype in enumerate(kept, start=1):
        # the dispatcher passes exactly the inline kernel's parameters, GM pointers cast to their types
        params = _signature(kernel, f"{name}_{dtype}")
        call = re.search(rf"TILING_KEY_IS\({key}\)\) {{\s*{name}_{dtype}\(([^;]*)\);", kernel).group(1)
        args = [a.strip() for a in call.split(",")]
        assert len(args) == len(params)
        for param, arg in zip(params, args):
            ctype = param.rsplit(" ", 1)[0]
            if "__gm__" in param:
                assert arg.startswith(f"({ctype})"), (param, arg)
            else:
                assert arg.startswith("t.") and arg[2:] in fields, (param, arg)
                by_field = {f"t.{f}": p for p, f in ROW_GEOMETRY.items()} if proto_rows else {}
                assert param.rstrip("_").endswith("_" + by_field.get(arg, arg[2:])), (param, arg)
        assert f"TILING_KEY_IS({key})" in kernel and f"key = {key};" in host
    assert "ffts_addr" not in kernel
    info = json.loads((root / "op_info.json").read_text())
    assert all(len(t["type"]) == len(kept) for t in info[0]["input_desc"] + info[0]["output_desc"])


def test_op_info_is_valid_for_msopgen(tmp_path):
    """Optional attributes carry their default (msopgen needs one; fusekit.pyasc.opdef checks it)."""
    for op in cat.CATALOGUE.values():
        path = tmp_path / f"{op.name}.json"
        path.write_text(json.dumps(op.op_info()))
        proto = load_op_info(path)
        assert {a.name: a.default for a in proto.attrs} == {a.name: op.graph.defaults[a.name] for a in op.graph.attrs}


def test_canonical_layout_of_row_ops():
    arrays = project.layout(cat.get("add_rms_norm"), "float16", row=1024)
    assert [a.shape for a in arrays] == [(4096, 1024), (4096, 1024), (1024,)]
    assert [a.shape for a in project.layout(cat.get("swiglu"), "float32")] == [(project.EXAMPLE_ELEMENTS,)] * 2
    var, block_dim, kwargs, plan = project.launch_of(cat.get("add_rms_norm"), "float16", row=1000)
    assert kwargs["ROW_PAD"] == 1008 and kwargs["ROW"] == 1000 and block_dim == plan.block_dim


def test_emit_without_pyasc_names_the_install_command(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "asc", None)  # import asc fails
    with pytest.raises(PyascMissing, match=re.escape("pip install 'ascend-fusekit[pyasc]'")):
        project.emit(cat.get("swiglu"), "float16")
    assert cli_main(["emit", "swiglu"]) == 2
    assert "pip install 'ascend-fusekit[pyasc]'" in capsys.readouterr().err


def test_emit_refuses_bfloat16_and_foreign_dtypes(capsys):
    with pytest.raises(ValueError, match="cannot trace bfloat16"):
        project.emit(cat.get("swiglu"), "bfloat16")
    with pytest.raises(ValueError, match="dequantize takes float32, not float16"):
        project.emit(cat.get("dequantize"), "float16")
    assert cli_main(["emit", "swiglu", "--project", "x", "--dtype", "float32"]) == 2
    assert "drop --dtype" in capsys.readouterr().err


@needs_pyasc
def test_cli_emit_and_project(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cli_main(["emit", "add_rms_norm", "--row", "1024", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "ReduceSum" in out and "{'BUFFER_NUM': 2}" in out  # the row geometry is not compiled in
    assert (tmp_path / "out" / "add_rms_norm_kernel.cpp").is_file()
    assert cli_main(["emit", "swiglu", "--project", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p" / "op_kernel" / "swiglu.cpp").is_file()


@needs_pyasc
@pytest.mark.parametrize("kind", ["row", "column", "scalar"])
def test_broadcasts_and_where_in_row_kernels_emit_ascend_c(tmp_path, monkeypatch, kind):
    """where (Compare + Select) in a row-tiled kernel, with a (C,), (N, 1) or 0-d second input."""
    import numpy as np

    from fusekit.gen import mean, op, where

    @op(dtypes=("float16", "float32"))
    def above_mean(x, s):
        return where(x >= mean(x, axis=-1, keepdims=True), x - s, 0.0)

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    x = np.zeros((64, 40), np.float32)
    s = np.zeros({"row": (40,), "column": (64, 1), "scalar": ()}[kind], np.float32)
    result = project.emit(above_mean, "float32", arrays=[x, s])
    calls = set(re.findall(r"AscendC::(\w+)", result.cpp))
    assert {"Compare", "Select", "ReduceSum"} <= calls
    assert ("DataCopyPad" in calls) and result.constants == {"BUFFER_NUM": 2}


PRIMITIVES = ["x + y", "x - y", "x * y", "x / y", "maximum(x, y)", "minimum(x, y)", "abs(x)", "exp(x)", "log(x)",
              "sqrt(x)", "rsqrt(x)", "reciprocal(x)", "relu(x)", "leaky_relu(x, 0.2)", "sigmoid(x)", "silu(x)",
              "gelu(x)", "gelu(x, approximate='none')", "tanh(x)", "clamp(x, -1.0, 1.0)", "where(x < y, x, y)",
              "where(x != 0.0, x, 1.0)", "2.0 - x", "2.0 / x", "x / a; a: attr", "a - x; a: attr", "x - a; a: attr",
              "cast(x, 'int8', 'floor')", "cast(x, 'int32', 'trunc')", "sum(x, axis=-1, keepdims=True) + x",
              "max(x, axis=-1, keepdims=True) - x", "min(x, axis=-1, keepdims=True) * x", "-x", "x ** 2"]


@needs_pyasc
@pytest.mark.parametrize("expression", PRIMITIVES)
def test_every_primitive_emits_in_both_precisions(tmp_path, monkeypatch, expression):
    from fusekit.gen import define_op

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    op = define_op(expression, name="prim")
    for dtype in ("float16", "float32"):
        for precision in ("native", "fp32"):
            result = project.emit(op, dtype, precision, row=64)
            assert "__global__ __aicore__ void prim(" in result.cpp


@needs_pyasc
def test_a_row_tiled_kernel_traces_the_same_for_every_row_length(tmp_path, monkeypatch):
    """Nothing that depends on the row length is compiled in: one traced kernel serves every row."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    op = cat.get("scaled_masked_softmax")
    a, b = (project.emit(op, "float16", row=row).cpp for row in (1000, 5120))
    assert a == b
    assert "c5120_i32" not in b and "c1008_i32" not in b
