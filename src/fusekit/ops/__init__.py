"""Shipped operators, one folder each: ``op_info.json``, ``kernel.py`` (device), ``host.py``."""
