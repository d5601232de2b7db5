"""The one thing ``fusekit run | profile | tune | emit OP`` work on: an :class:`Operator`.

Every kind of OP implements the same protocol: the shipped operators (``fused_add_scale``, and its
unfused baseline ``unfused_add_muls`` for emit), the generated ones (a catalogue name, ``FILE.py:NAME``
or a string expression, :mod:`fusekit.cli.generated`), C++ programs (``FILE.asc``, :mod:`fusekit.cli.program`),
CANN operator projects (``DIR``) and a hand-written ``@asc.jit`` kernel ``FILE.py:KERNEL``
(:mod:`fusekit.cli.kernel`; emit also ``FILE:KERNEL``). Each subcommand has one parser holding every option
of the subcommand; an operator says which of them it takes (with their defaults) and why it does not take
the others, so ``fusekit run swiglu --scale 2`` is refused with the reason instead of argparse's
"unrecognized arguments".
"""

from __future__ import annotations

import argparse
import copy
import re
import shlex
from pathlib import Path
from typing import Protocol

from fusekit.gen.lookup import file_op

from . import generated, kernel, program, shipped
from .common import Options, UsageError
from .refusals import COMMAND_REFUSALS, why_not

COMMANDS = ("run", "profile", "tune", "emit")


class Operator(Protocol):
    """What a subcommand needs of its OP."""

    name: str

    def options(self, command: str) -> dict[str, object]:
        """The options (argparse dests) ``command`` takes for this operator, each with its default."""

    def refusal(self, command: str, option: str) -> str:
        """Why ``option`` of ``command`` does not apply to this operator (one clause, with what to use)."""

    def validate(self, command: str, args: argparse.Namespace) -> str | None:
        """The argparse-style error of a given value this operator does not take, or None."""

    def execute(self, command: str, args: argparse.Namespace) -> int:
        """Run ``command`` (one of :data:`COMMANDS`) on this operator; returns the exit status."""


def resolve(text: str, command: str) -> Operator:
    """The operator OP ``text`` names for ``command``.

    Raises:
        UsageError: no such operator (the message lists them), or one without ``command``.
        argparse.ArgumentTypeError: an unknown name where argparse's own words are kept ("argument OP: ...").
    """
    found = shipped.find(text, command)
    if found is not None:
        return found
    if program.is_program(text):
        return program.Program(text)
    if program.is_other_file(text):
        raise UsageError(f"{text} is a file fusekit does not run: give a C++ program (.asc, .cpp), an operator "
                         "project folder, FILE.py:NAME, a catalogue operator or an expression")
    if program.is_project(text):
        return program.ProjectOp(text)
    if looks_like_path(text) and not Path(text.partition(":")[0]).exists():
        parts = text.split("/")
        hint = f" (an expression that divides names takes spaces: {shlex.quote(' / '.join(parts))})" \
            if all(part.isidentifier() for part in parts) else ""
        raise UsageError(f"no such file or directory: {text}{hint}")
    if text.endswith(".py"):  # a kernel file's one kernel (a path's / would read as a division)
        return kernel.kernel_file_or_unknown(text, command)
    # FILE.py:NAME is a generated operator when NAME is a @fusekit.op, else a hand-written kernel; emit also takes
    # FILE:KERNEL and paths (a run's 'a/b' stays an expression)
    if generated.is_generated(text, kernel_files=command == "emit" or file_op(text)):
        return generated.Generated(text)
    if command == "emit" or file_op(text) or text.endswith(".py"):
        return kernel.kernel_file_or_unknown(text, command)
    raise argparse.ArgumentTypeError(f"unknown operator {text!r}; choose from {shipped.all_ops()}")


def looks_like_path(text: str) -> bool:
    """Whether OP ``text`` is meant as a path, not an expression: only path characters and ``/``, and a leading
    ``/``, ``./``, ``../`` or ``~``, two or more ``/``, a trailing ``/``, or a part with a dot or a hyphen
    (``no/such/dir``, ``ops/my.py``). ``a/b`` stays an expression (a division)."""
    if "/" not in text or not re.fullmatch(r"[\w.~/-]+(:\w+)?", text):
        return False
    path = text.partition(":")[0]
    parts = path.split("/")
    return (path.startswith(("/", "./", "../", "~")) or len(parts) > 2 or path.endswith("/")
            or any(set(".-") & set(part) for part in parts))


def bind(options: Options, op: Operator, command: str, args: argparse.Namespace) -> None:
    """Give ``args`` the defaults of the options ``op`` takes; refuse a given option it does not take.

    ``options`` is the subcommand's option table (:class:`fusekit.cli.common.Options`): it names a refused
    option by its flags. The subcommand's parser leaves out every option not given (``argparse.SUPPRESS``),
    so what ``args`` holds besides OP is exactly what the user typed.

    Raises:
        UsageError: an option that does not apply to ``op``, with the reason.
    """
    takes = op.options(command)
    flags = options.flags
    for dest in vars(args):
        if dest in flags and dest not in takes:
            why = why_not(command, dest, options.foreign[dest]) if dest in options.foreign else \
                COMMAND_REFUSALS.get((command, dest)) or op.refusal(command, dest)
            raise UsageError(f"{flags[dest]} does not apply to {op.name}: {why}")
    for dest, default in takes.items():
        if not hasattr(args, dest):
            setattr(args, dest, copy.copy(default))  # a list default is the operator's table's: never share it
