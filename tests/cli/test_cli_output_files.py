"""Atomic output files (fusekit.files): only regular files are ever replaced."""

import os

import pytest

from fusekit.cli import main
from fusekit.files import write_atomic, write_problem


def _write(data: bytes):
    return lambda f: f.write(data)


def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(tmp_path):
    p = tmp_path / "y.bin"
    p.write_bytes(b"old")
    os.chmod(p, 0o640)
    write_atomic(p, _write(b"new data"))
    assert p.read_bytes() == b"new data" and (p.stat().st_mode & 0o777) == 0o640
    assert [q.name for q in tmp_path.iterdir()] == ["y.bin"]  # no temporary file left behind


def test_a_symlink_is_followed_not_replaced(tmp_path):
    real = tmp_path / "real.bin"
    real.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(real)
    write_atomic(link, _write(b"new"))
    assert link.is_symlink() and real.read_bytes() == b"new"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_and_left_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert "not a regular file" in write_problem(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        write_atomic(fifo, _write(b"x"))
    assert fifo.exists() and not fifo.is_file()  # still the FIFO: nothing renamed over it
    assert [q.name for q in tmp_path.iterdir()] == ["pipe"]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_as_output_is_bad_input_on_the_cli(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["run", "fused_add_scale", "--size", "16", "-o", "/dev/null"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "not a regular file" in err and "Traceback" not in err
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
