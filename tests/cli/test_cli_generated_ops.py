"""`fusekit run|profile` on generated operators: catalogue names and FILE.py:NAME."""

import textwrap

import pytest

from fusekit.cli import main


def test_run_a_catalogue_op_verifies_and_sanitizes(capsys):
    assert main(["run", "swiglu", "--shape", "3", "1000", "--sanitize"]) == 0
    out = capsys.readouterr().out
    assert "Swiglu" in out and "bit-identical" in out and "sanitizer: no findings" in out and out.rstrip().endswith("PASS")


def test_run_a_row_op_with_attributes(capsys):
    assert main(["run", "add_rms_norm", "--shape", "8", "96", "--precision", "fp32", "--attr", "eps=1e-5"]) == 0
    assert "x_sum: vs fp32" in capsys.readouterr().out


def test_profile_compares_fused_with_the_unfused_chain(capsys):
    assert main(["profile", "bias_gelu", "--shape", "1000"]) == 0
    out = capsys.readouterr().out
    assert "unfused chain" in out and "warning: launch and scheduling take" in out


def test_run_a_users_op_from_a_file(tmp_path, capsys):
    path = tmp_path / "my_ops.py"
    path.write_text(textwrap.dedent("""
        import fusekit

        @fusekit.op(dtypes=("float32",))
        def scaled_tanh(x, *, k=2.0):
            return fusekit.tanh(x) * k
    """))
    assert main(["run", f"{path}:scaled_tanh", "--shape", "257"]) == 0
    assert "ScaledTanh" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:  # neither a @fusekit.op nor an @asc.jit kernel: one line, exit 2
        main(["run", f"{path}:nothing", "--shape", "4"])
    assert exc.value.code == 2 and "no @asc.jit kernel 'nothing' in my_ops.py" in capsys.readouterr().err


def test_the_hand_written_fused_add_scale_keeps_its_cli(capsys):
    assert main(["run", "fused_add_scale", "--size", "100"]) == 0
    assert "FusedAddScale  y = (x1 + x2) * scale" in capsys.readouterr().out


def test_fusekit_check_runs_a_generated_kernel_file_with_its_own_launch(capsys):
    import numpy as np

    from fusekit.gen import catalogue as cat

    x = np.ones(64, np.float16)
    path = cat.quantize.run(x, scale=2.0).variant.path
    assert "def check_launch(" in path.read_text()
    assert main(["check", str(path), "--sizes", "0,17,4096"]) == 0
    out = capsys.readouterr().out
    assert "(check_launch)" in out and "no findings" in out
