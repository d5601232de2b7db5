"""Names pyasc has and fusekit does not simulate say so (issue 8, item J, second bullet).

The shipped list (src/fusekit/asc/pyasc_names.json) is pyasc 1.1.1's own: where pyasc is installed
(CI's second job: pyasc 1.1.1 on numpy 1.26) it is derived again from pyasc and must be equal.
"""

import json

import pytest

from fusekit import asc
from fusekit.asc import names
from fusekit.pyasc.bridge import PyascMissing, require_pyasc


def test_the_shipped_list_is_pyasc_1_1_1s():
    data = json.loads(names.PYASC_NAMES_FILE.read_text())
    assert data["source"].startswith("pyasc 1.1.1:")
    assert {"asc", "asc.adv", "asc.TQue", "asc.LocalTensor"} <= set(data["names"])


def test_not_simulated_is_pyasc_minus_fusekits_exports_now():
    missing = names.not_simulated()
    assert missing == sorted(names.pyasc_names()["asc"] - set(dir(asc)))
    assert "data_copy" not in missing and "add" not in missing  # simulated
    assert names.not_simulated(exports=[]) == sorted(names.pyasc_names()["asc"])


def test_every_name_pyasc_has_and_fusekit_lacks_says_so():
    for name in names.not_simulated():
        with pytest.raises(AttributeError) as exc:
            getattr(asc, name)
        assert str(exc.value).startswith(f"pyasc has asc.{name}; fusekit does not simulate it yet"), name


@pytest.mark.parametrize("name, message", [
    ("DataCopy", "pyasc has no asc.DataCopy: it spells Ascend C's DataCopy as data_copy"),
    ("dat_copy", "neither pyasc 1.1.1 nor fusekit has asc.dat_copy; did you mean data_copy?"),
    ("frobnicate", "neither pyasc 1.1.1 nor fusekit has asc.frobnicate"),
])
def test_names_pyasc_lacks_too(name, message):
    with pytest.raises(AttributeError) as exc:
        getattr(asc, name)
    assert str(exc.value) == message


def test_a_camel_case_name_of_an_unsimulated_call_names_both_facts():
    unsimulated = [n for n in names.not_simulated() if "_" in n and n.islower()]
    if not unsimulated:
        pytest.skip("fusekit simulates every snake_case call of pyasc 1.1.1")
    snake = unsimulated[0]
    camel = "".join(part.title() for part in snake.split("_"))
    if names.snake_case(camel) != snake:
        pytest.skip(f"{snake} does not round-trip through CamelCase")
    with pytest.raises(AttributeError) as exc:
        getattr(asc, camel)
    assert str(exc.value).startswith(f"pyasc has no asc.{camel}: it spells Ascend C's {camel} as {snake}, and pyasc "
                                     f"has asc.{snake}; fusekit does not simulate it yet")  # + the reason (coverage.py)


def test_the_list_matches_the_installed_pyasc():
    try:
        pyasc = require_pyasc()
    except PyascMissing:
        pytest.skip("pyasc is not installed (CI's second job installs pyasc 1.1.1)")
    import importlib.metadata

    if importlib.metadata.version("pyasc") != names.PYASC_VERSION:
        pytest.skip(f"the list is pyasc {names.PYASC_VERSION}'s; installed is {importlib.metadata.version('pyasc')}")
    live = names.pyasc_api(pyasc)
    shipped = json.loads(names.PYASC_NAMES_FILE.read_text())["names"]
    assert live == shipped, "regenerate with: python -m fusekit.asc.names"
    assert names.not_simulated() == sorted(set(live["asc"]) - set(dir(asc)))


def test_a_method_pyasc_has_and_fusekit_lacks_says_so():
    import numpy as np

    missing = sorted(names.pyasc_names()["asc.TQue"] - set(dir(asc.TQue)))
    if not missing:
        pytest.skip("fusekit simulates every TQue method of pyasc 1.1.1")
    seen = []

    @asc.jit
    def probe(x: asc.GlobalAddress):
        q = asc.TQue(asc.TPosition.VECIN, 1)
        try:
            getattr(q, missing[0])
        except Exception as exc:  # noqa: BLE001 - a KernelError naming the call and the line
            seen.append(str(exc))

    probe[1](np.zeros(16, np.float16))
    assert len(seen) == 1 and seen[0].endswith(f"pyasc has asc.TQue.{missing[0]}; fusekit does not simulate it yet")
