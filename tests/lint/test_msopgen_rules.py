"""J rules: msOpGen prototype JSON, alone and against the op's PyTorch schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from opkit import msopgen
from opkit.lint import lint
from opkit.signature import parse_schema

MY_OP = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
MY_INPLACE = "my_inplace(Tensor(a!) x, Tensor y) -> Tensor z"

# torchair's documented prototypes (msopgen.md §2), written by hand as a user would.
MY_OP_JSON = [
    {
        "op": "MyOp",
        "language": "cpp",
        "input_desc": [
            {"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},
            {"name": "y", "param_type": "optional", "format": ["ND", "ND"], "type": ["fp16", "float"]},
            {"name": "z", "param_type": "dynamic", "format": ["ND"], "type": ["fp16", "float"]},
        ],
        "output_desc": [{"name": "out", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]}],
        "attr": [{"name": "attr1", "param_type": "required", "type": "float"}, {"name": "attr2", "param_type": "required", "type": "int"}],
    }
]
MY_INPLACE_JSON = {
    "op": "MyInplace",
    "input_desc": [
        {"name": "x", "param_type": "required", "format": "ND", "type": "float16"},
        {"name": "y", "param_type": "required", "format": "ND", "type": "float16"},
    ],
    "output_desc": [
        {"name": "x", "param_type": "required", "format": "ND", "type": "float16"},
        {"name": "z", "param_type": "required", "format": "ND", "type": "float16"},
    ],
}


def write_json(tmp_path: Path, data, name: str = "op.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
    return str(path)


def line_of(path: str, needle: str) -> int:
    """1-based line of the first line of ``path`` containing ``needle``."""
    return next(i for i, line in enumerate(Path(path).read_text().splitlines(), start=1) if needle in line)


def found(result, prefix: str = "J") -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings if f.code.startswith(prefix)]


def codes(result) -> list[str]:
    return [f.code for f in result.findings]


def message(result, code: str) -> str:
    return " | ".join(f.message for f in result.findings if f.code == code)


def variant(edit) -> list:
    data = copy.deepcopy(MY_OP_JSON)
    edit(data[0])
    return data


def test_torchair_examples_lint_clean(tmp_path):
    result = lint([write_json(tmp_path, MY_OP_JSON, "my_op.json"), write_json(tmp_path, MY_INPLACE_JSON, "my_inplace.json")], schemas=[MY_OP, MY_INPLACE])
    assert result.findings == ()
    assert result.files == 2


def test_generated_prototypes_lint_clean(tmp_path):
    schemas = [MY_OP, MY_INPLACE, "pool(Tensor x, int[2] k=[1,1], bool ceil=False, *, str mode=\"mean\") -> (Tensor, Tensor)"]
    protos = [msopgen.prototype_from_signature(parse_schema(s)).to_json() for s in schemas]
    assert lint([write_json(tmp_path, protos)], schemas=schemas).findings == ()


# -- J0xx: one file --------------------------------------------------------------------------------


def test_j001_op_missing(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op.pop("op")))])
    assert found(result) == [("J001", 2)]


def test_j002_op_not_upper_camel(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op.update(op="my_op")))])
    assert found(result) == [("J002", 3)]
    assert result.findings[0].hint == "write 'MyOp'"


def test_j003_invalid_names(tmp_path):
    def edit(op):
        op["input_desc"][1]["name"] = "1y"
        del op["attr"][0]["name"]

    result = lint([write_json(tmp_path, variant(edit))])
    assert [c for c, _ in found(result)] == ["J003", "J003"]
    assert "'1y' is not a C identifier" in message(result, "J003") and "has no name" in message(result, "J003")


def test_j004_param_type_invalid(tmp_path):
    def edit(op):
        op["input_desc"][0]["param_type"] = "req"
        op["attr"][0]["param_type"] = "dynamic"  # valid for tensors only

    result = lint([write_json(tmp_path, variant(edit))])
    assert [c for c, _ in found(result)] == ["J004", "J004"]
    assert "'req'" in message(result, "J004") and "attr 'attr1' param_type is 'dynamic'" in message(result, "J004")


def test_j005_descriptor_without_format_is_dropped(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op["output_desc"][0].pop("format")))])
    assert codes(result) == ["J005"]
    assert "'out' has no format" in message(result, "J005")


def test_j006_all_dtypes_unknown_and_j007_some(tmp_path):
    def edit(op):
        op["input_desc"][0]["type"] = ["FP16", "float64"]
        op["input_desc"][1]["type"] = ["fp16", "int4"]

    result = lint([write_json(tmp_path, variant(edit))])
    assert sorted(codes(result)) == ["J006", "J007"]
    assert "'FP16', 'float64'" in message(result, "J006")
    assert "'int4'" in message(result, "J007")


def test_j008_unknown_format(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op["input_desc"][0].update(format=["ND", "nd"])))])
    assert codes(result) == ["J008"]
    assert "'nd'" in message(result, "J008")


def test_j009_type_format_length_and_j010_columns(tmp_path):
    def edit(op):
        op["input_desc"][0]["type"] = ["fp16", "float", "bf16"]  # 3 types, 2 formats
        op["input_desc"][1]["type"] = ["fp16", "float", "bf16"]
        op["input_desc"][1]["format"] = ["ND"]  # broadcasts to 3 columns, others have 2

    result = lint([write_json(tmp_path, variant(edit))])
    assert codes(result) == ["J009", "J010"]
    assert "3 types but 2 formats" in message(result, "J009")
    assert message(result, "J010") == "op 'MyOp': input_desc 'y' has 3 dtype/format columns but input_desc 'z' has 2"


def test_j010_quiet_when_length_one_lists_broadcast(tmp_path):
    assert lint([write_json(tmp_path, MY_INPLACE_JSON)]).findings == ()


def test_j011_duplicate_descriptor_names(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op["input_desc"][1].update(name="x")))])
    assert "J011" in codes(result)
    assert "first at line" in message(result, "J011")
    # An output named like an input is how an in-place op is written.
    assert "J011" not in codes(lint([write_json(tmp_path, MY_INPLACE_JSON, "inplace.json")]))


def test_j012_attr_unknown_type_with_ini_hint(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op["attr"][1].update(type="listInt")))])
    assert codes(result) == ["J012"]
    assert result.findings[0].hint == "write 'list_int' (the JSON spelling)"


def test_j013_attr_default_invalid(tmp_path):
    def edit(op):
        op["attr"][0].update(param_type="optional", default_value='"mean"')
        op["attr"][1].update(param_type="optional", default_value="1" * 1025)

    result = lint([write_json(tmp_path, variant(edit))])
    assert codes(result) == ["J013", "J013"]
    assert "forbidden characters '\"'" in message(result, "J013") and "1025 characters" in message(result, "J013")


def test_j014_optional_attr_without_default(tmp_path):
    result = lint([write_json(tmp_path, variant(lambda op: op["attr"][1].update(param_type="optional")))])
    assert codes(result) == ["J014"]
    ok = variant(lambda op: op["attr"][1].update(param_type="optional", default_value="2"))
    assert lint([write_json(tmp_path, ok, "ok.json")]).findings == ()


def test_findings_sit_on_the_json_line(tmp_path):
    text = '[\n  {\n    "op": "MyOp",\n    "input_desc": [\n      {"name": "x", "param_type": "required",\n       "format": ["ND"], "type": ["fp16", "FP32"]}\n    ],\n    "output_desc": []\n  }\n]\n'
    result = lint([write_json(tmp_path, text)])
    assert found(result) == [("J007", 6)]


# -- J1xx: against the schema ----------------------------------------------------------------------


def test_j101_inputs_out_of_order(tmp_path):
    path = write_json(tmp_path, variant(lambda op: op["input_desc"].reverse()))
    result = lint([path], schemas=[MY_OP])
    assert found(result, "J1") == [("J101", line_of(path, '"input_desc"'))]
    assert "[('z', 'dynamic'), ('y', 'optional'), ('x', 'required')]" in message(result, "J101")


def test_j102_attr_type_and_default(tmp_path):
    path = write_json(tmp_path, MY_OP_JSON)
    result = lint([path], schemas=["my_op(Tensor x, Tensor? y, Tensor[] z, int attr1, int attr2=1) -> Tensor"])
    assert found(result, "J1") == [("J102", line_of(path, '"attr"'))]
    assert "('attr1', 'int', 'required', None), ('attr2', 'int', 'optional', '1')" in message(result, "J102")


def test_j102_defaults_compare_as_values(tmp_path):
    def edit(op):
        op["attr"][1].update(param_type="optional", default_value="[1, 1]", type="list_int")

    schema = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int[] attr2=[1,1]) -> Tensor"
    assert lint([write_json(tmp_path, variant(edit))], schemas=[schema]).findings == ()


def test_j103_inplace_output_not_redeclared(tmp_path):
    data = copy.deepcopy(MY_INPLACE_JSON)
    data["output_desc"] = data["output_desc"][1:]
    path = write_json(tmp_path, data)
    result = lint([path], schemas=[MY_INPLACE])
    assert found(result, "J1") == [("J103", line_of(path, '"output_desc"'))]
    assert "['z'] but the schema gives ['x', 'z']" in message(result, "J103")


def test_j1xx_match_custom_op_schemas(tmp_path):
    source = tmp_path / "ops.py"
    source.write_text(
        "import torch\n\n@torch.library.custom_op('mylib::my_inplace', mutates_args=('x',))\n"
        "def my_inplace(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:\n    ...\n\n"
        "@my_inplace.register_fake\ndef _(x, y):\n    return torch.empty_like(y)\n"
    )
    data = copy.deepcopy(MY_INPLACE_JSON)
    path = write_json(tmp_path, data)
    result = lint([path, str(source)])
    # The custom_op's unnamed return is 'out', the JSON calls it 'z'.
    assert found(result, "J1") == [("J103", line_of(path, '"output_desc"'))]
    assert "['x', 'out']" in message(result, "J103")


def test_j1xx_ignore_other_ops(tmp_path):
    assert lint([write_json(tmp_path, MY_INPLACE_JSON)], schemas=[MY_OP]).findings == ()


# -- input errors ----------------------------------------------------------------------------------


def test_invalid_json_is_e002_and_other_files_still_lint(tmp_path, run_opkit):
    broken = write_json(tmp_path, '[\n  {"op": "MyOp",\n  }\n]\n', "broken.json")
    other = write_json(tmp_path, variant(lambda op: op.update(op="my_op")), "other.json")
    result = lint([broken, other])
    assert [(f.code, f.path, f.line) for f in result.findings] == [("E002", broken, 3), ("J002", other, 3)]
    code, output = run_opkit("lint", broken, other)
    assert code == 2
    assert "E002" in output and "J002" in output


@pytest.mark.parametrize(("data", "expected"), [("3", "top level is a scalar"), ('[{"op": "MyOp"}, 7]', "op 1 is a scalar")])
def test_unexpected_structure_is_e003(tmp_path, data, expected):
    result = lint([write_json(tmp_path, data)])
    assert [f.code for f in result.findings] == ["E003"]
    assert expected in result.findings[0].message
    assert result.exit_code() == 2


# -- what a user reads: each J0xx finding's line, message and hint, for a prototype written by hand ----

DEFECTS = """\
[
  {
    "op": "my_op",
    "input_desc": [
      {"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "FP32"]},
      {"name": "x", "param_type": "req", "format": ["ND", "nd", "NCHW"], "type": ["fp16", "float"]},
      {"name": "1y", "format": ["ND"], "type": ["FP16", "float64"]},
      {"name": "w", "param_type": "optional", "type": ["fp16"]}
    ],
    "output_desc": [
      {"name": "out", "param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]},
      {"param_type": "dynamic", "format": "ND", "type": ["float", "fp16"]}
    ],
    "attr": [
      {"name": "k", "param_type": "optional", "type": "listInt", "default_value": [1, 2]},
      {"name": "mode", "param_type": "optional", "type": "string", "default_value": "(mean);"},
      {"name": "p", "param_type": "optional", "type": "float"},
      {"name": "q", "param_type": "dynamic", "type": "vector"},
      {"name": "r", "type": "int", "param_type": "required"}
    ]
  },
  {
    "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": []}],
    "output_desc": [{"name": "v", "param_type": "required"}],
    "attr": [{"name": "s", "type": "int", "param_type": "optional", "default_value": "LONG"}, {"name": "t", "param_type": "required"}]
  },
  {"op": "My-Op", "input_desc": [], "output_desc": []}
]
"""


def test_every_j0xx_finding_as_the_user_reads_it(tmp_path):
    path = write_json(tmp_path, DEFECTS.replace("LONG", "9" * 1025))
    result = lint([path])
    attr_types = "int, float, bool, string, type, list_int, list_float, list_bool, list_list_int, list_string, list_type, tensor, list_tensor"
    assert [(f.code, f.line, f.message, f.hint) for f in result.findings] == [
        ("J002", 3, "op name 'my_op' is not UpperCamelCase", "write 'MyOp'"),
        ("J007", 5, "op 'my_op': input_desc 'x' has unknown dtypes 'FP32'; msOpGen drops them", None),
        ("J004", 6, "op 'my_op': input_desc 'x' param_type is 'req'; msOpGen uses 'required'", "one of required, optional, dynamic"),
        ("J008", 6, "op 'my_op': input_desc 'x' has unknown formats 'nd'; the generated C++ does not compile", None),
        ("J009", 6, "op 'my_op': input_desc 'x' has 2 types but 3 formats", None),
        ("J011", 6, "op 'my_op': input_desc declares 'x' again (first at line 5); msOpGen keeps the last", None),
        ("J003", 7, "op 'my_op': an item of input_desc '1y' is not a C identifier", None),
        ("J004", 7, "op 'my_op': input_desc '1y' param_type is missing; msOpGen uses 'required'", "one of required, optional, dynamic"),
        ("J006", 7, "op 'my_op': input_desc '1y' has no known dtype ('FP16', 'float64')", None),
        ("J005", 8, "op 'my_op': input_desc 'w' has no format; msOpGen drops it silently", None),
        ("J010", 11, "op 'my_op': output_desc 'out' has 3 dtype/format columns but input_desc 'x' has 2", None),
        ("J003", 12, "op 'my_op': an item of output_desc has no name", None),
        ("J012", 15, "op 'my_op': attr 'k' has type 'listInt'; msOpGen drops it silently", "write 'list_int' (the JSON spelling)"),
        ("J013", 15, "op 'my_op': attr 'k' default_value is a JSON array, which msOpGen pastes into C++ as a Python list: it does not compile", 'write the string "{1, 2}"'),
        ("J013", 16, "op 'my_op': attr 'mode' default_value contains forbidden characters '(', ')', ';'", None),
        ("J014", 17, "op 'my_op': optional attr 'p' has no default_value", None),
        ("J004", 18, "op 'my_op': attr 'q' param_type is 'dynamic'; msOpGen uses 'required'", "one of required, optional"),
        ("J012", 18, "op 'my_op': attr 'q' has type 'vector'; msOpGen drops it silently", f"one of {attr_types}"),
        ("J001", 22, "op 1 has no 'op' name", None),
        ("J006", 23, "op 1: input_desc 'x' has no known dtype (an empty list)", None),
        ("J005", 24, "op 1: output_desc 'v' has no type or format; msOpGen drops it silently", None),
        ("J012", 25, "op 1: attr 't' has no type; msOpGen drops it silently", f"one of {attr_types}"),
        ("J013", 25, "op 1: attr 's' default_value is 1025 characters, over 1024", None),
        ("J003", 27, "op name 'My-Op' is not a C identifier", None),
    ]  # fmt: skip
    # 1024 characters is the most msOpGen takes: only the typeless attr on that line is left
    assert [f.code for f in lint([write_json(tmp_path, DEFECTS.replace("LONG", "9" * 1024), "limit.json")]).findings if f.line == 25] == ["J012"]


DRIFT = """\
[
  {
    "op": "MyOp",
    "input_desc": [
      {"name": "y", "param_type": "optional", "format": ["ND"], "type": ["fp16"]},
      {"name": "x", "format": ["ND"], "type": ["fp16"]}
    ],
    "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
    "attr": [{"name": "k", "param_type": "optional", "type": "int", "default_value": "2"}]
  },
  {
    "op": "MyOther",
    "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
    "output_desc": [{"name": "out", "param_type": "required", "format": ["ND"], "type": ["fp16"]}]
  }
]
"""


def test_every_j1xx_finding_as_the_user_reads_it(tmp_path):
    my_op, my_other = "my_op(Tensor x, Tensor? y, int k=1) -> Tensor", "my_other(Tensor x, float a) -> Tensor"
    result = lint([write_json(tmp_path, DRIFT)], schemas=[my_op, my_other])
    assert [(f.code, f.line, f.message) for f in result.findings if f.code.startswith("J1")] == [
        ("J101", 4, f"MyOp: input_desc (name, param_type) is [('y', 'optional'), ('x', 'required')] but the schema gives [('x', 'required'), ('y', 'optional')] ({my_op})"),
        ("J103", 8, f"MyOp: output_desc names are ['y'] but the schema gives ['out'] ({my_op})"),
        ("J102", 9, f"MyOp: attr (name, type, param_type, default) is [('k', 'int', 'optional', '2')] but the schema gives [('k', 'int', 'optional', '1')] ({my_op})"),
        ("J102", 11, f"MyOther: attr (name, type, param_type, default) is [] but the schema gives [('a', 'float', 'required', None)] ({my_other})"),  # no attr: the op's line
    ]  # fmt: skip


def test_j1xx_compare_with_the_default_overload_and_skip_what_msopgen_cannot_declare(tmp_path):
    path = write_json(tmp_path, MY_OP_JSON)
    out = "my_op.out(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2, *, Tensor(a!) out) -> Tensor(a!)"
    assert [f.code for f in lint([path], schemas=[out, MY_OP]).findings] == ["S108"]
    assert sorted(f.code for f in lint([path], schemas=[out]).findings) == ["J101", "S108"]  # the out overload alone: its out is an input too
    # a Tensor?[] argument has no msOpGen input kind (S203 says so): no J1xx comparison
    assert [f.code for f in lint([path], schemas=["my_op(Tensor x, Tensor?[] y, float attr1) -> Tensor"]).findings] == ["S203"]


BROADCAST = """\
[
  {
    "op": "MyDropped",
    "input_desc": [{"name": "x", "param_type": "required", "type": ["fp16"]}],
    "output_desc": [{"name": "out", "param_type": "required", "type": ["fp16"]}]
  },
  {
    "op": "MyOp",
    "input_desc": [
      {"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},
      {"name": "y", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16"]},
      {
        "name": "z",
        "param_type": "mandatory",
        "format": ["ND", "ND", "ND"],
        "type": ["fp16", "float", "bf16"]
      }
    ],
    "output_desc": [{"name": "out", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]}],
    "attr": [
      {"name": "k", "param_type": "optional", "type": "int", "default_value": 1},
      {"name": "b", "param_type": "optional", "type": "bool", "default_value": "True"}
    ]
  }
]
"""


def test_columns_broadcast_key_lines_and_default_values(tmp_path):
    """An op without kept descriptors does not stop J010 for the next; one type broadcasts to two formats; J004 sits on
    the param_type line of a multi-line descriptor; a number default and "True" compare as values."""
    schema = "my_op(Tensor x, Tensor y, Tensor z, int k=1, bool b=True) -> Tensor"
    result = lint([write_json(tmp_path, BROADCAST)], schemas=[schema], use_cache=False)
    assert [(f.code, f.line) for f in result.findings] == [("J005", 4), ("J005", 5), ("J101", 9), ("J010", 12), ("J004", 14)]
    assert message(result, "J010") == "op 'MyOp': input_desc 'z' has 3 dtype/format columns but input_desc 'x' has 2"


# -- each finding on the line of the key at fault, in an object written over several lines ------------

SPREAD = """\
[
  {
    "op": "1Op",
    "input_desc": [
      {"param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]},
      {"name": "x", "param_type": "required", "format": ["ND", "nd", "NHWC1"], "type": ["fp16", "FP32", "float64"]},
      {"name": "x", "param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]},
      {
        "name": "w",
        "param_type": "required",
        "format": ["ND", "ND", "ND"],
        "type": ["FP16", "int4", "float64"]
      }
    ],
    "output_desc": [
      {"name": "y", "param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]},
      {"name": "y", "param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]}
    ],
    "attr": [
      {"name": "a", "param_type": "required", "type": "int"},
      {
        "name": "k",
        "param_type": "optional",
        "type": "list_int",
        "default_value": [1, 2]
      },
      {
        "name": "2m",
        "param_type": "optional",
        "type": "string",
        "default_value": "(x)"
      },
      {
        "name": "s",
        "param_type": "optional",
        "type": "int",
        "default_value": "LONG"
      },
      {
        "param_type": "required",
        "type": "vector"
      }
    ]
  },
  {
    "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
    "op": "",
    "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}]
  }
]
"""


def test_findings_sit_on_the_line_of_the_key_at_fault(tmp_path):
    result = lint([write_json(tmp_path, SPREAD.replace("LONG", "9" * 1025))])
    attr_types = "int, float, bool, string, type, list_int, list_float, list_bool, list_list_int, list_string, list_type, tensor, list_tensor"
    assert [(f.code, f.line, f.op, f.message, f.hint) for f in result.findings] == [
        ("J003", 3, "1Op", "op name '1Op' is not a C identifier", None),
        ("J003", 5, "1Op", "op '1Op': an item of input_desc has no name", None),
        ("J007", 6, "1Op", "op '1Op': input_desc 'x' has unknown dtypes 'FP32', 'float64'; msOpGen drops them", None),
        ("J008", 6, "1Op", "op '1Op': input_desc 'x' has unknown formats 'nd', 'NHWC1'; the generated C++ does not compile", None),
        ("J011", 7, "1Op", "op '1Op': input_desc declares 'x' again (first at line 6); msOpGen keeps the last", None),
        ("J006", 12, "1Op", "op '1Op': input_desc 'w' has no known dtype ('FP16', 'int4', 'float64')", None),
        ("J011", 17, "1Op", "op '1Op': output_desc declares 'y' again (first at line 16); msOpGen keeps the last", None),
        ("J013", 25, "1Op", "op '1Op': attr 'k' default_value is a JSON array, which msOpGen pastes into C++ as a Python list: it does not compile", 'write the string "{1, 2}"'),
        ("J003", 28, "1Op", "op '1Op': an item of attr '2m' is not a C identifier", None),
        ("J013", 31, "1Op", "op '1Op': attr '2m' default_value contains forbidden characters '(', ')'", None),
        ("J013", 37, "1Op", "op '1Op': attr 's' default_value is 1025 characters, over 1024", None),
        ("J003", 39, "1Op", "op '1Op': an item of attr has no name", None),
        ("J012", 41, "1Op", "op '1Op': attr without a name (line 39) has type 'vector'; msOpGen drops it silently", f"one of {attr_types}"),
        ("J001", 47, None, "op 1 has no 'op' name", None),
    ]  # fmt: skip


def test_j1xx_pair_only_new_ops_and_each_json_op(tmp_path):
    # an official: (ATen) op of the same msOpGen name is not what the JSON describes
    yaml_path = tmp_path / "op_plugin_functions.yaml"
    yaml_path.write_text("all_version: [v2.1]\nofficial:\n  - func: my_op(Tensor self, Tensor other) -> Tensor\n    op_api: all_version\nautograd:\ncustom:\nsymint:\nquant:\n")
    json_path = write_json(tmp_path, MY_OP_JSON)
    assert [f.code for f in lint([str(yaml_path), json_path]).findings if f.code.startswith("J")] == []
    # an op msOpGen cannot declare (S203) does not end the comparison of the next op
    other = {"op": "MyOther", "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
             "output_desc": [{"name": "out", "param_type": "required", "format": ["ND"], "type": ["fp16"]}]}  # fmt: skip
    schemas = ["my_op(Tensor x, Tensor?[] y, float attr1) -> Tensor", "my_other(Tensor x, float a) -> Tensor"]
    result = lint([write_json(tmp_path, [*MY_OP_JSON, other], "two.json")], schemas=schemas)
    assert sorted((f.code, f.op) for f in result.findings) == [("J102", "MyOther"), ("S203", "my_op")]


@pytest.mark.parametrize(
    ("attr", "fires"),
    [
        ({"name": "k", "type": "int"}, False),  # no param_type: msOpGen takes it as required (msopgen.md §1)
        ({"name": "k", "type": "int", "param_type": "optional", "default_value": "1"}, True),
    ],
)
def test_j102_missing_param_type_is_required(tmp_path, attr, fires):
    data = [{"op": "MyOp", "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
             "output_desc": [{"name": "out", "param_type": "required", "format": ["ND"], "type": ["fp16"]}], "attr": [attr]}]  # fmt: skip
    result = lint([write_json(tmp_path, data)], schemas=["my_op(Tensor x, int k) -> Tensor"])
    assert [f.code for f in result.findings if f.code.startswith("J1")] == (["J102"] if fires else [])


def test_j102_a_default_compares_as_the_cpp_value_msopgen_pastes(tmp_path):
    # msOpGen pastes default_value into C++ verbatim: "- 1" is -1 there, the schema's k=-1
    data = [{"op": "MyOp", "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
             "output_desc": [{"name": "out", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],
             "attr": [{"name": "k", "param_type": "optional", "type": "int", "default_value": "- 1"}]}]  # fmt: skip
    assert lint([write_json(tmp_path, data)], schemas=["my_op(Tensor x, int k=-1) -> Tensor"]).findings == ()


@pytest.mark.parametrize(
    ("descriptors", "expected"),
    [
        # the descriptor at fault has no name (J003 reports that): say so and where it is
        ('{"name": "x", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},\n'
         '    {"name": "w", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},\n'
         '    {"param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]}',
         "op 'MyOp': input_desc without a name (line 6) has 3 dtype/format columns but input_desc 'x' has 2"),
        # the one the majority is named after has none
        ('{"param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},\n'
         '    {"name": "w", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]},\n'
         '    {"name": "v", "param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float", "bf16"]}',
         "op 'MyOp': input_desc 'v' has 3 dtype/format columns but input_desc without a name (line 4) has 2"),
    ],
)
def test_j010_names_a_nameless_descriptor_by_its_line(tmp_path, descriptors, expected):
    text = ('[{\n  "op": "MyOp",\n  "input_desc": [\n    ' + descriptors + '\n  ],\n'
            '  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "float"]}]\n}]\n')  # fmt: skip
    result = lint([write_json(tmp_path, text)])
    assert message(result, "J010") == expected


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ('{"param_type": "req", "format": ["ND"], "type": ["fp16"]}', ("J004", "op 'MyOp': input_desc without a name (line 5) param_type is 'req'; msOpGen uses 'required'")),
        ('{"param_type": "required", "type": ["fp16"]}', ("J005", "op 'MyOp': input_desc without a name (line 5) has no format; msOpGen drops it silently")),
        ('{"param_type": "required", "format": ["ND"], "type": ["FP16"]}', ("J006", "op 'MyOp': input_desc without a name (line 5) has no known dtype ('FP16')")),
        ('{"param_type": "required", "format": ["ND", "ND"], "type": ["fp16", "FP32"]}',
         ("J007", "op 'MyOp': input_desc without a name (line 5) has unknown dtypes 'FP32'; msOpGen drops them")),
        ('{"param_type": "required", "format": ["nd"], "type": ["fp16"]}',
         ("J008", "op 'MyOp': input_desc without a name (line 5) has unknown formats 'nd'; the generated C++ does not compile")),
        ('{"param_type": "required", "format": ["ND", "ND", "ND"], "type": ["fp16", "float"]}', ("J009", "op 'MyOp': input_desc without a name (line 5) has 2 types but 3 formats")),
    ],
)
def test_a_nameless_descriptor_is_named_by_its_line(tmp_path, item, expected):
    text = ('[{\n  "op": "MyOp",\n  "input_desc": [\n    {"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]},\n    ' + item + '\n  ],\n'
            '  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}]\n}]\n')  # fmt: skip
    result = lint([write_json(tmp_path, text)])
    assert [(f.code, f.message) for f in result.findings if f.code not in ("J003", "J010")] == [expected]


@pytest.mark.parametrize(
    ("attr", "expected"),
    [
        ('{"param_type": "optional", "type": "int", "default_value": "(1)"}', ("J013", "op 'MyOp': attr without a name (line 6) default_value contains forbidden characters '(', ')'")),
        ('{"param_type": "optional", "type": "int"}', ("J014", "op 'MyOp': optional attr without a name (line 6) has no default_value")),
    ],
)
def test_a_nameless_attr_is_named_by_its_line(tmp_path, attr, expected):
    text = ('[{\n  "op": "MyOp",\n  "input_desc": [{"name": "x", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],\n'
            '  "output_desc": [{"name": "y", "param_type": "required", "format": ["ND"], "type": ["fp16"]}],\n  "attr": [\n    ' + attr + '\n  ]\n}]\n')  # fmt: skip
    result = lint([write_json(tmp_path, text)])
    assert [(f.code, f.message) for f in result.findings if f.code != "J003"] == [expected]
