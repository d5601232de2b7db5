"""A generated operator by name: a catalogue entry, ``FILE.py:NAME`` (a @fusekit.op in a Python file) or a
string expression (``fusekit.define_op``'s spelling, e.g. ``'silu(a) * b'``). ``fusekit.gen.run`` and the
``fusekit`` command (:mod:`fusekit.cli.generated`) both take these names.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

from fusekit.pyasc.kernel_file import user_frame

from .catalogue import get
from .graph import GraphError
from .op import GeneratedOp, define_op


def file_op(name: str) -> bool:
    """``FILE.py:NAME``."""
    return ":" in name and name.rsplit(":", 1)[0].endswith(".py")


def is_expression(text: str, kernel_files: bool = False) -> bool:
    """Whether OP ``text`` is meant as a string expression (``fusekit.define_op``'s spelling): it has an
    operator, a call, a comma or a space. A name stays an operator name, hyphens included (``add-rms-nrom`` is
    an unknown operator, not a subtraction: write ``a - b``), and so does ``FILE.py:NAME``; with
    ``kernel_files`` (``emit``) so does what ``fusekit.pyasc.emit.parse_target`` takes for a kernel file:
    FILE:KERNEL, FILE.py, an existing path, a path with ``/`` and no spaces or parentheses. Whether it parses
    is :func:`load`'s to say.
    """
    bare = text.strip()
    if file_op(text) or not set("()+-*/<>=!,; ") & set(bare) or bare.replace("-", "_").isidentifier():
        return False
    if kernel_files:
        _, colon, kernel = text.rpartition(":")
        if (colon and kernel.isidentifier() and ";" not in text) or text.endswith(".py") or os.path.exists(text):
            return False
        if "/" in text and not set("() ") & set(text):
            return False
    return True


@functools.cache
def _module(path: str):
    """The user's operator file, executed once per process (every :func:`load` of it reads this one)."""
    spec = importlib.util.spec_from_file_location(f"fusekit_user_{Path(path).stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(name: str) -> GeneratedOp:
    """The generated operator ``name``: a catalogue entry, ``FILE.py:NAME`` (a @fusekit.op there), or a string
    expression (:func:`is_expression`; ``fusekit.define_op(name)``, named ``expr``).

    Raises:
        ValueError: no such operator or file, or NAME is not a generated operator.
        GraphError: the expression does not parse or cannot be traced (one line naming the problem).
    """
    if is_expression(name):
        try:
            return define_op(name)
        except GraphError:
            raise
        except (AttributeError, ValueError) as exc:  # `a.b` (an attribute of a traced input), `s: attr = abc`
            raise GraphError(f"expression {name!r}: {exc}") from None
    if ":" not in name:
        try:
            return get(name)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
    path, _, attr = name.rpartition(":")
    if not Path(path).is_file():
        raise ValueError(f"{path}: no such file")
    try:
        module = _module(str(Path(path).resolve()))
    except Exception as exc:  # noqa: BLE001 - any failure of the user's file: one line naming it and the error
        where = f"{exc.filename}:{exc.lineno}" if isinstance(exc, SyntaxError) else user_frame(exc)
        raise ValueError(f"{path} failed to import: {type(exc).__name__} at {Path(where).name}: {exc}") from None
    op = getattr(module, attr, None)
    if not isinstance(op, GeneratedOp):
        raise ValueError(f"{name}: {attr} is not a @fusekit.op operator in {path}")
    return op
