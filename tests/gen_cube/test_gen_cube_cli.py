"""``fusekit run | profile | tune | emit`` on the catalogue's matmul operators (fusekit.cli.generated with
fusekit.gen.cube): the cube plan printed, the verdict, the unfused chain, the base-block search, and a one-line
refusal where a CANN project is not generated yet."""

from fusekit.cli import main


def test_run_prints_the_cube_plan_and_passes(capsys):
    assert main(["run", "matmul_bias_gelu", "--shape", "64", "64", "--sanitize"]) == 0
    out = capsys.readouterr().out
    assert "cube tiling: C 1 x 64 x 64 (K 64)" in out and "sanitizer: no findings" in out
    assert out.rstrip().endswith("PASS")


def test_profile_times_the_plain_matmul_and_the_epilogue(capsys):
    assert main(["profile", "quant_matmul_dequant", "--shape", "64", "64"]) == 0
    out = capsys.readouterr().out
    assert "quant_matmul_dequant_matmul" in out and "quant_matmul_dequant_epilogue" in out and "unfused chain" in out


def test_tune_searches_the_base_block(capsys):
    assert main(["tune", "matmul_bias", "--shape", "64", "64"]) == 0
    out = capsys.readouterr().out
    assert "configurations timed on the model" in out and "base 64 x 64 x" in out


def test_emit_project_refuses_a_matmul_operator_in_one_line(tmp_path, capsys):
    assert main(["emit", "matmul_swiglu", "--project", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert "holds a matmul" in err and "Traceback" not in err and not (tmp_path / "p").exists()
