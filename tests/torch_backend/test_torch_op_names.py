"""Names of the operators fusekit.torch registers (issue 18, item F).

Inductor's FX graph cache keys a compiled graph by the code of the graph, which names each custom
operator (``torch.ops.fusekit.my_op.default``) but says nothing about what it computes: an operator
changed between two processes under the same name is served the first one's compiled graph. So the
registered name of a user's operator carries a hash of its whole definition, the same in every process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import fusekit  # noqa: E402
import fusekit.torch  # noqa: E402,F401
from fusekit.torch import ops as tops  # noqa: E402

HASHED = re.compile(r"^my_op_[0-9a-f]{8}$")

# the operator, and one change of each component that defines it (sources exec'd here and in subprocesses)
BASE = '''
@fusekit.op(dtypes=("float16", "float32"))
def my_op(x, y, *, k=2.0):
    return x * k + y * 0.5
'''
VARIANTS = {
    "expression": BASE.replace("x * k + y", "x * k - y"),
    "constant": BASE.replace("0.5", "0.5000000000000001"),  # the next double: exact constants
    "attr added": BASE.replace("k=2.0)", "k=2.0, j=0.0)"),
    "attr default": BASE.replace("k=2.0", "k=3.0"),
    "attr required": BASE.replace("k=2.0", "k"),
    "attr renamed": BASE.replace("k=2.0", "m=2.0").replace("x * k", "x * m"),
    "output dtype": BASE.replace("return x * k + y * 0.5", "return fusekit.cast(x * k + y * 0.5, 'float16')"),
    "input dtype": BASE.replace("def my_op(x, y", "def my_op(x, y: 'float32'"),
    "input renamed": BASE.replace("(x, y", "(x, z").replace("+ y", "+ z"),
    "dtypes": BASE.replace('("float16", "float32")', '("float32",)'),
    "dtype order": BASE.replace('("float16", "float32")', '("float32", "float16")'),
    "default precision": BASE.replace('("float16", "float32")', '("float16", "float32", "bfloat16")'),
    "outputs": BASE.replace("dtypes=(", "outputs=('z',), dtypes=("),
}

NAMES_OF = '''
import json, sys, fusekit, fusekit.torch
from fusekit.torch import as_torch_op
names = []
for source in sys.argv[1:]:
    ns = {"fusekit": fusekit}
    exec(source, ns)
    names.append(as_torch_op(ns["my_op"])._schema.name)
print(json.dumps(names))
'''


def _op(source: str):
    ns = {"fusekit": fusekit}
    exec(source, ns)
    return ns["my_op"]


def _run(script: str, *args, **env) -> str:
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_same_op_same_name_in_a_fresh_process_and_a_changed_op_another():
    """A fresh process (its own hash seed, registering in another order) derives this process's names: one
    for the op, another for the op changed."""
    changed, base = json.loads(_run(NAMES_OF, VARIANTS["output dtype"], BASE, PYTHONHASHSEED="12345"))
    assert base == f"fusekit::{tops.torch_name(_op(BASE))}" and HASHED.match(base.split("::")[1]), base
    assert changed == f"fusekit::{tops.torch_name(_op(VARIANTS['output dtype']))}" and changed != base


def test_every_defining_component_changes_the_name():
    """Each change of the definition gives a name of its own (no two variants share one)."""
    names = {"base": tops.torch_name(_op(BASE))}
    names.update({k: tops.torch_name(_op(src)) for k, src in VARIANTS.items()})
    assert all(HASHED.match(n) for n in names.values()), names
    assert len(set(names.values())) == len(names), names


def test_unchanged_op_keeps_its_name():
    """What does not define the op (a new function object, its docstring) keeps the name."""
    documented = BASE.replace("    return", '    """a docstring"""\n    return')
    assert tops.torch_name(_op(documented)) == tops.torch_name(_op(BASE))


def test_registered_name_does_not_depend_on_what_was_registered_before():
    """An op registered after another definition of its name gets its own derived name (not ``my_op_2``)."""
    base, other = _op(BASE), _op(VARIANTS["attr default"])
    expected = tops.torch_name(base)
    tops.as_torch_op(other)
    f = tops.as_torch_op(base)
    assert f._schema.name == f"fusekit::{expected}" and tops.spec_of(expected).gen is base


def test_a_name_collision_is_refused_not_shared(monkeypatch):
    """Two definitions that derive one name (a hash collision, forced here) never share an operator."""
    monkeypatch.setattr(tops, "HASH_DIGITS", 0)
    named = BASE.replace("@fusekit.op(", '@fusekit.op(name="collide", ')
    tops.as_torch_op(_op(named))
    with pytest.raises(RuntimeError, match=r"fusekit::collide_ is already registered for another definition"):
        tops.as_torch_op(_op(named.replace("k=2.0", "k=4.0")))


def test_shipped_ops_keep_their_plain_names():
    """Catalogue ops are documented as torch.ops.fusekit.<name>; an op equal to one gets that operator."""
    from fusekit.gen.catalogue import CATALOGUE

    assert tops.torch_name(CATALOGUE["swiglu"]) == "swiglu"
    same = fusekit.define_op("silu(a) * b", name="swiglu")
    assert tops.as_torch_op(same) is torch.ops.fusekit.swiglu.default
    changed = fusekit.define_op("silu(a) * b * 2.0", name="swiglu")
    assert re.match(r"^swiglu_[0-9a-f]{8}$", tops.torch_name(changed))


def test_backward_op_names_derive_from_their_graph_and_precision():
    """The fused backward is registered as <name>_backward_<dtype>_<precision>_<hash>, one per precision."""
    f = tops.as_torch_op(_op(BASE))
    for precision in ("native", "fp32"):
        x = torch.randn(3, 16, dtype=torch.float16, requires_grad=True)
        f(x, torch.randn(3, 16, dtype=torch.float16), precision=precision).sum().backward()
    backs = tops.spec_of(f._schema.name.split("::")[1]).backwards
    names = {p: tops.as_torch_op(b.op)._schema.name.split("::")[1] for (_, p), b in backs.items()}
    assert set(names) == {"native", "fp32"} and names["native"] != names["fp32"], names
    for precision, name in names.items():
        assert re.match(rf"^my_op_backward_float16_{precision}_[0-9a-f]{{8}}$", name), name
        assert name == tops.torch_name(tops.spec_of(name).gen)


def test_backend_group_operators_have_derived_names():
    """The torch.compile backend's fused groups are registered (and reported) under derived names."""
    def fn(a, b):
        return torch.nn.functional.silu(a) * b

    compiled = fusekit.torch.compile(fn, progress=False, project=False, verify=False, predict=False)
    a, b = torch.randn(4, 64), torch.randn(4, 64)
    torch.testing.assert_close(compiled(a, b), fn(a, b))
    (group,) = [g for g in compiled.fusekit_report.groups if g.fused]
    assert re.match(r"^fx_silu_mul_[0-9a-f]{8}$", group.name), group.name
    assert tops.torch_name(tops.spec_of(group.name).gen) == group.name


INDUCTOR = '''
import json, sys, torch, fusekit, fusekit.torch
from fusekit.torch import as_torch_op
ns = {"fusekit": fusekit}
exec(sys.argv[1], ns)
f = as_torch_op(ns["my_op"])
x, y = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([32.0, 64.0, 96.0, 128.0])
compiled = torch.compile(lambda a, b: f(a, b) * 2, backend="inductor", fullgraph=True)(x, y)
print(json.dumps([compiled.tolist(), (f(x, y) * 2).tolist()]))
'''


@pytest.mark.slow
def test_inductor_cache_does_not_serve_a_changed_op(tmp_path):
    """Issue 18 F end to end: one Inductor cache dir, the op changed (attr added, float16 output) between two
    processes; the second compiled result equals eager's (it was the first op's graph on float16 bits)."""
    first = '''
@fusekit.op(dtypes=("float32",))
def my_op(x, y):
    return x + y
'''
    second = '''
@fusekit.op(dtypes=("float32",))
def my_op(x, y, *, k=2.0):
    return fusekit.cast(x * k + y, "float16")
'''
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor"), "TORCHINDUCTOR_FX_GRAPH_CACHE": "1"}
    compiled, eager = json.loads(_run(INDUCTOR, first, **env))
    assert compiled == eager == [66.0, 132.0, 198.0, 264.0]
    compiled, eager = json.loads(_run(INDUCTOR, second, **env))
    assert eager == [68.0, 136.0, 204.0, 272.0] and compiled == eager
