"""Reporters: text, JSON, SARIF (validated against SARIF 2.1.0's required structure), GitHub."""

from __future__ import annotations

import json

import jsonschema
import pytest

from opkit.lint import Finding, Severity
from opkit.lint.reporters import FORMATTERS, format_github, format_text, sarif_document

# The parts of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json) that are required, with their
# constraints: sarifLog{version="2.1.0", runs}, run{tool}, tool{driver}, toolComponent{name},
# result{message}, message{text|id}, reportingDescriptor{id}, region startLine/startColumn >= 1,
# level in its enum.
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "rules": {"type": "array", "items": {"type": "object", "required": ["id"]}},
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message"],
                            "properties": {
                                "message": {"type": "object", "anyOf": [{"required": ["text"]}, {"required": ["id"]}]},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "ruleIndex": {"type": "integer", "minimum": -1},
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "properties": {
                                                    "artifactLocation": {"type": "object", "properties": {"uri": {"type": "string"}}},
                                                    "region": {
                                                        "type": "object",
                                                        "properties": {
                                                            "startLine": {"type": "integer", "minimum": 1},
                                                            "startColumn": {"type": "integer", "minimum": 1},
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}

FINDINGS = [
    Finding("S101", Severity.ERROR, "custom op returns x", "ops.yaml", 12, 5, op="my_op_", hint="return ()"),
    Finding("S203", Severity.WARNING, "'alpha: Scalar' has no msOpGen attr type", "ops.yaml", 14, 30, op="my_op"),
    Finding("E002", Severity.FATAL, "invalid YAML: found ':'", "bad.yaml", 3, 7),
]


def test_sarif_validates_and_carries_rule_documentation():
    doc = sarif_document(FINDINGS)
    jsonschema.validate(doc, SARIF_REQUIRED)
    run = doc["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["S101"]["name"] == "returns-mutated-input" and rules["S101"]["fullDescription"]["text"]
    levels = [r["level"] for r in run["results"]]
    assert levels == ["error", "warning", "error"]
    first = run["results"][0]
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == first["ruleId"] == "S101"
    assert first["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 5}
    assert first["properties"]["op"] == "my_op_"


def test_sarif_of_a_real_lint_run_validates(run_opkit):
    code, out = run_opkit("lint", "--format", "sarif", "--schema", "my_op_(Tensor(a!) self) -> Tensor(a!)")
    jsonschema.validate(json.loads(out), SARIF_REQUIRED)
    assert code == 1


def test_empty_sarif_is_still_a_valid_log():
    jsonschema.validate(sarif_document([]), SARIF_REQUIRED)


def test_text_format_lines_and_summary():
    out = format_text(FINDINGS, files=2)
    lines = out.splitlines()
    assert lines[0] == "ops.yaml:12:5: S101 custom op returns x [my_op_]"
    assert lines[1] == "    hint: return ()"
    assert lines[-1] == "Found 3 problems (1 fatal, 1 error, 1 warning) in 2 files."
    assert "\033[" not in out
    assert "\033[" in format_text(FINDINGS, colour=True)


def test_github_annotations_escape_newlines_and_separators():
    finding = Finding("Y004", Severity.WARNING, "key 'op_api'\nrepeated: 100%", "dir,with:odd.yaml", 4, 1)
    out = format_github([finding])
    assert out == "::warning file=dir%2Cwith%3Aodd.yaml,line=4,col=1,title=Y004::key 'op_api'%0Arepeated: 100%25\n"


def test_every_format_says_nothing_was_found_in_its_own_way():
    assert set(FORMATTERS) == {"text", "json", "sarif", "github"}
    assert FORMATTERS["text"]([], files=0) == "All checks passed (0 files).\n"
    assert FORMATTERS["json"]([], files=0) == "[]\n"
    assert FORMATTERS["github"]([], files=0) == ""
    doc = json.loads(FORMATTERS["sarif"]([], files=0))
    jsonschema.validate(doc, SARIF_REQUIRED)
    assert doc["runs"][0]["results"] == [] and doc["runs"][0]["tool"]["driver"]["rules"] == []


def test_each_severity_has_its_own_level_in_sarif_and_github():
    """SARIF levels are error/warning/note, GitHub's commands error/warning/notice: info is neither a warning nor dropped."""
    findings = [
        Finding("E002", Severity.FATAL, "bad", "a.yaml", 1, 1),
        Finding("S101", Severity.ERROR, "bad", "a.yaml", 2, 1),
        Finding("S203", Severity.WARNING, "meh", "a.yaml", 3, 1),
        Finding("Y106", Severity.INFO, "fyi", "a.yaml", 4, 1),
    ]
    assert [r["level"] for r in sarif_document(findings)["runs"][0]["results"]] == ["error", "error", "warning", "note"]
    assert [line.split(" ")[0] for line in format_github(findings).splitlines()] == ["::error", "::error", "::warning", "::notice"]
    assert format_text(findings, files=1).splitlines()[-1] == "Found 4 problems (1 fatal, 1 error, 1 warning, 1 info) in 1 file."
