"""Every pyasc call fusekit simulates takes pyasc's own keyword names (a kernel may call any form by keyword).

Compared against the installed pyasc (CI's second job has pyasc 1.1.1): each overload of each ``asc`` function
(``typing.get_overloads``) names its parameters; fusekit's function must accept every one of those names.
"""

import inspect
import sys

import pytest

from fusekit import asc as fusekit_asc
from fusekit.pyasc.bridge import PyascMissing, require_pyasc

# pyasc forms fusekit refuses on purpose, with the reason (the rest must match)
OUT_OF_SCOPE = {
    ("data_copy_pad", "nd2nz_params"): "the Nd2Nz form copies into L1 for the cube unit",
}


def _pyasc():
    try:
        return require_pyasc()
    except PyascMissing as exc:
        pytest.skip(str(exc))


def _forms(func) -> list[list[str]]:
    import typing

    forms = typing.get_overloads(func) or [func]
    out = []
    for form in forms:
        try:
            params = inspect.signature(form).parameters.values()
        except (TypeError, ValueError):
            continue
        out.append([p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)])
    return out


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads needs Python 3.11")
def test_every_simulated_call_takes_pyascs_keyword_names():
    real = _pyasc()
    wrong = []
    for name in sorted(n for n in dir(real) if not n.startswith("_")):
        theirs = getattr(real, name)
        if not callable(theirs) or isinstance(theirs, type) or name not in dir(fusekit_asc):
            continue
        try:
            ours = inspect.signature(getattr(fusekit_asc, name)).parameters
        except (TypeError, ValueError):
            continue
        if any(p.kind == p.VAR_KEYWORD for p in ours.values()):
            continue
        missing = sorted({p for form in _forms(theirs) for p in form
                          if p not in ours and (name, p) not in OUT_OF_SCOPE})
        if missing:
            wrong.append(f"asc.{name}: pyasc names {missing}, fusekit takes {list(ours)}")
    assert not wrong, "\n".join(wrong)


IR_ONLY = {"handle"}  # a form taking pyasc's IR handle is its internal constructor, never a kernel author's


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads needs Python 3.11")
def test_every_simulated_method_takes_pyascs_keyword_names():
    real = _pyasc()
    wrong = []
    for name in sorted(n for n in dir(real) if not n.startswith("_")):
        cls = getattr(real, name)
        if not isinstance(cls, type) or name not in dir(fusekit_asc):
            continue
        ours_cls = getattr(fusekit_asc, name)
        for method, theirs in vars(cls).items():
            if (method.startswith("_") and method != "__init__") or not callable(theirs) or \
                    not hasattr(ours_cls, method):
                continue
            try:
                ours = inspect.signature(getattr(ours_cls, method)).parameters
            except (TypeError, ValueError):
                continue
            if any(p.kind == p.VAR_KEYWORD for p in ours.values()):
                continue
            missing = sorted({p for form in _forms(theirs) if not IR_ONLY & set(form) for p in form
                              if p not in ours and p != "self"})
            if missing:
                wrong.append(f"asc.{name}.{method}: pyasc names {missing}, fusekit takes {list(ours)}")
    assert not wrong, "\n".join(wrong)
