"""CANN operator projects: the host tiling compiled against fusekit's stand-ins and called with a TilingContext,
the kernel run with the tiling it wrote; fusekit's own emit --project output round-trips bit for bit."""

import shutil
import subprocess
import sys

import numpy as np
import pytest

from cpp_paths import PROJECTS

from fusekit.cpp.project import Project, ProjectError

SCALED_SUB = PROJECTS / "scaled_sub"


def fusekit(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "fusekit.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def project():
    return Project(SCALED_SUB)


def test_the_prototype_is_read_from_the_opdef(project):
    proto = project.prototype
    assert proto.name == "ScaledSub" and [p.name for p in proto.inputs] == ["x1", "x2"]
    assert proto.inputs[0].dtypes == ("float16", "float32") and [a.name for a in proto.attrs] == ["alpha"]


@pytest.mark.parametrize("dtype, key", [(np.float16, 1), (np.float32, 2)])
def test_tiling_then_kernel(project, rng, dtype, key):
    x1, x2 = (rng.uniform(-4, 4, 50000).astype(dtype) for _ in range(2))
    run = project.run({"x1": x1, "x2": x2}, {"alpha": 0.5})
    assert run.tiling.key == key and run.tiling.block_dim == 48 and run.tiling.output_shapes == [(50000,)]
    # the NPU's arithmetic: Sub rounds to the dtype, Muls by 0.5 is exact
    expected = ((x1.astype(np.float32) - x2).astype(dtype) * dtype(0.5)).astype(dtype)
    assert np.array_equal(run.outputs["y"], expected)


def test_bad_inputs_are_named(project, rng):
    x = rng.uniform(-1, 1, 64).astype(np.float16)
    with pytest.raises(ProjectError, match="missing x2"):
        project.run({"x1": x}, {"alpha": 1})
    with pytest.raises(ProjectError, match="attribute alpha is required"):
        project.run({"x1": x, "x2": x})
    with pytest.raises(ProjectError, match="input x1 is int32; ScaledSub's OpDef lists float16, float32"):
        project.run({"x1": x.astype(np.int32), "x2": x}, {"alpha": 1})
    with pytest.raises(ProjectError, match="returned GRAPH_FAILED"):
        project.run({"x1": x[:63], "x2": x[:63]}, {"alpha": 1})


def test_cli_compares_with_the_users_reference():
    ok = fusekit("run", str(SCALED_SUB), "--shape", "4096", "--attr", "alpha=0.25", "--expect", "(x1 - x2) * alpha")
    assert ok.returncode == 0 and "PASS" in ok.stdout, ok.stdout + ok.stderr
    wrong = fusekit("run", str(SCALED_SUB), "--shape", "4096", "--attr", "alpha=0.25", "--expect", "(x1 + x2) * alpha")
    assert wrong.returncode == 1 and "FAIL" in wrong.stdout
    clean = fusekit("run", str(SCALED_SUB), "--shape", "4096", "--attr", "alpha=1", "--sanitize")
    assert clean.returncode == 0 and "sanitizer: no findings" in clean.stdout
    timed = fusekit("profile", str(SCALED_SUB), "--shape", "4096", "--attr", "alpha=1")
    assert timed.returncode == 0 and "kernel time" in timed.stdout


def test_cli_refuses_what_is_not_a_project(tmp_path):
    done = fusekit("run", str(tmp_path))
    assert done.returncode == 2 and "is not an operator project" in done.stderr and "Traceback" not in done.stderr
    (tmp_path / "op_host").mkdir()
    (tmp_path / "op_kernel").mkdir()
    (tmp_path / "op_host" / "x.cpp").write_text('#include "register/op_def_registry.h"\n')
    (tmp_path / "op_kernel" / "x.cpp").write_text('#include "kernel_operator.h"\n'
                                                  'extern "C" __global__ __aicore__ void x(GM_ADDR a) {}\n')
    done = fusekit("run", str(tmp_path))
    assert done.returncode == 2 and "registers no operator" in done.stderr


def test_emitted_project_round_trips_bit_for_bit(tmp_path, rng):
    pytest.importorskip("asc", reason="emit --project traces the kernel with pyasc (ascend-fusekit[pyasc])")
    from fusekit.ops import fused_add_scale
    from fusekit.pyasc.project import write_project

    write_project("fused_add_scale", tmp_path)
    x1, x2 = (rng.uniform(-4, 4, 100_000).astype(np.float16) for _ in range(2))
    cpp = Project(tmp_path).run({"x1": x1, "x2": x2}, {"scale": 1.5})
    pyasc_run = fused_add_scale.run(x1, x2, 1.5)
    assert np.array_equal(cpp.outputs["y"].view(np.uint16), pyasc_run.y.view(np.uint16))


def test_a_tiling_function_that_crashes_is_reported(tmp_path):
    shutil.copytree(SCALED_SUB, tmp_path / "p")
    host = tmp_path / "p" / "op_host" / "scaled_sub.cpp"
    # a sample seen in the wild: SaveToBuffer given the TilingData object instead of its GetData()
    host.write_text(host.read_text().replace("tiling.SaveToBuffer(context->GetRawTilingData()->GetData(),",
                                             "*(volatile int*)nullptr = 0; tiling.SaveToBuffer(context->GetRawTilingData()->GetData(),"))
    done = fusekit("run", str(tmp_path / "p"), "--shape", "4096", "--attr", "alpha=1")
    assert done.returncode == 1 and "crashed (SIGSEGV)" in done.stdout and "Traceback" not in done.stderr


@pytest.mark.parametrize("name, attrs", [("swiglu", {}), ("add_rms_norm", {"eps": 1e-6})])
def test_emitted_generated_op_project_round_trips(tmp_path, rng, name, attrs):
    pytest.importorskip("asc", reason="emit --project traces the kernel with pyasc (ascend-fusekit[pyasc])")
    from fusekit.gen.catalogue import CATALOGUE

    op = CATALOGUE[name]
    done = fusekit("emit", name, "--project", str(tmp_path))
    assert done.returncode == 0, done.stderr
    project = Project(tmp_path)
    shapes = {"x": (64, 256), "residual": (64, 256), "gamma": (256,)} if name == "add_rms_norm" else {}
    inputs = {p.name: rng.uniform(-2, 2, shapes.get(p.name, (4096,))).astype(np.float16)
              for p in project.prototype.inputs}
    cpp = project.run(dict(inputs), attrs)
    simulated = op.run(*inputs.values(), **attrs)
    for key, value in simulated.outputs.items():
        assert np.array_equal(cpp.outputs[key].view(np.uint16), np.asarray(value).view(np.uint16)), key
