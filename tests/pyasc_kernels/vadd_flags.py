"""A kernel in the style of pyasc's first tutorial: host modules imported next to ``asc``, tensors
placed at UB addresses by hand and synchronised with flags, a launch helper using a stream."""

import numpy as np

import asc
import asc.lib.runtime as rt
import asc.runtime.config as config

TILE = 256


@asc.jit
def vadd_flags(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int):
    offset = asc.get_block_idx() * block_length
    x_gm = asc.GlobalTensor()
    y_gm = asc.GlobalTensor()
    z_gm = asc.GlobalTensor()
    x_gm.set_global_buffer(x + offset, block_length)
    y_gm.set_global_buffer(y + offset, block_length)
    z_gm.set_global_buffer(z + offset, block_length)
    nbytes = TILE * x.dtype.sizeof()
    x_local = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, TILE)
    y_local = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, nbytes, TILE)
    z_local = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 2 * nbytes, TILE)
    for i in asc.range(block_length // TILE):
        if i > 0:
            asc.wait_flag(asc.HardEvent.V_MTE2, 0)     # inputs consumed by the previous add
            asc.wait_flag(asc.HardEvent.MTE3_V, 0)     # output drained by the previous copy-out
        asc.data_copy(x_local, x_gm[i * TILE:], TILE)
        asc.data_copy(y_local, y_gm[i * TILE:], TILE)
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.add(z_local, x_local, y_local, TILE)
        asc.set_flag(asc.HardEvent.V_MTE2, 0)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(z_gm[i * TILE:], z_local, TILE)
        asc.set_flag(asc.HardEvent.MTE3_V, 0)
    asc.wait_flag(asc.HardEvent.V_MTE2, 0)
    asc.wait_flag(asc.HardEvent.MTE3_V, 0)


def launch(x: np.ndarray, y: np.ndarray, cores: int = 8) -> np.ndarray:
    z = np.zeros_like(x)
    vadd_flags[cores, rt.current_stream()](x, y, z, x.size // cores)
    return z


if __name__ == "__main__":
    config.set_platform(config.Backend.Model)
    print(launch(np.ones(8 * 1024, np.float16), np.ones(8 * 1024, np.float16)))
