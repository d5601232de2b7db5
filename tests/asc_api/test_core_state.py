"""Per-core state that outlives a kernel: the sanitizer's "state left set" and ``launch(initial_state=)``.

Rules (asc-devkit docs/zh/api/SIMD-API/基础API/): the core keeps its control registers from one kernel to the
next (工具接口/系统初始化/InitSocState.md 约束说明); the pages of SetAtomicAdd / DisableDmaAtomic, SetMaskCount and
SetVectorMask ask the kernel to undo them before it ends; InitSocState (which the TPipe constructor calls, AD
kernel_tpipe_impl.h) resets atomics, mask mode and mask on A2 (表3) and atomics only on 310P (表4), and leaves
DEQSCALE alone on both. Expected outputs are numpy sums of the inputs, not fusekit's output.
"""

from __future__ import annotations

import numpy as np
import pytest

import fusekit
from fusekit import asc

N = 256  # half elements: two 128-lane repeats
F16 = np.float16


def _tensors(x, y, z, pipe: bool):
    """UB tensors for the three GM buffers: static tensors (LocalMemAllocator) or TPipe buffers."""
    if pipe:
        tpipe = asc.TPipe()
        bufs = [asc.TBuf(asc.TPosition.VECCALC) for _ in range(3)]
        for buf, addr in zip(bufs, (x, y, z)):
            tpipe.init_buffer(buf=buf, num=N * addr.dtype.sizeof())
        return [buf.get(addr.dtype) for buf, addr in zip(bufs, (x, y, z))]
    allocator = asc.LocalMemAllocator()
    return [allocator.alloc(asc.TPosition.VECCALC, addr.dtype, N) for addr in (x, y, z)]


@asc.jit
def kernel(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, BODY: asc.ConstExpr,
           PIPE: asc.ConstExpr[bool]):
    """z = BODY(z, x, y) on UB copies of core i's N elements, then z is stored to GM (a plain copy unless a store
    atomic is on)."""
    a, b, d = _tensors(x, y, z, PIPE)
    views = []
    for addr in (x, y, z):
        view = asc.GlobalTensor()
        view.set_global_buffer(addr + asc.get_block_idx() * N, N)
        views.append(view)
    for t, view in zip((a, b, d), views):
        asc.data_copy(t, view, N)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    BODY(d, a, b)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(views[2], d, N)


def nothing(d, a, b):
    """A kernel body that computes nothing: z is stored back as loaded."""


def copy_x(d, a, b):
    """d = a (adds a zero: a vector instruction in the count form)."""
    asc.adds(d, a, 0.0, N)


def add_masked_repeats(d, a, b):
    """add with continuous mask 64 over 2 repeats: Normal mode adds elements 0..63 and 128..191 (掩码.md);
    in Counter mode the mask 64 is the element count, elements 0..63 only."""
    asc.add(d, a, b, 64, 2, asc.BinaryRepeatParams())


def add_register_mask(d, a, b):
    """one 128-lane repeat with is_set_mask=False: the lanes the mask register selects."""
    asc.add(d, a, b, 128, 1, asc.BinaryRepeatParams(), is_set_mask=False)


def inputs(seed: int = 0, cores: int = 1):
    """x, y, z: N small integers in float16 per core (their sums are exact)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(-50, 50, N * cores).astype(F16) for _ in range(3)]


# -- each state whose page asks the kernel to restore it ------------------------------------------------------

SETTERS = {  # name -> (body that sets the state, the fix its finding must name)
    "atomic_add": (lambda d, a, b: asc.set_atomic_add(asc.float16), "asc.set_atomic_none()"),
    "atomic_max": (lambda d, a, b: asc.set_atomic_max(asc.float16), "asc.set_atomic_none()"),
    "atomic_min": (lambda d, a, b: asc.set_atomic_min(asc.float16), "asc.set_atomic_none()"),
    "store_atomic_config": (lambda d, a, b: asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_F16),
                            "asc.set_atomic_none()"),
    "mask_count": (lambda d, a, b: asc.set_mask_count(), "asc.set_mask_norm()"),
    "vector_mask": (lambda d, a, b: asc.set_vector_mask(0, 0xF, dtype=asc.float16, mode=asc.MaskMode.NORMAL),
                    "asc.reset_mask()"),
}
RESTORERS = {  # name -> calls that restore the state (its restoring call, init_soc_state, a count-form call)
    "atomic_add": [asc.set_atomic_none, asc.init_soc_state],
    "atomic_max": [asc.set_atomic_none, asc.init_soc_state],
    "atomic_min": [asc.set_atomic_none, asc.init_soc_state],
    "store_atomic_config": [lambda: asc.set_store_atomic_config(asc.AtomicDtype.ATOMIC_NONE), asc.set_atomic_none],
    "mask_count": [asc.set_mask_norm, asc.init_soc_state, lambda: copy_x(*CURRENT)],  # a count-form call resets it
    "vector_mask": [asc.reset_mask, asc.init_soc_state, lambda: copy_x(*CURRENT)],
}
CURRENT: list = []  # the body's tensors, for restorers that run a vector instruction


def state_findings(report):
    return [f for f in report.findings if f.kind == "state left set"]


@pytest.mark.parametrize("name", SETTERS)
def test_a_state_left_set_is_one_synccheck_finding_at_its_call_with_the_fix(name):
    """A kernel that ends with the state on gets one synccheck finding at the call that set it, on every core."""
    body, fix = SETTERS[name]
    report = fusekit.sanitize(kernel)[2](*inputs(cores=2), body, False)
    (finding,) = state_findings(report)
    assert (finding.tool, finding.cores, finding.count) == ("synccheck", (0, 1), 2), report.to_text()
    assert finding.locations == (f"{__file__}:{body.__code__.co_firstlineno}",)
    assert fix in finding.message and "kernel ends" in finding.message
    assert len(report.findings) == 1, report.to_text()


@pytest.mark.parametrize("name, k", [(n, k) for n in SETTERS for k in range(len(RESTORERS[n]))])
def test_a_state_restored_before_the_kernel_ends_is_no_finding(name, k):
    """Each documented way of restoring the state (its restoring call, init_soc_state, a count-form call) clears it."""
    setter, restore = SETTERS[name][0], RESTORERS[name][k]

    def body(d, a, b):
        setter(d, a, b)
        CURRENT[:] = (d, a, b)
        restore()

    report = fusekit.sanitize(kernel)[1](*inputs(), body, False)
    assert report.ok, report.to_text()


def test_an_inherited_state_is_reported_for_the_kernel_that_set_it_only():
    """A kernel started from a left-set state but not setting it gets no finding of its own."""
    first = fusekit.sanitize(kernel)[1](*inputs(), SETTERS["atomic_add"][0], False)
    assert len(state_findings(first)) == 1
    second = fusekit.sanitize(kernel, initial_state=first)[1](*inputs(), nothing, False)
    assert not state_findings(second), second.to_text()


# -- a launch that starts from the previous launch's state reproduces the device ------------------------------

def test_carried_atomic_add_makes_the_next_kernels_plain_store_add():
    """After a kernel left atomic add on, the next one's plain GM store adds to GM (SetAtomicAdd.md) unless it
    resets the state (TPipe, init_soc_state) or starts fresh."""
    x, y, z = inputs(1)
    first = kernel[1](x, y, z.copy(), SETTERS["atomic_add"][0], False)
    added = (z.astype(np.float64) + x.astype(np.float64)).astype(F16)  # GM z + stored x, rounded once
    for start, pipe, want in [(first, False, added), (None, False, x), (first, True, x)]:
        out = z.copy()
        kernel[1](x, y, out, copy_x, pipe, initial_state=start)
        np.testing.assert_array_equal(out, want, err_msg=f"initial_state={start is not None}, TPipe={pipe}")
    out = z.copy()
    kernel[1](x, y, out, lambda d, a, b: (asc.init_soc_state(), copy_x(d, a, b)), False, initial_state=first)
    np.testing.assert_array_equal(out, x)  # pypto's fix: clear atomic mode at kernel entry


def test_sanitize_with_initial_state_runs_the_kernel_from_that_state():
    """fusekit.sanitize(kernel, initial_state=report) starts the cores from the state that report's launch left."""
    x, y, z = inputs(2)
    first = fusekit.sanitize(kernel)[1](x, y, z.copy(), SETTERS["atomic_max"][0], False)
    out = z.copy()
    fusekit.sanitize(kernel, initial_state=first)[1](x, y, out, copy_x, False)
    np.testing.assert_array_equal(out, np.maximum(z, x))


def test_carried_counter_mode_turns_the_next_kernels_mask_into_an_element_count():
    """After set_mask_count left on, a mask-form add's mask 64 counts 64 elements instead of 64 lanes per repeat
    (InitSocState.md's example); a TPipe resets the mode on A2."""
    x, y, z = inputs(3)
    first = kernel[1](x, y, z.copy(), SETTERS["mask_count"][0], False)
    total = (x.astype(np.float64) + y.astype(np.float64)).astype(F16)
    normal, counter = z.copy(), z.copy()
    normal[0:64], normal[128:192] = total[0:64], total[128:192]
    counter[0:64] = total[0:64]
    for start, pipe, want in [(None, False, normal), (first, False, counter), (first, True, normal)]:
        out = z.copy()
        kernel[1](x, y, out, add_masked_repeats, pipe, initial_state=start)
        np.testing.assert_array_equal(out, want, err_msg=f"initial_state={start is not None}, TPipe={pipe}")


def test_carried_vector_mask_limits_the_next_kernels_register_form():
    """A mask set_vector_mask left set selects the lanes of the next kernel's is_set_mask=False instructions."""
    x, y, z = inputs(4)
    first = kernel[1](x, y, z.copy(), SETTERS["vector_mask"][0], False)
    total = (x.astype(np.float64) + y.astype(np.float64)).astype(F16)
    full, four = z.copy(), z.copy()
    full[:128], four[:4] = total[:128], total[:4]
    for start, pipe, want in [(None, False, full), (first, False, four), (first, True, full)]:
        out = z.copy()
        kernel[1](x, y, out, add_register_mask, pipe, initial_state=start)
        np.testing.assert_array_equal(out, want, err_msg=f"initial_state={start is not None}, TPipe={pipe}")


def test_310p_init_soc_state_resets_atomics_only():
    """On 310P InitSocState clears atomics but not Counter mode (InitSocState.md 表4)."""
    x, y, z = inputs(5)

    def leave_both(d, a, b):
        asc.set_mask_count()
        asc.set_atomic_add(asc.float16)

    first = kernel[1](x, y, z.copy(), leave_both, False, soc="Ascend310P3")
    out = z.copy()
    kernel[1](x, y, out, lambda d, a, b: (asc.init_soc_state(), add_masked_repeats(d, a, b)), False,
              soc="Ascend310P3", initial_state=first)
    want = z.copy()
    want[:64] = (x[:64].astype(np.float64) + y[:64].astype(np.float64)).astype(F16)  # Counter: 64 elements
    np.testing.assert_array_equal(out, want)  # and stored plainly: atomics were reset


def test_deq_scale_is_carried_and_not_reset_by_init_soc_state_on_a2():
    """DEQSCALE set by one kernel is what the next kernel's int32 -> half Cast multiplies by, even through a TPipe
    (InitSocState.md 表3 does not reset it on A2); a fresh launch refuses the unset register."""
    x = np.arange(-128, 128, dtype=np.int32) * 8
    first = kernel[1](x, x, np.zeros(N, F16), lambda d, a, b: asc.set_deq_scale(0.25), False)
    cast = lambda d, a, b: asc.cast(d, a, asc.RoundMode.CAST_NONE, N)  # noqa: E731
    for pipe in (False, True):
        out = np.zeros(N, F16)
        kernel[1](x, x, out, cast, pipe, initial_state=first)
        np.testing.assert_array_equal(out, (x * 0.25).astype(F16))  # exact: small multiples of 2
    with pytest.raises(asc.KernelError, match="DEQSCALE"):
        kernel[1](x, x, np.zeros(N, F16), cast, False)


@asc.jit
def pad_copy(x: asc.GlobalAddress, y: asc.GlobalAddress, VALUE: asc.ConstExpr):
    """y = x's 20 halves and 12 pad elements from DataCopyPad with is_pad=False (SetPadValue(ISASI).md example)."""
    xg, yg = asc.GlobalTensor(), asc.GlobalTensor()
    xg.set_global_buffer(x, 20)
    yg.set_global_buffer(y, 32)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=64)
    t = buf.get(asc.float16)
    if VALUE is not None:
        asc.set_pad_value(VALUE)
    asc.data_copy_pad(t, xg, asc.DataCopyExtParams(1, 20 * 2, 0, 0, 0),
                      asc.DataCopyPadExtParams(asc.float16, False, 0, 12, 0))
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(yg, t, 32)


def test_carried_pad_value_fills_the_next_kernels_pad_through_a_tpipe():
    """The pad value one kernel set pads the next kernel's is_pad=False DataCopyPad (InitSocState does not reset it)."""
    x = np.arange(20, dtype=F16)
    first = pad_copy[1](x, np.zeros(32, F16), 3)
    report = fusekit.sanitize(pad_copy, initial_state=first)[1](x, out := np.zeros(32, F16), None)
    np.testing.assert_array_equal(out, np.concatenate([x, np.full(12, 3, F16)]))
    # the pad bytes are defined (no undefined pad read), but they are the previous kernel's value: one finding
    assert [(f.kind, f.ops) for f in report.findings] == [("state inherited", ("data_copy_pad",))], report.to_text()


def test_initial_state_must_come_from_a_launch():
    """Anything but a LaunchResult, Trace or Report as initial_state is a TypeError naming what it takes."""
    with pytest.raises(TypeError, match="initial_state must be what an earlier launch returned"):
        kernel[1](*inputs(), nothing, False, initial_state={"atomic": "add"})


# -- every write of a persistent register is tracked; a read of an inherited one is a finding ------------------

def inherited(report):
    return [f for f in report.findings if f.kind == "state inherited"]


def _line_of(fn) -> str:
    """file:line of the single vector call in body ``fn`` (its last line)."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return f"{inspect.getsourcefile(fn)}:{start + len(lines) - 1}"


MASK_WRITERS = {  # name -> (body that writes the mask register without set_vector_mask, lanes of repeat 0 it leaves)
    # split forms with is_set_mask=True (AscendCUtils::SetMask): 掩码.md 接口内设置Mask
    "split_continuous": (lambda d, a, b: asc.add(d, a, b, 64, 2, asc.BinaryRepeatParams()), range(64)),
    "split_bits": (lambda d, a, b: asc.add(d, a, b, [0xF, 0], 2, asc.BinaryRepeatParams()), range(4)),
    "split_unary": (lambda d, a, b: asc.adds(d, a, 1.0, 16, 1, asc.UnaryRepeatParams()), range(16)),
    "after_reset_mask": (lambda d, a, b: (asc.set_vector_mask(0, 0xF, dtype=asc.float16), asc.reset_mask(),
                                          asc.add(d, a, b, 32, 2, asc.BinaryRepeatParams())), range(32)),
    "whole_reduce_sum": (lambda d, a, b: asc.whole_reduce_sum(d, a, 64, 1, 1, 1, 8), range(64)),
    "copy": (lambda d, a, b: asc.copy(d, a, 8, 1, asc.CopyRepeatParams(1, 1, 8, 8)), range(8)),
}


@pytest.mark.parametrize("name", MASK_WRITERS)
def test_a_mask_an_instruction_wrote_is_what_the_next_kernel_reads_and_a_finding_there(name):
    """Vector instructions with is_set_mask=True write the mask register and leave it (掩码.md: only the count
    forms restore it); no page asks the kernel to undo that, so it is no finding at kernel end. The next kernel's
    is_set_mask=False add then selects those lanes (SetVectorMask.md), and that read is a "state inherited"
    finding at the add, naming the register and init_soc_state; a TPipe kernel (InitSocState resets the mask on A2)
    and a fresh launch compute all 128 lanes with no finding."""
    body, kept = MASK_WRITERS[name]
    x, y, z = inputs(6)
    first = fusekit.sanitize(kernel)[1](x, y, z.copy(), body, False)
    assert not state_findings(first), first.to_text()
    total = (x.astype(np.float64) + y.astype(np.float64)).astype(F16)
    want = z.copy()
    want[list(kept)] = total[list(kept)]
    out = z.copy()
    second = fusekit.sanitize(kernel, initial_state=first)[1](x, y, out, add_register_mask, False)
    np.testing.assert_array_equal(out, want)
    found = inherited(second)
    assert [f.locations for f in found] == [(_line_of(add_register_mask),)], second.to_text()
    assert "the vector mask" in found[0].message and "asc.init_soc_state() at kernel entry" in found[0].message
    for start, pipe in [(first, True), (None, False)]:
        out = z.copy()
        report = fusekit.sanitize(kernel, initial_state=start)[1](x, y, out, add_register_mask, pipe)
        full = z.copy()
        full[:128] = total[:128]
        np.testing.assert_array_equal(out, full)
        assert not inherited(report), report.to_text()


def _cast(d, a, b):
    asc.cast(d, a, asc.RoundMode.CAST_NONE, N)


READERS = {  # register -> (first kernel's body, second kernel's body reading it, words its finding must hold, dtype)
    "atomic": (SETTERS["atomic_add"][0], nothing, ["store-atomic mode", "asc.set_atomic_none()"], None),
    "mask_mode": (SETTERS["mask_count"][0], add_masked_repeats, ["the mask mode", "asc.set_mask_norm()"], None),
    "mask": (SETTERS["vector_mask"][0], add_register_mask, ["the vector mask", "asc.reset_mask()"], None),
    "deqscale": (lambda d, a, b: asc.set_deq_scale(0.5), _cast, ["DEQSCALE", "asc.set_deq_scale"], np.int32),
    "cmp_mask": (lambda d, a, b: asc.set_cmp_mask(a), lambda d, a, b: asc.select(
        d, a, b, repeat_times=1, repeat_params=asc.BinaryRepeatParams(), sel_mode=asc.SelMode.VSEL_CMPMASK_SPR),
        ["the CmpMask register", "asc.set_cmp_mask"], None),
}


@pytest.mark.parametrize("key", READERS)
def test_each_register_read_while_inherited_is_one_finding_naming_it_and_the_fix(key):
    """Each persistent register (InitSocState.md 约束说明; corestate.REGISTERS): the next kernel's instruction that
    reads it, started from the state the first kernel left and not setting it, gets a "state inherited" finding
    with the register, its value and how to set it. Setting it first in that kernel removes the finding."""
    first_body, reader, words, dtype = READERS[key]
    x, y, z = inputs(7)
    if dtype is not None:
        x = y = (np.arange(N, dtype=dtype) - N // 2) * 4
    first = kernel[1](x, y, z.copy(), first_body, False)
    report = fusekit.sanitize(kernel, initial_state=first)[1](x, y, z.copy(), reader, False)
    found = inherited(report)
    assert len(found) == 1 and found[0].tool == "synccheck", report.to_text()
    for word in words:
        assert word in found[0].message, found[0].message
    own = fusekit.sanitize(kernel, initial_state=first)[1](x, y, z.copy(),
                                                          lambda d, a, b: (first_body(d, a, b), reader(d, a, b)), False)
    assert not inherited(own), own.to_text()


def test_init_soc_state_at_entry_clears_the_findings_of_what_it_resets_only():
    """init_soc_state() at kernel entry resets atomics, mask mode and mask on A2 (InitSocState.md 表3) but not
    DEQSCALE: the reads of the first three are the kernel's own, the DEQSCALE read still inherited."""
    x = (np.arange(N, dtype=np.int32) - N // 2) * 4
    first = kernel[1](x, x, np.zeros(N, F16), lambda d, a, b: (asc.set_deq_scale(0.5), asc.set_atomic_add(asc.float16),
                                                               asc.set_vector_mask(0, 0xF, dtype=asc.float16)), False)
    report = fusekit.sanitize(kernel, initial_state=first)[1](
        x, x, np.zeros(N, F16), lambda d, a, b: (asc.init_soc_state(), _cast(d, a, b)), False)
    assert [f.message.split(" here reads ")[1].split(",")[0] for f in inherited(report)] == ["DEQSCALE"], \
        report.to_text()


def test_every_write_of_a_persistent_register_goes_through_the_one_note():
    """No code assigns a persistent register (or a field of the mask, atomic or CmpMask register) without noting
    the write (corestate.written / corestate.write / mask.write): else a value this kernel set would still count
    as inherited, or an inherited one as the kernel's own. Found by reading the source (ast), so a new writer
    that bypasses the note fails here."""
    import ast
    import pathlib

    from fusekit.machine import PERSISTENT

    root = pathlib.Path(fusekit.__file__).parent
    fields = {"high", "low", "mode", "loaded", "op", "dtype"}  # MaskRegister, CmpMaskRegister, AtomicMode fields
    creators = {"register_of", "mode_of", "cmp_register"}  # make the reset value on first use
    bypass = []
    for path in root.rglob("*.py"):
        if path.parts[-2] == "machine":
            continue
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or fn.name in creators:
                continue
            calls = {n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
                     for n in ast.walk(fn) if isinstance(n, ast.Call)}
            notes = bool(calls & {"written", "write"}) or fn.name in {"write", "written", "restore"}
            for node in ast.walk(fn):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AugAssign) else []
                flat = [e for t in targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
                for t in flat:
                    if not isinstance(t, ast.Attribute):
                        continue
                    owner = ast.unparse(t.value)
                    register = t.attr in PERSISTENT and owner in ("core", "self.core", "cores[i]")
                    field = t.attr in fields and owner in ("reg", "mode", "atomic") and "asc" in path.parts
                    if (register or field) and not notes:
                        bypass.append(f"{path.relative_to(root)}:{node.lineno} {fn.name}: {ast.unparse(t)} =")
    assert not bypass, "writes of a persistent register that corestate does not see:\n" + "\n".join(bypass)


# -- initial_state= wherever a launch is made ------------------------------------------------------------------

def test_initial_state_from_another_soc_or_empty_is_refused():
    """A state is the registers of one SoC's cores: another SoC's launch refuses it, naming both; an empty list is
    no launch's state (a launch has at least one core) and is refused like [None]; None means fresh cores."""
    first = kernel[1](*inputs(), SETTERS["atomic_add"][0], False)
    with pytest.raises(ValueError, match="from a launch on Ascend910B1, but this launch runs on Ascend310P3"):
        kernel[1](*inputs(), nothing, False, initial_state=first, soc="Ascend310P3")
    with pytest.raises(ValueError, match="Ascend910B3"):
        fusekit.sanitize(kernel, soc="Ascend910B3", initial_state=first)[1](*inputs(), nothing, False)
    for bad in ([], [None]):
        with pytest.raises(TypeError, match="initial_state must be what an earlier launch returned"):
            kernel[1](*inputs(), nothing, False, initial_state=bad)
    kernel[1](*inputs(), nothing, False, initial_state=None)
    kernel[1](*inputs(), nothing, False, initial_state=first.trace.end_state)


def test_profile_takes_the_launch_options_and_refuses_them_at_the_launch():
    """fusekit.profile(kernel, initial_state=, overflow=, auto_sync=) as fusekit.sanitize takes them: the profiled
    run computes what the launch computes from that state; passed to [core_num](...) they are refused, naming
    fusekit.profile."""
    x, y, z = inputs(8)
    first = kernel[1](x, y, z.copy(), SETTERS["atomic_add"][0], False)
    want = z.copy()
    kernel[1](x, y, want, copy_x, False, initial_state=first)
    out = z.copy()
    prof = fusekit.profile(kernel, initial_state=first, overflow="saturation", auto_sync=True)[1](x, y, out, copy_x,
                                                                                                    False)
    np.testing.assert_array_equal(out, want)
    assert not np.array_equal(out, x) and prof.kernel_time_us > 0
    with pytest.raises(TypeError, match=r"initial_state=<LaunchResult> is an option of the profiler.*fusekit.profile"):
        fusekit.profile(kernel)[1](x, y, z.copy(), copy_x, False, initial_state=first)
