"""A lint imports only what its inputs need: the rule modules of their kinds, and no torchgen for the common schemas.

Which module's rules can fire on which kinds of input is a table (``opkit.lint.rules.RULE_MODULES``);
the engine runs only the rules of the modules its inputs need, even in a process that imported all of
them, so the catalogue test (every example fires its rule) checks the table too. Here: the table
covers every rule, a fresh process imports no more than it says, and the result cache still tells
selections and rules registered from outside opkit apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opkit.lint import Selection, lint, load_rules
from opkit.lint.registry import RULES, Rule
from opkit.lint.rules import RULE_MODULES, modules_for
from opkit.lint.finding import Severity

ROOT = Path(__file__).resolve().parents[2]

YAML = """\
official:
  - func: argsort.dimname(Tensor self, Dimname dim, bool descending=False) -> Tensor
    op_api: [v2.1, v2.2]
  - func: arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
    op_api: all_version
  - func: __ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
    op_api: all_version
custom:
  - func: my_op_(Tensor(a!) self) -> Tensor(a!)
    op_api: all_version
"""

PROBE = (
    "import json, sys\n"
    "from opkit.lint import lint\n"
    "result = lint(sys.argv[1:], use_cache=False)\n"
    "print(json.dumps({'codes': sorted({f.code for f in result.findings}),"
    " 'modules': sorted(m for m in sys.modules if m.startswith('opkit.lint.rules.') and m.count('.') == 3),"
    " 'torchgen': 'torchgen' in sys.modules}))\n"
)


def _probe(*paths: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPKIT_NO_CACHE": "1"}
    done = subprocess.run([sys.executable, "-c", PROBE, *map(str, paths)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_rule_comes_from_a_module_of_the_table():
    load_rules()
    packages = {r.check.__module__.rpartition(".")[0] for r in RULES.values() if r.check.__module__.startswith("opkit.lint.rules.")}
    assert packages == set(RULE_MODULES)
    assert modules_for(None) == list(RULE_MODULES)
    assert modules_for(["yaml"]) == ["opkit.lint.rules.schema", "opkit.lint.rules.op_plugin_yaml"]
    assert "opkit.lint.rules.registrations" in modules_for(["cpp"])  # M001: a C++ def without a Meta kernel


def test_a_yaml_alone_imports_its_rules_and_no_torchgen(tmp_path):
    (tmp_path / "op_plugin_functions.yaml").write_text(YAML)
    probe = _probe(tmp_path / "op_plugin_functions.yaml")
    assert probe["modules"] == ["opkit.lint.rules.op_plugin_yaml", "opkit.lint.rules.schema"]
    assert probe["torchgen"] is False  # dunder, TensorOptions and Dimname schemas included
    in_process = lint([str(tmp_path / "op_plugin_functions.yaml")], use_cache=False)
    assert probe["codes"] == sorted({f.code for f in in_process.findings}) and "S101" in probe["codes"]


def test_a_meta_module_imports_the_registration_rules(tmp_path):
    from opkit.lint.registry import example_inputs

    rule = load_rules()["M007"]
    files, _ = example_inputs(rule.scope, rule.example)  # a Meta module
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    probe = _probe(*(tmp_path / name for name in files))
    assert {"opkit.lint.rules.registrations", "opkit.lint.rules.schema"} <= set(probe["modules"])
    assert not {"opkit.lint.rules.op_plugin_yaml", "opkit.lint.rules.msopgen", "opkit.lint.rules.opdef", "opkit.lint.rules.launch"} & set(probe["modules"])
    # (the M rules share helpers with the C rules, which are imported but not run without C++ inputs)
    assert "M007" in probe["codes"] and not any(c.startswith("C") for c in probe["codes"])


def test_rules_of_modules_the_inputs_do_not_need_never_run_even_when_imported(tmp_path):
    load_rules()  # every module imported, as in a test process
    (tmp_path / "op_plugin_functions.yaml").write_text(YAML)
    codes = {f.code for f in lint([str(tmp_path / "op_plugin_functions.yaml")], use_cache=False).findings}
    assert not {c[0] for c in codes} & {"M", "J", "O", "C", "K"}


def test_the_result_cache_keys_the_selection_and_rules_registered_outside_opkit(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(YAML)
    everything = {f.code for f in lint([str(path)]).findings}
    assert {f.code for f in lint([str(path)], selection=Selection(ignore=("s101",))).findings} == everything - {"S101"}

    def always(site):
        yield from ()
        if site.is_custom:
            from opkit.lint.finding import Violation

            yield Violation("from a plugin")

    RULES["X901"] = Rule("X901", "plugin-for-test", Severity.WARNING, "schema", "test", "", "x", "y", always)
    try:
        with_plugin = {f.code for f in lint([str(path)]).findings}
    finally:
        del RULES["X901"]
    assert with_plugin == everything | {"X901"}
    assert {f.code for f in lint([str(path)]).findings} == everything  # not the plugin's cached result
