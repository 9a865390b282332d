"""User values reach the templates as data: Jinja and cookiecutter syntax comes out byte for byte, or is refused."""

from __future__ import annotations

import ast
import json
import os

import pytest
import yaml

# Each would change the output (or crash) if a user value were ever rendered as a template.
PAYLOADS = [
    "{{7*7}}",
    "{{cycler.__init__.__globals__.os.environ.HOME}}",
    "{%",
    "{#",
    "{% raw %}",
    "{%- endraw -%}",
    "{{ cookiecutter.name }}",
    "%}}#}",
]


def _python_default(path, function: str, parameter: str):
    """The default of ``parameter`` in ``def function(...)`` of a generated Python file, as a value."""
    tree = ast.parse(path.read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    positional = fn.args.posonlyargs + fn.args.args
    pairs = list(zip(positional[len(positional) - len(fn.args.defaults) :], fn.args.defaults))
    pairs += [(a, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
    return next(ast.literal_eval(d) for a, d in pairs if a.arg == parameter)


@pytest.mark.parametrize("style", ["op-plugin", "custom-op"])
@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_string_default_comes_out_verbatim_in_every_file(tmp_path, run_opkit, payload, style):
    schema = f'my_op(Tensor x, str s="{payload}") -> Tensor'
    target = tmp_path / "p"
    code, output = run_opkit("new", "my_op", "--schema", schema, "--style", style, "-o", str(target), "--no-verify", "--msopgen", "builtin")
    assert code == 0, output
    assert schema in output
    assert json.loads((target / "opkit.json").read_text())["schema"] == schema
    [attr] = json.loads((target / "msopgen" / "my_op.json").read_text())[0]["attr"]
    assert attr["default_value"] == payload
    assert f".String({json.dumps(payload)})" in (target / "MyOp" / "op_host" / "my_op.cpp").read_text()
    function = "my_op_meta" if style == "op-plugin" else "my_op"
    assert _python_default(target / "meta" / "my_op_meta.py", function, "s") == payload
    assert schema in (target / "README.md").read_text()
    if style == "op-plugin":
        assert yaml.safe_load((target / "op_plugin" / "op_plugin_functions.yaml").read_text())["custom"][0]["func"] == schema
    everything = "".join(p.read_text() for p in target.rglob("*") if p.is_file())
    assert "49" not in everything.replace(payload, "")
    assert os.environ.get("HOME", "/root") not in everything


FIELDS = [
    ("NAME", ["{{7*7}}"], "not an identifier"),
    ("--namespace", ["my_op", "--style", "custom-op", "--namespace", "{{7*7}}"], "namespace"),
    ("--vendor", ["my_op", "--vendor", "{{cookiecutter.name}}"], "vendor name"),
    ("--out-like", ["my_op", "--out-like", "{{7*7}}"], "--out-like"),
    ("--output size", ["my_op", "--output", "out=size:[{{7*7}}]"], "'{{7*7}}' is not ARG.N"),
    ("--dtypes", ["my_op", "--dtypes", "float,{%"], "unknown msOpGen dtype '{%'"),
    ("--formats", ["my_op", "--formats", "{{7*7}}"], "unknown msOpGen format '{{7*7}}'"),
    ("--soc", ["my_op", "--soc", "{#"], "unknown SoC version '{#'"),
    ("--style", ["my_op", "--style", "{{7*7}}"], "'{{7*7}}' is not one of"),
    ("argument name", ["my_op", "--schema", "my_op(Tensor x, int {{a}}) -> Tensor"], "{{a}}"),
]


@pytest.mark.parametrize(("field", "args", "message"), FIELDS, ids=[f for f, _, _ in FIELDS])
def test_template_syntax_in_an_identifier_field_is_refused_verbatim(tmp_path, run_opkit, field, args, message):
    code, output = run_opkit("new", *args, "-o", str(tmp_path / "p"), "--no-verify", "--msopgen", "builtin")
    assert code == 2
    assert message in output and "49" not in output
    assert "Traceback" not in output
    assert not (tmp_path / "p").exists()
