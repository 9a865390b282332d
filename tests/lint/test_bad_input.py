"""Bad input: one clear diagnostic with its location, exit code 2, no traceback; other files still linted."""

from __future__ import annotations

import json

import pytest

from opkit.lint import lint

VALID_FRAGMENT = "custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"
BROKEN_FRAGMENT = "custom:\n  - func: my_op_(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n"


def _json(run_opkit, *paths):
    code, out = run_opkit("lint", "--format", "json", *map(str, paths))
    return code, json.loads(out)


@pytest.mark.parametrize(
    "name, content, code, line, fragment",
    [
        ("notyaml.yaml", "custom:\n  - func: [unclosed\n", "E002", 3, "invalid YAML"),
        ("tabs.yaml", "custom:\n\t- func: x\n", "E002", 2, "invalid YAML"),
        ("list.yaml", "- func: my_op(Tensor x) -> Tensor\n", "E003", 1, "top level is a sequence"),
        ("scalar.yaml", "just text\n", "E003", 1, "top level is a scalar"),
        ("section_map.yaml", "custom:\n  func: my_op(Tensor x) -> Tensor\n", "E003", 2, "section 'custom' is a mapping"),
        ("entry_list.yaml", "custom:\n  - - func: my_op(Tensor x) -> Tensor\n", "E003", 2, "entry 0 of 'custom' is a sequence"),
        ("two_docs.yaml", "custom: []\n---\nofficial: []\n", "E003", 1, "one YAML document"),
        ("latin1.yaml", "custom: []\n# caf\xe9\n".encode("latin-1"), "E001", 2, "not UTF-8"),
        ("garbage.yaml", bytes(range(256)) * 4, "E001", 1, "binary"),
        ("notes.txt", "hello\n", "E004", 1, "unknown kind of input"),
    ],
)
def test_bad_input_gets_one_located_diagnostic_and_exit_2(tmp_path, run_opkit, name, content, code, line, fragment):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    exit_code, findings = _json(run_opkit, path)
    assert exit_code == 2
    fatal = [f for f in findings if f["severity"] == "fatal"]
    assert len(fatal) == 1, findings
    assert fatal[0]["code"] == code
    assert fatal[0]["line"] == line
    assert fragment in fatal[0]["message"]
    assert fatal[0]["path"] == str(path)


# A project's own yaml that does not parse (vllm-ascend's third-party list indents one key short).
DEPENDENCY_LIST = "observability:\n   googletest:\n     url: x\n  makeself:\n     url: y\n"


def test_a_walked_yaml_that_does_not_parse_and_is_not_op_plugins_is_skipped(tmp_path, run_opkit):
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "deps.yaml").write_text(DEPENDENCY_LIST)
    (tmp_path / "op_plugin_functions.yaml").write_text(VALID_FRAGMENT)
    exit_code, findings = _json(run_opkit, tmp_path)
    assert exit_code == 0, findings
    assert [(f["code"], f["path"].rsplit("/", 1)[-1]) for f in findings] == [("I001", "deps.yaml")]
    assert "invalid YAML (line 4" in findings[0]["message"]
    # named, or walked with an op-plugin section in it, it is still the located E002
    assert _json(run_opkit, tmp_path / "cmake" / "deps.yaml")[0] == 2
    (tmp_path / "cmake" / "deps.yaml").write_text("custom:\n  - func: [unclosed\n")
    exit_code, findings = _json(run_opkit, tmp_path)
    assert exit_code == 2 and [f["code"] for f in findings if f["severity"] == "fatal"] == ["E002"]


def test_missing_func_is_a_rule_finding_not_a_crash(tmp_path, run_opkit):
    path = tmp_path / "nofunc.yaml"
    path.write_text("custom:\n  - op_api: all_version\n")
    exit_code, findings = _json(run_opkit, path)
    assert exit_code == 1
    assert [f["line"] for f in findings if f["code"] == "Y003"] == [2]


@pytest.mark.parametrize("content", ["", "\n\n   \n", "# aclnn_derivatives.yaml: nothing yet\n# more comments\n"])
def test_empty_or_comments_only_yaml_is_an_info_line_not_fatal(tmp_path, run_opkit, content):
    path = tmp_path / "aclnn_derivatives.yaml"
    path.write_text(content)
    exit_code, findings = _json(run_opkit, path)
    assert exit_code == 0
    assert [(f["code"], f["severity"]) for f in findings] == [("I001", "info")]
    assert "empty yaml" in findings[0]["message"]


def test_missing_file_and_directory(tmp_path, run_opkit):
    exit_code, findings = _json(run_opkit, tmp_path / "absent.yaml")
    assert exit_code == 2 and findings[0]["code"] == "E001" and "no such file" in findings[0]["message"]


def test_a_50_mb_file_is_refused_quickly_with_a_clear_message(tmp_path, run_opkit):
    path = tmp_path / "huge.yaml"
    with open(path, "wb") as f:
        f.truncate(50 * 1024 * 1024)
    exit_code, findings = _json(run_opkit, path)
    assert exit_code == 2
    assert findings[0]["code"] == "E001" and "52.4 MB" in findings[0]["message"]


def test_other_files_are_still_linted_after_a_bad_one(tmp_path, run_opkit):
    bad = tmp_path / "a_bad.yaml"
    bad.write_text("custom: [\n")
    good = tmp_path / "b_broken_op.yaml"
    good.write_text(BROKEN_FRAGMENT)
    exit_code, findings = _json(run_opkit, bad, good)
    assert exit_code == 2  # unreadable input wins over rule findings
    codes = {(f["path"], f["code"]) for f in findings}
    assert (str(bad), "E002") in codes
    assert (str(good), "S101") in codes


def test_directory_argument_lints_the_recognised_files_inside(tmp_path):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "op_plugin_functions.yaml").write_text(BROKEN_FRAGMENT)
    (tmp_path / "ops" / "README.md").write_text("# not linted\n")
    result = lint([str(tmp_path)])
    assert result.files == 1
    assert [f.code for f in result.findings if f.code.startswith("S")] == ["S101"]


def test_text_output_of_bad_input_has_no_traceback(tmp_path, run_opkit):
    path = tmp_path / "x.yaml"
    path.write_bytes(b"\x00\x01\x02")
    code, out = run_opkit("lint", str(path))
    assert code == 2
    assert "Traceback" not in out
    assert f"{path}:1:1: E001 binary file" in out


def test_valid_fragment_is_clean(tmp_path):
    path = tmp_path / "frag.yaml"
    path.write_text(VALID_FRAGMENT)
    result = lint([str(path)])
    assert [f for f in result.findings if f.severity >= 2] == []


@pytest.mark.parametrize(
    "name, content",
    [
        ("deep.yaml", "custom: " + "[" * 5000 + "]" * 5000 + "\n"),
        # deep enough to crash libyaml's C composer (a segfault, not an exception) if it were ever reached
        ("deeper.yaml", "custom: " + "[" * 100000 + "]" * 100000 + "\n"),
        ("block.yaml", "custom:\n" + "".join(" " * i + "-\n" for i in range(1, 2000))),
        ("deep.json", "[" * 100000 + "]" * 100000),
    ],
    ids=["flow", "flow-100k", "block", "json"],
)
def test_absurd_nesting_is_a_diagnostic_not_a_crash(tmp_path, run_opkit, name, content):
    path = tmp_path / name
    path.write_text(content)
    exit_code, findings = _json(run_opkit, path)
    assert exit_code == 2
    assert [f["code"] for f in findings] == ["E003"] and "nested" in findings[0]["message"]


def test_nesting_bound_is_an_upper_bound():
    from opkit import yamlio

    assert yamlio.nesting_bound("a: [[1, [2]], {b: [3]}]\n") >= 3
    assert yamlio.nesting_bound("custom:\n  - func: f(int[2] x) -> ()\n    op_api: [v2.1, newest]\n") < 10


def test_a_crashing_rule_becomes_an_internal_error_finding(tmp_path):
    """Rules are code and code has bugs: the user gets E005 naming the rule, and the other rules still run."""
    from opkit.lint.finding import Severity
    from opkit.lint.registry import RULES, Rule

    def crash(site):
        raise ValueError("boom")
        yield  # pragma: no cover

    RULES["S999"] = Rule("S999", "crash-for-test", Severity.ERROR, "schema", "test", "", "x", "y", crash)
    try:
        result = lint(schemas=["my_op_(Tensor(a!) self) -> Tensor(a!)"])
    finally:
        del RULES["S999"]
    codes = {f.code: f for f in result.findings}
    assert "internal error: rule S999 raised ValueError: boom" in codes["E005"].message
    assert "S101" in codes and result.exit_code() == 2


def test_a_walked_op_test_case_json_is_not_an_msopgen_prototype(tmp_path, run_opkit):
    """ops-math's test cases share input_desc/output_desc with a prototype: found by a walk, they are skipped."""
    case = [{"case_name": "small", "op_name": "Polar", "input_desc": [{"name": "x", "data_type": "float", "shape": [2]}], "output_desc": [{"name": "out", "data_type": "complex64", "shape": [2]}]}]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "polar_cases.json").write_text(json.dumps(case))
    (tmp_path / "op_plugin_functions.yaml").write_text(VALID_FRAGMENT)
    exit_code, findings = _json(run_opkit, tmp_path)
    assert (exit_code, [(f["code"], f["path"].rsplit("/", 1)[-1]) for f in findings]) == (0, [("I001", "polar_cases.json")])
    # the same objects under a prototype's own keys are still linted
    (tmp_path / "tests" / "polar_cases.json").write_text(json.dumps([{"op": "Polar", "input_desc": [{"name": "x"}], "output_desc": [{"name": "out"}]}]))
    exit_code, findings = _json(run_opkit, tmp_path)
    assert exit_code == 1 and "J005" in {f["code"] for f in findings}


def test_a_walked_prototype_with_a_repeated_key_is_e003_as_a_named_one_is(tmp_path):
    """A walk tells prototypes apart before looking for repeated keys; a prototype's are still reported."""
    (tmp_path / "op.json").write_text('[{"op": "MyOp",\n  "op": "Other", "input_desc": [], "output_desc": []}]')
    (tmp_path / "config.json").write_text('{"a": 1, "a": 2}')
    for named in (tmp_path, tmp_path / "op.json"):
        errors = [(f.code, f.line, f.message) for f in lint([str(named)], use_cache=False).findings if f.code == "E003"]
        assert errors == [("E003", 2, "duplicate key 'op' (first at line 1); json.load keeps only the last")], named
