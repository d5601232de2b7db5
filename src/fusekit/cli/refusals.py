"""Why a subcommand does not take an option another subcommand has (issue 24, "One CLI").

Every subcommand's parser also holds every other subcommand's options, hidden (:meth:`Options.borrow
<fusekit.cli.common.Options.borrow>`), so that ``fusekit check FILE --shape 4096`` or ``fusekit experiment --plot
p.png`` is refused in one line naming the subcommand (or the operator), the option, why and what to use, instead
of argparse's "unrecognized arguments". :data:`COMMAND_REFUSALS` holds the reasons worth a sentence of their own;
any other pair gets :func:`why_not`'s: what the subcommand does and which subcommands take the option.
"""

from __future__ import annotations

import argparse

_TUNED = "tune searches block_dim (the cores) and, for the shipped and generated operators, the tile and BUFFER_NUM"
_ONE_SIZE = ("{command} takes one size, --size N (or --shape); a sweep of sizes is check's --sizes (a kernel file) or "
             "experiment's (fused_add_scale against the unfused chain)")
_NO_TIMELINE = ("{command} writes no timeline; fusekit profile OP (FILE.py:KERNEL, a generated or shipped operator, "
                "FILE.asc) writes --trace, --plot and --csv")
_CHECK_SIZES = ("check sweeps the sizes of --sizes N,N,... (e.g. --sizes 4096); fusekit run FILE.py:KERNEL --shape N "
                "runs one size")
_REPLAY = ("--replay replays races in an adversarial order over check's sweep: fusekit check FILE.py --replay "
           "(run OP --sanitize lists the races)")
# (subcommand, argparse dest) -> why the subcommand does not take the option, for no operator
COMMAND_REFUSALS = {
    ("tune", "cores"): _TUNED, ("tune", "tile_length"): _TUNED, ("tune", "buffer_num"): _TUNED,
    ("profile", "output"): "profile predicts the time and writes no outputs (fusekit run OP -o ...)",
    ("profile", "sanitize"): "profile warns of sanitizer findings itself; fusekit run OP --sanitize lists them",
    ("tune", "sanitize"): "tune keeps only configurations without sanitizer findings where it runs the kernel; "
                          "fusekit run OP --sanitize lists them",
    ("emit", "size"): "emit traces the kernel's code, which takes any size: no --size or --shape",
    ("emit", "shape"): "emit traces the kernel's code, which takes any size: no --size or --shape",
    ("emit", "cores"): "block_dim is the launch's, not the kernel's code: emit takes none",
    ("emit", "soc"): "pyasc traces for the SoC its build targets; the simulated SoC is run's and profile's",
    ("check", "size"): _CHECK_SIZES, ("check", "shape"): _CHECK_SIZES,
    ("check", "trace"): _NO_TIMELINE, ("check", "plot"): _NO_TIMELINE, ("check", "csv"): _NO_TIMELINE,
    ("experiment", "trace"): _NO_TIMELINE, ("experiment", "plot"): _NO_TIMELINE, ("experiment", "csv"): _NO_TIMELINE,
    ("check", "scale"): "--scale is fused_add_scale's attribute (fusekit run fused_add_scale --scale 2); a kernel "
                        "file's scalars are --arg NAME=VALUE",
    ("check", "sanitize"): "check always runs the sanitizer, that is what it does: drop --sanitize",
    ("run", "sizes"): _ONE_SIZE, ("profile", "sizes"): _ONE_SIZE, ("tune", "sizes"): _ONE_SIZE,
    ("run", "replay"): _REPLAY, ("profile", "replay"): _REPLAY, ("tune", "replay"): _REPLAY,
    ("run", "json"): "run prints its report as text; fusekit check FILE.py --json prints the sanitizer's reports as JSON",
}
# what each subcommand does, for the pairs COMMAND_REFUSALS does not name
PURPOSE = {
    "run": "run runs an operator once on the simulator and verifies it",
    "check": "check sanitizes a kernel file (or a C++ program) over a sweep of sizes",
    "profile": "profile predicts an operator's time",
    "tune": "tune searches an operator's tiling for the lowest predicted time",
    "emit": "emit traces a kernel's code into Ascend C with pyasc",
    "experiment": "experiment prints the seed article's experiment for --sizes and --soc",
    "validate-timing": "validate-timing compares the timing model with the published studies (--study)",
    "conformance": "conformance runs pyasc's tests or Ascend C's .asc examples on the simulator",
}


def why_not(command: str, dest: str, takers: list[str]) -> str:
    """Why ``command`` does not take the option ``dest`` (an argparse dest) that the subcommands ``takers`` take:
    one clause saying what to use instead."""
    why = COMMAND_REFUSALS.get((command, dest))
    if why is not None:
        return why.format(command=command)
    return f"{PURPOSE[command]}; it is an option of {' and '.join(takers)} (fusekit {takers[0]} --help)"


def refuse_foreign(args: argparse.Namespace, command: str, options) -> None:
    """Refuse the first option of another subcommand given to ``command`` (one without an OP: check, experiment,
    ...), naming ``command``: ``options`` is its table (:class:`fusekit.cli.common.Options`).

    Raises:
        UsageError: such an option was given.
    """
    from .common import UsageError

    for dest, takers in options.foreign.items():
        if hasattr(args, dest):  # a lent option has no default: present only when given
            raise UsageError(f"{options.flags[dest]} does not apply to {command}: {why_not(command, dest, takers)}")
