"""pyasc's host modules as a CPU run provides them (fusekit.pyasc.shim): ``asc.lib.runtime.support``,
``asc.lib.runtime.device_info`` of the simulated device, ``asc.runtime.jit.MockTensor``; and kernels written in
pyasc's newer spellings (tests/pyasc_kernels/newer_spellings.py) run on the simulator.

Expected values: enum values from pyasc ``python/asc/lib/runtime/support.py`` (and, where pyasc is installed,
from it); core counts from docs/ascendc-model.md (910B1: 48 AIV / 24 AIC; 910B3: 40 / 20); kernel results from
numpy formulas (GELU tanh form; RmsNorm.md's x / sqrt(mean(x^2) + eps) * gamma).
"""

import math
import sys

import numpy as np
import pytest

from fusekit import asc
from fusekit.pyasc import bridge
from support import TESTS

KERNELS = TESTS / "pyasc_kernels" / "newer_spellings.py"


@pytest.fixture
def rebound():
    """``import asc`` and its host modules bound to fusekit, as for a pyasc kernel file."""
    with bridge.rebound(asc):
        yield sys.modules


def test_support_enums_have_pyascs_values(rebound):
    """DeviceModuleType / DeviceInfoType as pyasc's support.py numbers them (CANN rtModuleType_t / rtInfoType_t)."""
    from asc.lib.runtime.support import DeviceInfoType, DeviceModuleType
    assert DeviceModuleType.RT_MODULE_TYPE_AICORE.value == 4 and DeviceModuleType.RT_MODULE_TYPE_VECTOR_CORE.value == 7
    assert DeviceInfoType.INFO_TYPE_CORE_NUM.value == 3 and DeviceInfoType.INFO_TYPE_CUBE_NUM.value == 0x775A5A5A
    import asc.lib.runtime as rt
    assert rt.DeviceModuleType is DeviceModuleType and rt.DeviceInfoType is DeviceInfoType


def test_support_enums_match_installed_pyasc():
    """Every member of pyasc's enums, by name and value (skipped without pyasc)."""
    try:
        real = pytest.importorskip("asc.lib.runtime.support")
    except Exception as exc:  # noqa: BLE001 - pyasc present but unusable here
        pytest.skip(str(exc))
    if "fusekit" in str(getattr(real, "__file__", "")):
        pytest.skip("asc is fusekit here")
    from fusekit.pyasc.shim import support
    for name in ("DeviceModuleType", "DeviceInfoType", "CoreType"):
        assert {m.name: m.value for m in getattr(support, name)} == {m.name: m.value for m in getattr(real, name)}


@pytest.mark.parametrize("platform, aiv, aic", [("Ascend910B1", 48, 24), ("Ascend910B3", 40, 20)])
def test_device_info_gives_the_simulated_socs_core_counts(rebound, platform, aiv, aic):
    """Vector cores and AI (cube) cores of the platform set_platform chose (docs/ascendc-model.md)."""
    import asc.lib.runtime as rt
    import asc.runtime.config as config
    from asc.lib.runtime.support import DeviceInfoType as I, DeviceModuleType as M
    config.set_platform(config.Backend.Model, platform)
    try:
        assert rt.device_info(M.RT_MODULE_TYPE_VECTOR_CORE, I.INFO_TYPE_CORE_NUM) == aiv
        assert rt.device_info(M.RT_MODULE_TYPE_AICORE, I.INFO_TYPE_CORE_NUM, 0) == aic
        assert rt.device_info(M.RT_MODULE_TYPE_AICORE, I.INFO_TYPE_CUBE_NUM) == aic
    finally:
        config.set_platform(config.Backend.Model)


def test_device_info_refuses_what_it_cannot_answer(rebound):
    """An unanswered query, a second device, a platform without SoC data: each a readable ValueError."""
    import asc.lib.runtime as rt
    import asc.runtime.config as config
    from asc.lib.runtime.support import DeviceInfoType as I, DeviceModuleType as M
    with pytest.raises(ValueError, match="answers only"):
        rt.device_info(M.RT_MODULE_TYPE_AICPU, I.INFO_TYPE_CORE_NUM)
    with pytest.raises(ValueError, match="one device"):
        rt.device_info(M.RT_MODULE_TYPE_AICORE, I.INFO_TYPE_CORE_NUM, 3)
    config.set_platform(config.Backend.Model, "Ascend910_9392", check=False)  # recorded unchecked, as pyasc does
    try:
        with pytest.raises(ValueError, match="no SoC data for platform Ascend910_9392"):
            rt.device_info(M.RT_MODULE_TYPE_VECTOR_CORE, I.INFO_TYPE_CORE_NUM)
    finally:
        config.set_platform(config.Backend.Model)


@pytest.mark.parametrize("platform", ["Ascend910B2C", "Ascend910B4-1", "Ascend910_9362", "Ascend910_9392"])
def test_set_platform_refuses_a_platform_the_simulator_has_no_soc_data_for(rebound, platform):
    """pyasc's set_platform(check=True) raises RuntimeError when the chosen SoC's runtime is not available
    (pyasc config.py); the runtime here is the simulator, so every pyasc Platform without fusekit SoC data
    (fusekit.soc.SOCS) is refused there, naming those it has, and the earlier choice stays. Platforms with SoC
    data are accepted and answered (test_device_info_gives_the_simulated_socs_core_counts)."""
    import asc.lib.runtime as rt
    import asc.runtime.config as config
    from asc.lib.runtime.support import DeviceInfoType as I, DeviceModuleType as M

    from fusekit.soc import SOCS
    config.set_platform(config.Backend.Model, "Ascend910B3")
    try:
        with pytest.raises(RuntimeError, match=f"no SoC data for {platform}.*Ascend910B1, Ascend910B2, Ascend910B3"):
            config.set_platform(config.Backend.Model, platform)
        assert rt.device_info(M.RT_MODULE_TYPE_VECTOR_CORE, I.INFO_TYPE_CORE_NUM) == SOCS["Ascend910B3"].vector_cores
        for known in config.Platform:  # every platform set_platform accepts is one device_info answers for
            try:
                config.set_platform(config.Backend.Model, known)
            except RuntimeError:
                assert known.value not in SOCS
                continue
            assert rt.device_info(M.RT_MODULE_TYPE_AICORE, I.INFO_TYPE_CORE_NUM) == SOCS[known.value].vector_cores // 2
    finally:
        config.set_platform(config.Backend.Model)


def test_mock_tensor_is_pyascs_and_a_launch_with_one_is_refused(rebound):
    """MockTensor holds a dtype only (pyasc jit.py); the simulator cannot run on it and says so."""
    import asc as rebound_asc
    from asc.runtime.jit import MockTensor, MockValue
    t = MockTensor(rebound_asc.float32)
    assert t.dtype is rebound_asc.float32 and MockValue(rebound_asc.int32).dtype is rebound_asc.int32

    @rebound_asc.jit
    def k(x: rebound_asc.GlobalAddress):
        pass

    with pytest.raises(TypeError, match="MockTensor has a dtype and no data"):
        k[1](t)


def _gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def test_sample_style_gelu_runs_and_its_host_code_sizes_the_launch():
    """init_buffer(buf=, len=), rt.device_info and config.KernelType as the gelu sample uses them."""
    module = bridge.load_rebound(KERNELS, asc)
    assert module.vector_cores() == 48
    x = np.linspace(-3, 3, 4 * 256, dtype=np.float32)
    y = np.zeros_like(x)
    module.gelu[4](x, y, 256, 128, False)
    np.testing.assert_allclose(y, _gelu(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_sample_style_tanh_in_place_is_still_refused_with_its_page():
    """The gelu sample's adv.tanh(tmp, tmp) breaks Tanh.md's no-overlap rule: refused, naming the page."""
    module = bridge.load_rebound(KERNELS, asc)
    x = np.ones(256, np.float32)
    with pytest.raises(asc.KernelError, match=r"Tanh\.md, 约束说明"):
        module.gelu[1](x, np.zeros_like(x), 256, 128, True)


def test_sample_style_rmsnorm_with_a_hand_built_tiling_aligned_to_16_rows():
    """RmsNormTiling(..., main_bs_length_align=16) for 8 rows, as the rmsnorm sample builds it, runs correctly."""
    module = bridge.load_rebound(KERNELS, asc)
    rng = np.random.default_rng(1)
    rows, h = 8, 64
    x = rng.standard_normal((2, rows, h)).astype(np.float32)
    g = rng.uniform(0.5, 2, h).astype(np.float32)
    y = np.zeros_like(x)
    module.rmsnorm[2](x, g, y, rows, h, 1e-6)
    x64 = x.astype(np.float64)
    want = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(y, want, rtol=5e-7 * 4, atol=1e-30)
