"""The ``fusekit`` command: ``fusekit run | check | profile | tune | experiment | emit | validate-timing |
conformance``, one parser per subcommand (:mod:`fusekit.cli.commands`). ``run``, ``profile``, ``tune`` and
``emit`` take an OP of any kind through one protocol (:mod:`fusekit.cli.operator`): the shipped operators
(:mod:`fusekit.cli.shipped`), the generated ones (:mod:`fusekit.cli.generated`) and, for ``emit``, your own
kernel file.

Exit status: 0 pass, 1 verification (or kernel, or sanitizer) failure, 2 bad input (one line).
"""

from __future__ import annotations

import os
import sys
import time

from fusekit.asc import KernelError

from .commands import SUBCOMMANDS, lend_options
from .common import Parser, UsageError, negative_values, version

__all__ = ["main", "UsageError"]


def parser() -> Parser:
    """The ``fusekit`` parser with every subcommand's."""
    top = Parser(prog="fusekit", description="Fused Ascend C operators on a simulated NPU.")
    top.add_argument("--version", action="version", version=f"fusekit {version()}")
    sub = top.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add in SUBCOMMANDS:
        add(sub)
    lend_options(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    top = parser()
    args = top.parse_args(negative_values(sys.argv[1:] if argv is None else list(argv)))
    args.started = started
    try:
        return args.func(args)
    except KeyboardInterrupt:
        top.exit(130, "fusekit: interrupted\n")
    except BrokenPipeError:  # `fusekit ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except UsageError as exc:
        top.exit(2, f"fusekit: error: {exc}\n")
    except MemoryError:
        top.exit(2, "fusekit: error: not enough memory for this input; try a smaller --size or smaller files\n")
    except KernelError as exc:
        top.exit(1, f"fusekit: kernel error: {exc}\n")
    except OSError as exc:  # a file the command reads or writes: the system's reason, in one line
        top.exit(2, f"fusekit: error: {exc.filename + ': ' if exc.filename else ''}{exc.strerror or exc}\n")
