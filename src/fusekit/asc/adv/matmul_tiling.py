"""Host tiling of the high-level Matmul: fusekit's own choice of a ``TCubeTiling`` for pyasc's
``asc.lib.host.MultiCoreMatmulTiling`` (the pyasc binding over CANN's matmul_tiling library, whose algorithm
fusekit does not reproduce: the Matmul computes the same C whatever valid tiling it is given, and pyasc's tests
check C).

The choice, for M x N x K on ``dim`` cores (``docs/cube.md``, "The high-level Matmul"):

- the cores split M and N into a grid of ``cm x cn`` single-core shares (``cm * cn <= dim``) that gives the smallest
  share (ties: the fewest shares that are not whole fixed base blocks, then fewer cores, then, with a fixed
  base_n, the fewest base blocks along N per share, then the least of A and B per core, then the split of M: the
  shares asc-devkit's samples assume,
  00_introduction/02_matrix/matmul_advanced_api splitting M, matmul_leakyrelu_advanced_api splitting N into
  single base blocks; CANN's own rule is not published); ``single_core_m`` / ``_n``
  are the shares rounded up to 16, ``single_core_k`` = K;
  ``used_core_num`` is the number of shares;
- base blocks of at most 128 x 256 (``set_fix_split`` fixes any of them), halved until A's and B's tiles fit half
  of L0A / L0B (room for double buffering), C's block fits L0C (half of it unless the block is fixed), and, for a
  C in VECCALC, the UB; ``base_k`` is 64 rounded to whole fractals (32 for int8's B squares);
- L1 depths, steps and double buffering as the Norm template's defaults (1, 1, 2): they change how the API caches,
  not what it computes.

Sizes come from the SoC (``fusekit.soc``): L0A / L0B 64 KiB, L0C 128 KiB, UB 192 KiB on Atlas A2.
"""

from __future__ import annotations

from fusekit.soc import get_soc

MAX_BASE_M, MAX_BASE_N, BASE_K = 128, 256, 64


def _ceil(x: int, unit: int) -> int:
    return -(-int(x) // unit) * unit


def cores_grid(m: int, n: int, dim: int, block: tuple = (16, 16), base_n_fixed: bool = False) -> tuple[int, int]:
    """(cm, cn): how many shares M and N are split into on ``dim`` cores: the smallest share, then the fewest shares
    that are not whole base blocks (``block``: the fixed base_m, base_n, else 16), then the fewest cores, then (a
    fixed base_n) the fewest base blocks along N per share, then the least of A and B a core reads (single_m +
    single_n), then the most shares along M."""
    best = None
    for cm in range(1, max(dim, 1) + 1):
        cn = max(dim // cm, 1)
        single_m, single_n = _ceil(-(-m // cm), 16), _ceil(-(-n // cn), 16)
        tails = (single_m % block[0] != 0) + (single_n % block[1] != 0)
        used = -(-m // single_m) * -(-n // single_n)
        key = (single_m * single_n, tails, used, -(-single_n // block[1]) if base_n_fixed else 0,
               single_m + single_n, -cm)
        if best is None or key < best[0]:
            best = (key, cm, cn)
    return best[1], best[2]


def choose(m: int, n: int, k: int, dim: int, sizes: dict, c_in_ub: bool, fixed: tuple = (-1, -1, -1),
           soc=None, org: "tuple | None" = None, bias: bool = False, traverse: int = 0) -> dict:
    """The TCubeTiling fields for an M x N x K matmul (module docstring).

    Args:
        sizes: bytes per element of ``"a"``, ``"b"``, ``"c"``.
        c_in_ub: C is a VECCALC (UB) tensor (``get_tensor_c`` into UB).
        fixed: ``set_fix_split``'s base_m, base_n, base_k (-1: choose).
        org: the whole matrices' M, N, Ka, Kb (``set_org_shape``); default the shape.

    Raises:
        ValueError: a non-positive shape, or a fixed base block that does not fit the buffers.
    """
    if min(m, n, k) <= 0:
        raise ValueError(f"matmul shape {m} x {n} x {k}: every size must be positive (set_shape / set_org_shape)")
    soc = get_soc(soc)
    cm, cn = cores_grid(m, n, dim, (fixed[0] if fixed[0] > 0 else 16, fixed[1] if fixed[1] > 0 else 16), fixed[1] > 0)
    single_m, single_n = _ceil(-(-m // cm), 16), _ceil(-(-n // cn), 16)
    k_unit = 32 if sizes["a"] == 1 else 16
    base_m = fixed[0] if fixed[0] > 0 else min(MAX_BASE_M, single_m)
    base_n = fixed[1] if fixed[1] > 0 else min(MAX_BASE_N, single_n)
    base_k = fixed[2] if fixed[2] > 0 else min(_ceil(BASE_K, k_unit), _ceil(k, k_unit))
    l0c = soc.l0c_bytes if fixed[0] > 0 and fixed[1] > 0 else soc.l0c_bytes // 2

    def fits() -> bool:
        return (base_m * base_k * sizes["a"] <= soc.l0a_bytes // 2 and base_n * base_k * sizes["b"] <= soc.l0b_bytes // 2
                and _ceil(base_m, 16) * _ceil(base_n, 16) * 4 <= l0c
                and (not c_in_ub or base_m * base_n * sizes["c"] <= soc.ub_bytes))

    while not fits():
        if fixed[2] <= 0 and base_k > k_unit:
            base_k //= 2
        elif fixed[1] <= 0 and base_n > 16:
            base_n = _ceil(base_n // 2, 16)
        elif fixed[0] <= 0 and base_m > 16:
            base_m = _ceil(base_m // 2, 16)
        else:
            raise ValueError(f"base block {base_m} x {base_n} x {base_k} does not fit L0A / L0B / L0C"
                             f"{' / UB' if c_in_ub else ''} of {soc.name} (set_fix_split)")
    org_m, org_n, org_ka, org_kb = org or (m, n, k, k)
    used = -(-m // single_m) * -(-n // single_n)
    return dict(used_core_num=used, m=org_m, n=org_n, k_a=org_ka, k_b=org_kb, single_core_m=single_m,
                single_core_n=single_n, single_core_k=k, base_m=base_m, base_n=base_n, base_k=base_k, depth_a1=1,
                depth_b1=1, step_m=1, step_n=1, step_k_a=1, step_k_b=1, is_bias=int(bias), iterate_order=traverse,
                share_l1_size=soc.l1_bytes, share_l0c_size=soc.l0c_bytes, share_ub_size=0, db_l0a=2, db_l0b=2,
                db_l0c=1)
