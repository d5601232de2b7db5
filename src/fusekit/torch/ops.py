"""fusekit operators as PyTorch operators: ``torch.library`` registration, fake kernels and autograd.

Every operator is a ``torch.library.custom_op`` in the namespace ``fusekit``::

    import fusekit.torch
    y = torch.ops.fusekit.swiglu(a, b)                       # runs the generated kernel on the simulator
    y = torch.ops.fusekit.fused_add_scale(x1, x2, 0.5)       # the hand-written FusedAddScale kernel
    op = fusekit.torch.as_torch_op(my_generated_op)          # a user's fusekit.gen.GeneratedOp

- CPU kernel: the tensors' memory goes to the simulator as numpy views (``Tensor.numpy()``; a
  bfloat16 tensor is viewed through its int16 bytes as ``ml_dtypes.bfloat16``), so nothing is copied
  unless the generator needs a contiguous layout; the outputs are fresh contiguous tensors.
- Fake / meta kernel: output shapes by numpy broadcasting of the tensor inputs, dtypes by the
  generator's rule (``fusekit.gen.lower.natural_dtypes``), so FakeTensor, ``torch.compile`` and meta
  tensors see what the kernel returns.
- Autograd: the backward of an operator is itself a generated fused operator, derived from the
  expression graph by :mod:`fusekit.gen.autodiff` for the call's dtype and precision, and registered
  here the same way (``<name>_backward_<dtype>_<precision>_<hash>``); gradients of broadcast inputs are
  summed back to the input's shape with ``Tensor.sum_to_size``.
- Names: a user's operator is ``<name>_<hash>``, the hash taken over its definition (:func:`torch_name`),
  because Inductor's FX graph cache keys a compiled graph by the operators' names, not by what they
  compute: a changed operator under an old name is served the old operator's compiled graph.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import threading
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import torch

from fusekit.gen.lower import natural_dtypes
from fusekit.gen.op import GeneratedOp

NAMESPACE = "fusekit"
OPTIONS = ("precision", "soc")  # keyword-only arguments every operator takes after its own
# the tensor dtypes the simulator takes (fusekit.asc.dtypes names); float64 and the rest are refused
DTYPES = {torch.float16: "float16", torch.float32: "float32", torch.bfloat16: "bfloat16", torch.int8: "int8",
          torch.int16: "int16", torch.int32: "int32", torch.uint8: "uint8"}
TORCH_DTYPES = {v: k for k, v in DTYPES.items()}
HAND_WRITTEN = ("fused_add_scale",)  # names taken by hand-written kernels; a generated namesake gets "_generated"
# the torch side of an operator's identity (schema format, fake and autograd rules): bump when it changes
REGISTRATION_VERSION = 1
HASH_DIGITS = 8  # hex digits of the name's hash (32 bits)

_LOCK = threading.RLock()
# whether the generated operators called now replay (fusekit.gen.replay): set by the torch.compile backend's groups
_REPLAY = contextvars.ContextVar("fusekit_replay", default=False)


@contextlib.contextmanager
def replaying(on: bool = True):
    """Within the block, the generated operators of this thread simulate each input signature once and compute
    later calls with their hardware model (:mod:`fusekit.gen.replay`); ``on=False`` simulates every call."""
    token = _REPLAY.set(on)
    try:
        yield
    finally:
        _REPLAY.reset(token)
_BY_KEY: dict = {}    # (op name, definition) -> _Spec
_BY_NAME: dict = {}   # torch name -> _Spec


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A numpy view of a CPU tensor's memory (bfloat16 through its bytes as ``ml_dtypes.bfloat16``)."""
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def from_numpy(a: np.ndarray) -> torch.Tensor:
    """A tensor sharing ``a``'s memory (bfloat16 through its bytes)."""
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


@dataclass(eq=False)
class _Spec:
    """One registered operator: its expression graph, how it runs, and its torch.library entry."""

    name: str                 # the torch name: torch.ops.fusekit.<name>
    graph: object             # fusekit.gen.graph.Graph: schema, dtypes, autograd
    dtypes: tuple             # floating dtypes the operator takes
    run: object               # (arrays, attrs, precision, soc) -> list of numpy outputs
    gen: GeneratedOp          # the generated op (for the hand-written one: the catalogue's namesake)
    broadcast: bool = True    # numpy broadcasting between tensor inputs (the hand-written kernel: equal shapes)
    backwards: dict = field(default_factory=dict)

    @property
    def qualname(self) -> str:
        return f"{NAMESPACE}::{self.name}"

    @property
    def overload(self):
        return getattr(getattr(torch.ops, NAMESPACE), self.name).default

    @property
    def positional_attrs(self) -> bool:
        """Whether attributes follow the tensors positionally: not when a required one follows one with a
        default (torch schemas take defaults only at the end), then all are keyword-only."""
        defaults = [self.graph.defaults[a.name] is not None for a in self.graph.attrs]
        return defaults == sorted(defaults)

    def definition(self) -> str:
        """Everything that defines the registered operator: the generated op's definition
        (``GeneratedOp.definition``), the torch schema and REGISTRATION_VERSION."""
        return (f"{self.gen.definition()}\ntorch schema: {self.schema()}\n"
                f"fusekit.torch registration v{REGISTRATION_VERSION}")

    # -- the schema
    def schema(self) -> str:
        g = self.graph
        args = [f"Tensor {n.name}" for n in g.inputs]
        attrs = [f"float {a.name}" + ("" if g.defaults[a.name] is None else f"={float(g.defaults[a.name])!r}")
                 for a in g.attrs]
        options = ["str? precision=None", "str? soc=None"]
        if self.positional_attrs:
            args += attrs
        else:
            options = attrs + options
        outs = ["Tensor"] * len(g.outputs)
        ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        return f"({', '.join(args)}, *, {', '.join(options)}) -> {ret}"

    def split(self, args: tuple, kwargs: dict):
        """(tensors, attrs {name: float}, precision, soc) from a call in schema order."""
        g = self.graph
        n = len(g.inputs)
        tensors = list(args[:n])
        rest = list(args[n:])
        attrs = {}
        for a in g.attrs:
            if rest:
                attrs[a.name] = rest.pop(0)
            elif a.name in kwargs:
                attrs[a.name] = kwargs[a.name]
            else:
                attrs[a.name] = g.defaults[a.name]
        return tensors, attrs, kwargs.get("precision"), kwargs.get("soc")

    # -- checks shared by the real and the fake kernel
    def check(self, tensors: list, fake: bool = False) -> str:
        """Device and dtype checks; returns the floating dtype of the call (fusekit.asc.dtypes name)."""
        names = [n.name for n in self.graph.inputs]
        for name, t in zip(names, tensors):
            if not isinstance(t, torch.Tensor):
                raise TypeError(f"{self.qualname}: {name} must be a torch.Tensor, got {type(t).__name__}")
            # the real kernel reads every tensor's memory: a meta tensor has none (the dispatcher sends a call
            # with any meta argument to the fake kernel, which checks that all devices agree)
            if t.device.type != "cpu" and not (fake and t.device.type == "meta"):
                raise RuntimeError(f"{self.qualname} runs on fusekit's simulated NPU from CPU tensors; {name} is on "
                                   f"{t.device}: move the inputs with .cpu() (fusekit has no {t.device.type} kernel)")
            if t.dtype not in DTYPES:
                raise TypeError(f"{self.qualname} takes {self.takes()} tensors; {name} is {t.dtype}: convert it with "
                                f".to(torch.{self.suggest()})")
        devices = {t.device for t in tensors}
        if len(devices) > 1:  # eager PyTorch refuses mixed devices too; a fake result on one of them would lie
            where = ", ".join(f"{k} ({t.device})" for k, t in zip(names, tensors))
            raise RuntimeError(f"{self.qualname}: inputs {where} are on different devices; move them all to the "
                               "CPU with .cpu()")
        free = {}
        for name, t in zip(names, tensors):
            got, fixed = DTYPES[t.dtype], self.graph.input_dtypes.get(name)
            if fixed is not None and got != fixed:
                raise TypeError(f"{self.qualname}: {name} must be torch.{fixed}, got {t.dtype}")
            if fixed is None:
                free[name] = got
        kinds = set(free.values())
        if len(kinds) > 1:
            raise TypeError(f"{self.qualname}: inputs {', '.join(f'{k} ({v})' for k, v in free.items())} differ in "
                            f"dtype; convert them to one of {self.takes()}")
        dtype = kinds.pop() if kinds else self.dtypes[0]
        if dtype not in self.dtypes:
            raise TypeError(f"{self.qualname} takes {self.takes()} tensors, got torch.{dtype}: convert with "
                            f".to(torch.{self.suggest()})")
        try:
            self.out_shape(tensors)
        except RuntimeError:
            shapes = ", ".join(f"{k}{list(t.shape)}" for k, t in zip(names, tensors))
            raise ValueError(f"{self.qualname}: shapes {shapes} do not broadcast (numpy's rules: trailing axes "
                             "equal or 1)") from None
        if not self.broadcast and any(t.shape != tensors[0].shape for t in tensors[1:]):
            raise ValueError(f"{self.qualname} takes tensors of one shape (the hand-written kernel does not "
                             f"broadcast), got {', '.join(f'{k}{list(t.shape)}' for k, t in zip(names, tensors))}; "
                             f"torch.ops.fusekit.{self.name}_generated broadcasts")
        return dtype

    def out_shape(self, tensors: list) -> tuple:
        """The output shape: the inputs' broadcast, or for an operator holding a matmul or a conv2d the product's
        shape (:func:`result_shape`), which the epilogue's inputs broadcast to. Sizes stay symbolic (SymInt) under
        FakeTensor. Raises RuntimeError for shapes that do not broadcast, ValueError for a conv2d's that do not
        fit."""
        if self.gen.cube is None:
            return torch.broadcast_shapes(*(t.shape for t in tensors))
        named = dict(zip((n.name for n in self.graph.inputs), tensors))
        shape, operands = result_shape(self.gen, {k: t.shape for k, t in named.items()})
        rest = [t.shape for k, t in named.items() if k not in operands]
        if tuple(torch.broadcast_shapes(shape, *rest)) != tuple(shape):
            raise RuntimeError("the epilogue's inputs broadcast beyond the product's shape")
        return shape

    def suggest(self) -> str:
        """The dtype to convert to: float32 when the op takes it (float64 loses least going there)."""
        return "float32" if "float32" in self.dtypes else self.dtypes[0]

    def takes(self) -> str:
        fixed = [f"{k}: {v}" for k, v in self.graph.input_dtypes.items()]
        return ", ".join(self.dtypes) + (f" ({', '.join(fixed)})" if fixed else "")

    def out_dtypes(self, dtype: str) -> list:
        nat = natural_dtypes(self.graph, dtype)
        return [TORCH_DTYPES[nat[k]] for k in self.graph.output_names]

    # -- kernels
    def real(self, *args, **kwargs):
        tensors, attrs, precision, soc = self.split(args, kwargs)
        self.check(tensors)
        outs = self.run([to_numpy(t) for t in tensors], attrs, precision, soc)
        result = tuple(from_numpy(np.asarray(o, order="C")) for o in outs)  # ascontiguousarray makes 0-d 1-d
        return result[0] if len(result) == 1 else result

    def fake(self, *args, **kwargs):
        tensors, attrs, precision, soc = self.split(args, kwargs)
        dtype = self.check(tensors, fake=True)
        shape = self.out_shape(tensors)
        device = tensors[0].device
        result = tuple(torch.empty(shape, dtype=d, device=device) for d in self.out_dtypes(dtype))
        return result[0] if len(result) == 1 else result

    # -- autograd
    def setup_context(self, ctx, inputs, output, keyword_only_inputs=None):
        # inputs: the positional schema arguments (tensors, then attributes unless keyword-only)
        kw = dict(keyword_only_inputs or {})
        tensors, attrs, precision, soc = self.split(tuple(inputs), kw)
        ctx.save_for_backward(*tensors)
        ctx.attrs, ctx.precision, ctx.soc = attrs, precision, soc
        outs = output if isinstance(output, tuple) else (output,)
        ctx.mark_non_differentiable(*[o for o in outs if not o.is_floating_point()])

    def backward(self, ctx, *grads):
        tensors = ctx.saved_tensors
        need = ctx.needs_input_grad[:len(tensors)]
        grads_in = input_grads(self, tensors, grads, ctx.attrs, ctx.precision, ctx.soc, need)
        return tuple(grads_in) + (None,) * (len(ctx.needs_input_grad) - len(tensors))


def _hashed_name(base: str, definition: str) -> str:
    """``<base>_<hash>``: the first HASH_DIGITS hex digits of the SHA-256 of ``definition`` (hashlib, not
    Python's salted hash(), so every process derives the same name)."""
    return f"{base}_{hashlib.sha256(definition.encode()).hexdigest()[:HASH_DIGITS]}"


def rows_view(arrays: list) -> tuple:
    """The inputs as the generator's tiling takes them: for a broadcast shape of rank > 2 the leading axes
    are folded into rows (N, C), and each input becomes (N, C), one row (C,), one value per row (N, 1) or one
    element; an input broadcast along some leading axes only is materialised (np.broadcast_to(...), copied).
    Returns (arrays, broadcast shape)."""
    shape = np.broadcast_shapes(*(a.shape for a in arrays))
    if len(shape) <= 2:
        return arrays, shape
    c = shape[-1]
    n = int(np.prod(shape[:-1]))
    column = shape[:-1] + (1,)
    out = []
    for a in arrays:
        if a.shape == shape:
            out.append(a.reshape(n, c))
        elif a.size == 1:
            out.append(a.reshape(()))
        elif a.size == c and a.shape[-1] == c:
            out.append(a.reshape(c))
        elif a.size == n and np.broadcast_shapes(a.shape, column) == column:
            out.append(a.reshape(n, 1))
        else:
            out.append(np.broadcast_to(a, shape).reshape(n, c))
    return out, shape


def product_of(graph) -> tuple:
    """(a's name, b's name, transpose_a, transpose_b) of the one matmul of a fusekit.gen graph."""
    mm = next(n for n in graph.nodes() if n.op == "matmul")
    return mm.args[0].name, mm.args[1].name, mm.params["transpose_a"], mm.params["transpose_b"]


def product_shape(a, b, transpose_a: bool, transpose_b: bool) -> tuple:
    """The shape of ``a @ b`` as fusekit.matmul takes it: a (L..., M, K) (transposed: (L..., K, M)), b (K, N) or
    (L..., K, N) (transposed: (..., N, K)) give (L..., M, N). Raises RuntimeError for operands that do not fit."""
    if len(a) < 2 or len(b) < 2:
        raise RuntimeError(f"matmul operands {list(a)} and {list(b)}: both 2-D or batched")
    m, ka = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if transpose_b else (b[-2], b[-1])
    if ka != kb or tuple(b[:-2]) not in ((), tuple(a[:-2])):
        raise RuntimeError(f"matmul operands {list(a)} and {list(b)} do not fit (K, or B's leading axes)")
    return tuple(a[:-2]) + (m, n)


def result_shape(op: GeneratedOp, shapes: dict) -> tuple:
    """(the shape of the product of ``op`` (a cube operator) for its inputs' ``shapes`` (name -> shape), the
    names of its operands): a matmul's (L..., M, N) (:func:`product_shape`; a SwiGLU's two products share it), a
    conv2d's NHWC (N, Ho, Wo, Cout) (fusekit.gen.conv.conv_geometry, torch's formula). Raises RuntimeError for
    matmul operands that do not fit, ValueError for conv2d ones."""
    from fusekit.gen.conv import conv_geometry

    s = op.cube.split(op.dtypes[0])
    operands = {s.a, s.b} | {b for b, _ in s.more}
    if s.conv is not None:
        g = conv_geometry(s, tuple(shapes[s.a]), tuple(shapes[s.b]), 2)  # the element size sets C0, not Ho / Wo
        return (g["n"], g["ho"], g["wo"], g["cout"]), operands
    return product_shape(shapes[s.a], shapes[s.b], s.transpose_a, s.transpose_b), operands


def _epilogue_fit(x: np.ndarray, shape: tuple) -> np.ndarray:
    """``x`` as a cube operator's epilogue takes it: the product's shape, one element, one row (C,), one value per
    row; any other broadcast materialised (np.broadcast_to(...).copy())."""
    rows = shape[:-1] + (1,)
    if x.shape == shape or x.size == 1 or (x.shape[-1:] == shape[-1:] and x.size == shape[-1]) or \
            (len(shape) >= 2 and x.shape[-1:] == (1,) and np.broadcast_shapes(x.shape, rows) == rows and
             x.size == int(np.prod(rows))):
        return x
    return np.broadcast_to(x, shape).copy()


def _generated_run(op: GeneratedOp):
    if op.cube is not None:
        return _cube_run(op)

    def run(arrays, attrs, precision, soc):
        rows, shape = rows_view(arrays)
        result = op.run(*rows, precision=precision, soc=soc, replay=_REPLAY.get(), **attrs)
        return [o.reshape(shape) for o in result.outputs.values()]
    return run


def _cube_run(op: GeneratedOp):
    names = [n.name for n in op.graph.inputs]

    def run(arrays, attrs, precision, soc):
        named = dict(zip(names, arrays))
        shape, operands = result_shape(op, {k: x.shape for k, x in named.items()})
        fitted = [x if k in operands else _epilogue_fit(x, shape) for k, x in named.items()]
        result = op.run(*fitted, precision=precision, soc=soc, replay=_REPLAY.get(), **attrs)
        return list(result.outputs.values())
    return run


def _register(spec: _Spec) -> _Spec:
    g = spec.graph
    clash = set(OPTIONS) & ({n.name for n in g.inputs} | {a.name for a in g.attrs})
    if clash:
        raise ValueError(f"{spec.name}: parameter name(s) {sorted(clash)} are reserved by fusekit.torch (the "
                         "precision and soc options); rename them")
    opdef = torch.library.custom_op(spec.qualname, spec.real, mutates_args=(), schema=spec.schema())
    opdef.register_fake(spec.fake)
    opdef.register_autograd(spec.backward, setup_context=spec.setup_context)
    spec.opdef = opdef
    _BY_NAME[spec.name] = spec
    return spec


def _spec_for(op: GeneratedOp, shipped: bool = False) -> _Spec:
    """The registration of ``op`` (registered now if no equal op is): a shipped op under its plain name
    (``_generated`` after a hand-written kernel's name), any other under :func:`torch_name`'s."""
    key = _key(op)
    spec = _Spec("", op.graph, op.dtypes, _generated_run(op), op)
    with _LOCK:
        if key in _BY_KEY:
            return _BY_KEY[key]
        if shipped:
            spec.name = f"{op.name}_generated" if op.name in HAND_WRITTEN else op.name
        else:
            spec.name = _hashed_name(op.name, key[1])
        if spec.name in _BY_NAME:  # a 32-bit hash collision: never reuse another definition's operator
            raise RuntimeError(f"{NAMESPACE}::{spec.name} is already registered for another definition of "
                               f"{op.name}; rename the operator")
        _BY_KEY[key] = _register(spec)
    return spec


def torch_name(op: GeneratedOp) -> str:
    """The name :func:`as_torch_op` registers ``op`` under (``torch.ops.fusekit.<name>``), without
    registering it: a shipped catalogue op's plain name for an op equal to it, else ``<op.name>_<hash>``,
    the hash being 8 hex digits of the SHA-256 of the op's definition (``GeneratedOp.definition``: inputs,
    input dtypes, attributes and defaults, outputs, dtypes, output dtypes, default precision, the
    expression graph with exact constants) plus the torch schema. The same op gives the same name in
    every process; an op changed in any of those gives another name, so Inductor's FX graph cache, which
    keys compiled graphs by operator names (not by what they compute), cannot serve it an old graph."""
    key = _key(op)
    found = _BY_KEY.get(key)
    return found.name if found is not None else _hashed_name(*key)


def _key(op: GeneratedOp) -> tuple:
    """(op.name, the definition of its registration): equal for equal ops, whatever the objects."""
    return op.name, _Spec("", op.graph, op.dtypes, None, op).definition()


def as_torch_op(op: GeneratedOp):
    """Register a generated operator with ``torch.library`` (once) and return its torch operator.

    The operator is ``torch.ops.fusekit.<name>.default`` (a ``torch._ops.OpOverload``), where
    ``<name>`` is :func:`torch_name`'s: ``op.name + "_" + 8 hex digits`` derived from the op's whole
    definition, the same in every process (e.g. ``my_op_3f2a9c1b``); a catalogue op's plain name
    (``swiglu``) for an op equal to a shipped one. Calling ``as_torch_op`` again with an equal op (same
    name and definition; the GeneratedOp object may differ) returns the same operator.

    Call it as ``f(t_1, ..., t_n, a_1, ..., a_m, *, precision=None, soc=None)``:

    - ``t_i``: the op's tensor inputs, positionally, in the function's order: CPU tensors of one
      of ``op.dtypes`` (torch.float16, torch.float32, torch.bfloat16), all of one dtype, except
      inputs whose annotation fixes a dtype (``x: "int32"``). Shapes broadcast as numpy's; 0-d, (C,)
      and (N, 1) inputs are broadcast by the kernel's tiling, other broadcasts are materialised.
    - ``a_j``: the op's float attributes (the function's keyword-only parameters), positionally
      after the tensors or by keyword, with their defaults. (If a required attribute follows one
      with a default, all attributes are keyword-only, as torch schemas need.)
    - ``precision``: ``"native"`` or ``"fp32"`` (None: native, fp32 for bfloat16), as
      ``GeneratedOp.run``. ``soc``: SoC name (None: Ascend910B1).

    Returns one tensor, or a tuple for several outputs (``op.graph.output_names`` order), of the
    broadcast shape, contiguous, in the generator's output dtypes (the input dtype unless the
    expression casts). Integer outputs are non-differentiable.

    Autograd: gradients for every floating tensor input that requires grad, computed by the fused
    backward operator ``fusekit.gen.autodiff`` derives (itself registered here, so it also runs
    under ``torch.compile`` and has a fake kernel); attributes get no gradient.

    Raises (when called): RuntimeError for tensors on another device than CPU (CUDA, ...; meta and
    fake tensors only get shapes) or on mixed devices (CPU and meta, as eager PyTorch); TypeError for a
    dtype the op does not take (float64: convert to float32) or mixed dtypes;
    ValueError for shapes that do not broadcast or a kernel limit (e.g. a row longer than UB).
    Raises (here): ValueError if an input or attribute is named ``precision`` or ``soc``; RuntimeError if
    the derived name is registered for another definition (a 32-bit hash collision: rename the op).
    """
    return _spec_for(op).overload


def spec_of(name: str) -> _Spec:
    """The registration record of ``torch.ops.fusekit.<name>`` (KeyError if fusekit.torch did not register it)."""
    return _BY_NAME[name]


def _hand_written_run(arrays, attrs, precision, soc):
    from fusekit.ops.fused_add_scale import fused_add_scale

    return [fused_add_scale(*arrays, attrs["scale"], precision=precision, soc=soc)]


def register_shipped() -> dict:
    """Register the hand-written FusedAddScale and every catalogue operator (idempotent); returns
    {torch name: OpOverload}."""
    from fusekit.gen.catalogue import CATALOGUE

    with _LOCK:
        if "fused_add_scale" not in _BY_NAME:
            gen = CATALOGUE["fused_add_scale"]
            _register(_Spec("fused_add_scale", gen.graph, gen.dtypes, _hand_written_run, gen, broadcast=False))
        out = {"fused_add_scale": _BY_NAME["fused_add_scale"].overload}
        for op in CATALOGUE.values():
            spec = _spec_for(op, shipped=True)
            out[spec.name] = spec.overload
    return out


def input_grads(spec: _Spec, tensors, grads, attrs: dict, precision, soc, need) -> list:
    """Gradients of ``spec``'s tensor inputs (None where not needed or not differentiable), by the fused
    backward operator of the call's dtype and precision (see module doc)."""
    from fusekit.gen import autodiff
    from fusekit.soc import get_soc

    if not any(need):
        return [None] * len(tensors)
    dtype = spec.check(list(tensors), fake=True)
    precision = spec.gen.resolve_precision(precision, dtype, get_soc(soc))
    compute = "float32" if precision == "fp32" else dtype
    with _LOCK:
        back = spec.backwards.get((dtype, precision))
        if back is None:
            back = autodiff.backward(spec.graph, dtype, compute, name=f"{spec.gen.name}_backward_{dtype}_{precision}")
            spec.backwards[(dtype, precision)] = back
    names = [n.name for n in spec.graph.inputs]
    by_name = dict(zip(names, tensors))
    grad_by_name = {back.grad_names[o]: g for o, g in zip(spec.graph.output_names, grads) if o in back.grad_names}
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    outs = {}
    if back.op is not None:
        fn = as_torch_op(back.op)
        args = []
        for n in back.op.graph.inputs:
            t = by_name[n.name] if n.name in by_name else grad_by_name[n.name]
            if t is None:  # an output whose gradient autograd did not materialise
                t = torch.zeros(shape, dtype=TORCH_DTYPES[back.op.graph.input_dtypes[n.name]])
            args.append(t)
        kw = {a.name: (1.0 / shape[-1] if shape and shape[-1] else 0.0) if a.name == back.inv_cols else attrs[a.name]
              for a in back.op.graph.attrs}
        result = fn(*args, **kw, precision=precision, soc=soc)
        result = result if isinstance(result, tuple) else (result,)
        outs = dict(zip(back.op.graph.output_names, result))
    out = []
    for name, x, wanted in zip(names, tensors, need):
        where = back.grads.get(name)
        if not wanted or where is None:
            out.append(None if not wanted or not x.is_floating_point() else torch.zeros_like(x))
            continue
        kind, ref = where
        g = outs[ref] if kind == "output" else grad_by_name[ref]
        g = torch.broadcast_to(g, shape) if tuple(g.shape) != tuple(shape) else g
        out.append(g.sum_to_size(x.shape) if tuple(g.shape) != tuple(x.shape) else
                   (g.clone() if kind != "output" else g))
    return out
