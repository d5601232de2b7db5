"""The machine fusekit simulates, declared as data: memory spaces, pipes, core kinds, data paths, queue
positions and the state of one core. Everything above (``fusekit.asc``, the Trace, happens-before, the sanitizer,
the timing model) reads these tables instead of naming GM, UB or a pipe, so a new memory space or data path is a row
here plus, where its copy forms differ, a handler (``docs/developer-guide.md``).

Layering: this package imports nothing else of fusekit.
"""

from .cores import AIC, AIV, CORE_KINDS, CoreKind
from .paths import (BLOCKS, COUNT, FIXPIPE, HANDLERS, LOAD2D, ND2NZ, PAD, PATHS, SLICE, DataPath, copy_handler,
                    path_between)
from .pipes import PIPES, Ordering, Pipe, PipeSpec, hard_events, pipe_ids, pipe_named
from .positions import POSITIONS, Position, queue_pipes
from .spaces import SPACES, Mem, MemSpace, Scope, local_spaces, position_space, space_at, space_named
from .state import PERSISTENT, POISON, CoreState

__all__ = ["AIC", "AIV", "BLOCKS", "COUNT", "CORE_KINDS", "CoreKind", "CoreState", "DataPath", "FIXPIPE", "HANDLERS", "LOAD2D", "Mem",
           "MemSpace", "ND2NZ", "Ordering", "PAD", "PATHS", "PERSISTENT", "PIPES", "POISON", "POSITIONS", "Pipe", "PipeSpec",
           "Position", "SLICE", "SPACES", "Scope", "copy_handler", "hard_events", "local_spaces", "path_between",
           "pipe_ids", "pipe_named", "position_space", "queue_pipes", "space_at", "space_named"]
