"""What every ``fusekit`` subcommand shares: the one-line parser, the usage error, argument types, and
reading and writing the user's files (refused before the work, in one line)."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
from pathlib import Path

import ml_dtypes
import numpy as np

from fusekit import tiling
from fusekit.files import write_atomic, write_problem

DTYPES = {"float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}


class UsageError(Exception):
    """Bad user input: printed as one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: the problem and where to read more."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class Options:
    """The option table of one subcommand's parser, kept while the parser is built: ``flags`` maps each
    option's argparse dest to its flags as the user types them (``"output"`` -> ``"-o/--output"``).

    argparse keeps the list of a parser's actions private, so whoever needs to name a given option (the OP
    binding refuses one by its flags, :func:`fusekit.cli.operator.bind`) reads this table instead. It stands
    in for the parser or one of its argument groups: ``add_argument`` and ``add_argument_group`` take and
    return what argparse's do.
    """

    def __init__(self, parser, flags: dict[str, str] | None = None):
        self.parser = parser
        self.flags = {} if flags is None else flags  # shared with the table of every group of the parser

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self.parser.add_argument(*args, **kwargs)
        if action.option_strings:  # a positional (OP) is never refused: it is not an option
            self.flags[action.dest] = "/".join(action.option_strings)
        return action

    def add_argument_group(self, *args, **kwargs) -> Options:
        return Options(self.parser.add_argument_group(*args, **kwargs), self.flags)


def negative_values(argv: list[str]) -> list[str]:
    """Let ``--scale -inf`` and ``--scale -1e3`` through: argparse would take them for options."""
    out = []
    for token in argv:
        if out and out[-1] == "--scale" and token.startswith("-"):
            out[-1] = f"--scale={token}"
        else:
            out.append(token)
    return out


def bounded(lo: int | None, hi: int | None):
    """An argparse type: a whole number in [lo, hi] (None: no bound)."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if lo is not None and value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be >= {lo}, got {value}" if hi is None else
                                             f"must be in [{lo}, {hi}], got {value}")
        return value
    return parse


def real(text: str) -> float:
    """argparse type of --scale: a float (nan and inf are allowed; the verdict judges them)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def names(text: str) -> list[str]:
    """argparse type: comma-separated Python names."""
    found = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in found if not x.isidentifier()]
    if not found or bad:
        raise argparse.ArgumentTypeError(f"expected comma-separated parameter names, e.g. y,z; got {text!r}")
    return found


def sizes(lo: int, hi: int | None = None):
    """An argparse type: comma-separated whole numbers in [lo, hi]."""
    parse = bounded(lo, hi)

    def parse_sizes(text: str) -> tuple[int, ...]:
        values = tuple(parse(part) for part in text.split(",") if part.strip())
        if not values:
            raise argparse.ArgumentTypeError("expected comma-separated element counts, e.g. 0,17,4096")
        return values
    return parse_sizes


def named_file(text: str) -> tuple[str, Path]:
    """argparse type of ``--input NAME=FILE.npy``."""
    name, eq, path = text.partition("=")
    if not eq or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE.npy (e.g. --input x=x.npy), got {text!r}")
    return name.strip(), Path(path)


def version() -> str:
    try:
        return importlib.metadata.version("fusekit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def load_npy(path: Path, dtype_name: str | None) -> np.ndarray:
    """The array of a .npy file, native byte order (bfloat16 as saved by ml_dtypes); ``dtype_name``, if
    given, is the dtype it must hold.

    Raises:
        UsageError: no such file, not a readable .npy array, or another dtype.
    """
    try:
        data = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except PermissionError:
        raise UsageError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory; pass a .npy file") from None
    except MemoryError:
        raise UsageError(f"{path}: its array does not fit in memory") from None
    except (OSError, ValueError, EOFError) as exc:
        raise UsageError(f"{path} is not a readable .npy file ({exc}); save arrays with numpy.save") from None
    if not isinstance(data, np.ndarray):
        raise UsageError(f"{path} is an .npz archive; save a single array with numpy.save")
    if data.dtype == np.dtype("V2"):  # numpy stores ml_dtypes.bfloat16 as 2-byte void
        data = data.view(ml_dtypes.bfloat16)
    elif data.dtype.byteorder not in "=|":  # e.g. '>f2' from a big-endian writer: same values, native bytes
        data = data.astype(data.dtype.newbyteorder("="))
    if dtype_name is not None and data.dtype != DTYPES[dtype_name]:
        raise UsageError(f"{path} holds {data.dtype} but --dtype is {dtype_name}; convert the file or drop --dtype")
    return data


def check_writable(path: Path, option: str = "-o", *, directory: bool = False) -> None:
    """Refuse before the run: ``path`` cannot be written (see ``fusekit.files.write_problem``)."""
    problem = write_problem(path, directory=directory)
    if problem:
        raise UsageError(f"{option} {path}: {problem}")


def check_memory(n: int, itemsize: int, copies: int) -> None:
    """Refuse before allocating: ``copies`` arrays of n elements must fit in physical memory."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return
    need = n * itemsize * copies
    if need > physical:
        raise UsageError(f"--size {n} needs about {need / 2**30:.1f} GiB ({copies} arrays of {n:,} elements) but this "
                         f"machine has {physical / 2**30:.1f} GiB; choose a smaller --size")


def save_atomic(path: Path, array: np.ndarray) -> None:
    try:
        write_atomic(path, lambda f: np.save(f, array))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def print_tiling(plans: list[tiling.TilingData], soc) -> None:
    """The tiling plans of a run, one block per launch, as ``fusekit run`` prints them."""
    for i, plan in enumerate(plans):
        title = "tiling" if len(plans) == 1 else f"tiling, launch {i + 1} of {len(plans)}"
        if plan.block_dim == 0:
            print(f"{title}: total_length 0, nothing to launch")
            continue
        print(f"{title}: total_length {plan.total_length}  block_dim {plan.block_dim}  block_length "
              f"{plan.block_length}  tile_length {plan.tile_length}  BUFFER_NUM {plan.buffer_num}  UB {plan.ub_bytes} B")
        if plan.block_dim > soc.vector_cores:
            print(f"  note: block_dim {plan.block_dim} exceeds the {soc.vector_cores} AIV cores of {soc.name}; the NPU "
                  "runs the blocks in waves")
        if plan.block_dim > 1:
            print(f"  cores 0..{plan.block_dim - 2}: tile_num {plan.tile_num}, tail_length {plan.tail_length}")
        print(f"  core {plan.block_dim - 1} (last): block_length {plan.last_block_length}, tile_num "
              f"{plan.last_tile_num}, tail_length {plan.last_tail_length}")


PROFILE_FILES = (("trace", "--trace", "write_trace"), ("plot", "--plot", "plot"), ("csv", "--csv", "write_csv"))


def check_profile_files(args) -> None:
    """Refuse before the run: a ``--trace``, ``--plot`` or ``--csv`` of ``profile`` that cannot be written, or
    ``--plot`` without matplotlib."""
    for dest, option, _ in PROFILE_FILES:
        if getattr(args, dest, None) is not None:
            check_writable(getattr(args, dest), option)
    if getattr(args, "plot", None) is not None:
        try:
            importlib.import_module("matplotlib")
        except ImportError:
            raise UsageError("--plot needs matplotlib, which is not installed: pip install 'fusekit[plot]' (or drop "
                             "--plot; --trace and --csv need nothing more)") from None


def write_profile_files(args, prof) -> None:
    """Write the ``--trace``, ``--plot`` and ``--csv`` files of ``profile`` that were asked for, from ``prof``."""
    for dest, _, method in PROFILE_FILES:
        path = getattr(args, dest, None)
        if path is not None:
            try:
                getattr(prof, method)(path)
            except (OSError, ImportError, ValueError) as exc:
                raise UsageError(f"cannot write {path}: {getattr(exc, 'strerror', None) or exc}") from None
            print(f"wrote {path}")
