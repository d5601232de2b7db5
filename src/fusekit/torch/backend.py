"""A ``torch.compile`` backend that runs a model's fusible op chains as fusekit-generated kernels.

    import fusekit.torch
    compiled = torch.compile(model, backend="fusekit")                   # defaults
    compiled = fusekit.torch.compile(model, report="fusion.txt")         # options, and a report

Dynamo captures the model's graph; AOTAutograd traces it to ATen (forward and, in training, the
backward graph, each handed to this backend). :mod:`.partition` finds the maximal groups of ops the
generator can fuse; each group becomes a :class:`fusekit.gen.GeneratedOp` (cached by expression and
dtypes, so repeated layers reuse one operator), registered with ``torch.library`` by
:func:`fusekit.torch.ops.as_torch_op`, and the group's nodes are replaced by one call of it, which runs
the generated kernel on the simulated NPU. Other ops run in eager PyTorch on the CPU. Matrix products and 2-D
convolutions (:mod:`.matmul`) anchor a group of their own, their epilogue joining them. A group's later calls at
one input shape are answered by its operator's hardware model (:mod:`fusekit.gen.replay`; ``replay=False`` simulates
every call).

Never a wrong answer: before a group is replaced, its generated operator runs once on random inputs
of the group's shapes and dtypes and is compared with the group's ATen ops run eagerly, under
``fusekit.verify``'s criterion (the CANN samples' tolerance of the output dtype) -- a group that
fails, or that the generator refuses (a row longer than UB, mixed dtypes it cannot tile, ...), is
left eager and the report says why. At run time each replaced group checks its outputs: inf / NaN
from finite inputs (a float16 overflow the random check did not meet) reruns the group's ATen ops for
that call and uses their answer, warning once per group. A graph with tensors on a device fusekit
cannot run (CUDA, ...) runs eagerly as a whole, with a warning; float64 and integer ops stay eager (the
NPU's vector kernels take float16, bfloat16 and float32).

Dynamic shapes (``torch.compile(dynamic=True)``, or Dynamo's automatic dynamic shapes when a plain
``torch.compile`` meets a second input shape): the graph's sizes are SymInts, which the backend compares
by structure (:mod:`.shapes`) and never turns into ints (that would add a guard, fixing the size and
forcing a recompile for the next one). A group is generated once for its symbolic signature; the
generated row kernels and the cube's plan take their sizes at run time; the compile-time check and the
predictions run at the example inputs' sizes. Where the generator refuses a call's sizes (a row longer
than UB, a matrix the cube's plan cannot tile), that call runs the group's ATen ops eagerly and the
report counts it under the generator's reason. Ops that take a size as an operand (an expand to
symbolic sizes, a division by a row count) stay eager.
"""

from __future__ import annotations

import operator
import sys
import time
import warnings
import weakref
from dataclasses import dataclass, field

import numpy as np
import torch
from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func
from torch._subclasses.fake_tensor import unset_fake_temporarily
from torch.fx.passes.tools_common import legalize_graph

from fusekit.gen import GraphError
from fusekit.gen.op import GeneratedOp
from fusekit.verify import PrecisionWarning

from . import matmul as MM
from . import partition as P
from . import shapes as S
from . import traffic as T
from .ops import as_torch_op, replaying, rows_view, to_numpy
from .report import GroupRecord, Report

PRECISIONS = ("fp32", "native")


@dataclass
class Options:
    """The backend's settings (see :func:`compile`)."""

    soc: "str | None" = None
    precision: str = "fp32"
    report: "str | None" = None
    min_ops: int = 2
    verify: bool = True
    predict: "bool | None" = None  # None: when a report is written
    project: bool = True
    progress: bool = True
    replay: bool = True

    @classmethod
    def from_dict(cls, options: dict) -> "Options":
        """Options from ``torch.compile(..., options={...})``; ValueError names an unknown key and the valid ones."""
        import dataclasses
        import difflib

        valid = [f.name for f in dataclasses.fields(cls)]
        for key in options:
            if key not in valid:
                near = difflib.get_close_matches(str(key), valid, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise ValueError(f"fusekit backend: unknown option {key!r}{hint}; the options are {', '.join(valid)}")
        return cls(**options)

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.min_ops < 1:
            raise ValueError(f"min_ops must be >= 1 (the smallest group replaced), got {self.min_ops}")
        from fusekit.soc import get_soc
        self.soc = get_soc(self.soc).name  # unknown SoC: fusekit.soc's error, now rather than at the first call
        if self.predict is None:
            self.predict = self.report is not None
        if self.report is not None:
            from fusekit.files import write_problem

            problem = write_problem(self.report)
            if problem:
                raise ValueError(f"report={self.report!r}: {problem}")


@dataclass
class _Generated:
    """A generated operator shared by every group of one expression and dtypes."""

    op: GeneratedOp
    overload: object
    checks: dict = field(default_factory=dict)   # input shapes -> verify summary (or Exception)
    perf: dict = field(default_factory=dict)     # input shapes -> fusekit.gen.perf.Comparison
    files: dict = field(default_factory=dict)    # input shapes -> (kernel file, project)
    owner: object = None                         # weakref to the Report of the compile that generated it


_CACHE: dict = {}  # (expression, dtypes, precision, soc) -> _Generated


class Backend:
    """The backend callable Dynamo calls with (GraphModule, example inputs); keeps the :class:`Report`."""

    def __init__(self, options: "Options | None" = None):
        self.options = options or Options()
        self.report = Report(self.options.soc, self.options.precision)
        self._graphs: dict = {}  # kind -> graphs compiled so far (each gets its own report section)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        bad = [t for t in example_inputs if isinstance(t, torch.Tensor) and t.device.type != "cpu"]
        if bad:
            msg = (f"fusekit backend: the graph has tensors on {bad[0].device}; fusekit runs CPU tensors on its "
                   "simulated NPU, so this graph runs eagerly (move the model and inputs to the CPU to fuse)")
            warnings.warn(msg, stacklevel=2)
            self.report.warnings.append(msg)
            return gm.forward
        compiled = aot_autograd(fw_compiler=self._compiler("forward"), bw_compiler=self._compiler("backward"),
                                inference_compiler=self._compiler("inference"), decompositions=_decompositions())
        return compiled(gm, example_inputs)

    def _compiler(self, kind: str):
        def compile_graph(gm: torch.fx.GraphModule, example_inputs):
            count = self._graphs[kind] = self._graphs.get(kind, 0) + 1
            label = kind if count == 1 else f"{kind} #{count}"  # a recompile (new shapes) is a new graph
            started = time.perf_counter()
            backup = _copy(gm)
            try:
                fuse(gm, self.options, self.report, label)
            except Exception as exc:  # a backend bug must not break the user's model: run it eagerly
                msg = f"fusekit backend: {type(exc).__name__}: {exc}; the {label} graph runs eagerly"
                warnings.warn(msg, stacklevel=2)
                self.report.warnings.append(msg)
                for record in self.report.groups:  # nothing of this graph runs fused
                    if record.graph == label and record.fused:
                        record.fused, record.reason = False, f"the {label} graph runs eagerly ({type(exc).__name__})"
                gm = backup
            self.report.compile_s[label] = self.report.compile_s.get(label, 0.0) + time.perf_counter() - started
            if self.options.report:
                self.report.write(self.options.report)
            return make_boxed_func(gm.forward)
        return compile_graph


def symbols(gm: torch.fx.GraphModule) -> list:
    """The symbolic sizes of the graph's inputs (``["s0", "s1"]``; none for static shapes): torch.compile(dynamic=True),
    or Dynamo's automatic dynamic shapes on the recompile for a second input shape."""
    found: dict = {}
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        if n.op == "placeholder" and isinstance(v, torch.Tensor):
            for k in S.key(v.shape):
                if not isinstance(k, int):
                    found.update(dict.fromkeys(sorted(map(str, k.free_symbols))))
    return list(found)


def _decompositions() -> dict:
    """ATen ops decomposed before partitioning, so that their pointwise and last-axis parts fuse (the
    layer-norm backward's sums over rows stay eager)."""
    from torch._decomp import get_decompositions

    return get_decompositions([torch.ops.aten.native_layer_norm_backward])


def _copy(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """An untouched copy of ``gm`` to fall back on (the pass rewrites the graph in place)."""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    return torch.fx.GraphModule(gm, graph)


def fusekit_backend(gm: torch.fx.GraphModule, example_inputs, options: "dict | None" = None):
    """``torch.compile(model, backend="fusekit", options={...})``: the backend with :class:`Options`
    (keys: soc, precision, report, min_ops, verify, predict, project, progress; see :func:`compile`). With a
    ``report``, every graph compiled with the same options (recompiles included) goes into that one report,
    a section per graph. Raises ValueError for an unknown key (naming the valid ones)."""
    opts = Options.from_dict(options or {})
    if opts.report is None:
        return Backend(opts)(gm, example_inputs)
    # Dynamo calls the backend again for each recompile (a new input shape): one Backend per report file,
    # so the file gets a section per graph instead of the last graph overwriting the earlier ones
    key = tuple(sorted((k, str(v)) for k, v in vars(opts).items()))
    backend = _BY_REPORT.get(key)
    if backend is None:
        backend = _BY_REPORT[key] = Backend(opts)
    return backend(gm, example_inputs)


_BY_REPORT: dict = {}  # options (report path included) -> the Backend writing that report


try:
    from torch._dynamo import list_backends, register_backend

    if "fusekit" not in list_backends(exclude_tags=()):
        register_backend(fusekit_backend, name="fusekit")
except ImportError:  # pragma: no cover - torch without dynamo
    pass


def compile(model, *, report: "str | None" = None, soc: "str | None" = None, precision: str = "fp32",
            min_ops: int = 2, verify: bool = True, predict: "bool | None" = None, project: bool = True,
            progress: bool = True, replay: bool = True, **compile_kwargs):
    """``torch.compile(model, backend=<fusekit>)`` with options; returns the compiled model, whose
    ``fusekit_report`` attribute is the :class:`fusekit.torch.report.Report` (filled at the first call).

    Args:
        model: a torch.nn.Module or function.
        report: path of the report file (text, or JSON if it ends in .json), rewritten after each graph
            is compiled; generated kernels and CANN projects go to ``<report>.kernels/``.
        soc: SoC name for kernels and predictions (default Ascend910B1).
        precision: ``"fp32"`` (compute in float32, round once at the output: what the CANN samples'
            tolerance is checked in) or ``"native"`` (compute in the tensors' dtype).
        min_ops: the fewest ATen ops a group needs to be replaced (1: single ops too).
        verify: check each generated operator against the eager ops at compile time (a mismatch
            leaves the group eager); turning it off saves a simulation per distinct group.
        predict: predict fused and unfused NPU times (default: when ``report`` is given).
        project: write each generated operator's CANN project with the report (needs pyasc).
        progress: a progress bar while groups are generated and simulated.
        replay: a fused group simulates the first call of each input shape (every check, the Trace) and computes
            later calls with its generated operator's hardware model, bit for bit what the simulator gives
            (:mod:`fusekit.gen.replay`); False simulates every call.
        compile_kwargs: passed to ``torch.compile`` (``dynamic`` defaults to False: a graph per input
            shape, each checked at its own sizes; ``dynamic=True`` or None compiles one graph for symbolic sizes,
            see the module doc).

    Raises:
        ValueError: an unknown precision or SoC, ``min_ops`` < 1, a report path that cannot be written, an
            unknown keyword (neither an option here nor a ``torch.compile`` argument).
    """
    import inspect

    unknown = [k for k in compile_kwargs if k not in inspect.signature(torch.compile).parameters]
    if unknown:  # else torch.compile's TypeError, which does not list fusekit's options
        Options.from_dict(dict.fromkeys(unknown))
    options = Options(soc, precision, report, min_ops, verify, predict, project, progress, replay)
    backend = Backend(options)
    compile_kwargs.setdefault("dynamic", False)
    compiled = torch.compile(model, backend=backend, **compile_kwargs)
    try:
        compiled.fusekit_report = backend.report
    except AttributeError:  # pragma: no cover - a compiled function object without attributes
        pass
    return compiled


# -- the pass ----------------------------------------------------------------------------------------
def fuse(gm: torch.fx.GraphModule, options: Options, report: Report, label: str) -> None:
    """Replace the fusible groups of ``gm`` (in place) and record them in ``report``."""
    dynamic = symbols(gm)
    if dynamic:
        report.dynamic[label] = dynamic
    kept = MM.canonicalize(gm.graph)  # ATen's products as one node each, with the views around them peeled
    groups, reasons = P.find_groups(gm.graph)
    reasons.update(kept)  # a product left as an ATen op: why it was not rewritten, not "no primitive"
    eager = report.eager.setdefault(label, {})
    for node, reason in reasons.items():
        key = f"{P._name(node.target)}: {reason}" if "primitive" not in reason else reason
        eager[key] = eager.get(key, 0) + 1
        if reason.startswith(("tensor on", "operand on")) or "float64" in reason:
            msg = f"fusekit backend: {P._name(node.target)} ({reason}) stays eager in the {label} graph"
            if msg not in report.warnings:
                warnings.warn(msg, stacklevel=3)
                report.warnings.append(msg)
    plans = []
    todo = [g for g in groups if _op_count(g) >= options.min_ops]
    for g in groups:
        if g not in todo:
            key = f"{' + '.join(P._name(n.target) for n in g.nodes)}: a lone op, nothing to fuse"
            eager[key] = eager.get(key, 0) + 1
    bar = _progress(todo, label, options.progress)
    for g in bar:
        kernels = [n for n in g.nodes if n.target is not operator.getitem and P.HANDLERS.get(n.target) != P.VIEWS]
        record = GroupRecord("", label, [P._name(n.target) for n in kernels], _sources(kernels))
        report.groups.append(record)
        try:
            with unset_fake_temporarily():  # the compile-time check runs real tensors
                plans.append((g, _prepare(g, options, record, report)))
        except (P.Unfusible, GraphError, ValueError, TypeError, NotImplementedError, RuntimeError) as exc:
            record.reason = _short(exc)
            rest = _without_product(g)
            if rest is not None and _op_count(rest) >= options.min_ops:  # the epilogue alone, the product eager
                again = GroupRecord("", label, [P._name(n.target) for n in rest.nodes], _sources(rest.nodes))
                report.groups.append(again)
                try:
                    with unset_fake_temporarily():
                        plans.append((rest, _prepare(rest, options, again, report)))
                except (P.Unfusible, GraphError, ValueError, TypeError, NotImplementedError, RuntimeError) as exc2:
                    again.reason = _short(exc2)
    fused = [g for g, _ in plans]
    report.traffic[label] = T.measure(gm.graph, fused)  # before the groups' nodes are replaced
    if options.predict:
        try:
            report.eager_matmul_us[label] = T.eager_matmul_us(gm.graph, fused, options.soc)
        except (GraphError, ValueError, TypeError) as exc:  # a product the generator cannot time: say so
            report.warnings.append(f"fusekit backend: no prediction for the eager matmuls of the {label} graph: "
                                   f"{_short(exc)}")
    remap: dict = {}  # an earlier group's output -> the node now holding its value
    for g, plan in plans:
        _replace(gm.graph, g, plan, remap)
    legalize_graph(gm)
    gm.graph.lint()
    gm.recompile()


def _without_product(g) -> "P.Group | None":
    """A matmul group without its product (which then runs eagerly and feeds the rest), or None."""
    if g.cube is None:
        return None
    rest = P.Group(g.shape)
    for n in g.nodes:
        if n is not g.cube:
            rest.add(n)
    return rest if rest.nodes else None


def _op_count(g) -> int:
    return sum(1 for n in g.nodes if n.target is not operator.getitem and P.HANDLERS.get(n.target) != P.VIEWS)


def _progress(items, label, enabled):
    if not enabled or not items or not _isatty(sys.stderr):  # a bar in a log file is noise
        return items
    from tqdm import tqdm

    return tqdm(items, desc=f"fusekit: generating and checking {label} groups", unit="group", leave=False)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


def _short(exc) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) < 400 else text[:397] + "..."


def _sources(nodes) -> list:
    """'file:line: code' of the innermost frame of each node's stack trace (once each; paths of installed
    packages from the package directory on, others as given)."""
    out = []
    for n in nodes:
        trace = n.meta.get("stack_trace")
        if not trace:
            continue
        frames = [ln.strip() for ln in trace.strip().splitlines()]
        for i in range(len(frames) - 1, -1, -1):
            if frames[i].startswith("File "):
                where = frames[i][5:].replace('"', "").replace(", line ", ":").split(", in ")[0]
                where = where.split("site-packages/")[-1]
                code = frames[i + 1] if i + 1 < len(frames) else ""
                text = f"{where}: {code}"
                if text not in out:
                    out.append(text)
                break
    return out


@dataclass
class _Plan:
    overload: object
    expr: P.Expression
    out_shape: tuple      # the kernel's output shape (a key: symbolic sizes as expressions)
    options: Options
    guard: object = None  # the callable the graph calls: the generated op with its overflow guard
    expands: dict = field(default_factory=dict)  # output node -> expand's sizes (see _expand_sizes)
    dynamic: bool = False  # some input size is symbolic: the generator may refuse a size at run time


def _users_outside(g):
    graph_outputs = set()
    for n in g.nodes:
        for u in n.users:
            if u not in g.members:
                graph_outputs.add(n)
    # a view with users outside is recomputed there from its operand, which must then be an output
    for n in list(graph_outputs):
        src = n
        while src in g.members and src.target is not operator.getitem and P.HANDLERS.get(src.target) == P.VIEWS:
            src = src.args[0]
        if src in g.members:
            graph_outputs.add(src)
    return lambda n: n in graph_outputs


def _prepare(g, options: Options, record: GroupRecord, report: Report) -> _Plan:
    expr = P.expression(g, _users_outside(g))
    record.expression = P.pretty(expr.graph)
    record.inputs = [_desc(a) for a in expr.inputs]
    record.outputs = [_desc(o) for o in expr.outputs]
    key = (expr.graph.text(), expr.dtype, tuple(sorted(expr.graph.input_dtypes.items())), expr.row_outputs,
           options.precision, options.soc)
    gen = _CACHE.get(key)
    record.reused = gen is not None
    if gen is None:
        ops = [P._name(n.target).split(".")[0].lstrip("_").removeprefix("fusekit_") for n in g.nodes
               if n.target is not operator.getitem and P.HANDLERS.get(n.target) != P.VIEWS]
        name = "fx_" + "_".join(dict.fromkeys(ops[:6]))
        # row_outputs: a per-row output (a training forward's mean / rstd) is written broadcast over its row
        op = GeneratedOp(None, (expr.dtype,), name=name, graph=expr.graph, row_outputs=expr.row_outputs)
        gen = _Generated(op, as_torch_op(op), owner=weakref.ref(report))
        _CACHE[key] = gen
    elif gen.owner is None or gen.owner() is not report:
        record.reused_from = "an earlier compile"
    else:
        record.reused_from = "an identical group"
    record.name = gen.overload._schema.name.split("::")[1]
    # the symbolic signature (static sizes as ints, symbolic ones as expressions): the compile-time check runs at
    # the example sizes once per signature; the generated op takes the sizes at run time
    signature = tuple(P.shape_of(a) for a in expr.inputs)
    shapes = tuple(S.hint(P.val(a).shape) for a in expr.inputs)  # the example inputs' sizes
    out_shape = expr.shape if expr.cube else S.broadcast(*signature)
    expands = {}
    for o in expr.outputs:
        shape = P.shape_of(o)
        if not P._fits(shape, out_shape) and shape != out_shape and not P._fits(shape, g.shape):
            raise P.Unfusible(f"an output of shape {S.text(shape)} does not fit the kernel's {S.text(out_shape)}")
        if shape != out_shape and not _row_of(shape, out_shape):
            expands[o] = _expand_sizes(shape, out_shape)
    if options.verify:
        if signature not in gen.checks:
            gen.checks[signature] = _check(g, expr, gen, options, shapes)
        verdict = gen.checks[signature]
        if isinstance(verdict, Exception):
            raise verdict
        record.verify = verdict + ("" if S.is_static(out_shape) else f" (at the example sizes {list(shapes)})")
    if options.predict:
        _predict(gen, expr, shapes, options, record)
    if options.report:
        try:
            _files(gen, expr, shapes, options, record)
        except OSError as exc:  # the kernel is still generated and used; only its copy is missing
            record.kernel = f"not written: {exc}"
    record.fused = True
    plan = _Plan(gen.overload, expr, out_shape, options, expands=expands, dynamic=not all(map(S.is_static, signature)))
    plan.guard = _guarded(plan, _eager_steps(g, expr), record, report)
    return plan


def _row_of(shape, out_shape) -> bool:
    """An output that is one value per row of the kernel's (the kernel writes it broadcast; column 0 is kept)."""
    return shape[-1:] == (1,) and shape[:-1] == out_shape[:-1]


def _expand_sizes(shape, out_shape) -> list:
    """``expand``'s sizes from the kernel's output (``out_shape``) to an output's ``shape`` (keys): -1 where the
    size is the kernel's (symbolic sizes come from the inputs at run time), the static size where it is broadcast.
    Raises Unfusible for a symbolic size the kernel's inputs do not carry."""
    lead = len(shape) - len(out_shape)
    sizes = []
    for i, k in enumerate(shape):
        if i >= lead and out_shape[i - lead] == k:
            sizes.append(-1)
        elif isinstance(k, int):
            sizes.append(k)
        else:
            raise P.Unfusible(f"an output of shape {S.text(shape)} broadcasts the kernel's {S.text(out_shape)} to a "
                              f"symbolic size ({k}) no input has")
    return sizes


def _eager_steps(g, expr):
    """The group's ATen ops as a function of its inputs (expr.inputs order) returning its outputs
    (expr.outputs order): the eager fallback of the runtime guard. Taken before the nodes are erased."""
    steps = [(n, n.target, n.args, n.kwargs) for n in g.nodes]
    inputs, outputs = list(expr.inputs), list(expr.outputs)

    def run(tensors):
        env = dict(zip(inputs, tensors))
        for n, target, args, kwargs in steps:
            env[n] = target(*torch.fx.node.map_arg(args, lambda a: env[a]),
                            **torch.fx.node.map_arg(kwargs, lambda a: env[a]))
        return [env[o] for o in outputs]
    return run


def _guarded(plan: _Plan, eager, record: GroupRecord, report: Report):
    """The function a fused group's graph node calls: the generated operator, then a cheap check that it
    did not overflow where its inputs are finite (the compile-time check ran N(0, 1) inputs; real data can
    overflow a float16 intermediate that eager PyTorch rounds differently). On such a call the group's ATen
    ops run eagerly and their answer is used, with one warning per group when eager's answer is finite
    where the generated op's is not. A dynamic-shape group whose generator refuses the call's sizes (GraphError /
    ValueError: a row longer than UB, ...) runs its ATen ops for that call (:func:`_refused`); a static group's
    sizes were checked at compile time, so there such an error is raised."""
    expr, options = plan.expr, plan.options
    flags = [a in expr.flags or P.dtype_of(a) == torch.bool for a in expr.inputs]
    warned = []

    def call(*tensors):
        with warnings.catch_warnings(record=True) as caught:  # the op's own PrecisionWarning: this guard reports it
            warnings.simplefilter("always", PrecisionWarning)
            try:
                with replaying(options.replay):
                    result = _invoke(plan.overload, expr, tensors, options)
            except (GraphError, ValueError) as exc:
                if not plan.dynamic:  # static sizes were checked at compile time: a refusal now is a bug
                    raise
                refused = exc
            else:
                refused = None
        if refused is not None:
            return _refused(refused, tensors, flags, eager, record, report)
        for w in caught:
            if not issubclass(w.category, PrecisionWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        # a row sum that overflowed inside the kernel can leave finite but wrong outputs (rsqrt(inf) = 0)
        overflowed = any(issubclass(w.category, PrecisionWarning) for w in caught)
        outs = result if isinstance(result, tuple) else (result,)
        if not overflowed and all(bool(torch.isfinite(o).all()) for o in outs if o.is_floating_point()):
            return result
        if not all(bool(torch.isfinite(t).all()) for t, f in zip(tensors, flags) if not f and t.is_floating_point()):
            return result  # non-finite inputs: eager's answer is non-finite too, the kernel's is as good
        ref = eager([t != 0 if f else t for t, f in zip(tensors, flags)])
        ref = [r.expand(o.shape) if tuple(r.shape) != tuple(o.shape) else r for r, o in zip(ref, outs)]
        # eager's answer is better where it is finite and ours is not, or, after a row sum overflowed inside the
        # kernel (finite but wrong outputs: rsqrt(inf) = 0), where the two differ
        better = any(bool((torch.isfinite(r) & ~torch.isfinite(o)).any()) for r, o in zip(ref, outs)) or \
            (overflowed and not all(torch.allclose(r, o, equal_nan=True) for r, o in zip(ref, outs)))
        if better and not warned:
            warned.append(True)
            where = f" ({record.sources[0]})" if record.sources else ""
            msg = (f"fusekit backend: {record.name}{where} in the {record.graph} graph overflowed (inf / NaN, or a row "
                   f"sum past the dtype's range, from finite inputs) in precision={options.precision!r}; this call ran "
                   "its ATen ops eagerly"
                   + ("; try precision='fp32' (computes in float32)" if options.precision != "fp32" else ""))
            warnings.warn(msg, stacklevel=2)
            report.warnings.append(msg)
            record.fallbacks += 1
        elif better:
            record.fallbacks += 1
        ref = tuple(r.contiguous() for r in ref)
        return ref if isinstance(result, tuple) else ref[0]

    call.__name__ = call.__qualname__ = f"fusekit_{record.name}"
    return call


def _refused(exc, tensors, flags, eager, record: GroupRecord, report: Report):
    """A dynamic-shape group whose generator refuses this call's sizes (a row longer than UB, a matmul the cube's
    plan cannot tile): its ATen ops run eagerly for this call; the report counts the call under the reason, and
    the first call of each reason warns."""
    reason = _short(exc)
    first = reason not in record.refusals
    record.refusals[reason] = record.refusals.get(reason, 0) + 1
    record.fallbacks += 1
    if first:
        sizes = ", ".join(str(list(t.shape)) for t in tensors)
        msg = (f"fusekit backend: {record.name} in the {record.graph} graph cannot run inputs {sizes}: {reason}; this "
               "call ran its ATen ops eagerly")
        warnings.warn(msg, stacklevel=3)
        report.warnings.append(msg)
    ref = eager([t != 0 if f else t for t, f in zip(tensors, flags)])
    ref = tuple(r.contiguous() for r in ref)
    return ref if len(ref) > 1 else ref[0]


def _desc(node) -> str:
    return f"{S.text(P.shape_of(node))} {str(P.dtype_of(node)).replace('torch.', '')}"


def _call(gen, expr, tensors, options):
    kind = P.TORCH[expr.dtype]
    tensors = [t.to(kind) if t.dtype == torch.bool else t for t in tensors]
    result = _invoke(gen.overload, expr, tensors, options)
    return result if isinstance(result, tuple) else (result,)


def _invoke(overload, expr, tensors, options):
    """``overload(*tensors)`` with the options; a convolution's group lays its NCHW epilogue inputs out
    channels-last for the NHWC kernel and its outputs back to NCHW (fusekit.torch.matmul.channels_last)."""
    if not expr.roles:
        return overload(*tensors, precision=options.precision, soc=options.soc)
    laid = [MM.channels_last(t) if role == "nchw" else t for t, role in zip(tensors, expr.roles)]
    result = overload(*laid, precision=options.precision, soc=options.soc)
    outs = tuple(MM.channels_first(y) for y in (result if isinstance(result, tuple) else (result,)))
    return outs if len(outs) > 1 else outs[0]


def _fit_output(t, shape):
    if tuple(t.shape) == tuple(shape):
        return t
    if tuple(shape[-1:]) == (1,) and tuple(t.shape[:-1]) == tuple(shape[:-1]):
        return t[..., :1]
    return t.expand(shape)


def _check(g, expr, gen, options, shapes):
    """Run the generated operator and the group's ATen ops on the same random inputs of ``shapes`` (the example
    sizes, in expr.inputs order); the verify summary, or the exception to leave the group eager with."""
    from fusekit.verify import compare, tolerance

    gen_ = torch.Generator().manual_seed(0)
    inputs = {a: torch.randn(s, generator=gen_, dtype=torch.float32).to(P.dtype_of(a))
              if P.dtype_of(a) != torch.bool else torch.rand(s, generator=gen_) > 0.5
              for a, s in zip(expr.inputs, shapes)}
    env = dict(inputs)
    for n in g.nodes:
        args = torch.fx.node.map_arg(n.args, lambda a: env[a])
        kwargs = torch.fx.node.map_arg(n.kwargs, lambda a: env[a])
        env[n] = n.target(*args, **kwargs)
    try:
        got = _call(gen, expr, [inputs[a] for a in expr.inputs], options)
    except (GraphError, ValueError, TypeError, RuntimeError, NotImplementedError) as exc:
        return P.Unfusible(f"the generator refused it: {_short(exc)}")
    # eager PyTorch rounds every intermediate to its dtype: the result is as precise as the least precise
    # dtype on the way (a bfloat16 chain cast to float32 at the end is a bfloat16 result)
    kinds = {P.FLOATS[P.dtype_of(n)] for n in list(expr.inputs) + list(g.nodes)
             if P.dtype_of(n) in P.FLOATS}
    loss = max(tolerance(k) for k in kinds)
    worst = []
    for o, y in zip(expr.outputs, got):
        ref = env[o]
        y = _fit_output(y, ref.shape)
        if y.dtype != ref.dtype:
            return P.Unfusible(f"the generated op writes {y.dtype} where the graph has {ref.dtype}")
        a, e = to_numpy(y.contiguous()), to_numpy(ref.contiguous())
        c = compare(a, e, reference="eager", loss=loss)
        if not c.passed:
            return P.Unfusible(f"the generated op differs from eager PyTorch: {c.summary()}")
        worst.append(c)
    c = max(worst, key=lambda c: c.mismatches / max(c.allowed, 1))
    return (f"passed, {sum(w.mismatches for w in worst)} mismatch(es) allowed {sum(w.allowed for w in worst)} at "
            f"loss {c.loss:g}; max rel err {max(w.max_rel_err for w in worst):.2g}")


def _zeros(expr, shapes) -> list:
    """Zero inputs of ``shapes`` in expr.inputs order, in the dtypes the call passes (a bool as 0 / 1 in the
    expression's dtype, as :func:`_call` converts it)."""
    return [np.zeros(s, dtype=_np(P.TORCH[expr.dtype] if P.dtype_of(a) == torch.bool else P.dtype_of(a)))
            for s, a in zip(shapes, expr.inputs)]


def _arrays(expr, shapes):
    rows, _ = rows_view(_zeros(expr, shapes))
    return rows


def _np(dtype):
    import ml_dtypes
    return {torch.float32: np.float32, torch.float16: np.float16, torch.bfloat16: ml_dtypes.bfloat16,
            torch.int8: np.int8}[dtype]


def _cube_arrays(gen, expr, shapes):
    """Zero inputs of a product group's shapes, the epilogue's as the cube operator takes them (a convolution's
    channels-last, as :func:`_invoke` passes them)."""
    from .ops import _epilogue_fit, result_shape

    zeros = _zeros(expr, shapes)
    if expr.roles:
        zeros = [MM.channels_last(z) if role == "nchw" else z for z, role in zip(zeros, expr.roles)]
    names = [n.name for n in gen.op.graph.inputs]  # the operands are x0 and x1 (partition.expression)
    shape, _ = result_shape(gen.op, {k: z.shape for k, z in zip(names, zeros)})
    return zeros[:2] + [_epilogue_fit(z, shape) for z in zeros[2:]]


def _predict(gen, expr, shapes, options, record):
    from fusekit.gen import cube
    from fusekit.gen.perf import compare

    if shapes not in gen.perf and expr.cube:
        try:
            gen.perf[shapes] = cube.compare_unfused(gen.op, _cube_arrays(gen, expr, shapes), soc=options.soc,
                                                    precision=options.precision)
        except (GraphError, ValueError, TypeError) as exc:
            gen.perf[shapes] = exc
    if shapes not in gen.perf:
        arrays = _arrays(expr, shapes)
        names = [n.name for n in expr.graph.inputs]
        try:
            gen.perf[shapes] = compare(gen.op, 1, expr.dtype, soc=options.soc, precision=options.precision,
                                       shapes={k: a.shape for k, a in zip(names, arrays)})
        except (GraphError, ValueError, TypeError) as exc:
            gen.perf[shapes] = exc
    c = gen.perf[shapes]
    if isinstance(c, tuple):  # a matmul group: (fused us, unfused us) from fusekit.gen.cube.compare_unfused
        record.fused_us, record.unfused_us = c
        record.unfused_kernels = len(cube.unfused_chain(gen.op, expr.dtype))
        return
    if isinstance(c, Exception):
        record.reason = f"no prediction: {_short(c)}"
        return
    record.fused_us, record.unfused_us = c.fused_us, c.unfused_us
    record.unfused_kernels, record.launch_share = len(c.kernels), c.launch_share


def _files(gen, expr, shapes, options, record):
    from pathlib import Path

    from fusekit.files import write_atomic

    if shapes not in gen.files:
        out = Path(str(options.report) + ".kernels") / record.name
        out.mkdir(parents=True, exist_ok=True)
        arrays = _cube_arrays(gen, expr, shapes) if expr.cube else _arrays(expr, shapes)
        named = {n.name: a for n, a in zip(expr.graph.inputs, arrays)}
        precision = gen.op.resolve_precision(options.precision, expr.dtype, _soc(options))
        if expr.cube:  # the variant the run used (fusekit.gen.cube.CubeOp.variant; its epilogue's shapes)
            variant = _cube_variant(gen.op, named, expr.dtype, precision, _soc(options))
        else:
            _, scalars, rows = gen.op._shapes(named)
            variant = gen.op.variant(expr.dtype, precision, options.soc, scalars, rows)
        kernel = out / "kernel.py"
        write_atomic(kernel, lambda f: f.write(variant.source.encode()))
        import json
        write_atomic(out / "op_info.json", lambda f: f.write((json.dumps(gen.op.op_info(), indent=2) + "\n").encode()))
        project = "not written (project=False)"
        if options.project and expr.cube:
            project = "not written: fusekit.gen.project writes vector operators only (no matmul yet)"
        elif options.project:
            try:
                from fusekit.gen.project import write_project

                write_project(gen.op, out / "project", row=max(shapes[0][-1] if shapes[0] else 1, 1))
                project = str(out / "project")
            except Exception as exc:  # pyasc missing, bfloat16 (pyasc cannot emit it), ...: the report says so
                project = f"not written: {_short(exc)}"
        gen.files[shapes] = (str(kernel), project)
    record.kernel, record.project = gen.files[shapes]


def _cube_variant(op, named, dtype, precision, spec):
    from fusekit.asc import dtypes

    s = op.cube.split(dtype)
    scalars, rows = op.cube.layout(s, op.cube.pixel_rows(s, named))
    in_dtype = dtypes.from_numpy(named[s.a].dtype).name
    return op.cube.variant(dtype, in_dtype, precision, spec, scalars, rows)[0]


def _soc(options):
    from fusekit.soc import get_soc
    return get_soc(options.soc)


def _replace(graph: torch.fx.Graph, g, plan: _Plan, remap: dict) -> None:
    """Replace ``g``'s nodes by one call of the generated operator (then getitem / shape fix-ups)."""
    expr = plan.expr
    last = max(g.nodes, key=_index(graph))
    args = []
    for a in expr.inputs:
        a = remap.get(a, a)
        if a in expr.flags or P.dtype_of(a) == torch.bool:  # a condition: 0 / 1 in the kernel's dtype
            with graph.inserting_after(last):
                a = graph.call_function(torch.ops.aten._to_copy.default, (a,), {"dtype": P.TORCH[expr.dtype]})
            last = a
        args.append(a)
    with graph.inserting_after(last):
        call = graph.call_function(plan.guard, tuple(args))
    new = {}
    cursor = call
    for i, o in enumerate(expr.outputs):
        value = call
        if len(expr.outputs) > 1:
            with graph.inserting_after(cursor):
                value = graph.call_function(operator.getitem, (call, i))
            cursor = value
        shape = P.shape_of(o)
        if shape != plan.out_shape:
            with graph.inserting_after(cursor):
                if _row_of(shape, plan.out_shape):
                    value = graph.call_function(torch.ops.aten.slice.Tensor, (value, -1, 0, 1))
                else:
                    value = graph.call_function(torch.ops.aten.expand.default, (value, plan.expands[o]))
            cursor = value
        want = o.meta.get("val")
        layout = _layout(want) if isinstance(want, torch.Tensor) else None
        if layout is not None:
            # later views were traced on the eager op's strides (e.g. kept from a transposed input)
            fn, arg = layout
            with graph.inserting_after(cursor):
                value = graph.call_function(fn, (value, arg))
            cursor = value
        value.meta["val"] = want
        new[o] = value
    # views with users outside: recomputed from their (new) operand
    for n in g.nodes:
        if n in new or n.target is operator.getitem or P.HANDLERS.get(n.target) != P.VIEWS:
            continue
        outside = [u for u in n.users if u not in g.members]
        if not outside:
            continue
        src = n.args[0]
        src = new.get(src, remap.get(src, src))
        with graph.inserting_after(cursor):
            view = graph.call_function(n.target, (src,) + tuple(n.args[1:]), dict(n.kwargs))
        cursor = view
        view.meta["val"] = n.meta.get("val")
        new[n] = view
    remap.update(new)
    for o, value in new.items():
        for u in list(o.users):
            if u not in g.members:
                u.replace_input_with(o, value)
    for n in reversed(g.nodes):
        if not n.users:
            graph.erase_node(n)
    leftover = [n.name for n in g.nodes if n.graph is graph and n in graph.nodes]
    if leftover:  # pragma: no cover - a member still used: the rewrite above missed a user
        raise RuntimeError(f"fusekit backend: nodes {leftover} still have users after fusion")


def restride(t: torch.Tensor, stride: tuple) -> torch.Tensor:
    """A copy of ``t`` laid out with ``stride`` (the layout the eager op would have produced)."""
    out = torch.empty_strided(t.shape, stride, dtype=t.dtype, device=t.device)
    return out.copy_(t)


def permute_layout(t: torch.Tensor, order: tuple) -> torch.Tensor:
    """A copy of ``t`` whose axes lie in memory in ``order`` (outermost first; torch.empty_permuted's
    physical_layout): the eager op's layout for sizes known only at run time."""
    return torch.empty_permuted(t.shape, order, dtype=t.dtype, device=t.device).copy_(t)


def _layout(want: torch.Tensor):
    """How to lay out a fused output as eager PyTorch would (the graph's later views were traced on its strides):
    None when contiguous, (restride, strides) for static strides, (permute_layout, axis order) for symbolic ones
    (the order of the example sizes' strides). Strides are compared by structure: no guard is added."""
    shape, stride = S.key(want.shape), S.key(want.stride())
    expected, step = [], 1
    for k in reversed(shape):
        expected.append(step)
        step = S.numel((step, k))
    dense = all(s == e for s, e, k in zip(stride, reversed(expected), shape) if k != 1)  # size-1 axes: any stride
    if dense:
        return None
    if S.is_static(stride):
        return restride, stride
    hints = S.hint(want.stride())
    return permute_layout, tuple(sorted(range(len(shape)), key=lambda i: (-hints[i], i)))


def _index(graph):
    index = {n: i for i, n in enumerate(graph.nodes)}
    return lambda n: index[n]
