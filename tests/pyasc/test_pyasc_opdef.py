"""op_info.json loading and validation."""

import json
from pathlib import Path

import pytest

from fusekit.pyasc.opdef import OpDefError, load_op_info, snake_case
from fusekit.ops.fused_add_scale import OP


def test_shipped_prototype():
    assert OP.op_type == "FusedAddScale" and OP.kernel_name == "fused_add_scale"
    assert [t.name for t in OP.inputs] == ["x1", "x2"] and [t.name for t in OP.outputs] == ["y"]
    assert OP.dtypes == ("float16", "float32", "bfloat16")
    (scale,) = OP.attrs
    assert (scale.name, scale.type, scale.param_type) == ("scale", "float", "required")


@pytest.mark.parametrize("op_type, kernel", [("FusedAddScale", "fused_add_scale"), ("AddRMSNorm", "add_rms_norm"),
                                             ("Conv2DBackprop", "conv2_d_backprop"), ("Add", "add")])
def test_snake_case(op_type, kernel):
    assert snake_case(op_type) == kernel


def test_article_typo_in_the_prototype_is_reported_with_the_closest_name(tmp_path):
    raw = json.loads(Path(OP.source).read_text(encoding="utf-8"))
    raw[0]["op"] = "FusedAddScala"
    path = tmp_path / "op_info.json"
    path.write_text(json.dumps(raw))
    typo = load_op_info(path)
    with pytest.raises(OpDefError, match="kernel 'fused_add_scale' does not match op type 'FusedAddScala'.*"
                                         "Did you mean 'fused_add_scala'"):
        typo.check_kernel_name("fused_add_scale")


def prototype(**changes):
    op = {"op": "FusedAddScale", "language": "cpp",
          "input_desc": [{"name": "x1", "param_type": "required", "format": ["ND"], "type": ["fp16"]},
                         {"name": "x2", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
          "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
          "attr": [{"name": "scale", "param_type": "required", "type": "float"}]}
    op.update(changes)
    return [op]


@pytest.mark.parametrize("content, match", [
    ("{not json", "is not valid JSON: .* line 1"),
    (json.dumps([]), "expected a list holding one operator"),
    (json.dumps(prototype(op="fusedAddScale")), "UpperCamelCase"),
    (json.dumps(prototype(output_desc=[])), "output_desc is empty"),
    (json.dumps(prototype(input_desc=[{"name": "x1", "format": ["ND"], "type": ["fp17"]}])), r"unknown type\(s\) \['fp17'\]"),
    (json.dumps(prototype(input_desc=[{"name": "x1", "format": ["ND", "ND"], "type": ["fp16"]}])), "equal length"),
    (json.dumps(prototype(input_desc=[{"name": "x 1", "format": ["ND"], "type": ["fp16"]}])), "identifier"),
    (json.dumps(prototype(input_desc=[{"name": "y", "format": ["ND"], "type": ["fp16"]}])), "unique"),
    (json.dumps(prototype(attr=[{"name": "scale", "param_type": "optional", "type": "float"}])), "default_value"),
    (json.dumps(prototype(attr=[{"name": "scale", "type": "double"}])), "type 'double'"),
    (json.dumps(prototype(input_desc=[{"name": "x1", "param_type": "maybe", "format": ["ND"], "type": ["fp16"]}])),
     "param_type 'maybe'"),
])
def test_invalid_prototypes(tmp_path, content, match):
    path = tmp_path / "op_info.json"
    path.write_text(content)
    with pytest.raises(OpDefError, match=match):
        load_op_info(path)


def test_missing_file():
    with pytest.raises(OpDefError, match="cannot read"):
        load_op_info("/nonexistent/op_info.json")


def test_require_checks_the_signature(tmp_path):
    path = tmp_path / "op_info.json"
    path.write_text(json.dumps(prototype(attr=[])))
    op = load_op_info(path)
    with pytest.raises(OpDefError, match="needs a required float attr 'scale'"):
        op.require(inputs=("x1", "x2"), outputs=("y",), attrs={"scale": "float"})
    with pytest.raises(OpDefError, match="must have inputs"):
        op.require(inputs=("a", "b"), outputs=("y",), attrs={})
