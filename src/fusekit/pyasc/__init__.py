"""fusekit and Huawei's pyasc: one kernel source on both, Ascend C out of pyasc, pyasc's own tests in.

- :mod:`~fusekit.pyasc.bridge`: a kernel module executed with ``asc`` bound to fusekit or to pyasc
  (``fusekit.simulate``); the stand-ins for pyasc's host modules are :mod:`fusekit.pyasc.shim`;
- :mod:`~fusekit.pyasc.emit`: Ascend C C++ and MLIR traced by pyasc from a kernel;
- :mod:`~fusekit.pyasc.opdef` and :mod:`~fusekit.pyasc.project`: ``op_info.json`` prototypes and the
  CANN custom-operator project (msopgen's layout) of a shipped or a generated operator;
- :mod:`~fusekit.pyasc.npu`: the same launch on an NPU or CANN's camodel through pyasc;
- :mod:`~fusekit.pyasc.conformance` and :mod:`~fusekit.pyasc.plugin`: pyasc's tests and tutorials run
  on the simulator, the report and the pytest plugin (``pytest -p fusekit.pyasc_plugin``).

Nothing here is needed to simulate: pyasc (``pip install 'ascend-fusekit[pyasc]'``) is imported only by the
functions that use it.
"""
