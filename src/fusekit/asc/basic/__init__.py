"""The vector core's basic API, one module per instruction family as pyasc lays them out
(``python/asc/language/basic/vec_*.py``).

- :mod:`.spec`: ``Spec`` (one per instruction) and the registry the families fill;
- :mod:`.iteration`: the binder (pyasc call forms -> ``Iteration``) and the repeat-parameter structs;
- :mod:`.mask`: the core's vector mask register and ``set_vector_mask`` & co.;
- :mod:`.lanes`: element indices and merged byte ranges of an operand under an Iteration;
- :mod:`.execute`: overlap rules, Trace record, vectorised effect, overflow mode;
- families: :mod:`.vec_binary`, :mod:`.vec_binary_scalar`, :mod:`.vec_unary`, :mod:`.vec_duplicate`,
  :mod:`.vec_ternary_scalar`, :mod:`.vec_vconv`; shared numerics in :mod:`.arith` and :mod:`.rounding`.
- data rearrangement: :mod:`.vec_gather` (gather, gatherb), :mod:`.vec_gather_mask`, :mod:`.vec_scatter`,
  :mod:`.vec_brcb`, :mod:`.vec_copy`, :mod:`.vec_transpose`, :mod:`.vec_5hd` (trans_data_to_5hd),
  :mod:`.proposal` (sort32, sort, mrg_sort, get_sort_len / get_sort_offset).

``API`` maps each exported name to its object; ``fusekit.asc`` exports exactly these.
How to add a family: ``docs/developer-guide.md``, "Adding a family".
"""

from . import (deq, mask, vec_binary, vec_binary_scalar, vec_duplicate, vec_ternary_scalar, vec_unary,  # noqa: F401
               vec_vconv)  # importing a family registers its specs
from . import vec_cmpsel, vec_reduce  # noqa: F401,E402  (reductions; compare and select)
from . import (proposal, vec_brcb, vec_copy, vec_gather, vec_gather_mask, vec_scatter,  # noqa: F401,E402
               vec_transpose)  # data rearrangement
from . import vec_5hd, vec_bilinear  # noqa: F401,E402  (trans_data_to_5hd; bilinear_interpolation)
from .iteration import BinaryRepeatParams, UnaryRepeatParams
from .mask import MaskMode
from .spec import API, REGISTRY, Spec, dtypes_for, export, supports

for _obj in (BinaryRepeatParams, UnaryRepeatParams, MaskMode, mask.set_vector_mask, mask.reset_mask,
             mask.set_mask_count, mask.set_mask_norm):
    export(_obj)

__all__ = ["API", "REGISTRY", "Spec", "dtypes_for", "supports"]
