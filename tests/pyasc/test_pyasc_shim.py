"""Issue 11 item 3: pyasc's host-side modules as fusekit stand-ins, and CPU torch.Tensor arguments.

Behaviour mirrored from pyasc (github hicann/pyasc): ``python/asc/runtime/config.py`` (Backend,
Platform names, ``set_platform`` validates with ``Backend(...)``), ``python/asc/lib/runtime``
(``current_stream``), ``python/asc/language/core/struct.py`` (unknown field -> RuntimeError).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from fusekit import asc
from fusekit.pyasc import bridge

KERNEL = textwrap.dedent('''
    import asc
    import asc.lib.runtime as rt
    import asc.runtime.config as config
    from asc.language.core.dtype import KnownTypes as KT
    from asc.language.core.struct import Field, Struct, StructField


    class Tile(Struct):
        length = Field(dtype=KT.int32, default=0)
        num = Field(dtype=KT.int32, default=0)


    class Cfg(Struct):
        block = Field(dtype=KT.int32, default=0)
        tile = StructField(Tile)


    @asc.jit
    def scale(x: asc.GlobalAddress, z: asc.GlobalAddress, cfg: Cfg):
        xg, zg = asc.GlobalTensor(), asc.GlobalTensor()
        off = asc.get_block_idx() * cfg.block
        xg.set_global_buffer(x + off)
        zg.set_global_buffer(z + off)
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=cfg.tile.length * 4)
        t = buf.get(asc.float32)
        for i in range(cfg.tile.num):
            asc.data_copy(t, xg[i * cfg.tile.length:], cfg.tile.length)
            asc.set_flag(asc.HardEvent.MTE2_V, 0)
            asc.wait_flag(asc.HardEvent.MTE2_V, 0)
            asc.muls(t, t, 3.0, cfg.tile.length)
            asc.set_flag(asc.HardEvent.V_MTE3, 0)
            asc.wait_flag(asc.HardEvent.V_MTE3, 0)
            asc.data_copy(zg[i * cfg.tile.length:], t, cfg.tile.length)
            asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


    def launch(x, z):
        config.set_platform(config.Backend.Model, config.Platform.Ascend910B1)
        cfg = Cfg(block=x.shape[0] // 2)
        cfg.tile = Tile(length=64, num=x.shape[0] // 2 // 64)
        scale[2, rt.current_stream()](x, z, cfg)
        return z
''')


@pytest.fixture
def module(tmp_path):
    path = tmp_path / "struct_kernel.py"
    path.write_text(KERNEL)
    return bridge.load_rebound(path, asc)


def run(module, x, z):
    with bridge.rebound(asc):
        return module.launch(x, z)


def test_struct_tiling_and_stream_numpy(module):
    x = np.arange(512, dtype=np.float32)
    z = run(module, x, np.zeros_like(x))
    np.testing.assert_array_equal(z, x * np.float32(3))


def test_torch_cpu_tensors(module):
    torch = pytest.importorskip("torch")
    x = torch.arange(256, dtype=torch.float32)
    z = run(module, x, torch.zeros_like(x))
    assert torch.equal(z, x * 3)  # the results land in the caller's tensor, as with pyasc


def test_torch_noncontiguous_is_refused():
    torch = pytest.importorskip("torch")

    @asc.jit
    def k(x: asc.GlobalAddress):
        pass

    with pytest.raises(TypeError, match="contiguous CPU torch tensors"):
        k[1](torch.zeros(8, 8)[:, 1])


def test_config_and_struct_errors_as_pyasc(module):
    from fusekit.pyasc.shim import config, struct
    with pytest.raises(ValueError):
        config.set_platform("Ascend")
    config.set_platform("NPU")
    assert config.selected["backend"] is config.Backend.NPU
    config.set_platform(config.Backend.Model)
    with pytest.raises(RuntimeError, match="does not have a field 'blok'"):
        module.Cfg(blok=3)

    class NoDefault(struct.Struct):
        n = struct.Field(dtype=asc.int32)

    with pytest.raises(RuntimeError, match="no default"):
        NoDefault()


def test_modules_resolve_while_rebound():
    with bridge.rebound(asc):
        import asc.lib.host as host
        import asc.lib.runtime as rt
        import asc.runtime.config as config
        from asc.language.core.struct import Struct  # noqa: F401
        assert rt.current_stream() is rt.current_stream()
        assert config.Platform("Ascend910B4-1") is config.Platform.Ascend910B4_1
        assert host.MultiCoreMatmulTiling(host.get_ascendc_platform()).get_core_num() == -1  # before get_tiling
        with pytest.raises(NotImplementedError, match="cube unit"):
            host.BatchMatmulTiling
