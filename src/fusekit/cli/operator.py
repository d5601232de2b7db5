"""The one thing ``fusekit run | profile | tune | emit OP`` work on: an :class:`Operator`.

Every kind of OP implements the same protocol: the shipped operators (``fused_add_scale``, and its
unfused baseline ``unfused_add_muls`` for emit), the generated ones (a catalogue name, ``FILE.py:NAME``
or a string expression, :mod:`fusekit.cli.generated`), C++ programs (``FILE.asc``,
:mod:`fusekit.cli.program`) and, for ``emit``, a hand-written kernel ``FILE:KERNEL``. Each subcommand has one parser holding every option of the subcommand; an operator
says which of them it takes (with their defaults) and why it does not take the others, so
``fusekit run swiglu --scale 2`` is refused with the reason instead of argparse's "unrecognized
arguments".
"""

from __future__ import annotations

import argparse
import copy
from typing import Protocol

from . import generated, program, shipped
from .common import Options, UsageError

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
    if generated.is_generated(text, kernel_files=command == "emit"):
        return generated.Generated(text)
    if command == "emit":
        return shipped.kernel_file_or_unknown(text)
    raise argparse.ArgumentTypeError(f"unknown operator {text!r}; choose from {shipped.all_ops()}")


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
            raise UsageError(f"{flags[dest]} does not apply to {op.name}: {op.refusal(command, dest)}")
    for dest, default in takes.items():
        if not hasattr(args, dest):
            setattr(args, dest, copy.copy(default))  # a list default is the operator's table's: never share it
