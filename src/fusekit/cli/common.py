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

    def __init__(self, parser, flags: dict[str, str] | None = None, specs: dict | None = None):
        self.parser = parser
        self.flags = {} if flags is None else flags  # shared with the table of every group of the parser
        self.specs = {} if specs is None else specs  # dest -> add_argument's (args, kwargs), to lend to other commands
        self.foreign: dict[str, list[str]] = {}  # dest -> the subcommands whose option it is (:meth:`borrow`)

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self.parser.add_argument(*args, **kwargs)
        if action.option_strings:  # a positional (OP) is never refused: it is not an option
            self.flags[action.dest] = "/".join(action.option_strings)
            self.specs[action.dest] = (args, kwargs)
        return action

    def add_argument_group(self, *args, **kwargs) -> Options:
        return Options(self.parser.add_argument_group(*args, **kwargs), self.flags, self.specs)

    def borrow(self, others: dict[str, "Options"]) -> None:
        """Take, hidden from --help, every option of the ``others`` subcommands' parsers that this one lacks, so a
        given one is refused with the reason (:func:`fusekit.cli.operator.bind`,
        :func:`fusekit.cli.refusals.refuse_foreign`) instead of argparse's
        "unrecognized arguments". A flag that an own flag starts with is left out: it would end an abbreviation
        argparse accepts today (``run --out`` for ``--output``)."""
        own = [flag for flags in self.flags.values() for flag in flags.split("/")]
        for command, other in others.items():
            for dest, (args, kwargs) in other.specs.items():
                if dest in other.foreign:
                    continue  # lent to it, not its own
                if dest in self.foreign:
                    self.foreign[dest].append(command)
                elif dest not in self.flags and not any(f != a and f.startswith(a) for a in args for f in own):
                    # no default: present only when given; no type or choices: refused for what it is, not its value
                    lent = {k: v for k, v in kwargs.items() if k not in ("type", "choices")}
                    self.add_argument(*args, **(lent | {"help": argparse.SUPPRESS, "default": argparse.SUPPRESS}))
                    self.foreign[dest] = [command]


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


DISTRIBUTION = "ascend-fusekit"  # the name on PyPI (``fusekit`` there is another project); the import name is fusekit


def version() -> str:
    """The installed distribution's version (``fusekit --version``), "unknown" when it is not installed."""
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


ARG_HELP = ("NAME=VALUE, a kernel parameter: a number, True/False or a quoted string (a Python literal); FILE.npy (an "
            "array from the file); zeros:DTYPE:SHAPE (an output, zero-filled) or random:DTYPE:SHAPE (standard normal "
            "of --seed; integers in [-1000, 1000)), SHAPE as 4096 or 256x256; repeatable")
ARRAY_KINDS = ("zeros", "random")


def kernel_args(texts: list[str], seed: int = 0) -> tuple[dict, set[str]]:
    """The values of ``--arg NAME=VALUE`` (grammar: :data:`ARG_HELP`) and the names given as ``zeros:``
    (outputs: a sanitizer checks them for reads before any write).

    Raises:
        UsageError: not NAME=VALUE, a name given twice, a value that is none of the forms, an unknown dtype or a
            bad shape, an unreadable .npy file.
    """
    from fusekit.check import CheckError, parse_arg  # fusekit.check imports the simulator: only when a kernel runs

    rng = np.random.default_rng(seed)
    values, outputs = {}, set()
    for text in texts:
        name, eq, value = text.partition("=")
        if not eq or not name.isidentifier():
            raise UsageError(f"--arg {text!r}: expected NAME=VALUE, e.g. --arg TILE_LENGTH=1024 or --arg x=x.npy")
        if name in values:
            raise UsageError(f"--arg {name} is given twice; pass each parameter once")
        kind = value.partition(":")[0]
        if value.endswith(".npy"):
            values[name] = load_npy(Path(value), None)
        elif kind in ARRAY_KINDS:
            values[name] = _array_arg(text, value, rng)
            if kind == "zeros":
                outputs.add(name)
        else:
            try:
                values[name] = parse_arg(text)[1]
            except CheckError as exc:
                raise UsageError(f"{exc}, FILE.npy, zeros:DTYPE:SHAPE or random:DTYPE:SHAPE") from None
    return values, outputs


def _array_arg(text: str, value: str, rng: np.random.Generator) -> np.ndarray:
    """``zeros:DTYPE:SHAPE`` or ``random:DTYPE:SHAPE`` of ``--arg``."""
    from fusekit.asc import dtypes

    parts = value.split(":")
    if len(parts) != 3:
        raise UsageError(f"--arg {text!r}: expected {parts[0]}:DTYPE:SHAPE, e.g. {parts[0]}:float32:256x256")
    kind, dtype_name, shape_text = parts
    try:
        dtype = dtypes.as_dtype(dtype_name).np
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--arg {text!r}: {exc}") from None
    try:
        shape = tuple(int(extent) for extent in shape_text.lower().split("x"))
    except ValueError:
        shape = ()
    if not shape or any(extent < 0 for extent in shape):
        raise UsageError(f"--arg {text!r}: SHAPE is extents joined by x, e.g. 4096 or 256x256; got {shape_text!r}")
    check_memory(int(np.prod(shape)), np.dtype(dtype).itemsize, copies=2)
    return np.zeros(shape, dtype) if kind == "zeros" else random_array(rng, shape, dtype)


def random_array(rng: np.random.Generator, shape: tuple, dtype) -> np.ndarray:
    """Random input of ``shape``: a float dtype ``standard_normal(shape, float32)`` cast to it, an integer one
    ``integers(max(min, -1000), min(max, 1000))`` (the generated operators' inputs and ``--arg random:``)."""
    if np.dtype(dtype).kind == "f" or dtype == ml_dtypes.bfloat16:
        return rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(dtype)


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


def save_all(directory: Path, outputs: dict) -> None:
    """Write each output to ``directory/NAME.npy`` atomically (``fusekit.files.write_atomic``), creating the
    directory.

    Raises:
        UsageError: the directory cannot be created or a file cannot be written (the system's reason).
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write {directory}: {exc.strerror or exc}") from None
    for name, y in outputs.items():
        save_atomic(directory / f"{name}.npy", y)


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
            raise UsageError("--plot needs matplotlib, which is not installed: pip install 'ascend-fusekit[plot]' "
                             "(or drop --plot; --trace and --csv need nothing more)") from None


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


def auto_sync_note(args) -> None:
    """``run --no-auto-sync`` without ``--sanitize``: say that it changes only what the sanitizer reports (the
    simulator computes the same values; the pipe_barrier pairs it needs are the sanitizer's findings)."""
    if getattr(args, "auto_sync", None) is False and not getattr(args, "sanitize", False):
        print("note: --no-auto-sync changes only what the sanitizer reports (a dependent pair of one pipe without "
              "pipe_barrier): add --sanitize to see it")
