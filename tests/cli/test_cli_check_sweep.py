"""``fusekit check``: visible, overridable launches; no invented findings, no missed ones (issue 8, item I)."""

import json
import re

import pytest

import fusekit
from fusekit.check import check_file
from fusekit.cli import main
from support import ROOT

README = ROOT / "README.md"


def readme_scale_kernel() -> str:
    """The README's own ``scale_kernel`` (its n is a per-core length), as a user would copy it."""
    text = README.read_text()
    block = re.search(r"## Run a kernel\n.*?```python\n(import numpy as np\nimport fusekit\nfrom fusekit import asc\n\n"
                      r"@asc\.jit\ndef scale_kernel.*?)\n\nx = ", text, re.S)
    assert block, "README no longer has the scale_kernel example"
    return block.group(1) + "\n"


def run_check(capsys, *argv):
    code = main(["check", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_readme_kernel_per_core_length_gives_no_false_out_of_bounds(tmp_path, capsys):
    path = tmp_path / "scale.py"
    path.write_text(readme_scale_kernel())
    code, out, _ = run_check(capsys, str(path), "--arg", "TILE=256", "--json")
    reports = json.loads(out)
    assert [r["n"] for r in reports] == [0, 1, 17, 4096, 65539]
    assert not [f for r in reports for f in r["findings"] if f["tool"] == "memcheck"]
    # 4096 = 16 cores x 256: the kernel's n is each core's share, as `start = get_block_idx() * n` says
    at4096 = reports[3]
    assert at4096["block_dim"] == 16 and at4096["arguments"]["n"].startswith("256 (per-core length")
    assert at4096["ok"]
    # 17 elements are fewer than one TILE: the kernel writes none of y, a real finding (n // TILE tiles only)
    assert [(f["kind"], f["buffer"]) for f in reports[2]["findings"]] == [("output never written", "y")]
    code, out, _ = run_check(capsys, str(path), "--arg", "TILE=256", "--sizes", "4096,65536")
    assert code == 0 and "n = 65536: launched scale_kernel[32](" in out and "n=2048 (per-core length" in out


def test_every_size_prints_the_launch_it_chose(tmp_path, capsys):
    path = tmp_path / "scale.py"
    path.write_text(readme_scale_kernel())
    code, out, _ = run_check(capsys, str(path), "--arg", "TILE=256", "--sizes", "4096")
    assert code == 0
    assert out.splitlines()[0] == ("n = 4096: launched scale_kernel[16](x=float16[4096] (random), y=float16[4096] "
                                   "(random), n=256 (per-core length: the kernel multiplies it by "
                                   "get_block_idx()), s=1.5 (attribute), TILE=256 (--arg))")


CANN_STYLE = '''
from fusekit import asc


@asc.jit
def add_custom(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress, block_length: int, tile_num: int,
               BUFFER_NUM: asc.ConstExpr[int]):
    """The CANN samples' Add: each core takes block_length elements in tile_num * BUFFER_NUM tiles."""
    tile_length = block_length // tile_num // BUFFER_NUM
    offset = asc.get_block_idx() * block_length
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x + offset, block_length)
    yg = asc.GlobalTensor()
    yg.set_global_buffer(y + offset, block_length)
    zg = asc.GlobalTensor()
    zg.set_global_buffer(z + offset, block_length)
    pipe = asc.TPipe()
    q_x = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_y = asc.TQue(asc.TPosition.VECIN, BUFFER_NUM)
    q_z = asc.TQue(asc.TPosition.VECOUT, BUFFER_NUM)
    pipe.init_buffer(que=q_x, num=BUFFER_NUM, len=tile_length * 2)
    pipe.init_buffer(que=q_y, num=BUFFER_NUM, len=tile_length * 2)
    pipe.init_buffer(que=q_z, num=BUFFER_NUM, len=tile_length * 2)
    for i in range(tile_num * BUFFER_NUM):
        a = q_x.alloc_tensor(asc.float16)
        b = q_y.alloc_tensor(asc.float16)
        asc.data_copy(a, xg[i * tile_length:], tile_length)
        asc.data_copy(b, yg[i * tile_length:], tile_length)
        q_x.enque(a)
        q_y.enque(b)
        a = q_x.deque(asc.float16)
        b = q_y.deque(asc.float16)
        c = q_z.alloc_tensor(asc.float16)
        asc.add(c, a, b, tile_length)
        q_z.enque(c)
        q_x.free_tensor(a)
        q_y.free_tensor(b)
        c = q_z.deque(asc.float16)
        asc.data_copy(zg[i * tile_length:], c, tile_length)
        q_z.free_tensor(c)
'''

CANN_LAUNCH = '''

USE_CORE_NUM = 8
TILE_NUM = 8


def check_launch(n, dtype):
    """The samples' host: 8 cores, 8 tiles of each core's share, double buffering."""
    return USE_CORE_NUM, {"block_length": n // USE_CORE_NUM, "tile_num": TILE_NUM, "BUFFER_NUM": 2}
'''


def test_a_kernel_exception_at_one_size_is_a_finding_and_the_sweep_goes_on(tmp_path, capsys):
    path = tmp_path / "add_custom.py"
    path.write_text(CANN_STYLE)
    code, out, err = run_check(capsys, str(path), "--sizes", "0,4096", "--json")
    reports = json.loads(out)
    assert code == 1 and [r["n"] for r in reports] == [0, 4096] and err == ""
    zero = reports[0]
    assert zero["arguments"]["tile_num"] == "0 (fusekit.tiling)"  # the guess that divides by zero is shown
    assert len(zero["findings"]) == 1 and "by zero" in zero["findings"][0]["message"]
    assert zero["findings"][0]["locations"][0].endswith("add_custom.py:9")


def test_the_files_own_launch_is_used(tmp_path, capsys):
    path = tmp_path / "add_custom.py"
    path.write_text(CANN_STYLE + CANN_LAUNCH)
    code, out, _ = run_check(capsys, str(path), "--sizes", "16384,32768")
    assert code == 0, out
    assert ("n = 16384: launched add_custom[8](x=float16[16384] (random), y=float16[16384] (random), "
            "z=float16[16384] (random), block_length=2048 (check_launch), tile_num=8 (check_launch), "
            "BUFFER_NUM=2 (check_launch))") in out
    code, out, _ = run_check(capsys, str(path), "--sizes", "16384", "--arg", "tile_num=4")
    assert code == 0 and "tile_num=4 (--arg)" in out


def test_a_tiling_data_object_from_the_file_fills_its_fields(tmp_path):
    path = tmp_path / "add_custom.py"
    path.write_text(CANN_STYLE + '''

from dataclasses import dataclass


@dataclass
class TilingData:
    blockDim: int
    blockLength: int
    tileNum: int
    BUFFER_NUM: int = 2


def check_launch(n):
    return TilingData(4, n // 4, 2)
''')
    (result,) = check_file(path, sizes=[4096])
    assert result.block_dim == 4 and result.report.ok
    assert result.arguments["block_length"] == "1024 (check_launch)" and result.arguments["tile_num"] == "2 (check_launch)"


def test_an_exception_in_the_files_launch_is_a_finding_for_that_size(tmp_path):
    path = tmp_path / "add_custom.py"
    path.write_text(CANN_STYLE + CANN_LAUNCH.replace('    return USE_CORE_NUM', '    assert n, "no elements"\n'
                                                                                '    return USE_CORE_NUM'))
    zero, full = check_file(path, sizes=[0, 16384])
    assert [f.kind for f in zero.report.findings] == ["exception"]
    assert zero.report.findings[0].message == "check_launch(0) raised AssertionError: no elements"
    assert full.report.ok


@pytest.mark.parametrize("hook, match", [
    ("check_launch = 3", "check_launch must be a function"),
    ("def check_launch(n):\n    return [1, 2]", "returned list; return (block_dim, {name: value})"),
    ("def check_launch(n):\n    return 0, {}", "gave block_dim=0; it must be a whole number in [1, 65535]"),
    ("def check_launch(n):\n    return {'tile_count': 2}", "returned tile_count, which add_custom has no parameter for"),
])
def test_a_bad_launch_in_the_file_is_bad_input(tmp_path, capsys, hook, match):
    path = tmp_path / "add_custom.py"
    path.write_text(CANN_STYLE + "\n\n" + hook + "\n")
    with pytest.raises(SystemExit) as exc:
        main(["check", str(path), "--sizes", "4096"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and match in err and err.count("\n") == 1


NO_Y = '''
from fusekit import asc


@asc.jit
def copy_forgot_y(x: asc.GlobalAddress, y: asc.GlobalAddress, n: int):
    xg = asc.GlobalTensor()
    xg.set_global_buffer(x, n)
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8192)
    t = buf.get(asc.float16)
    if n >= 16:
        asc.data_copy(t, xg, 16)
'''


def test_an_output_never_written_is_found_without_outputs(tmp_path, capsys):
    path = tmp_path / "k.py"
    path.write_text(NO_Y)
    code, out, _ = run_check(capsys, str(path), "--sizes", "0,64", "--json")
    zero, full = json.loads(out)
    assert code == 1 and zero["ok"]  # nothing to write at n = 0
    assert [(f["tool"], f["kind"], f["buffer"], f["start"], f["stop"]) for f in full["findings"]] == [
        ("initcheck", "output never written", "y", 0, 128)]


def test_a_kernel_writing_no_gm_at_all_is_found_whatever_its_names(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(NO_Y.replace("y: asc.GlobalAddress", "c: asc.GlobalAddress"))
    (result,) = check_file(path, sizes=[64])
    assert [(f.kind, f.buffer) for f in result.report.findings] == [("output never written", "c")]


OP_INFO = '''[{"op": "AddMulScale", "language": "cpp",
  "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
  "attr": []}]'''


def test_an_op_info_naming_another_kernel_is_rejected_with_the_closest_name(tmp_path, capsys):
    (tmp_path / "op_info.json").write_text(OP_INFO)
    path = tmp_path / "kernel.py"
    path.write_text(NO_Y.replace("copy_forgot_y", "add_mul_scal"))
    with pytest.raises(SystemExit) as exc:
        main(["check", str(path)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "kernel 'add_mul_scal' does not match op type 'AddMulScale'" in err and "'add_mul_scale'" in err
    with pytest.raises(ValueError, match="no @asc.jit kernel named 'add_mul_scale'; did you mean 'add_mul_scal'"):
        fusekit.simulate(path, "add_mul_scale")


def test_an_op_info_matching_the_kernel_declares_its_outputs(tmp_path):
    (tmp_path / "op_info.json").write_text(OP_INFO)
    path = tmp_path / "kernel.py"
    path.write_text(NO_Y.replace("copy_forgot_y", "add_mul_scale"))
    (result,) = check_file(path, sizes=[64])
    assert [(f.kind, f.buffer) for f in result.report.findings] == [("output never written", "y")]


def test_an_op_info_for_another_kernel_of_the_file_is_not_applied_and_says_so(tmp_path):
    (tmp_path / "op_info.json").write_text(OP_INFO)
    path = tmp_path / "kernel.py"
    path.write_text(NO_Y.replace("copy_forgot_y", "add_mul_scale") + NO_Y.split("\n\n\n", 1)[1].replace(
        "copy_forgot_y", "helper_copy").replace("y: asc.GlobalAddress", "c: asc.GlobalAddress"))
    (result,) = check_file(path, kernel="helper_copy", sizes=[64])
    assert result.report.notes == [f"{tmp_path / 'op_info.json'} describes AddMulScale (kernel add_mul_scale), not "
                                   "helper_copy: its outputs, dtypes and attributes were not used"]
    assert [(f.kind, f.buffer) for f in result.report.findings] == [("output never written", "c")]
