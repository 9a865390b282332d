"""`opkit lint`, `opkit rules`, `opkit rule` as a user runs them: options, formats, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

GOOD = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
RETURNS_INPUT = "my_op_(Tensor(a!) self) -> Tensor(a!)"
WARN_ONLY = "my_op(Tensor x, Device? device=None) -> Tensor"  # S203 warning only


def test_clean_schema_exits_zero(run_opkit):
    code, out = run_opkit("lint", "--schema", GOOD)
    assert code == 0
    assert "All checks passed" in out


def test_error_exits_one_with_path_line_col_code(run_opkit):
    code, out = run_opkit("lint", "--schema", RETURNS_INPUT)
    assert code == 1
    assert "<schema>:1:1: S101 " in out
    assert "[my_op_]" in out


def test_fail_on_warning_turns_warnings_into_failures(run_opkit):
    assert run_opkit("lint", "--schema", WARN_ONLY)[0] == 0
    code, out = run_opkit("lint", "--schema", WARN_ONLY, "--fail-on", "warning")
    assert code == 1 and "S203" in out


def test_select_and_ignore_by_code_and_prefix(run_opkit):
    code, out = run_opkit("lint", "--schema", RETURNS_INPUT, "--ignore", "S101")
    assert code == 0 and "S101" not in out
    code, out = run_opkit("lint", "--schema", WARN_ONLY, "--select", "S1")
    assert "S203" not in out
    code, out = run_opkit("lint", "--schema", WARN_ONLY, "--select", "s2,Y")
    assert "S203" in out


def test_json_format_has_the_documented_keys(run_opkit):
    code, out = run_opkit("lint", "--schema", RETURNS_INPUT, "--format", "json")
    assert code == 1
    findings = json.loads(out)
    assert findings and {"code", "severity", "message", "path", "line", "op"} <= set(findings[0])
    assert findings[0]["code"] == "S101" and findings[0]["op"] == "my_op_" and findings[0]["severity"] == "error"


def test_github_format_emits_workflow_commands(run_opkit):
    code, out = run_opkit("lint", "--schema", RETURNS_INPUT, "--format", "github")
    assert out.startswith("::error file=<schema>,line=1,col=1,title=S101::")


def test_dialect_option_switches_the_parser(run_opkit):
    inplace = "my_op_(Tensor(a!) x) -> ()"
    code, out = run_opkit("lint", "--schema", inplace)
    assert code == 1 and "S001" in out and "op-plugin" in out
    code, out = run_opkit("lint", "--schema", inplace, "--dialect", "torch.library")
    assert code == 0, out


def test_no_input_is_a_usage_error(run_opkit):
    code, out = run_opkit("lint")
    assert code == 2 and "nothing to lint" in out


def test_rules_lists_every_code_and_rule_explains_one(run_opkit):
    code, out = run_opkit("rules")
    assert code == 0
    for expected in ("E001", "S001", "S101", "S203"):
        assert expected in out
    code, out = run_opkit("rule", "s101")
    assert code == 0 and "returns-mutated-input" in out and "Example that fires it" in out and "Tensor(a!)" in out
    code, out = run_opkit("rule", "Z999")
    assert code == 2 and "unknown rule" in out


@pytest.mark.slow
def test_lint_process_does_not_import_torch(tmp_path):
    """Every kind of input at once: yaml, a registration file (read with ast), msOpGen JSON, a schema."""
    (tmp_path / "ops.yaml").write_text(f"custom:\n  - func: {GOOD}\n    op_api: all_version\n")
    (tmp_path / "meta.py").write_text(
        "import torch\nfrom torch.library import Library, impl\nm = Library('npu', 'IMPL', 'Meta')\n\n"
        "@impl(m, 'my_op')\ndef my_op_meta(x, y, z, attr1, attr2):\n    return torch.empty_like(x)\n"
    )
    (tmp_path / "my_op.json").write_text('[{"op": "MyOp", "input_desc": [], "output_desc": []}]')
    script = (
        "import sys\n"
        "from opkit.cli import main\n"
        "try:\n"
        f"    main(['lint', {str(tmp_path)!r}, '--schema', {GOOD!r}, '--format', 'json'])\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', status)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    findings_json, _, last = out.rpartition("\n" + "NO-TORCH ")
    assert last.strip() == "1", out  # the lint ran to its verdict: the empty prototype misses the schema's arguments
    assert sorted(f["code"] for f in json.loads(findings_json)) == ["J101", "J102", "J103"], out  # yaml, meta.py and schema agree


@pytest.mark.slow
def test_colour_only_on_a_terminal(tmp_path):
    """Piped output carries no escape codes; --color forces them."""
    plain = subprocess.run([sys.executable, "-m", "opkit", "lint", "--schema", RETURNS_INPUT], capture_output=True, text=True)
    assert plain.returncode == 1 and "\033[" not in plain.stdout
    forced = subprocess.run([sys.executable, "-m", "opkit", "lint", "--color", "--schema", RETURNS_INPUT], capture_output=True, text=True)
    assert "\033[" in forced.stdout


def test_settings_from_pyproject_and_overrides(tmp_path, monkeypatch, run_opkit):
    (tmp_path / "pyproject.toml").write_text('[tool.opkit.lint]\nignore = ["S101"]\nfail-on = "warning"\n')
    nested = tmp_path / "src" / "ops"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)  # found by walking up, as ruff does
    code, out = run_opkit("lint", "--schema", RETURNS_INPUT)
    assert code == 0 and "S101" not in out
    code, out = run_opkit("lint", "--schema", WARN_ONLY)
    assert code == 1 and "S203" in out  # fail-on = warning
    code, out = run_opkit("lint", "--schema", WARN_ONLY, "--fail-on", "error")
    assert code == 0  # the option overrides the file
    code, out = run_opkit("lint", "--schema", RETURNS_INPUT, "--ignore", "S2")
    assert code == 1 and "S101" in out  # --ignore replaces the file's list


@pytest.mark.parametrize(
    "table, message",
    [
        ('[tool.opkit.lint]\nselct = ["S"]\n', "unknown key(s) in [tool.opkit.lint]: selct"),
        ('[tool.opkit.lint]\nfail-on = "fatal"\n', "fail-on must be one of info, warning, error"),
        ('[tool.opkit.lint]\nignore = 3\n', "ignore must be a list"),
        ("[tool.opkit.lint\n", "cannot read settings"),
    ],
)
def test_broken_settings_are_a_usage_error_naming_the_file(tmp_path, monkeypatch, run_opkit, table, message):
    (tmp_path / "pyproject.toml").write_text(table)
    monkeypatch.chdir(tmp_path)
    code, out = run_opkit("lint", "--schema", GOOD)
    assert code == 2
    assert message in out and str(tmp_path / "pyproject.toml") in out


def test_pyproject_without_opkit_settings_is_skipped(tmp_path, monkeypatch, run_opkit):
    (tmp_path / "pyproject.toml").write_text('[tool.opkit.lint]\nignore = ["S101"]\n')
    inner = tmp_path / "pkg"
    inner.mkdir()
    (inner / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    monkeypatch.chdir(inner)
    assert run_opkit("lint", "--schema", RETURNS_INPUT)[0] == 0


@pytest.mark.parametrize(
    "schema, fragment",
    [
        ("my_op(Tensor x, int[] k=1) -> Tensor", "not a list of int values"),
        ("my_op(Tensor x, float eps=inf) -> Tensor", "default inf is not a number"),
        ("my_op(Tensor x=0) -> Tensor", "a Tensor default can only be None"),
    ],
)
def test_s004_reports_defaults_torch_npu_would_reject(run_opkit, schema, fragment):
    code, out = run_opkit("lint", "--schema", schema, "--select", "S004")
    assert code == 1 and "S004" in out and fragment in out


def test_pyproject_dialect_switches_the_parser(tmp_path, monkeypatch, run_opkit):
    inplace = "my_op_(Tensor(a!) x) -> ()"  # valid for torch.library, refused by op-plugin's torchgen
    monkeypatch.chdir(tmp_path)
    assert run_opkit("lint", "--schema", inplace)[0] == 1
    (tmp_path / "pyproject.toml").write_text('[tool.opkit.lint]\ndialect = "torch.library"\n')
    code, out = run_opkit("lint", "--schema", inplace)
    assert code == 0, out
    assert run_opkit("lint", "--schema", inplace, "--dialect", "op-plugin")[0] == 1  # the option overrides the file


@pytest.mark.parametrize(
    "comment, silenced",
    [("  # noqa", True), ("  # NOQA", True), ("  # noqa: Y002", True), ("  # noqa: y0", True), ("  # noqa: S1, Y", True),
     ("  # noqa: Y003", False), ("  # noqa: S", False), ("", False)],
)  # fmt: skip
def test_noqa_on_the_line_silences_all_or_the_listed_codes(tmp_path, run_opkit, comment, silenced):
    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text(f"custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_apl: all_version{comment}\n")
    code, out = run_opkit("lint", str(path))
    assert ("Y002" not in out) is silenced and code == (0 if silenced else 1), out


@pytest.mark.parametrize(
    "comment, silenced",
    [("  // noqa", True), ("  // noqa: O001", True), ("  // NOQA: o0", True), ("  // noqa: O002", False),
     ("  # noqa", False), ("", False)],
)  # fmt: skip
def test_noqa_in_an_opdef_cpp_file_is_a_cpp_comment(tmp_path, run_opkit, comment, silenced):
    from opkit.lint.registry import load_rules

    example = load_rules()["O001"].example  # a skipped `.Frobnicate(2);` call, warned as O001
    lines = example.splitlines()
    at = next(i for i, line in enumerate(lines) if "Frobnicate" in line)
    lines[at] += comment
    path = tmp_path / "my_op.cpp"
    path.write_text("\n".join(lines) + "\n")
    code, out = run_opkit("lint", str(path))
    assert ("O001" not in out) is silenced and code == 0, out


def test_lint_pauses_the_cycle_collector_and_restores_it():
    import gc

    from opkit.lint import lint

    started = []

    def record(phase, info):
        if phase == "start":
            started.append(info["generation"])

    schemas = [f"op_{i}(Tensor x, int k={i}) -> Tensor" for i in range(1000)]
    gc.callbacks.append(record)
    try:
        lint(schemas=schemas, use_cache=False)
    finally:
        gc.callbacks.remove(record)
    # none while linting (~30 without the pause); at most the one that the first allocation after it may start
    assert len(started) <= 1 and gc.isenabled(), started
    gc.disable()
    try:
        lint(schemas=["my_op(Tensor x) -> Tensor"], use_cache=False)
        assert not gc.isenabled()  # a caller's own setting is kept
    finally:
        gc.enable()


def test_a_lint_keeps_nothing_of_what_it_loaded_alive(tmp_path):
    """Remembered parse errors carry no traceback (whose frames would hold the project), so a run's
    files are freed when it returns, without waiting for a cycle collection."""
    import gc

    from opkit.lint import lint
    from opkit.formats.op_plugin_yaml import OpPluginFile

    path = tmp_path / "op_plugin_functions.yaml"
    path.write_text("custom:\n  - func: my_bad(Tensr x) -> Tensor\n  - func: my_op(Tensor x, int k) -> Tensor\n")
    enabled = gc.isenabled()
    gc.disable()
    try:
        assert {f.code for f in lint([str(path)], use_cache=False).findings} >= {"S002"}
        # type(), not isinstance(): isinstance reads __class__ through a weakref.proxy, and a proxy whose referent
        # died (Dynamo's SubgraphTracer keeps one to its OutputGraph after any torch.compile) raises ReferenceError.
        assert not [o for o in gc.get_objects() if issubclass(type(o), OpPluginFile) and o.path == str(path)]
    finally:
        if enabled:
            gc.enable()
