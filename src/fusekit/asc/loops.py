"""pyasc's loops written as ``with`` statements, made loops: ``with matmul.iterate() as count: body``.

pyasc builds that ``with`` into an ``scf.while`` that runs the body once per block the Matmul computes
(python/asc/language/adv/matmul.py, ``MatmulIterator``). fusekit runs the kernel's Python, where a ``with`` body
runs once, so ``@asc.jit`` rewrites each such statement, before the kernel first runs, into
``for count in matmul.iterate().blocks(): body``: the same code, file and line numbers, a loop
(``fusekit.asc.adv.matmul.Iterator.blocks``). A function with no such statement is left as it is.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types

LOOP_METHODS = frozenset({"iterate"})  # ``with x.<method>(...) as v:`` statements that pyasc makes loops


class _WithToFor(ast.NodeTransformer):
    def visit_With(self, node: ast.With):
        self.generic_visit(node)
        if len(node.items) != 1:
            return node
        item = node.items[0]
        call = item.context_expr
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in LOOP_METHODS):
            return node
        target = item.optional_vars or ast.Name("_", ast.Store())
        blocks = ast.Call(ast.Attribute(call, "blocks", ast.Load()), [], [])
        loop = ast.For(target, blocks, node.body, [])
        return ast.copy_location(ast.fix_missing_locations(ast.copy_location(loop, node)), node)


def as_loops(fn):
    """``fn`` with its loop-``with`` statements made ``for`` loops (module docstring), or ``fn`` itself when it has
    none or its source cannot be read (a lambda, code from a string)."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return fn
    source = textwrap.dedent("".join(lines))
    if not any(f".{name}(" in source for name in LOOP_METHODS) or "with" not in source:
        return fn
    tree = ast.parse(source)
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        return fn
    before = ast.dump(function)
    function = _WithToFor().visit(function)
    if ast.dump(function) == before:
        return fn
    function.decorator_list = []
    ast.increment_lineno(tree, first - 1)
    # compiled inside a function whose parameters are fn's free variables, so that the new code closes over
    # the same cells
    outer = ast.FunctionDef("__fusekit_outer__", ast.arguments([], [ast.arg(v) for v in fn.__code__.co_freevars],
                                                               None, [], [], None, []),
                            [function, ast.Return(ast.Name(function.name, ast.Load()))], [], None)
    module = ast.fix_missing_locations(ast.Module([ast.copy_location(outer, function)], []))
    code = compile(module, fn.__code__.co_filename, "exec")
    inner = next(c for c in next(c for c in code.co_consts if isinstance(c, types.CodeType)).co_consts
                 if isinstance(c, types.CodeType) and c.co_name == fn.__name__)
    rewritten = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    rewritten.__kwdefaults__, rewritten.__doc__ = fn.__kwdefaults__, fn.__doc__
    rewritten.__annotations__, rewritten.__qualname__ = fn.__annotations__, fn.__qualname__
    rewritten.__module__ = fn.__module__
    return rewritten
