"""The high-level Matmul from C++ (include/lib/matmul_intf.h, include/tiling/matmul_tiling.h): the C++ template API
gives the outputs and the Trace of its pyasc twin (tests/cube/test_cube_matmul_api.py: cube_only, leaky) and the
exact product; its refusals name the call; the host tiling from C++ is the one pyasc's asc.lib.host gets; asc-devkit's
Matmul samples run with their own scripts when a checkout is at hand. Integer-valued inputs keep every sum exact."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from cpp_paths import SOURCES

import fusekit
from fusekit import asc
from fusekit.asc import KernelError
from fusekit.cpp import conformance, load
from fusekit.pyasc.shim import host

import twins
from cube.test_cube_matmul_api import _integers, _leaky_args, cube_only, leaky, tiling_for


@pytest.fixture(scope="module")
def library():
    return load(SOURCES / "cpp_matmul.cpp")


@pytest.mark.parametrize("kernel, out, b_trans, with_bias", [("cube_only_f16", np.float32, False, True),
                                                             ("cube_only_f16_f16", np.float16, True, True),
                                                             ("cube_only_f16", np.float32, True, False)])
def test_iterate_all_on_aic_matches_numpy_and_the_pyasc_twin(library, kernel, out, b_trans, with_bias):
    m, n, k = 80, 96, 100  # tails in M and N on the cores, a K tail step
    a, b = _integers((m, k), np.float16, 1), _integers((k, n), np.float16, 2)
    bias = _integers((1, n), np.float32, 3) if with_bias else np.zeros((1, n), np.float32)
    tiling = tiling_for(m, n, k, 4, np.float16, out, bias=with_bias, b_trans=b_trans)
    bg = np.ascontiguousarray(b.T) if b_trans else b
    runs = []
    for launch in (fusekit.sanitize(library[kernel]), fusekit.sanitize(cube_only)):
        c = np.zeros((m, n), out)
        report = launch[tiling.used_core_num](a, bg, c, bias, tiling, np.zeros(1 << 16, np.uint8), b_trans)
        assert report.ok, report.to_text()
        runs.append((c, report.trace))
    (c_cpp, cpp), (c_py, py) = runs
    expected = a.astype(np.int64) @ b.astype(np.int64) + (bias.astype(np.int64) if with_bias else 0)
    np.testing.assert_array_equal(c_cpp, expected.astype(out))
    assert np.array_equal(c_cpp.view(np.uint8), c_py.view(np.uint8))
    assert twins.instructions(cpp) == twins.instructions(py) and cpp.kinds == py.kinds
    assert {"data_copy", "load_data", "mmad", "fixpipe"} <= {i.op for i in cpp.cores[0]}
    mmad = next(i for i in cpp.cores[0] if i.op == "mmad")  # the basic instruction names the Matmul call's line
    assert mmad.file.endswith("cpp_matmul.cpp") and "IterateAll(" in (SOURCES / "cpp_matmul.cpp").read_text().splitlines()[mmad.line - 1]


def test_a_mix_kernel_with_iterate_and_get_tensor_c_matches_the_pyasc_twin(library):
    a, b, bias, tiling, args = _leaky_args()
    runs = []
    for launch in (fusekit.sanitize(library.leaky, outputs=("c",)), fusekit.sanitize(leaky, outputs=("c",))):
        fresh = list(args)
        fresh[2] = np.zeros_like(args[2])
        report = launch[tiling.used_core_num // 2](*fresh)
        assert report.ok, report.to_text()
        runs.append((fresh[2], report.trace))
    (c_cpp, cpp), (c_py, py) = runs
    mm = a.astype(np.float32) @ b.astype(np.float32) + bias
    np.testing.assert_array_equal(c_cpp, np.where(mm >= 0, mm, np.float32(0.25) * mm))
    assert np.array_equal(c_cpp, c_py) and cpp.kinds == py.kinds == ("AIV", "AIV", "AIC")
    assert twins.instructions(cpp) == twins.instructions(py)


HOST = """#include "kernel_operator.h"
#include "tiling/tiling_api.h"
__global__ __cube__ void nothing(GM_ADDR x) {}
int main() {
    auto* platform = platform_ascendc::PlatformAscendCManager::GetInstance();
    matmul_tiling::MultiCoreMatmulTiling api(*platform);
    api.SetDim(2);
    api.SetAType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetBType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT16);
    api.SetCType(matmul_tiling::TPosition::VECCALC, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetBiasType(matmul_tiling::TPosition::GM, matmul_tiling::CubeFormat::ND, matmul_tiling::DataType::DT_FLOAT);
    api.SetOrgShape(64, 64, 96);
    api.SetShape(64, 64, 96);
    api.EnableBias(true);
    api.SetFixSplit(32, 32, -1);
    optiling::TCubeTiling t;
    if (api.GetTiling(t) != 0) return 3;
    const int32_t* f = reinterpret_cast<const int32_t*>(&t);
    for (size_t i = 0; i < sizeof(TCubeTiling) / 4; ++i) printf("%d%s", f[i], i + 1 < sizeof(TCubeTiling) / 4 ? "," : "\\n");
    matmul_tiling::MultiCoreMatmulTiling empty(*platform);
    return empty.GetTiling(t) == -1 && api.GetBaseM() == 32 ? 0 : 4;
}
"""


def test_the_cpp_host_tiling_is_the_pyasc_one(tmp_path):
    from fusekit.cpp.program import run_program

    source = tmp_path / "host_tiling.asc"
    source.write_text(HOST)
    result = run_program(source, cwd=tmp_path, quiet=True)
    assert result.status == 0, result.error
    expected = tiling_for(64, 64, 96, 2, c_pos=host.TPosition.VECCALC, bias=True, fix=(32, 32, -1))
    words = [int(object.__getattribute__(expected, f)) for f in asc.adv.TCubeTiling.struct_fields]
    assert ",".join(map(str, words)) in result.output


REFUSED = [
    ("MatmulType<TPosition::GM, CubeFormat::NZ, half>", "CFG_NORM", "Matmul", "format NZ is not simulated yet"),
    ("MatmulType<TPosition::GM, CubeFormat::ND_ALIGN, half>", "CFG_NORM", "Matmul", "CubeFormat::ND_ALIGN"),
    ("MatmulType<TPosition::GM, CubeFormat::ND, half>", "PARTIAL", "Matmul", "MatmulConfig.isPartialOutput"),
]


@pytest.mark.parametrize("a_type, config, op, message", REFUSED)
def test_what_the_matmul_does_not_simulate_names_itself(tmp_path, a_type, config, op, message):
    source = tmp_path / "refused.cpp"
    source.write_text('#include "kernel_operator.h"\n#include "lib/matmul_intf.h"\nusing namespace AscendC;\n'
                      "constexpr MatmulConfig PARTIAL = [] { MatmulConfig c{}; c.isPartialOutput = true; return c; }();\n"
                      "__global__ __cube__ void refused(GM_ADDR workspace) {\n"
                      f"    Matmul<{a_type}, MatmulType<TPosition::GM, CubeFormat::ND, half>,\n"
                      f"           MatmulType<TPosition::GM, CubeFormat::ND, float>, MatmulType<TPosition::GM, "
                      f"CubeFormat::ND, float>, {config}> mm;\n}}\n")
    with pytest.raises(KernelError) as caught:
        load(source).refused[1](np.zeros(64, np.uint8))
    error = caught.value
    assert error.op == op and message in str(error) and error.file == str(source) and error.line == 7  # the line declaring mm
    assert error.kind.value == "unsupported"


def test_a_matmul_without_a_workspace_is_refused_with_the_fix(tmp_path):
    source = tmp_path / "no_ws.cpp"
    source.write_text('#include "kernel_operator.h"\n#include "lib/matmul_intf.h"\nusing namespace AscendC;\n'
                      "__global__ __cube__ void no_ws(GM_ADDR x) {\n    TPipe pipe;\n"
                      "    Matmul<MatmulType<TPosition::GM, CubeFormat::ND, half>, MatmulType<TPosition::GM, "
                      "CubeFormat::ND, half>, MatmulType<TPosition::GM, CubeFormat::ND, float>> mm;\n"
                      "    REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm);\n}\n")
    with pytest.raises(KernelError, match="GetSysWorkSpacePtr.. answers the kernel's GM parameter named workspace") as caught:
        load(source).no_ws[1](np.zeros(64, np.uint8))
    assert caught.value.op == "REGIST_MATMUL_OBJ" and caught.value.line == 7


# asc-devkit's Matmul samples, run as their READMEs run them and judged by their own scripts (fusekit.cpp.conformance)
CHECKOUT = os.environ.get("FUSEKIT_ASC_DEVKIT_CHECKOUT")
SIMD = Path(CHECKOUT or ".") / "examples" / "01_simd_cpp_api"


@pytest.mark.skipif(not CHECKOUT or not SIMD.is_dir(),
                    reason="no asc-devkit checkout (set FUSEKIT_ASC_DEVKIT_CHECKOUT to a clone of cann/asc-devkit)")
@pytest.mark.parametrize("example", [
    "00_introduction/02_matrix/matmul_advanced_api",              # AIC_ONLY, IterateAll into GM, 2 cores split M
    "00_introduction/03_fusion_operation/matmul_leakyrelu_advanced_api",  # MIX, Iterate + GetTensorC into UB
])
def test_an_asc_devkit_matmul_sample_passes_its_own_verify_script(example):
    source = SIMD / example / f"{example.rsplit('/', 1)[1]}.asc"
    row = conformance.run_example(conformance.Example(source))
    assert row.verdict == "passed", f"{row.verdict}: {row.reason}"
