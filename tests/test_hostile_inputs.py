"""Every command against hostile input: the named expected outcome, one message, never a traceback.

Outcomes: ``refused`` (exit 2, one message saying why and where), ``reported`` (exit 1, a finding),
``verbatim`` (exit 0, the hostile text written as data). ``run_opkit`` does not catch exceptions, so a
traceback fails the test.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

import pytest

FIFO = object()  # a file entry that is created as a named pipe
DIRECTORY = object()  # a file entry that is created as a directory
FRAGMENT = b"custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n"
BILLION_LAUGHS = b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
    b"%c: &%c [%s]\n" % (98 + i, 98 + i, b", ".join([b"*%c" % (97 + i)] * 9)) for i in range(8)
) + b"custom: []\n"
LONG = "a" * 300
SPEC = '{{"name": "my_op", "schema": "my_op(Tensor x) -> Tensor", "style": "op-plugin", "namespace": "npu", "dtypes": ["float"], "formats": ["ND"], "soc": ["ascend910b1"], "out_like": "x", "vendor": "my_op"{extra}}}'


@dataclass(frozen=True)
class Case:
    outcome: str  # refused | reported | verbatim
    argv: tuple[str, ...]  # {tmp} is the test's directory
    message: str  # appears exactly once in the output
    files: dict = field(default_factory=dict)  # relative path -> bytes | FIFO | DIRECTORY
    mode: int | None = None  # chmod of the first file


def _json_op(default: bytes) -> bytes:
    return b'[{"op": "MyOp", "input_desc": [], "output_desc": [], "attr": [{"name": "a", "param_type": "optional", "type": "float", "default_value": %s}]}]' % default


CASES = {
    # opkit lint: the readers
    "lint-json-integer-over-4300-digits": Case("refused", ("lint", "{tmp}/op.json"), "E002 invalid JSON: integer with more than 4300 digits", {"op.json": _json_op(b"9" * 5000)}),
    "lint-json-lone-surrogate": Case("reported", ("lint", "{tmp}/op.json"), "J003 op name '\\ud800' is not a C identifier", {"op.json": b'[{"op": "\\ud800", "input_desc": []}]'}),
    "lint-json-duplicate-key": Case("refused", ("lint", "{tmp}/op.json"), "E003 duplicate key 'op' (first at line 1)", {"op.json": b'[{"op": "MyOp",\n  "op": "Other", "input_desc": []}]'}),
    "lint-json-nan-default": Case("refused", ("lint", "{tmp}/op.json"), "E002 invalid JSON: NaN", {"op.json": _json_op(b"NaN")}),
    "lint-json-infinity-default": Case("refused", ("lint", "{tmp}/op.json"), "E002 invalid JSON: -Infinity", {"op.json": _json_op(b"-Infinity")}),
    "lint-json-number-out-of-range": Case("refused", ("lint", "{tmp}/op.json"), "E002 invalid JSON: number 1e999 is out of range", {"op.json": _json_op(b"1e999")}),
    "lint-yaml-billion-laughs": Case("refused", ("lint", "{tmp}/x.yaml"), "E003 aliases expand to more than 1,000,000 nodes", {"x.yaml": BILLION_LAUGHS}),
    "lint-yaml-too-many-aliases": Case("refused", ("lint", "{tmp}/x.yaml"), "E003 more than 10000 aliases", {"x.yaml": b"a: &a 1\ncustom: [" + b"*a, " * 10001 + b"]\n"}),
    "lint-yaml-python-object-tag": Case("refused", ("lint", "{tmp}/x.yaml"), "x.yaml:1:42: E003 entry 0 of 'custom' is a scalar", {"x.yaml": b'custom: !!python/object/apply:os.system ["touch ran"]\n'}),
    "lint-yaml-not-utf8": Case("refused", ("lint", "{tmp}/x.yaml"), "x.yaml:2:1: E001 not UTF-8 (byte 0xff at offset 14)", {"x.yaml": b"custom: []\nx: \xff\n"}),
    "lint-yaml-nested-deeply": Case("refused", ("lint", "{tmp}/x.yaml"), "x.yaml:1:1: E003 nested more than 500 levels deep", {"x.yaml": b"a: " + b"[" * 20_000 + b"]" * 20_000 + b"\n"}),
    "lint-json-nested-deeply": Case("refused", ("lint", "{tmp}/op.json"), "op.json:1:1: E003 nested too deeply to read", {"op.json": b"[" * 20_000 + b"]" * 20_000}),
    "lint-fifo": Case("refused", ("lint", "{tmp}/pipe.yaml"), "E001 is not a regular file (a FIFO)", {"pipe.yaml": FIFO}),
    "lint-baseline-fifo": Case("refused", ("lint", "{tmp}/x.yaml", "--baseline", "{tmp}/pipe.json"), "pipe.json: cannot read the baseline: is not a regular file (a FIFO)", {"x.yaml": b"custom: []\n", "pipe.json": FIFO}),
    "lint-baseline-dev-zero": Case("refused", ("lint", "{tmp}/x.yaml", "--baseline", "/dev/zero"), "/dev/zero: cannot read the baseline: is not a regular file (a character device)", {"x.yaml": b"custom: []\n"}),
    "lint-write-baseline-fifo": Case("refused", ("lint", "{tmp}/x.yaml", "--baseline", "{tmp}/pipe.json", "--write-baseline"), "pipe.json: not a regular file", {"x.yaml": b"custom: []\n", "pipe.json": FIFO}),
    "lint-baseline-nested-deeply": Case("refused", ("lint", "{tmp}/x.yaml", "--baseline", "{tmp}/b.json"), "b.json: not a baseline file opkit can read: nested too deeply", {"x.yaml": b"custom: []\n", "b.json": b"[" * 100_000 + b"]" * 100_000}),
    "lint-baseline-count-1e400": Case("refused", ("lint", "{tmp}/x.yaml", "--baseline", "{tmp}/b.json"), "b.json:1:54: not a baseline file opkit can read: invalid JSON: number 1e400 is out of range", {"x.yaml": b"custom: []\n", "b.json": b'{"format": 1, "findings": [{"code": "S101", "count": 1e400, "path": "x", "op": "", "fingerprint": "f"}]}'}),
    "lint-baseline-count-not-an-integer": Case("refused", ("lint", "{tmp}/x.yaml", "--baseline", "{tmp}/b.json"), "b.json: malformed baseline entry", {"x.yaml": b"custom: []\n", "b.json": b'{"format": 1, "findings": [{"code": "S101", "count": 0.5, "path": "x", "op": "", "fingerprint": "f"}]}'}),
    "lint-fifo-found-in-a-directory": Case("refused", ("lint", "{tmp}/proj"), "pipe.yaml:1:1: E001 is not a regular file (a FIFO)", {"proj/ok.yaml": b"custom: []\n", "proj/pipe.yaml": FIFO}),
    "lint-python-over-its-size-limit": Case("refused", ("lint", "{tmp}/big.py"), "E001 file is 2.2 MB, over the 2 MiB opkit parses as a Python registration module", {"big.py": b"from torch.library import Library\n" + b"x = 1\n" * 360_000}),
    "lint-opdef-over-its-size-limit": Case("refused", ("lint", "{tmp}/big_def.cpp"), "E001 file is 2.2 MB, over the 2 MiB opkit parses as an OpDef C++ file", {"big_def.cpp": b"class MyOp : public OpDef {};\n" + b"// c\n" * 440_000}),
    "lint-yaml-over-the-read-limit": Case("refused", ("lint", "{tmp}/big.yaml"), "E001 file is 16.8 MB, over the 16 MiB opkit reads", {"big.yaml": b"custom: []\n" + b"#" * (16 * 1024 * 1024)}),
    "lint-pyproject-tool-not-a-table": Case("refused", ("lint", "--schema", "my_op(Tensor x) -> Tensor"), "pyproject.toml: [tool] must be a table, not str 'x'", {"pyproject.toml": b'tool = "x"\n'}),
    "lint-pyproject-tool-opkit-not-a-table": Case("refused", ("lint", "--schema", "my_op(Tensor x) -> Tensor"), "pyproject.toml: [tool.opkit] must be a table, not list []", {"pyproject.toml": b"[tool]\nopkit = []\n"}),
    "lint-pyproject-not-utf8": Case("refused", ("lint", "--schema", "my_op(Tensor x) -> Tensor"), "cannot read settings: not UTF-8", {"pyproject.toml": b'x = "\xff"\n'}),
    # opkit new
    "new-over-long-name": Case("refused", ("new", LONG, "--no-verify", "--msopgen", "builtin"), "File name too long"),
    "new-over-long-path-component": Case("refused", ("new", "my_op", "-o", f"{{tmp}}/{LONG}/p", "--no-verify", "--msopgen", "builtin"), "File name too long"),
    "new-undecodable-schema": Case("refused", ("new", "my_op", "--schema", 'my_op(Tensor x, str s="\udcff") -> Tensor', "-o", "{tmp}/p", "--no-verify", "--msopgen", "builtin"), "the schema is not valid text"),
    "new-jinja-expression": Case("verbatim", ("new", "my_op", "--schema", 'my_op(Tensor x, str s="{{7*7}}") -> Tensor', "-o", "{tmp}/p", "--no-verify", "--msopgen", "builtin"), 'created {tmp}/p (16 files): my_op(Tensor x, str s="{{7*7}}") -> Tensor'),
    "new-jinja-block-start": Case("verbatim", ("new", "my_op", "--schema", 'my_op(Tensor x, str s="{%") -> Tensor', "-o", "{tmp}/p", "--no-verify", "--msopgen", "builtin"), 's="{%") -> Tensor'),
    "new-jinja-environment-leak": Case("verbatim", ("new", "my_op", "--schema", 'my_op(Tensor x, str s="{{cycler.__init__.__globals__.os.environ.HOME}}") -> Tensor', "-o", "{tmp}/p", "--no-verify", "--msopgen", "builtin"), "{{cycler.__init__.__globals__.os.environ.HOME}}"),
    # opkit yaml add
    "yaml-add-fifo-target": Case("refused", ("yaml", "add", "{tmp}/pipe.yaml", "--entry", "{tmp}/f.yaml"), "is not a regular file (a FIFO)", {"pipe.yaml": FIFO, "f.yaml": FRAGMENT}),
    "yaml-add-fifo-entry": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/pipe.yaml"), "is not a regular file (a FIFO)", {"x.yaml": b"custom: []\n", "pipe.yaml": FIFO}),
    "yaml-add-entry-fragment-is-a-directory": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/proj"), "proj/op_plugin/op_plugin_functions.yaml: is a directory", {"x.yaml": b"custom: []\n", "proj/op_plugin/op_plugin_functions.yaml": DIRECTORY}),
    "yaml-add-entry-is-dev-zero": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "/dev/zero"), "/dev/zero: is not a regular file (a character device)", {"x.yaml": b"custom: []\n"}),
    "yaml-add-python-object-tag": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/f.yaml"), "x.yaml: 'custom:' is not a block list of entries", {"x.yaml": b'custom: !!python/object/apply:os.system ["touch ran"]\n', "f.yaml": FRAGMENT}),
    "yaml-add-billion-laughs": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/f.yaml"), "aliases expand to more than", {"x.yaml": BILLION_LAUGHS, "f.yaml": FRAGMENT}),
    "yaml-add-read-only": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/f.yaml"), "is read-only", {"x.yaml": b"custom: []\n", "f.yaml": FRAGMENT}, mode=0o444),
    "yaml-add-same-op-name": Case("refused", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/f.yaml"), "x.yaml:2: op 'my_op' is already declared in 'custom:'", {"x.yaml": b"custom:\n  - func: my_op(Tensor x, int n) -> Tensor\n    op_api: all_version\n", "f.yaml": FRAGMENT}),
    "yaml-add-null-section": Case("verbatim", ("yaml", "add", "{tmp}/x.yaml", "--entry", "{tmp}/f.yaml"), "added my_op(Tensor x) -> Tensor to custom:", {"x.yaml": b"custom: ~\n", "f.yaml": FRAGMENT}),
    # opkit verify
    "verify-load-syntax-error": Case("refused", ("verify", "--op", "npu::x", "--load", "{tmp}/ops.py"), "ops.py:2:7: invalid Python", {"ops.py": b"import torch\ndef f(:\n"}),
    "verify-load-fifo": Case("refused", ("verify", "--op", "npu::x", "--load", "{tmp}/ops.py"), "is not a regular file (a FIFO)", {"ops.py": FIFO}),
    "verify-spec-integer-over-4300-digits": Case("refused", ("verify", "{tmp}"), "not valid JSON: integer with more than 4300 digits", {"opkit.json": SPEC.format(extra=', "n": ' + "9" * 5000).encode()}),
    "verify-project-meta-fifo": Case("refused", ("verify", "{tmp}"), "no Meta file: expected meta/my_op_meta.py", {"opkit.json": SPEC.format(extra="").encode(), "meta/my_op_meta.py": FIFO}),
    "verify-spec-duplicate-key": Case("refused", ("verify", "{tmp}"), "key 'name' is given twice", {"opkit.json": SPEC.format(extra=', "name": "other"').encode()}),
}


@pytest.mark.parametrize("name", CASES)
def test_hostile_input(tmp_path, run_opkit, monkeypatch, name):
    case = CASES[name]
    monkeypatch.chdir(tmp_path)
    for i, (rel, content) in enumerate(case.files.items()):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is FIFO:
            os.mkfifo(path)
        elif content is DIRECTORY:
            path.mkdir()
        else:
            path.write_bytes(content)
        if i == 0 and case.mode is not None:
            path.chmod(case.mode)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    started = time.monotonic()
    code, output = run_opkit(*(arg.replace("{tmp}", str(tmp_path)) for arg in case.argv))
    assert time.monotonic() - started < 30  # a FIFO or an alias bomb never hangs it
    assert code == {"refused": 2, "reported": 1, "verbatim": 0}[case.outcome], output
    message = case.message.replace("{tmp}", str(tmp_path))
    assert output.count(message) == 1, output
    assert "Traceback" not in output
    if case.outcome == "refused" and case.argv[0] != "lint":
        assert len(output.strip().splitlines()) == 1, output
    if case.outcome != "verbatim":  # nothing of the user's touched
        assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before
        assert not any(".opkit-" in p for p in os.listdir(tmp_path))
