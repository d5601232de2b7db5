"""`fusekit run OP` options of generated operators: --input, -o, --seed, --buffer-num, --tile-length, --overflow.

Expected values come from numpy (written here), from the documented random inputs (fusekit.cli.generated's
module doc) and from the operator's own `hardware` model called in Python on the same arrays, never from
the command's output.
"""

import ml_dtypes
import numpy as np
import pytest

from fusekit.gen.catalogue import get

from support import cli, one_line


def documented_random(shapes: list, dtype, seed: int) -> list:
    """The CLI's random inputs as its module doc states them: one default_rng(seed), signature order,
    standard_normal float32 cast to the dtype."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s, dtype=np.float32).astype(dtype) for s in shapes]


def save(path, array):
    np.save(path, array)
    return path


def load(path):
    y = np.load(path)
    return y.view(ml_dtypes.bfloat16) if y.dtype == np.dtype("V2") else y


# -- --input and -o
def test_input_files_give_the_ops_own_result_and_o_writes_every_output(tmp_path, capsys):
    rng = np.random.default_rng(11)
    x, r = (rng.standard_normal((8, 96)).astype(np.float16) for _ in range(2))
    g = rng.uniform(0.5, 2, 96).astype(np.float16)
    out = tmp_path / "new" / "out"  # created with its parent
    code, text, err = cli(capsys, "run", "add_rms_norm", "--input", f"x={save(tmp_path / 'x.npy', x)}",
                          "--input", f"residual={save(tmp_path / 'r.npy', r)}", "--input",
                          f"gamma={save(tmp_path / 'g.npy', g)}", "-o", out)
    assert code == 0, err
    assert "[float16 [8, 96];" in text and "inputs: x from" in text and "random" not in text
    assert sorted(p.name for p in out.iterdir()) == ["x_sum.npy", "y.npy"]  # nothing else: no temporary left
    y, x_sum = load(out / "y.npy"), load(out / "x_sum.npy")
    assert y.dtype == x_sum.dtype == np.float16 and y.shape == x_sum.shape == (8, 96)
    np.testing.assert_array_equal(x_sum, x + r)  # one float16 add, rounded to nearest even: numpy's
    np.testing.assert_array_equal(y, get("add_rms_norm").reference("hardware", x, r, g)["y"])
    s = x.astype(np.float64) + r
    exact = s / np.sqrt(np.mean(s * s, axis=-1, keepdims=True) + 1e-6) * g
    np.testing.assert_allclose(y.astype(np.float64), exact, rtol=4e-3, atol=4e-3)


def test_one_input_from_a_file_sets_the_shape_and_dtype_the_others_random(tmp_path, capsys):
    x = np.random.default_rng(3).standard_normal((4, 64)).astype(np.float32)
    code, text, err = cli(capsys, "run", "add_rms_norm", "--input", f"x={save(tmp_path / 'x.npy', x)}",
                          "--seed", "9", "-o", tmp_path / "o")
    assert code == 0, err
    assert "[float32 [4, 64];" in text and "residual, gamma random (seed 9)" in text
    rest = documented_random([(4, 64), (4, 64), (64,)], np.float32, 9)[1:]  # x's draw is made, then replaced
    expected = get("add_rms_norm").reference("hardware", x, *rest)
    for name in ("y", "x_sum"):
        np.testing.assert_array_equal(load(tmp_path / "o" / f"{name}.npy"), expected[name])


def test_bfloat16_files_run_in_fp32_and_round_trip(tmp_path, capsys):
    a, b = documented_random([(300,), (300,)], ml_dtypes.bfloat16, 1)
    code, text, err = cli(capsys, "run", "swiglu", "--input", f"a={save(tmp_path / 'a.npy', a)}",
                          "--input", f"b={save(tmp_path / 'b.npy', b)}", "-o", tmp_path)
    assert code == 0, err
    assert "[bfloat16 [300]; precision fp32" in text
    y = load(tmp_path / "y.npy")
    assert y.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(y, get("swiglu").reference("fp32", a, b)["y"])


# -- --seed
def test_seed_chooses_the_documented_random_inputs(tmp_path, capsys):
    results = {}
    for seed in ("0", "5"):
        code, text, err = cli(capsys, "run", "swiglu", "--shape", "3", "100", "--seed", seed, "-o", tmp_path / seed)
        assert code == 0 and f"a, b random (seed {seed})" in text, err
        results[seed] = load(tmp_path / seed / "y.npy")
        a, b = documented_random([(3, 100), (3, 100)], np.float16, int(seed))
        np.testing.assert_array_equal(results[seed], get("swiglu").reference("hardware", a, b)["y"])
    assert not np.array_equal(results["0"], results["5"])


# -- --buffer-num and --tile-length, shown in the tiling
@pytest.mark.parametrize("buffer_num", [1, 3])
def test_buffer_num_and_tile_length_reach_the_elementwise_tiling(capsys, buffer_num):
    code, text, err = cli(capsys, "run", "swiglu", "--shape", "4096", "--cores", "1", "--tile-length", "1024",
                          "--buffer-num", buffer_num)
    assert code == 0 and text.rstrip().endswith("PASS"), err
    # 4096 elements on one core in tiles of 1024: four whole tiles, no tail
    assert (f"total_length 4096  block_dim 1  block_length 4096  tile_length 1024  BUFFER_NUM {buffer_num}"
            in text)
    assert "tile_num 4, tail_length 0" in text


def test_more_buffers_need_more_ub(capsys):
    ub = []
    for buffer_num in ("1", "3"):
        code, text, _ = cli(capsys, "run", "swiglu", "--shape", "2048", "--cores", "1", "--tile-length", "512",
                            "--buffer-num", buffer_num)
        assert code == 0
        ub.append(int(text.split("  UB ")[1].split(" B")[0]))
    # three queues (a, b, y) of 512 float16 elements: each extra buffer costs 3 x 1024 B
    assert ub[1] - ub[0] == 2 * 3 * 512 * 2


def test_tile_length_counts_rows_in_a_row_tiled_kernel(capsys):
    code, text, err = cli(capsys, "run", "add_rms_norm", "--shape", "10", "64", "--cores", "1", "--tile-length", "4",
                          "--buffer-num", "1")
    assert code == 0 and text.rstrip().endswith("PASS"), err
    # 10 rows on one core, 4 rows per tile: two tiles and a tail of 2 rows
    assert "total_length 10  block_dim 1  block_length 10  tile_length 4  BUFFER_NUM 1" in text
    assert "tile_num 2, tail_length 2" in text and "count rows" in text


# -- --overflow
def test_overflow_saturation_gives_the_largest_finite_value(tmp_path, capsys):
    big = save(tmp_path / "big.npy", np.full(64, 60000, np.float16))  # 60000 + 60000 overflows float16
    for mode, expected in (("inf_nan", np.inf), ("saturation", 65504.0)):
        code, text, err = cli(capsys, "run", "add_relu", "--input", f"x1={big}", "--input", f"x2={big}",
                              "--overflow", mode, "-o", tmp_path / mode)
        assert code == 1 and f"overflow {mode}]" in text, err  # 120000 exceeds float16: FAIL (README rule)
        np.testing.assert_array_equal(load(tmp_path / mode / "y.npy"), np.full(64, expected, np.float16))


def test_the_default_overflow_is_the_socs(capsys):
    code, text, _ = cli(capsys, "run", "swiglu", "--shape", "64", "--soc", "Ascend310P3")
    assert code == 0 and "Ascend310P3; 1 core(s); overflow saturation]" in text


# -- bad values: exit 2, one line, no traceback, nothing on stdout
@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "text.npy").write_text("not an array")
    return {"x16": save(tmp_path / "x16.npy", rng.standard_normal((8, 96)).astype(np.float16)),
            "x32": save(tmp_path / "x32.npy", rng.standard_normal((8, 96)).astype(np.float32)),
            "x64": save(tmp_path / "x64.npy", rng.standard_normal((8, 96))),
            "g50": save(tmp_path / "g50.npy", np.ones(50, np.float16)),
            "text": tmp_path / "text.npy", "missing": tmp_path / "missing.npy", "a_file": tmp_path / "a_file"}


BAD = [
    (["--buffer-num", "0"], "argument --buffer-num: must be in [1, 8], got 0"),
    (["--buffer-num", "9"], "argument --buffer-num: must be in [1, 8], got 9"),
    (["--buffer-num", "two"], "argument --buffer-num: expected a whole number"),
    (["--tile-length", "0"], "argument --tile-length: must be >= 1"),
    (["--tile-length", "100", "--shape", "4096"], "tile_length=100"),
    (["--tile-length", "5000", "--shape", "8", "64"], "rows per tile must be in [1,"),
    (["--overflow", "wrap"], "argument --overflow: invalid choice: 'wrap'"),
    (["--soc", "Ascend310P3", "--overflow", "inf_nan", "--shape", "2", "64"], "Ascend310P3 supports overflow=saturation only"),
    (["--seed", "-1"], "argument --seed: must be >= 0"),
    (["--seed", "x"], "argument --seed: expected a whole number"),
    (["--input", "x"], "expected NAME=FILE.npy"),
    (["--input", "nosuch={x16}"], "add_rms_norm has no input 'nosuch'; its inputs are x, residual, gamma"),
    (["--input", "x={missing}"], "--input x: {missing}: no such file"),
    (["--input", "x={text}"], "--input x: {text} is not a readable .npy file"),
    (["--input", "x={x32}", "--dtype", "float16"], "--input x={x32} holds float32, but add_rms_norm's x is float16"),
    (["--input", "x={x16}", "--input", "residual={x32}"], "residual={x32} holds float32"),
    (["--input", "x={x64}"], "holds float64; add_rms_norm takes float16, float32, bfloat16"),
    (["--input", "x={x16}", "--input", "x={x16}"], "--input x is given twice"),
    (["--input", "x={x16}", "--input", "gamma={g50}"], "do not broadcast"),
    (["--input", "gamma={g50}", "--shape", "8", "96"], "do not broadcast"),
    (["-o", "{a_file}", "--shape", "2", "64"], "-o {a_file}: {a_file} is a file, not a directory"),
]


@pytest.mark.parametrize("argv, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_one_line(capsys, files, argv, message):
    code, out, err = cli(capsys, "run", "add_rms_norm", *(a.format(**files) for a in argv))
    assert code == 2 and out == "" and one_line(err), err
    assert message.format(**files) in err


def test_a_refused_output_directory_is_not_written(files, capsys):
    code, _, _ = cli(capsys, "run", "swiglu", "--shape", "64", "-o", files["a_file"] / "sub")
    assert code == 2 and files["a_file"].read_text() == "x"


# -- profile and tune share the parser: the inputs' shapes, not the run-only options
@pytest.mark.parametrize("command, shown", [("profile", "add_rms_norm at n=768 float32"),
                                            ("tune", "AddRmsNorm [8, 96] float32")])
def test_profile_and_tune_take_shapes_and_dtypes_from_input_files(files, capsys, command, shown):
    code, out, err = cli(capsys, command, "add_rms_norm", "--input", f"x={files['x32']}")
    assert code == 0 and shown in out, err


@pytest.mark.parametrize("command", ["profile", "tune"])
@pytest.mark.parametrize("option", [["-o", "out"], ["--seed", "1"], ["--overflow", "saturation"]])
def test_run_only_options_are_refused_elsewhere(capsys, command, option):
    code, out, err = cli(capsys, command, "swiglu", "--shape", "64", *option)
    # issue 24: the operator, the option and why, not argparse's "unrecognized arguments"
    assert code == 2 and one_line(err) and f"{option[0]}" in err and "does not apply to swiglu: " in err and out == ""


def test_profile_takes_buffer_num_and_tile_length(capsys):
    fused = {}
    for extra in ([], ["--buffer-num", "1"], ["--tile-length", "1"]):
        code, out, err = cli(capsys, "profile", "add_rms_norm", "--shape", "960", "1024", *extra)
        assert code == 0, err
        fused[tuple(extra)] = out.split("fused ")[1].split(" us")[0]
    assert len(set(fused.values())) == 3, fused  # each setting predicts its own kernel
    code, out, err = cli(capsys, "tune", "swiglu", "--shape", "64", "--buffer-num", "1")
    assert code == 2 and "--buffer-num does not apply to swiglu: tune searches block_dim" in err
