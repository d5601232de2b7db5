"""Fixtures shared by the test folders (helpers to import live in tests/support.py; pyproject's pythonpath puts
tests/ on sys.path, so the subject folders import it, vector_harness and the references by name)."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """One seeded generator per test, so a failure reproduces."""
    return np.random.default_rng(20240601)
