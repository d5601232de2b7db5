"""The pyasc bridge: one kernel source for fusekit's simulator and for pyasc; emit, project, NPU path."""

import importlib.util
import os
import re
import sys
from dataclasses import fields

import ml_dtypes
import numpy as np
import pytest

import fusekit
from fusekit import tiling
from fusekit.pyasc.bridge import PyascMissing
from fusekit.pyasc.emit import EMITTABLE, emit
from fusekit.pyasc.npu import BackendUnavailable, missing
from fusekit.pyasc.opdef import load_op_info
from fusekit.ops.fused_add_scale import OP
from support import TESTS

HAVE_PYASC = importlib.util.find_spec("asc") is not None
needs_pyasc = pytest.mark.skipif(not HAVE_PYASC, reason="pyasc is not installed (pip install 'ascend-fusekit[pyasc]')")
PYASC_KERNEL = TESTS / "pyasc_kernels" / "scale_by.py"


def test_a_pyasc_kernel_file_runs_on_the_simulator_unchanged():
    kernel = fusekit.simulate(PYASC_KERNEL, "scale_by")
    x = np.arange(4 * 1024, dtype=np.float16)
    y = np.zeros_like(x)
    result = kernel[4](x, y, 1024, 0.5, 256)
    np.testing.assert_array_equal(y, x * np.float16(0.5))
    assert result.trace.ops()["muls"] == 16
    assert any(i.file == str(PYASC_KERNEL) for i in result.trace)  # its helper ran from its own file
    report = fusekit.sanitize(kernel)[4](x, y, 1024, 0.5, 256)
    assert report.ok, report.to_text()


def test_simulate_errors():
    with pytest.raises(ValueError, match="no @asc.jit kernel named 'nope'"):
        fusekit.simulate(PYASC_KERNEL, "nope")
    with pytest.raises(ValueError, match="give the kernel's name"):
        fusekit.simulate(PYASC_KERNEL)
    with pytest.raises(TypeError, match="expected a pyasc @asc.jit kernel"):
        fusekit.simulate(42)


@needs_pyasc
def test_simulate_takes_a_real_pyasc_jit_function():
    import asc

    spec = importlib.util.spec_from_file_location("scale_by_real", PYASC_KERNEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert isinstance(module.scale_by, asc.runtime.jit.JITFunction)
    x = np.arange(2048, dtype=np.float32)
    y = np.zeros_like(x)
    fusekit.simulate(module.scale_by)[2](x, y, 1024, 2.0, 512)
    np.testing.assert_array_equal(y, x * 2)


EXPECTED_CALLS = {
    "fused_add_scale": ["AscendC::TQue<AscendC::TPosition::VECIN, 2>", "AscendC::TQue<AscendC::TPosition::VECOUT, 2>",
                        "AscendC::DataCopy(", "AscendC::DataCopyPad(", "AscendC::Add(", "AscendC::Muls<",
                        "InitBuffer(", "AllocTensor<", "EnQue(", "DeQue<", "FreeTensor(", "GetBlockIdx()"],
    "add": ["AscendC::TQue<AscendC::TPosition::VECIN, 2>", "AscendC::DataCopy(", "AscendC::DataCopyPad(",
            "AscendC::Add("],
    "muls": ["AscendC::TQue<AscendC::TPosition::VECOUT, 2>", "AscendC::DataCopy(", "AscendC::DataCopyPad(",
             "AscendC::Muls<"],
}


@needs_pyasc
@pytest.mark.parametrize("precision", ["native", "fp32"])
@pytest.mark.parametrize("dtype", EMITTABLE)
@pytest.mark.parametrize("op", ["fused_add_scale", "unfused_add_muls"])
def test_every_shipped_kernel_emits_ascend_c(tmp_path, monkeypatch, op, dtype, precision):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYASC_CACHE_DIR", str(tmp_path / "cache"))
    results = emit(op, dtype, out_dir=tmp_path / "out", precision=precision)
    ctype = {"float16": "half", "float32": "float"}[dtype]
    for result in results:
        for call in EXPECTED_CALLS[result.kernel]:
            assert call in result.cpp, (result.kernel, call)
        assert f'extern "C"  __global__ __aicore__ void {result.kernel}(__gm__ {ctype}*' in result.cpp
        assert f"c{result.constants['TILE_LENGTH']}_i32" in result.cpp  # the tile length is compiled in
        assert "func.func" in result.mlir and result.mlir_lowered
        assert sorted(p.name for p in result.files) == sorted(
            [f"{result.kernel}_kernel.cpp", f"{result.kernel}.mlir", f"{result.kernel}.lowered.mlir"])
        assert (tmp_path / "out" / f"{result.kernel}_kernel.cpp").read_text() == result.cpp
    cast = "AscendC::Cast<float, half>" in results[0].cpp
    assert cast == (op == "fused_add_scale" and dtype == "float16" and precision == "fp32")
    # nothing was compiled, so nothing may be cached, and the environment is as it was
    assert not (tmp_path / "home" / ".pyasc").exists() and not (tmp_path / "cache").exists()
    assert os.environ["PYASC_CACHE_DIR"] == str(tmp_path / "cache")


@needs_pyasc
def test_bfloat16_is_refused():
    with pytest.raises(ValueError, match="cannot trace bfloat16"):
        emit("fused_add_scale", "bfloat16")


def test_emit_without_pyasc_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "asc", None)  # import asc fails
    with pytest.raises(PyascMissing, match=re.escape("pip install 'ascend-fusekit[pyasc]'")):
        emit("fused_add_scale", "float16")


@needs_pyasc
def test_custom_operator_project_matches_the_prototype_and_the_tiling(tmp_path):
    from fusekit.pyasc.project import write_project

    files = write_project("fused_add_scale", tmp_path)
    names = {str(f.relative_to(tmp_path)) for f in files}
    assert {"op_host/fused_add_scale.cpp", "op_host/fused_add_scale_tiling.h", "op_kernel/fused_add_scale.cpp",
            "CMakeLists.txt", "build.sh", "op_info.json", "README.md"} <= names
    assert os.access(tmp_path / "build.sh", os.X_OK)
    build = (tmp_path / "build.sh").read_text()
    assert "msopgen gen -i op_info.json" in build and "cp op_kernel/fused_add_scale.cpp .msopgen/op_kernel/" in build
    # the project's prototype lists the emitted dtypes; everything else is op_info.json's
    project_op = load_op_info(tmp_path / "op_info.json")
    assert project_op.dtypes == tuple(d for d in OP.dtypes if d in EMITTABLE)
    assert [t.name for t in project_op.inputs + project_op.outputs] == [t.name for t in OP.inputs + OP.outputs]
    host = (tmp_path / "op_host" / "fused_add_scale.cpp").read_text()
    ge = {"float16": "ge::DT_FLOAT16", "float32": "ge::DT_FLOAT"}
    expected_types = [ge[d] for d in OP.inputs[0].dtypes if d in EMITTABLE]
    tensors = re.findall(r'this->(Input|Output)\("(\w+)"\)\s*\.ParamType\((\w+)\)\s*\.DataType\(\{([^}]*)\}\)', host)
    assert [(kind, name, param) for kind, name, param, _ in tensors] == \
        [("Input", t.name, t.param_type.upper()) for t in OP.inputs] + \
        [("Output", t.name, t.param_type.upper()) for t in OP.outputs]
    for *_, types in tensors:
        assert [t.strip() for t in types.split(",")] == expected_types
    assert 'this->Attr("scale").AttrType(REQUIRED).Float();' in host
    assert "class FusedAddScale : public OpDef" in host and "OP_ADD(FusedAddScale);" in host
    header = (tmp_path / "op_host" / "fused_add_scale_tiling.h").read_text()
    struct_fields = re.findall(r"TILING_DATA_FIELD_DEF\((\w+), (\w+)\);", header)
    assert [name for _, name in struct_fields] == [f.name for f in fields(tiling.TilingData)] + ["scale"]
    assert ("float", "scale") in struct_fields
    for _, name in struct_fields[:-1]:
        assert f"tiling.set_{name}(" in host  # the tiling function fills every field
    kernel = (tmp_path / "op_kernel" / "fused_add_scale.cpp").read_text()
    assert 'extern "C" __global__ __aicore__ void fused_add_scale(GM_ADDR x1, GM_ADDR x2, GM_ADDR y, GM_ADDR workspace, ' \
           'GM_ADDR tiling)' in kernel
    assert kernel.count("TILING_KEY_IS(") == len(expected_types) and "GET_TILING_DATA(t, tiling);" in kernel
    assert "KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);" in kernel
    for dtype, key in zip(expected_types, range(1, 3)):
        assert f"if (dtype == {dtype}) {{" in host and f"key = {key};" in host  # host keys match the kernel's
    assert "INT32_MAX" in host and "GetComputeNodeInputNum" in host
    assert "ffts" not in kernel and kernel.count("__aicore__ inline void fused_add_scale_") == len(expected_types)


def test_npu_backend_names_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    problems = " ".join(missing("camodel", "Ascend310P3"))
    for needed in ("ASCEND_HOME_PATH", "bisheng", "ld.lld", "Ascend310P3", "LD_LIBRARY_PATH"):
        assert needed in problems
    with pytest.raises(BackendUnavailable, match="ASCEND_HOME_PATH"):
        fusekit.fused_add_scale(np.ones(16, np.float16), np.ones(16, np.float16), 1.0, backend="npu")
    # with a toolkit directory and the tools on PATH, those are no longer missing
    for tool in ("bisheng", "ld.lld"):
        (tmp_path / tool).write_text("#!/bin/sh\n")
        (tmp_path / tool).chmod(0o755)
    lib = tmp_path / "tools" / "simulator" / "Ascend910B1" / "lib"
    lib.mkdir(parents=True)
    monkeypatch.setenv("ASCEND_HOME_PATH", str(tmp_path))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(lib))
    left = missing("camodel", "Ascend910B1")
    assert all("ASCEND_HOME_PATH" not in p and "bisheng" not in p and "LD_LIBRARY" not in p for p in left)
    assert left == ([] if HAVE_PYASC else [left[0]])


def test_bfloat16_on_a_device_backend_is_refused():
    b = np.ones(16, ml_dtypes.bfloat16)
    with pytest.raises(ValueError, match="no bfloat16"):
        fusekit.fused_add_scale(b, b, 1.0, backend="npu")


def test_a_tutorial_style_kernel_with_host_modules_and_hand_placed_tensors():
    kernel = fusekit.simulate(PYASC_KERNEL.with_name("vadd_flags.py"), "vadd_flags")
    x = np.arange(8 * 1024, dtype=np.float16) / 8
    y = np.ones_like(x)
    z = np.zeros_like(x)
    kernel[8, None](x, y, z, 1024)
    np.testing.assert_array_equal(z, x + y)
    report = fusekit.sanitize(kernel)[8](x, y, np.zeros_like(x), 1024)
    assert report.ok, report.to_text()
    assert "asc" not in sys.modules or sys.modules["asc"] is not fusekit.asc  # nothing leaks out of the rebinding
    assert "asc.runtime.config" not in sys.modules or HAVE_PYASC


def test_a_simulated_run_sees_no_submodule_of_an_imported_real_pyasc():
    """Inside bridge.rebound(fusekit.asc) an already imported real pyasc submodule is hidden (and restored after)."""
    pytest.importorskip("asc.runtime.launcher")  # real pyasc, imported before the rebinding
    from fusekit import asc as simulated
    from fusekit.pyasc import bridge

    real = sys.modules["asc.runtime.launcher"]
    with bridge.rebound(simulated):
        with pytest.raises(ImportError):
            __import__("asc.runtime.launcher")
    assert sys.modules["asc.runtime.launcher"] is real
