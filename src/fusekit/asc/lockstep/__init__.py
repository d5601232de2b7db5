"""The lockstep executor: the cores of a launch that follow one instruction stream run as one group, the kernel's
Python once per group, every instruction once over all their lanes (``launcher``, the entry point
``fusekit.asc.runtime.launch`` takes by default).

- ``signals``: Divergence (a group's cores part ways) and Unsupported (the launch goes to the reference executor);
- ``values``: lane values, one int / float / bool per core (``get_block_idx()``, offsets, ``get_value``);
- ``memory``: the stacked per-core arenas, GM seen per core, the undo log;
- ``purity``: which kernels' Python may run once for many cores;
- ``group``: GroupCore, the cores of a group as one Core, and which instructions it runs;
- ``crossing``: whether cores touched each other's GM bytes (with cross-core flags: bytes no flag orders);
- ``expand``: each core's Trace from the group's templates;
- ``launcher``: the groups (in turn, or together under the reference's scheduler for cross-core flags), their
  splits, and the fall back to the reference executor.

Nothing is imported here: ``fusekit.asc.runtime`` and ``fusekit.asc.tensor`` import ``values`` while the package
``fusekit.asc`` is still being imported, and ``launcher`` imports them.
"""
