"""`opkit new --from` a generated op_host, JSON or yaml entry reproduces the op (issue 11's round trip).

For the op-model matrix (tests/generate/test_op_model.py) and the torchair examples: the project generated
from the adopted spec has the same OpDef (inputs, outputs, attrs, columns, SoCs), the same msOpGen JSON and,
where the source states it, the same schema.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generate"))
from test_op_model import CASES as OP_MODEL_CASES  # noqa: E402

from opkit import msopgen  # noqa: E402
from opkit.adopt import adopt  # noqa: E402
from opkit.formats.opdef_cpp import SCHEMA_COMMENT  # noqa: E402
from opkit.generate.spec import load_spec  # noqa: E402

TORCHAIR_CASES = [
    ("my_op", "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor", {"dtypes": "float"}),
    ("my_inplace", "my_inplace(Tensor(a!) x, Tensor y) -> Tensor", {"dtypes": "float"}),
    ("my_inplace", "my_inplace(Tensor(a!) x, Tensor y) -> Tensor z", {"dtypes": "float"}),
]
CASES = OP_MODEL_CASES + TORCHAIR_CASES
IDS = [c[0] for c in OP_MODEL_CASES] + ["torchair_my_op", "torchair_my_inplace", "torchair_my_inplace_z"]

# What an OpDef or a JSON cannot state, so an op adopted from one alone has another (equivalent) schema:
# the Ascend C side has no None default, enum, SymInt, overload name, namespace or `Tensor!` spelling.
LOSSY = {
    "opt_attrs": "int? k=None is an OPTIONAL attr with default 0: read back as int k=0",
    "enum_default": "int reduction=Mean is an attr with default 1",
    "sym_str": "SymInt is an int attr",
    "npu_max": "the overload name (.dim) is not in the OpDef",
    "lib_norm": "the namespace and the Tensor! shorthand are not in the OpDef",
    "new_zeros_op": "keyword-only markers (*) are not in the OpDef",
    "list_dims": "SymInt is an int attr",
    "mylib_topk": "the namespace is not in the OpDef",
}
SCALAR_OPERANDS = {"scalar_op"}  # an msOpGen JSON cannot mark a .Scalar() input


def _size_rules(options: dict) -> dict:
    """The --output size rules a case gives (size:[...], size:ARG): no OpDef or JSON states an output's size,
    so, as `opkit new --from` says in its report, the user gives them again."""
    outputs = options.get("outputs", "")
    return {"outputs": outputs} if "size:" in str(outputs) else {}


def _files(project: Path) -> dict[str, object]:
    """Every generated file but opkit.json (which records how the op was adopted) and opkit's own copies;
    the msOpGen JSON with its dtypes as ge:: enums (msOpGen reads ``float`` and ``float32`` as one)."""
    files: dict[str, object] = {
        str(p.relative_to(project)): p.read_text()
        for p in sorted(project.rglob("*"))
        if p.is_file() and ".opkit" not in p.parts and p.name != "opkit.json" and p.parent.name != "msopgen"
    }
    files["msopgen"] = _json_columns(project)
    return files


def _op_host(project: Path) -> Path:
    (path,) = project.glob("*/op_host/*.cpp")
    return path


def _opdef(project: Path) -> str:
    text = _op_host(project).read_text()
    return text[text.index("namespace ops {") :]


def _json_columns(project: Path) -> list:
    """The msOpGen JSON with each dtype as its ge:: enum (``float`` and ``float32`` are one dtype)."""
    (document,) = json.loads(next((project / "msopgen").glob("*.json")).read_text())
    for d in document["input_desc"] + document["output_desc"]:
        d["type"] = [msopgen.DTYPES[t] for t in d["type"]]
    return document


_ORIGINALS: dict[tuple, Path] = {}


@pytest.fixture
def original_of(tmp_path_factory):
    """The project generated from a case, once per process (four tests adopt from each), copied for the test."""
    import shutil

    from opkit.generate import make_spec
    from opkit.generate.project import generate_project

    def get(name: str, schema: str, options: dict, into: Path) -> Path:
        key = (name, schema, tuple(sorted(options.items())))
        if key not in _ORIGINALS:
            _ORIGINALS[key] = generate_project(make_spec(name, schema=schema, **options), tmp_path_factory.mktemp("original") / name, msopgen_mode="builtin").path
        return Path(shutil.copytree(_ORIGINALS[key], into / name))

    return get


@pytest.mark.parametrize(("name", "schema", "options"), CASES, ids=IDS)
def test_op_host_round_trip(generate, original_of, tmp_path, name, schema, options):
    original = original_of(name, schema, options, tmp_path)
    spec = load_spec(original)
    adoption = adopt(str(_op_host(original)), style=spec.style, **_size_rules(options))
    assert adoption.spec.schema == spec.schema  # the schema opkit's op_host states, checked against its OpDef
    assert adoption.spec.name == name
    again = generate(spec=adoption.spec, dir="again")
    assert _files(again) == _files(original)  # OpDef, infer functions, kernel, JSON, yaml, Meta, MRE, test
    assert not adoption.skipped


@pytest.mark.parametrize(("name", "schema", "options"), CASES, ids=IDS)
def test_op_host_without_its_schema_comment(generate, original_of, tmp_path, name, schema, options):
    original = original_of(name, schema, options, tmp_path)
    spec = load_spec(original)
    host = _op_host(original)
    host.write_text(re.sub(rf"{re.escape(SCHEMA_COMMENT)}.*\n", "", host.read_text()))
    adoption = adopt(str(host), name=name, style=spec.style if spec.style != "custom-op" else None, **_size_rules(options))
    again = generate(spec=adoption.spec, dir="again")
    assert _opdef(again) == _opdef(original)  # inputs, outputs, attrs and defaults, columns, SoCs
    assert _json_columns(again) == _json_columns(original)
    assert not adoption.skipped
    if name in LOSSY:
        assert adoption.spec.schema != spec.schema
        # the schema read back is the OpDef's own: adopting its project again gives it unchanged
        host_again = _op_host(again)
        host_again.write_text(re.sub(rf"{re.escape(SCHEMA_COMMENT)}.*\n", "", host_again.read_text()))
        assert adopt(str(host_again), name=name, **_size_rules(options)).spec.schema == adoption.spec.schema
    else:
        assert adoption.spec.schema == spec.schema


@pytest.mark.parametrize(("name", "schema", "options"), CASES, ids=IDS)
def test_json_round_trip(generate, original_of, tmp_path, name, schema, options):
    original = original_of(name, schema, options, tmp_path)
    spec = load_spec(original)
    # a JSON names no SoC: the user gives it, as to msOpGen's -c
    adoption = adopt(str(next((original / "msopgen").glob("*.json"))), name=name, soc=",".join(spec.soc), **_size_rules(options))
    again = generate(spec=adoption.spec, dir="again")
    assert _json_columns(again) == _json_columns(original)
    if name in SCALAR_OPERANDS:
        assert _opdef(again) == _opdef(original).replace("\n            .Scalar()", "")
    else:
        assert _opdef(again) == _opdef(original)
    assert (adoption.spec.schema == spec.schema) == (name not in set(LOSSY) | SCALAR_OPERANDS)
    if spec.signature.fresh_returns:  # output sizes are listed as not carried over
        assert any("does not state" in n for n in adoption.notes)


@pytest.mark.parametrize(("name", "schema", "options"), [c for c in CASES if c[2].get("style", "op-plugin") == "op-plugin"], ids=[i for i, c in zip(IDS, CASES) if c[2].get("style", "op-plugin") == "op-plugin"])
def test_yaml_entry_round_trip(generate, original_of, tmp_path, name, schema, options):
    original = original_of(name, schema, options, tmp_path)
    spec = load_spec(original)
    # a yaml entry states no dtype column, SoC or OpType: the user gives those as to `opkit new`
    given = {k: v for k, v in options.items() if k in ("dtypes", "soc", "op_type", "outputs")}
    adoption = adopt(str(original / "op_plugin" / "op_plugin_functions.yaml"), op=spec.signature.full_name, **given)
    assert adoption.spec.schema == spec.schema
    again = generate(spec=adoption.spec, dir="again")
    assert _files(again) == _files(original)
    assert load_spec(again) == adoption.spec  # the kept entry reads back from opkit.json
