"""Helpful errors for names Ascend C C++ or pyasc does not have, or spells differently.

Kernels ported from C++ often keep ``AllocTensor`` or ``DataCopy``; pyasc spells them
``alloc_tensor`` and ``data_copy``. Calls that do not exist at all in Ascend C, such as the seed
article's ``pipe.SyncIO()`` / ``pipe.SyncCompute()``, get an explanation of how synchronisation
really works. A name pyasc has and fusekit does not simulate says exactly that ("pyasc has
asc.reduce_max; fusekit does not simulate it yet"), so it never reads as a pyasc limitation.

pyasc's names come from ``pyasc_names.json`` beside this module: the public names of pyasc
1.1.1's ``asc``, ``asc.adv`` and of each public class of ``asc``, as :func:`pyasc_api` lists them
from the installed package (``python -m fusekit.asc.names`` rewrites the file; a test compares
it with pyasc where pyasc is installed). What fusekit does not simulate is computed each time as
pyasc's names minus fusekit's current exports, so it follows fusekit as instructions are added.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import re
import sys
import types
from pathlib import Path

PYASC_VERSION = "1.1.1"
PYASC_NAMES_FILE = Path(__file__).with_name("pyasc_names.json")

# Calls that do not exist in Ascend C, with what to do instead
NONEXISTENT = {
    "SyncIO": "queues synchronise by themselves: enque sets and deque waits the MTE2 -> V (VECIN) and V -> MTE3 "
              "(VECOUT) flags. For raw TBuf data use asc.set_flag / asc.wait_flag (e.g. HardEvent.MTE2_V) or "
              "asc.pipe_barrier(PipeID.PIPE_ALL)",
    "SyncCompute": "queues synchronise by themselves: deque waits for the producer and enque signals the consumer. "
                   "For raw TBuf data use asc.set_flag / asc.wait_flag (e.g. HardEvent.V_MTE3) or "
                   "asc.pipe_barrier(PipeID.PIPE_V)",
}


def snake_case(name: str) -> str:
    """Ascend C's CamelCase as pyasc and msopgen spell it: DataCopy -> data_copy, FusedAddScale ->
    fused_add_scale; an acronym stays one word (ABCDef -> abc_def)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


ADVICE = {  # what to do instead of a pyasc name fusekit does not simulate
    "adv": "the advanced APIs (asc.adv: tanh, rmsnorm, ...); write the kernel with the basic vector instructions",
    "LocalTensorAuto": "automatic-sync tensors, for insert_sync kernels",
    "language": "import what you need from asc directly",
}
NOT_SIMULATED = ADVICE  # the former name


def pyasc_api(asc: types.ModuleType) -> dict[str, list[str]]:
    """The public names of an installed pyasc, by owner: ``"asc"`` (``dir(asc)``), ``"asc.adv"``
    and ``"asc.<Class>"`` for each public class of ``asc`` (its public attributes)."""
    def public(obj) -> list[str]:
        return sorted(n for n in dir(obj) if not n.startswith("_"))

    api = {"asc": public(asc)}
    adv = getattr(asc, "adv", None)
    if isinstance(adv, types.ModuleType):
        api["asc.adv"] = public(adv)
    for name in api["asc"]:
        value = getattr(asc, name)
        if inspect.isclass(value) and not issubclass(value, BaseException):
            api[f"asc.{name}"] = public(value)
    return api


@functools.lru_cache(maxsize=1)
def pyasc_names() -> dict[str, frozenset[str]]:
    """pyasc 1.1.1's public names by owner (see :func:`pyasc_api`), from ``pyasc_names.json``."""
    data = json.loads(PYASC_NAMES_FILE.read_text(encoding="utf-8"))
    return {owner: frozenset(names) for owner, names in data["names"].items()}


def not_simulated(exports=None) -> list[str]:
    """``asc`` names pyasc 1.1.1 has and fusekit does not simulate: pyasc's names minus ``exports``
    (default: what ``fusekit.asc`` exports now)."""
    if exports is None:
        from fusekit import asc

        exports = dir(asc)
    return sorted(pyasc_names()["asc"] - set(exports))


def unknown(owner: str, name: str, available) -> str:
    """Message for ``owner.name`` missing: what pyasc has, what to do instead, or the closest existing name.

    ``owner`` is ``"asc"`` or a class name (``"TQue"``); ``available`` what fusekit has there."""
    names = [n for n in available if not n.startswith("_")]
    in_pyasc = pyasc_names().get("asc" if owner == "asc" else f"asc.{owner}", frozenset())
    key = name.replace("_", "").lower()
    for missing, advice in NONEXISTENT.items():
        if key == missing.lower():
            return f"{owner} has no {name}(): Ascend C has no such call; {advice}"
    if name in in_pyasc and name not in names:
        return _not_yet(owner, name)
    snake = snake_case(name)
    if snake != name and snake in names:
        return f"pyasc has no {owner}.{name}: it spells Ascend C's {name} as {snake}"
    if snake != name and snake in in_pyasc:
        return f"pyasc has no {owner}.{name}: it spells Ascend C's {name} as {snake}, and " + _not_yet(owner, snake)
    close = difflib.get_close_matches(snake, names, n=1, cutoff=0.75)
    return (f"neither pyasc {PYASC_VERSION} nor fusekit has {owner}.{name}"
            + (f"; did you mean {close[0]}?" if close else ""))


def _not_yet(owner: str, name: str) -> str:
    where = owner if owner == "asc" else f"asc.{owner}"  # a class of pyasc's asc: asc.TQue.has_idle_buffer
    text = f"pyasc has {where}.{name}; fusekit does not simulate it yet"
    advice = ADVICE.get(name) if owner == "asc" else None
    if owner == "asc" and advice is None:  # why: out of scope or not yet (coverage.py)
        from .coverage import reason

        advice = reason(name)
    return f"{text} ({advice})" if advice else text


def write_names_file(asc: types.ModuleType, path: Path = PYASC_NAMES_FILE) -> None:
    """Write :func:`pyasc_api` of the installed pyasc to ``path`` (run ``python -m fusekit.asc.names``)."""
    import importlib.metadata

    data = {"source": f"pyasc {importlib.metadata.version('pyasc')}: public names of asc, asc.adv and asc's classes, "
                      "listed by fusekit.asc.names.pyasc_api",
            "names": pyasc_api(asc)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    from fusekit.pyasc.bridge import require_pyasc

    write_names_file(require_pyasc(), Path(sys.argv[1]) if len(sys.argv) > 1 else PYASC_NAMES_FILE)
