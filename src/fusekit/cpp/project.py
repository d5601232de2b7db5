"""Run a CANN custom-operator project (msopgen's layout) on the simulator: its host tiling, then its kernel.

    DIR/op_host/*.cpp       OpDef registration (OP_ADD), InferShape, the tiling function (gert::TilingContext)
    DIR/op_host/*_tiling.h  the TilingData struct (BEGIN_TILING_DATA_DEF ... REGISTER_TILING_DATA_CLASS)
    DIR/op_kernel/*.cpp     the kernel entry (GET_TILING_DATA, TILING_KEY_IS, KERNEL_TASK_TYPE_DEFAULT)

The host sources are compiled against fusekit's stand-ins for CANN's host headers (``include/register``,
``include/tiling``) with an entry (``fusekit/op_host.h``) that reads the registered OpDef (inputs, outputs,
dtypes, attributes) and calls its InferShape and tiling function with a TilingContext holding the inputs'
shapes and dtypes, the attributes and the SoC's core count and UB size, as the framework does before a launch.
The kernel is then compiled with the project's tiling header (and ``DTYPE_<NAME>``, the C++ type of each input
and output in the inputs' dtype combination, as CANN's build defines it) and launched on ``block_dim`` cores with the
inputs, the outputs, a workspace of the sizes the tiling asked for, and the tiling bytes it wrote, in GM
(``GET_TILING_DATA`` reads them there, ``TILING_KEY_IS`` sees the key the tiling set).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from fusekit.asc.runtime import launch
from fusekit.soc import get_soc

from . import compiler
from .isolate import isolated
from .kernel import Library, arch_defines

# ge::DataType's values (CANN graph/types.h, as include/register/op_def_registry.h declares them) and numpy's
GE_DTYPES = {0: "float32", 1: "float16", 2: "int8", 3: "int32", 4: "uint8", 6: "int16", 7: "uint16", 8: "uint32",
             9: "int64", 10: "uint64", 12: "bool", 27: "bfloat16"}
GE_CODES = {name: code for code, name in GE_DTYPES.items()}
_C_TYPES = {"float16": "half", "float32": "float", "bfloat16": "bfloat16_t", "bool": "bool",
            **{f"{sign}int{bits}": f"{sign}int{bits}_t" for sign in ("", "u") for bits in (8, 16, 32, 64)}}
TILING_CAPACITY = 64 * 1024  # bytes the tiling function may write (CANN's TilingData capacity is of this order)


class ProjectError(ValueError):
    """The folder is not an operator project fusekit can run, or the inputs do not fit its prototype; one line."""


@dataclass(frozen=True)
class Param:
    """An input or output of the OpDef: its name, whether it is required, the dtypes it lists."""

    name: str
    required: bool
    dtypes: tuple[str, ...]


@dataclass(frozen=True)
class Attr:
    """An attribute of the OpDef: name, whether required, type (float, int, bool) and default value."""

    name: str
    required: bool
    type: str
    default: float


@dataclass
class OpPrototype:
    """What the project's OpDef registers."""

    name: str
    inputs: list[Param]
    outputs: list[Param]
    attrs: list[Attr]


@dataclass
class Tiling:
    """What the tiling function gave: block_dim, tiling key, the tiling bytes, workspace sizes (bytes), and the
    outputs' shapes (InferShape's, else the first input's)."""

    block_dim: int
    key: int
    data: np.ndarray
    workspaces: list[int]
    output_shapes: list[tuple[int, ...]]


@dataclass
class ProjectRun:
    """One run: the outputs by name, the tiling, and the launch's Trace (or the sanitizer's Report)."""

    outputs: dict[str, np.ndarray]
    tiling: Tiling
    trace: object
    report: object | None = None
    inputs: dict[str, np.ndarray] = field(default_factory=dict)


def run_project(root: "str | Path", inputs: dict[str, np.ndarray], attrs: dict[str, float] | None = None, *,
                soc=None, sanitize: bool = False) -> tuple[OpPrototype, ProjectRun]:
    """Compile and run a project in a child process (:mod:`fusekit.cpp.isolate`): a crash in its host code or
    kernel is a :class:`~fusekit.cpp.isolate.Crashed`, not the end of this process.

    Raises:
        ProjectError, CompileError, KernelError: as :class:`Project` and :meth:`Project.run`.
        Crashed: the tiling function or the kernel crashed.
    """
    return isolated(_run_project, Path(root), inputs, attrs, soc, sanitize, what=f"{Path(root).name}'s C++ code")


def describe_project(root: "str | Path", soc=None) -> OpPrototype:
    """The project's prototype (its OpDef), read in a child process as :func:`run_project` runs it."""
    return isolated(_describe_project, Path(root), soc, what=f"{Path(root).name}'s host code")


def _describe_project(root: Path, soc) -> OpPrototype:
    return Project(root, soc=soc).prototype


def _run_project(root: Path, inputs, attrs, soc, sanitize) -> tuple[OpPrototype, ProjectRun]:
    project = Project(root, soc=soc)
    return project.prototype, project.run(inputs, attrs, sanitize=sanitize)


def _files(root: Path, sub: str, suffixes: tuple[str, ...]) -> list[Path]:
    folder = root / sub
    return sorted(p for p in folder.glob("*") if p.suffix in suffixes) if folder.is_dir() else []


def is_project(path: Path) -> bool:
    """Whether ``path`` is a folder with ``op_host`` and ``op_kernel`` sources."""
    return path.is_dir() and bool(_files(path, "op_host", (".cpp",))) and bool(_files(path, "op_kernel", (".cpp",)))


class Project:
    """A compiled operator project: its prototype, host library and kernel.

    Args:
        root: the project folder.
        soc: the SoC to simulate and to tile for (default Ascend910B1).

    Raises:
        ProjectError: not a project (no op_host/*.cpp or op_kernel/*.cpp), no OpDef registered (OP_ADD), no
            tiling function (AICore().SetTiling), or a kernel file without exactly one ``__global__`` function.
        CompileError: a source does not compile (messages name the user's files and lines).
    """

    def __init__(self, root: "str | Path", soc=None):
        self.root, self.soc = Path(root), get_soc(soc)
        hosts, kernels = _files(self.root, "op_host", (".cpp",)), _files(self.root, "op_kernel", (".cpp",))
        if not hosts or not kernels:
            raise ProjectError(f"{root} is not an operator project: it needs op_host/*.cpp (the OpDef and tiling "
                               "function) and op_kernel/*.cpp (the kernel), as msopgen lays them out")
        self.host = self._host_library(hosts)
        self.prototype = self._describe()
        self._prelude = "".join(f'#include "{h.resolve()}"\n' for h in _files(self.root, "op_host", (".h",)))
        self._kernel_file = kernels[0]
        self._kernels: dict[tuple[str, ...], Library] = {}

    def kernel_library(self, column: int) -> Library:
        """The kernel compiled for the OpDef's dtype combination ``column``, as CANN's build compiles one binary
        per combination: ``DTYPE_<NAME>`` (``DTYPE_X1``) is the C++ type of each input and output there.

        Raises:
            ProjectError: the kernel file does not define exactly one ``__global__`` function.
        """
        params = self.prototype.inputs + self.prototype.outputs
        defines = {f"DTYPE_{p.name.upper()}": _C_TYPES.get(p.dtypes[column], p.dtypes[column])
                   for p in params if column < len(p.dtypes)}
        key = tuple(sorted(defines.items()))
        if key not in self._kernels:
            library = Library(self._kernel_file, defines, soc=self.soc, prelude=self._prelude)
            if len(library.kernels) != 1:
                raise ProjectError(f"{self._kernel_file} defines {len(library.kernels)} __global__ functions; an "
                                   "operator's kernel file defines one entry")
            self._kernels[key] = library
        return self._kernels[key]

    def column(self, inputs: dict[str, np.ndarray]) -> int:
        """The OpDef's dtype combination (the index into every DataType list) these inputs are.

        Raises:
            ProjectError: no combination has these dtypes.
        """
        given = [_dtype_name(inputs[p.name]) for p in self.prototype.inputs]
        widths = {len(p.dtypes) for p in self.prototype.inputs + self.prototype.outputs if p.dtypes}
        for column in range(max(widths, default=1)):
            if all(not p.dtypes or (column < len(p.dtypes) and p.dtypes[column] == d)
                   for p, d in zip(self.prototype.inputs, given)):
                return column
        listed = "; ".join(f"{p.name}: {', '.join(p.dtypes)}" for p in self.prototype.inputs)
        raise ProjectError(f"{self.prototype.name}'s OpDef has no dtype combination "
                           f"{', '.join(f'{p.name} {d}' for p, d in zip(self.prototype.inputs, given))} ({listed})")

    def _host_library(self, hosts: list[Path]):
        unit = "".join(f'#include "{h.resolve()}"\n' for h in hosts) + '#include "fusekit/op_host.h"\n'
        built = compiler.build(unit, hosts[0].parent, arch_defines(self.soc))
        dll = ctypes.CDLL(str(built.path))
        dll.fusekit_op_describe.restype = ctypes.c_char_p
        return dll

    def _describe(self) -> OpPrototype:
        text = self.host.fusekit_op_describe().decode()
        if not text:
            raise ProjectError(f"{self.root}/op_host registers no operator: an OpDef subclass and OP_ADD(Name)")
        name, inputs, outputs, attrs, has_tiling = text.split("|")
        if has_tiling != "1":
            raise ProjectError(f"{name}'s OpDef sets no tiling function: this->AICore().SetTiling(TilingFunc)")

        def params(part: str) -> list[Param]:
            found = []
            for item in filter(None, part.split(";")):
                pname, option, codes = item.split(":")
                found.append(Param(pname, option == "1",
                                   tuple(GE_DTYPES.get(int(c), f"ge:{c}") for c in codes.split(",") if c)))
            return found

        attr_list = []
        for item in filter(None, attrs.split(";")):
            aname, option, kind, value = item.split(":")
            attr_list.append(Attr(aname, option == "1", kind, float(value)))
        return OpPrototype(name, params(inputs), params(outputs), attr_list)

    def tiling(self, inputs: dict[str, np.ndarray], attrs: dict[str, float]) -> Tiling:
        """Call the host's tiling function for these inputs and attributes.

        Raises:
            ProjectError: the tiling function returned GRAPH_FAILED, or wrote more than its capacity.
        """
        shapes, codes = [], []
        for param in self.prototype.inputs:
            array = inputs[param.name]
            shapes += [array.ndim, *array.shape]
            codes.append(GE_CODES[_dtype_name(array)])
        values = [float(attrs.get(a.name, a.default)) for a in self.prototype.attrs]
        n_out = len(self.prototype.outputs)
        tiling = np.zeros(TILING_CAPACITY, np.uint8)
        results = (ctypes.c_uint64 * 16)()
        out_shapes = (ctypes.c_int64 * (n_out * 9 + 1))()
        self.host.fusekit_op_tiling(
            len(self.prototype.inputs), (ctypes.c_int64 * len(shapes))(*shapes),
            (ctypes.c_int32 * len(codes))(*codes), n_out, len(values), (ctypes.c_double * max(1, len(values)))(*values),
            ctypes.c_uint32(self.soc.vector_cores), ctypes.c_uint32(_cube_cores(self.soc)),
            ctypes.c_int32(_SOC_VERSIONS[self.soc.arch]), ctypes.c_uint64(self.soc.ub_bytes),
            tiling.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), ctypes.c_uint64(TILING_CAPACITY), results, out_shapes)
        if results[0] != 0:
            raise ProjectError(f"{self.prototype.name}'s tiling function returned GRAPH_FAILED for inputs "
                               + ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in inputs.items()))
        size = int(results[3])
        if size > TILING_CAPACITY:
            raise ProjectError(f"the tiling function wrote {size} bytes of tiling data; the capacity is {TILING_CAPACITY}")
        shapes_out, k = [], 0
        for _ in range(n_out):
            rank = int(out_shapes[k])
            shapes_out.append(tuple(int(d) for d in out_shapes[k + 1:k + 1 + rank]))
            k += 1 + rank
        return Tiling(int(results[1]), int(results[2]), tiling[:max(size, 1)].copy(),
                      [int(results[5 + i]) for i in range(int(results[4]))], shapes_out)

    def run(self, inputs: dict[str, np.ndarray], attrs: dict[str, float] | None = None, *,
            sanitize: bool = False) -> ProjectRun:
        """Tile, then launch the kernel on ``block_dim`` cores; the outputs are new arrays of the prototype's dtype
        (the first input's where it lists several) and InferShape's shape.

        Raises:
            ProjectError: a missing or unknown input or attribute, a dtype the prototype does not list.
            KernelError: the kernel broke a rule (without ``sanitize``).
        """
        attrs = dict(attrs or {})
        self._check(inputs, attrs)
        tiling = self.tiling(inputs, attrs)
        if not 1 <= tiling.block_dim <= 65535:
            raise ProjectError(f"the tiling function set block_dim {tiling.block_dim}; SetBlockDim takes 1 to 65535")
        column = self.column(inputs)
        library = self.kernel_library(column)
        kernel = next(iter(library.kernels.values()))
        outputs = {}
        for param, shape in zip(self.prototype.outputs, tiling.output_shapes):
            dtype = param.dtypes[min(column, len(param.dtypes) - 1)] if param.dtypes else "float16"
            outputs[param.name] = np.zeros(shape, _numpy_dtype(dtype))
        workspace = np.zeros(max(32, sum(tiling.workspaces)), np.uint8)
        args = [*inputs.values(), *outputs.values(), workspace, tiling.data]
        ctypes.c_uint64.in_dll(library.dll, "fusekit_tiling_key").value = tiling.key
        if sanitize:
            from fusekit.sanitizer import sanitize as sanitizer

            report = sanitizer(kernel, soc=self.soc)[tiling.block_dim](*args)
            return ProjectRun(outputs, tiling, report.trace, report, inputs)
        trace = launch(kernel, tiling.block_dim, tuple(args), soc=self.soc).trace
        return ProjectRun(outputs, tiling, trace, None, inputs)

    def _check(self, inputs: dict[str, np.ndarray], attrs: dict[str, float]) -> None:
        names = [p.name for p in self.prototype.inputs]
        missing = [n for n in names if n not in inputs]
        unknown = [n for n in inputs if n not in names]
        if missing or unknown:
            raise ProjectError(f"{self.prototype.name} takes inputs {', '.join(names)}; "
                               + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(unknown)}"))
        for param in self.prototype.inputs:
            dtype = _dtype_name(inputs[param.name])
            if param.dtypes and dtype not in param.dtypes:
                raise ProjectError(f"input {param.name} is {dtype}; {self.prototype.name}'s OpDef lists "
                                   f"{', '.join(param.dtypes)}")
        self.column(inputs)
        known = {a.name for a in self.prototype.attrs}
        bad = [a for a in attrs if a not in known]
        if bad:
            raise ProjectError(f"{self.prototype.name} has no attribute {', '.join(bad)}; its attributes are "
                               f"{', '.join(known) or 'none'}")
        need = [a.name for a in self.prototype.attrs if a.required and a.name not in attrs]
        if need:
            raise ProjectError(f"attribute {', '.join(need)} is required: --attr {need[0]}=VALUE")
        # inputs in the prototype's order: the kernel takes them so
        ordered = {n: np.ascontiguousarray(inputs[n]) for n in names}
        inputs.clear()
        inputs.update(ordered)


# platform_ascendc::SocVersion of an architecture (include/tiling/platform/platform_ascendc.h)
_SOC_VERSIONS = {"2201": 1, "2002": 2}


def _cube_cores(soc) -> int:
    """AIC cores: one per two AIV on Atlas A2/A3 (docs/ascendc-model.md: 24 AIC / 48 AIV on 910B1); on 310P a
    core holds both units."""
    return soc.vector_cores // 2 if soc.arch == "2201" else soc.vector_cores


def _dtype_name(array: np.ndarray) -> str:
    import ml_dtypes

    return "bfloat16" if array.dtype == ml_dtypes.bfloat16 else array.dtype.name


def _numpy_dtype(name: str):
    import ml_dtypes

    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


