"""The C++ front end's tests need a C++ compiler (g++ or clang++); without one they skip, saying so."""

import shutil
from pathlib import Path

import pytest


def pytest_collection_modifyitems(config, items):
    if any(shutil.which(c) for c in ("g++", "clang++", "c++")):
        return
    skip = pytest.mark.skip(reason="no C++ compiler (g++, clang++): the C++ front end compiles with the user's own")
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(skip)
