"""Operator prototypes: ``op_info.json`` in msopgen's JSON form, loaded and validated.

msopgen (``msopgen gen -i op_info.json -c ai_core-<soc> -out <dir>``, seed article section 2.3)
reads a JSON list of operators, each ``{"op": <OpType>, "language": "cpp", "input_desc": [...],
"output_desc": [...], "attr": [...]}``; a tensor entry has ``name``, ``param_type``
(required/optional/dynamic), ``format`` and ``type`` lists of equal length (one column per
supported combination); an attribute has ``name``, ``param_type``, ``type`` and, when optional,
``default_value``.

The op type is what the framework looks the operator up by; msopgen names the kernel function
after it in snake_case (FusedAddScale -> ``fused_add_scale``). A mismatch, like the seed
article's FusedAddScala typo (section 4.2), means the operator is never found: here it raises
with the closest name.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from fusekit.asc.names import snake_case

# msopgen dtype spellings -> fusekit dtype names
MSOPGEN_DTYPES = {
    "fp16": "float16", "float16": "float16", "half": "float16",
    "float": "float32", "fp32": "float32", "float32": "float32",
    "bf16": "bfloat16", "bfloat16": "bfloat16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
}
_PARAM_TYPES = ("required", "optional", "dynamic")
_ATTR_TYPES = ("float", "int", "bool", "str", "list_float", "list_int", "list_bool", "list_str")


class OpDefError(ValueError):
    """An op_info.json that msopgen would reject, or a kernel that does not match it."""


@dataclass(frozen=True)
class TensorDesc:
    name: str
    param_type: str
    formats: tuple[str, ...]
    dtypes: tuple[str, ...]  # fusekit dtype names, one per supported combination


@dataclass(frozen=True)
class AttrDesc:
    name: str
    param_type: str
    type: str
    default: object = None


@dataclass(frozen=True)
class OpDef:
    """A validated operator prototype."""

    op_type: str
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    attrs: tuple[AttrDesc, ...]
    source: str

    @property
    def kernel_name(self) -> str:
        """The kernel function name msopgen derives from the op type (snake_case)."""
        return snake_case(self.op_type)

    @property
    def dtypes(self) -> tuple[str, ...]:
        """The dtypes of the first input, in prototype order without repeats."""
        return tuple(dict.fromkeys(self.inputs[0].dtypes)) if self.inputs else ()

    def check_kernel_name(self, name: str) -> None:
        """Raise OpDefError unless ``name`` is this op's kernel name (or the op type itself)."""
        if name in (self.kernel_name, self.op_type):
            return
        close = difflib.get_close_matches(name, [self.kernel_name, self.op_type], n=1, cutoff=0.0)[0]
        raise OpDefError(f"kernel {name!r} does not match op type {self.op_type!r} in {self.source}: the framework looks "
                         f"the kernel up as {self.kernel_name!r}, so it would never be found. Did you mean {close!r}? "
                         "Rename the kernel or fix \"op\" in op_info.json")

    def require(self, inputs: tuple[str, ...], outputs: tuple[str, ...], attrs: dict[str, str]) -> None:
        """Raise OpDefError unless the prototype has exactly these inputs, outputs and required attrs."""
        have = ([t.name for t in self.inputs], [t.name for t in self.outputs])
        if have != (list(inputs), list(outputs)):
            raise OpDefError(f"{self.source}: {self.op_type} must have inputs {list(inputs)} and outputs {list(outputs)}, "
                             f"found {have[0]} and {have[1]}")
        for name, typ in attrs.items():
            attr = next((a for a in self.attrs if a.name == name), None)
            if attr is None or attr.type != typ or attr.param_type != "required":
                raise OpDefError(f"{self.source}: {self.op_type} needs a required {typ} attr {name!r}")


def load_op_info(path: "str | Path") -> OpDef:
    """Load and validate an msopgen ``op_info.json`` describing one operator.

    Raises:
        OpDefError: unreadable file, invalid JSON, or a field msopgen would reject (the message
            names the file and the field).
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise OpDefError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise OpDefError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}") from None
    ops = raw if isinstance(raw, list) else [raw]
    if len(ops) != 1 or not isinstance(ops[0], dict):
        raise OpDefError(f"{path}: expected a list holding one operator object, got {type(raw).__name__} of {len(ops)}")
    return _parse(ops[0], str(path))


def _parse(op: dict, source: str) -> OpDef:
    op_type = op.get("op")
    if not isinstance(op_type, str) or not re.fullmatch(r"[A-Z][A-Za-z0-9]*", op_type):
        raise OpDefError(f"{source}: \"op\" must be an UpperCamelCase op type like \"FusedAddScale\", got {op_type!r}")
    inputs = tuple(_tensor(t, f"{source}: input_desc[{i}]") for i, t in enumerate(_list(op, "input_desc", source)))
    outputs = tuple(_tensor(t, f"{source}: output_desc[{i}]") for i, t in enumerate(_list(op, "output_desc", source)))
    attrs = tuple(_attr(a, f"{source}: attr[{i}]") for i, a in enumerate(_list(op, "attr", source)))
    if not outputs:
        raise OpDefError(f"{source}: output_desc is empty; an operator needs at least one output")
    names = [t.name for t in inputs + outputs] + [a.name for a in attrs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise OpDefError(f"{source}: names must be unique, {sorted(dup)} repeat")
    columns = {len(t.dtypes) for t in inputs + outputs}
    if len(columns) != 1:
        raise OpDefError(f"{source}: every input and output must list the same number of type/format columns")
    return OpDef(op_type, inputs, outputs, attrs, source)


def _list(op: dict, key: str, source: str) -> list:
    value = op.get(key, [])
    if not isinstance(value, list):
        raise OpDefError(f"{source}: {key!r} must be a list")
    return value


def _tensor(t, where: str) -> TensorDesc:
    if not isinstance(t, dict) or not isinstance(t.get("name"), str) or not t["name"].isidentifier():
        raise OpDefError(f"{where}: needs a \"name\" that is an identifier")
    param_type = t.get("param_type", "required")
    if param_type not in _PARAM_TYPES:
        raise OpDefError(f"{where} ({t['name']}): param_type {param_type!r} is not one of {_PARAM_TYPES}")
    types, formats = t.get("type"), t.get("format")
    if not isinstance(types, list) or not types or not isinstance(formats, list) or len(formats) != len(types):
        raise OpDefError(f"{where} ({t['name']}): \"type\" and \"format\" must be non-empty lists of equal length")
    unknown = [x for x in types if x not in MSOPGEN_DTYPES]
    if unknown:
        raise OpDefError(f"{where} ({t['name']}): unknown type(s) {unknown}; use {sorted(MSOPGEN_DTYPES)}")
    return TensorDesc(t["name"], param_type, tuple(formats), tuple(MSOPGEN_DTYPES[x] for x in types))


def _attr(a, where: str) -> AttrDesc:
    if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not a["name"].isidentifier():
        raise OpDefError(f"{where}: needs a \"name\" that is an identifier")
    param_type, typ = a.get("param_type", "required"), a.get("type")
    if param_type not in ("required", "optional"):
        raise OpDefError(f"{where} ({a['name']}): param_type must be required or optional")
    if typ not in _ATTR_TYPES:
        raise OpDefError(f"{where} ({a['name']}): type {typ!r} is not one of {_ATTR_TYPES}")
    if param_type == "optional" and "default_value" not in a:
        raise OpDefError(f"{where} ({a['name']}): an optional attr needs a default_value")
    return AttrDesc(a["name"], param_type, typ, a.get("default_value"))

