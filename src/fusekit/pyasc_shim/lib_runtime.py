"""Stand-in for pyasc's ``asc.lib.runtime`` (pyasc ``python/asc/lib/runtime/interface.py``).

Kernels call ``current_stream()`` to launch ``kernel[core_num, rt.current_stream()](...)``; fusekit's
launch ignores the stream (the simulator runs the launch at once). The device queries answer for
one simulated device; memory and kernel-registration calls of pyasc's runtime are not stand-ins
(fusekit launches take numpy arrays or CPU torch tensors directly) and raise AttributeError naming
that.
"""

from __future__ import annotations

from . import config


class Stream:
    """The one stream of the simulated device (launches on it complete before returning)."""

    def __repr__(self) -> str:
        return "<fusekit simulated stream>"


_STREAM = Stream()


def current_stream() -> Stream:
    return _STREAM


def create_stream() -> Stream:
    return _STREAM


def destroy_stream(stream: Stream) -> None:
    return None


def synchronize(stream: "Stream | None" = None) -> None:
    """Launches are synchronous on the simulator: nothing is pending."""
    return None


def synchronize_device() -> None:
    return None


def set_device(device_id: int = 0) -> None:
    config.selected["device_id"] = int(device_id)


def current_device() -> int:
    return config.selected["device_id"]


def default_device() -> int:
    return 0


def device_count() -> int:
    return 1


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def is_model() -> bool:
    return config.selected["backend"] is config.Backend.Model


def current_platform() -> str:
    return config.selected["platform"].value


def get_soc_version() -> config.Platform:
    return config.selected["platform"]


def __getattr__(name: str):
    raise AttributeError(f"asc.lib.runtime.{name}: pyasc's device runtime call is not simulated by fusekit "
                         "(launch kernels with numpy arrays or CPU torch tensors instead)")
