"""Whether a kernel's Python may run once for a whole group of cores: it must have no effect outside the simulator.

On the reference executor the kernel function runs once per core, in block order; the lockstep executor runs it once
per group of cores. The two agree on everything the simulator sees (every instruction goes through ``Core.record``),
but not on what the kernel's Python does by itself: a ``print``, an append to a list of the test that launched it, a
``global`` it assigns, an exception it catches (a KernelError that would name the group's first core only). So the
lockstep executor takes only kernels whose code (and the code of every function it reaches by name: jit helpers,
plain helpers) reads nothing mutable from outside and calls nothing but fusekit and pure builtins:

- no ``global`` / ``nonlocal`` assignment, no ``import`` inside, no ``try`` / ``with`` (a handler could see a
  lockstep signal or a KernelError of the group);
- every global or closure name it uses is an immutable value (numbers, strings, tuples of them, enum members,
  fusekit dtypes), a fusekit module (``fusekit.pyasc``'s ``asc`` stand-ins included) or ``math``, a class or
  function of fusekit, a pure builtin (not ``print``, ``open``, ``exec``, ``setattr`` ...), or another function that
  passes the same check;
- every argument that does not become a GM buffer (ConstExpr values, ints, floats) is such a value too.

The check is static and conservative: a kernel it refuses runs on the reference executor, with the reason in
``Trace.fallback``.
"""

from __future__ import annotations

import builtins
import dis
import enum
import math
import types

import numpy as np

from .. import dtypes
from ..runtime import GlobalAddress, KernelFunction

# builtins that see a value through its arithmetic (getattr too: a per-core int has its scalar's dtype); those that
# see its type, text or hash (isinstance, issubclass, type, repr, str, format, hash) would tell a group's per-core
# value from the reference's scalar, so a kernel that calls them runs on the reference
_SAFE_BUILTINS = frozenset({
    "abs", "all", "any", "bool", "bytes", "callable", "chr", "complex", "dict", "divmod", "enumerate", "filter",
    "float", "frozenset", "getattr", "hasattr", "int", "iter", "len", "list", "map", "max", "min", "next", "object",
    "ord", "pow", "range", "reversed", "round", "set", "slice", "sorted", "sum", "super", "tuple", "zip",
    "NotImplemented", "Ellipsis", "None", "True", "False",
})
_SAFE_MODULES = frozenset({"math"})
_MUTATIONS = frozenset({"STORE_GLOBAL", "DELETE_GLOBAL", "IMPORT_NAME", "IMPORT_FROM", "SETUP_FINALLY", "SETUP_WITH",
                        "BEFORE_WITH", "SETUP_ASYNC_WITH", "PUSH_EXC_INFO"})
_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_CLOSURE"})
_CODE_VERDICTS: dict[types.CodeType, tuple[str | None, tuple[tuple[str, str], ...]]] = {}


def refusal(kernel: KernelFunction, bound: dict) -> str | None:
    """Why ``kernel`` with the ``bound`` arguments cannot run in lockstep (module docstring), or None."""
    for name, value in bound.items():
        if not isinstance(value, GlobalAddress) and (why := _value(value, set())) is not None:
            return f"argument {name}: {why}"
    return _function(kernel.fn, set())


def _function(fn, seen: set) -> str | None:
    """The first reason ``fn``'s code or the names it uses make it unsafe, or None."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return f"{fn!r} has no Python code to check"
    if code in seen:
        return None
    seen.add(code)
    verdict, names = _code(code)
    if verdict is not None:
        return f"{fn.__qualname__}: {verdict}"
    for default in (*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()):  # state kept across calls
        why = _value(default, seen)
        if why is not None:
            return f"{fn.__qualname__} has the default argument {default!r}: {why}"
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    for kind, name in names:
        if kind == "global":
            if name in fn.__globals__:
                value = fn.__globals__[name]
            elif hasattr(builtins, name):
                if name not in _SAFE_BUILTINS and not _is_exception_type(getattr(builtins, name)):
                    return f"{fn.__qualname__} calls the builtin {name}"
                continue
            else:
                continue  # a NameError when it runs: on both executors alike
        else:
            cell = cells.get(name)
            if cell is None:
                continue  # a cell of fn itself (shared with a nested function): local
            try:
                value = cell.cell_contents
            except ValueError:
                return f"{fn.__qualname__} reads the unset closure variable {name}"
        why = _value(value, seen)
        if why is not None:
            return f"{fn.__qualname__} uses {name}: {why}"
    return None


def _code(code: types.CodeType) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """(why the code itself is unsafe or None, the (global | free, name) it loads), nested code included; cached."""
    found = _CODE_VERDICTS.get(code)
    if found is not None:
        return found
    names: list[tuple[str, str]] = []
    verdict = None
    todo = [code]
    while todo and verdict is None:
        c = todo.pop()
        if getattr(c, "co_exceptiontable", b""):
            verdict = "it catches exceptions (try / with)"
            break
        for ins in dis.get_instructions(c):
            if ins.opname in _MUTATIONS:
                verdict = f"{ins.opname} at line {ins.positions.lineno if ins.positions else '?'}"
                break
            if ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in c.co_freevars:
                verdict = f"it assigns the enclosing variable {ins.argval} (nonlocal)"
                break
            if ins.opname in _LOADS:
                kind = "global" if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") else "free"
                names.append((kind, ins.argval))
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    # a nested function's free names are the enclosing code's cells or free names: only the latter come from outside
    outer_free = set(code.co_freevars)
    names = [(kind, name) for kind, name in names if kind == "global" or name in outer_free]
    found = _CODE_VERDICTS[code] = (verdict, tuple(dict.fromkeys(names)))
    return found


def _is_exception_type(value) -> bool:
    return isinstance(value, type) and issubclass(value, BaseException)


def _is_fusekit(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "fusekit" or module.startswith("fusekit.")


def _value(value, seen: set) -> str | None:
    """Why ``value``, reachable from the kernel, could be mutated or carry an outside effect, or None."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes, range, np.generic, enum.Enum,
                                           dtypes.DataType)) or value is Ellipsis:
        return None
    if isinstance(value, (tuple, frozenset)):
        return next((why for item in value if (why := _value(item, seen)) is not None), None)
    if isinstance(value, types.ModuleType):
        name = value.__name__
        if name == "fusekit" or name.startswith("fusekit.") or name in _SAFE_MODULES:
            return None
        if (name == "asc" or name.startswith("asc.")) and getattr(value, "__file__", None) is None:
            return None  # the simulator's API under pyasc's name, made by fusekit.pyasc.bridge (a file's `import asc`)
        return f"the module {name}"
    if isinstance(value, KernelFunction):
        return _function(value.fn, seen)
    if isinstance(value, types.FunctionType):
        return None if _is_fusekit(value) else _function(value, seen)
    if isinstance(value, types.BuiltinFunctionType):
        owner = getattr(value, "__self__", None)
        if owner is builtins and value.__name__ in _SAFE_BUILTINS:
            return None
        if owner is math:
            return None
        return f"the builtin {value.__qualname__}"
    if isinstance(value, type):
        if _is_fusekit(value) or value.__module__ == "builtins" or issubclass(value, (np.generic, enum.Enum)):
            return None
        return f"the class {value.__qualname__} of {value.__module__}"
    return f"a {type(value).__qualname__} object from outside the kernel"
