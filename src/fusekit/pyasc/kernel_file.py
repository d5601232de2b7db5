"""A user's kernel file on fusekit's simulator: the module imported with ``asc`` bound to fusekit, the
``op_info.json`` beside it, the kernel it means, and the names given for its parameters.

Shared by ``fusekit check FILE`` (:mod:`fusekit.check`) and ``fusekit emit FILE:KERNEL``
(:func:`fusekit.pyasc.emit.kernel_file`), so both read a file the same way and say the same things about it.
"""

from __future__ import annotations

import difflib
import inspect
import sys
import traceback
from pathlib import Path

from fusekit import asc as fusekit_asc
from fusekit.asc.runtime import KernelFunction, annotation_text
from fusekit.pyasc.bridge import load_rebound
from fusekit.pyasc.opdef import OpDefError, load_op_info

_FUSEKIT = str(Path(__file__).resolve().parents[1])  # frames in fusekit's own source are not the user's


class KernelFileError(ValueError):
    """The file, kernel or arguments cannot be used (a user mistake, one readable line)."""


def load_module(path: Path):
    """Import the file with ``asc`` bound to fusekit's simulator, whether it says ``import asc``
    (pyasc) or ``from fusekit import asc``; its own imports of neighbouring files work as under ``python``."""
    if path.is_dir():
        raise KernelFileError(f"{path} is a directory; pass the Python file with the kernel")
    if not path.is_file():
        raise KernelFileError(f"{path}: no such file")
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        return load_rebound(path, fusekit_asc)
    except Exception as exc:  # noqa: BLE001 - any import failure of the user's file is reported in one line
        # a SyntaxError is raised by the compiler, not in a frame of the file: it carries the file's line itself
        where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, SyntaxError) else user_frame(exc)
        raise KernelFileError(f"{path} failed to import: {type(exc).__name__} at {Path(where).name}: {exc}") from None
    finally:
        sys.path.remove(folder)


def op_info_beside(path: Path):
    """The prototype in the ``op_info.json`` next to ``path`` (None if there is none)."""
    candidate = path.with_name("op_info.json")
    if not candidate.is_file():
        return None
    try:
        return load_op_info(candidate)
    except OpDefError as exc:
        raise KernelFileError(str(exc)) from None


def pick_kernel(module, name: str | None, op, path: Path):
    """The kernel to check and the op_info.json that describes it (None if none does).

    Without ``name``, an op_info.json beside the file names the kernel (msopgen's snake_case of
    the op type); a file whose kernels do not include it is rejected with the closest name, as the
    framework would never find the kernel."""
    kernels = {k: v for k, v in vars(module).items() if isinstance(v, KernelFunction)
               and v.fn.__globals__ is vars(module)}
    if name is not None:
        if name not in kernels:
            raise KernelFileError(f"no @asc.jit kernel {name!r} in {path.name}; it has {sorted(kernels) or 'none'}"
                                  + _closest(name, kernels))
        applies = op is not None and name in (op.kernel_name, op.op_type)
        return kernels[name], op if applies else None
    if op is not None:
        if op.kernel_name in kernels or op.op_type in kernels:
            return kernels.get(op.kernel_name) or kernels[op.op_type], op
        tops = _tops(kernels)
        if len(tops) == 1:
            try:
                op.check_kernel_name(tops[0].fn.__name__)
            except OpDefError as exc:
                raise KernelFileError(str(exc)) from None
        raise KernelFileError(f"{op.source} names op {op.op_type!r}, whose kernel is {op.kernel_name!r}, but "
                              f"{path.name} has no such kernel (it has {sorted(kernels) or 'none'})"
                              + _closest(op.kernel_name, kernels))
    tops = _tops(kernels)
    if not tops:
        helpers = f" (its @asc.jit functions {', '.join(sorted(kernels))} take no GM address)" if kernels else ""
        raise KernelFileError(f"{path.name} has no @asc.jit kernel: no @asc.jit function with asc.GlobalAddress "
                              f"parameters{helpers}")
    if len(tops) > 1:
        raise KernelFileError(f"{path.name} has several @asc.jit kernels, {', '.join(k.fn.__name__ for k in tops)}; "
                              "choose one with --kernel NAME (or FILE.py:NAME)")
    return tops[0], None


def check_names(fn: KernelFunction, params, gm: list[str], outputs, args: dict) -> None:
    """Refuse ``outputs`` that are not GM parameters of ``fn`` and ``args`` that are not its parameters."""
    unknown = sorted(set(outputs or ()) - set(gm))
    if unknown:
        raise KernelFileError(f"--outputs {','.join(unknown)}: not GM parameters of {fn.fn.__name__}; its GM "
                              f"parameters are {', '.join(gm) or 'none'}")
    unknown = sorted(set(args) - set(params))
    if unknown:
        raise KernelFileError(f"--arg {', '.join(unknown)}: {fn.fn.__name__} has no such parameter; its "
                              f"parameters are {', '.join(params)}")


def user_frame(exc: BaseException) -> str:
    """path:line of the innermost traceback frame in user code (the kernel file or its helpers)."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return ""
    frames = [f for f in tb if not f.filename.startswith(_FUSEKIT)]
    frame = frames[-1] if frames else tb[-1]
    return f"{frame.filename}:{frame.lineno}"


def is_gm(param: inspect.Parameter) -> bool:
    """Whether a kernel parameter is a GM address."""
    return "GlobalAddress" in annotation_text(param)


def _tops(kernels: dict) -> list[KernelFunction]:
    return [k for k in kernels.values() if any(is_gm(p) for p in inspect.signature(k.fn).parameters.values())]


def _closest(name: str, kernels) -> str:
    close = difflib.get_close_matches(name, list(kernels), n=1, cutoff=0.6)
    return f". Did you mean {close[0]!r}?" if close else ""
