"""Turning `opkit lint` on in an existing op-plugin repository: directories, baselines, diff mode, exit codes."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from opkit.lint import lint

# Written for these tests in the formats op-plugin's config/ holds beside op_plugin_functions.yaml
# (shapes as in Ascend/op-plugin at commit 517f2e7d: derivatives.yaml, deprecated.yaml, atb_ops.yaml).
DERIVATIVES = """\
all_version: [v2.1, v2.2, v2.3, v2.4, v2.5, v2.6, v2.7, v2.8, v2.9, v2.10, v2.11, v2.12, v2.13, v2.14, v2.15]
backward:
- name: npu_swiglu(Tensor self, int dim=-1) -> Tensor
  self: npu_swiglu_backward(grad, self, dim)
  version: all_version

- name: npu_rms_norm(Tensor self, Tensor gamma, float epsilon=1e-06) -> (Tensor, Tensor)
  self, gamma: npu_rms_norm_backward(grads[0], self, gamma, result1)
  version: [v2.1, newest]
"""
DEPRECATED = "deprecated:\n  - name: npu_apply_adam\n    replace: 'torch.optim.Adam or torch.optim.adam'\n"
ATB_OPS = 'functions:\n  - cpp_name: "at_npu::native::atb::npu_fused_add_topk_div"\n    impl_name: "atb::npu_fused_add_topk_div"\n'
COMMENTS_ONLY = "# Copyright (c) op-plugin authors\n# aclnn derivatives are generated; nothing to declare here yet.\n"
META = '''\
import torch
from torch.library import Library, impl

m = Library("npu", "IMPL", "Meta")


@impl(m, "npu_swiglu")
def npu_swiglu_meta(x, dim=-1):
    return x.new_empty(x.shape[:-1] + (x.shape[-1] // 2,))


@impl(m, "npu_gelu")
def npu_gelu_meta(self, *, approximate="tanh"):
    return torch.empty_like(self) if approximate in ("tanh", "none") else None


@impl(m, "npu_rms_norm")
def npu_rms_norm_meta(self, gamma, epsilon=1e-6):
    return torch.empty_like(self), self.new_empty(self.shape[:-1] + (1,))
'''
NOT_A_REGISTRATION = "def helper(x):\n    return x\n"
BAD_ENTRY = "  - func: my_new_op_(Tensor(a!) self, Tensor other) -> Tensor(a!)\n    op_api: all_version\n"


def _json(run_opkit, *args):
    code, out = run_opkit("lint", "--format", "json", *map(str, args))
    # click's runner mixes in stderr, where the baseline's "opkit: N finding(s) ... not shown" goes
    return code, json.loads("\n".join(line for line in out.splitlines() if not line.startswith("opkit: ")))


@pytest.fixture
def op_plugin_dir(tmp_path, corpus_yaml) -> Path:
    """A directory shaped like op-plugin's op_plugin/: the real yaml (written into tmp, never into the
    project) beside a derivatives yaml, a comments-only yaml and Python files, one of them Meta."""
    root = tmp_path / "op_plugin"
    (root / "config").mkdir(parents=True)
    (root / "config" / "op_plugin_functions.yaml").write_text(corpus_yaml.read_text())
    (root / "config" / "derivatives.yaml").write_text(DERIVATIVES)
    (root / "config" / "aclnn_derivatives.yaml").write_text(COMMENTS_ONLY)
    (root / "config" / "deprecated.yaml").write_text(DEPRECATED)
    (root / "config" / "atb_ops.yaml").write_text(ATB_OPS)
    (root / "python" / "meta").mkdir(parents=True)
    (root / "python" / "meta" / "_meta_registrations.py").write_text(META)
    (root / "python" / "meta" / "__init__.py").write_text("")
    (root / "python" / "utils.py").write_text(NOT_A_REGISTRATION)
    return root


def test_real_repository_directory_passes_with_a_baseline_and_fails_on_a_new_bad_entry(op_plugin_dir, run_opkit, tmp_path):
    code, findings = _json(run_opkit, op_plugin_dir)
    assert code == 1  # the real file's own errors (S101, M001 ...): never 2
    assert not [f for f in findings if f["severity"] == "fatal"]
    skipped = {Path(f["path"]).name: f["message"] for f in findings if f["code"] == "I001"}
    assert set(skipped) == {"derivatives.yaml", "aclnn_derivatives.yaml", "deprecated.yaml", "atb_ops.yaml"}
    assert "derivatives" in skipped["derivatives.yaml"] and "empty yaml" in skipped["aclnn_derivatives.yaml"]
    assert "deprecated" in skipped["deprecated.yaml"] and "ATB" in skipped["atb_ops.yaml"]
    assert not [f for f in findings if f["code"] == "Y001"]  # derivatives.yaml is not taken for a broken op_plugin file
    m005 = [f for f in findings if f["code"] == "M005"]
    assert [(Path(f["path"]).name, f["op"]) for f in m005] == [("_meta_registrations.py", "npu_gelu")]  # 'tanh' vs 'none'

    baseline = tmp_path / "opkit-baseline.json"
    code, out = run_opkit("lint", str(op_plugin_dir), "--baseline", str(baseline), "--write-baseline")
    assert code == 0 and baseline.is_file()
    code, out = run_opkit("lint", str(op_plugin_dir), "--baseline", str(baseline))
    assert code == 0, out
    assert "All checks passed" in out

    yaml_path = op_plugin_dir / "config" / "op_plugin_functions.yaml"
    text = yaml_path.read_text()
    custom = text.index("\ncustom:\n") + len("\ncustom:\n")
    yaml_path.write_text(text[:custom] + BAD_ENTRY + text[custom:])  # every later line moves down 2
    code, findings = _json(run_opkit, op_plugin_dir, "--baseline", baseline)
    assert code == 1
    assert sorted({(f["code"], f["op"]) for f in findings if f["severity"] == "error"}) == [("M001", "my_new_op_"), ("S101", "my_new_op_")]
    assert run_opkit("lint", str(op_plugin_dir), "--baseline", str(baseline), "--exit-zero")[0] == 0


def test_baseline_matches_content_not_line_numbers(tmp_path, run_opkit):
    path = tmp_path / "ops.yaml"
    entry = "  - func: {}(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n"
    path.write_text("custom:\n" + entry.format("a_"))
    baseline = tmp_path / "baseline.json"
    assert run_opkit("lint", str(path), "--baseline", str(baseline), "--write-baseline")[0] == 0
    recorded = json.loads(baseline.read_text())["findings"]
    assert {(r["path"], r["code"], r["op"]) for r in recorded} >= {("ops.yaml", "S101", "a_")}
    # Moved down by a new entry above it: still recorded. The new entry: reported.
    path.write_text("custom:\n" + entry.format("b_") + entry.format("a_"))
    code, findings = _json(run_opkit, path, "--baseline", baseline)
    assert code == 1 and {f["op"] for f in findings} == {"b_"}
    # The recorded entry itself changes (another return): reported again.
    path.write_text("custom:\n  - func: a_(Tensor(a!) self, int k) -> Tensor(a!)\n    op_api: all_version\n")
    assert {f["op"] for f in _json(run_opkit, path, "--baseline", baseline)[1] if f["code"] == "S101"} == {"a_"}


@pytest.mark.parametrize(
    "content, message",
    [("not json", "not a baseline file"), ('{"format": 99, "findings": []}', "not an opkit lint baseline"), ('{"format": 1, "findings": [{"code": 1}]}', "malformed")],
)
def test_unreadable_baseline_is_a_usage_error(tmp_path, run_opkit, content, message):
    (tmp_path / "ops.yaml").write_text("custom: []\n")
    (tmp_path / "b.json").write_text(content)
    code, out = run_opkit("lint", str(tmp_path / "ops.yaml"), "--baseline", str(tmp_path / "b.json"))
    assert code == 2 and message in out and "Traceback" not in out
    code, out = run_opkit("lint", str(tmp_path / "ops.yaml"), "--baseline", str(tmp_path / "absent.json"))
    assert code == 2 and "--write-baseline" in out


def test_write_baseline_on_a_full_disk_keeps_the_old_baseline_byte_identical(small_disk, run_opkit):
    path = small_disk.path / "ops.yaml"
    path.write_text("custom:\n  - func: a_(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n")
    baseline = small_disk.path / "baseline.json"
    baseline.write_text('{"format": 1, "tool": "opkit lint", "findings": []}\n')
    old = baseline.read_bytes()
    small_disk.fill()
    code, out = run_opkit("lint", str(path), "--baseline", str(baseline), "--write-baseline")
    assert code == 2 and out.count("No space left on device") == 1 and "the old baseline is kept" in out, out
    assert baseline.read_bytes() == old
    assert sorted(p.name for p in small_disk.path.iterdir()) == [".filler", "baseline.json", "ops.yaml"]


def test_write_baseline_keeps_the_files_mode_and_hard_links(tmp_path, run_opkit):
    path = tmp_path / "ops.yaml"
    path.write_text("custom:\n  - func: a_(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n")
    baseline = tmp_path / "baseline.json"
    baseline.write_text("{}")
    baseline.chmod(0o640)
    os.link(baseline, tmp_path / "linked.json")
    assert run_opkit("lint", str(path), "--baseline", str(baseline), "--write-baseline")[0] == 0
    assert (tmp_path / "linked.json").read_bytes() == baseline.read_bytes() and json.loads(baseline.read_text())["findings"]
    assert stat.S_IMODE(baseline.stat().st_mode) == 0o640


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


def test_diff_mode_reports_only_touched_entries_and_functions(tmp_path, run_opkit):
    entry = "  - func: {}(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n"
    ops = tmp_path / "ops.yaml"
    ops.write_text("custom:\n" + entry.format("a_") + entry.format("b_") + entry.format("c_"))
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "base")
    assert {f["op"] for f in _json(run_opkit, ops, "--diff", "HEAD")[1]} == set()
    # Touch b_'s op_api line only: its S101 sits on the func line of the same entry.
    ops.write_text(ops.read_text().replace(entry.format("b_"), entry.format("b_").replace("all_version", "[v2.1, newest]")))
    code, findings = _json(run_opkit, ops, "--diff", "HEAD")
    assert code == 1 and {f["op"] for f in findings} == {"b_"}
    # A new untracked file counts as wholly changed.
    new = tmp_path / "more.yaml"
    new.write_text("custom:\n" + entry.format("d_"))
    assert {f["op"] for f in _json(run_opkit, ops, new, "--diff", "HEAD")[1]} == {"b_", "d_"}
    code, out = run_opkit("lint", str(ops), "--diff", "no-such-rev")
    assert code == 2 and "Traceback" not in out


def test_a_directory_named_like_yaml_or_empty_is_reported(tmp_path, run_opkit):
    (tmp_path / "ops.yaml").mkdir()
    code, findings = _json(run_opkit, tmp_path / "ops.yaml")
    assert code == 2 and findings[0]["code"] == "E004" and "named like a yaml file" in findings[0]["message"]
    (tmp_path / "empty").mkdir()
    code, out = run_opkit("lint", str(tmp_path / "empty"))
    assert code == 2 and "All checks passed" not in out and "holds no .yaml" in out


def _lint_as_another_user(paths: list[str]) -> tuple[int, list[tuple[str, str, str]]]:
    """lint(paths) in a forked child that runs as uid/gid 65534 (root reads any directory): (exit code, findings)."""
    import multiprocessing

    lint(paths)  # every module the lint needs imported here, before the child loses access to them
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe()

    def run() -> None:
        os.setgid(65534)
        os.setuid(65534)
        result = lint(paths, use_cache=False)
        child.send((result.exit_code(), [(f.code, f.path, f.message) for f in result.findings]))

    process = context.Process(target=run)
    process.start()
    got = parent.recv() if parent.poll(60) else None
    process.join(10)
    assert got is not None and process.exitcode == 0
    return got


def test_an_unreadable_subdirectory_is_an_error_not_a_silent_skip(tmp_path):
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="opkit-unreadable-"))  # not under tmp_path: another user must reach it
    try:
        top.chmod(0o755)
        (top / "ok.yaml").write_text("custom: []\n")
        (top / "sub").mkdir()
        (top / "sub" / "ops.yaml").write_text("custom:\n  - func: a_(Tensor(a!) self) -> Tensor(a!)\n    op_api: all_version\n")
        (top / "sub").chmod(0)
        if os.geteuid() == 0:
            code, findings = _lint_as_another_user([str(top)])
        else:
            result = lint([str(top)], use_cache=False)
            code, findings = result.exit_code(), [(f.code, f.path, f.message) for f in result.findings]
        assert code == 2
        assert findings == [("E001", str(top / "sub"), "cannot read directory: Permission denied; its files are not linted")]
    finally:
        (top / "sub").chmod(0o755)
        shutil.rmtree(top)


def test_each_project_directory_pairs_its_own_files(tmp_path):
    """Two generated projects side by side: neither's Meta is compared with the other's yaml."""
    for name, default in (("proj_a", 1), ("proj_b", 2)):
        root = tmp_path / name
        root.mkdir()
        (root / "opkit.json").write_text("{}")
        (root / "ops.yaml").write_text(f"custom:\n  - func: my_op(Tensor x, int k={default}) -> Tensor\n    op_api: all_version\n")
        (root / "meta.py").write_text(f'from torch.library import Library, impl\nm = Library("npu", "IMPL", "Meta")\n\n@impl(m, "my_op")\ndef my_op_meta(x, k={default}):\n    return x.new_empty([k])\n')
    result = lint([str(tmp_path)])
    assert result.files == 4 and result.findings == ()
    # Named together on the command line, the files are one project: now they disagree.
    paired = lint([str(tmp_path / "proj_a" / "ops.yaml"), str(tmp_path / "proj_b" / "meta.py")])
    assert [f.code for f in paired.findings] == ["M005"]


def test_a_project_named_with_a_trailing_slash_pairs_the_files_of_its_subdirectories(tmp_path):
    """The walk hands each directory its project: ``proj/`` and ``proj`` pair the same files."""
    root = tmp_path / "proj"
    (root / "meta").mkdir(parents=True)
    (root / "opkit.json").write_text("{}")
    (root / "ops.yaml").write_text("custom:\n  - func: my_op(Tensor x, int k=1) -> Tensor\n    op_api: all_version\n")
    (root / "meta" / "meta.py").write_text('from torch.library import Library, impl\nm = Library("npu", "IMPL", "Meta")\n\n@impl(m, "my_op")\ndef my_op_meta(x, k=2):\n    return x.new_empty([k])\n')
    for named in (str(root), str(root) + "/"):
        assert [f.code for f in lint([named], use_cache=False).findings] == ["M005"], named


def test_a_file_reached_through_a_symlink_is_linted_once(tmp_path):
    (tmp_path / "ops.yaml").write_text("custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n")
    (tmp_path / "also.yaml").symlink_to(tmp_path / "ops.yaml")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "again.yaml").symlink_to(tmp_path / "ops.yaml")
    assert lint([str(tmp_path)], use_cache=False).files == 1


def test_unknown_codes_are_a_usage_error(tmp_path, run_opkit, monkeypatch):
    for option in ("--select", "--ignore"):
        code, out = run_opkit("lint", "--schema", "f(Tensor x) -> Tensor", option, "S1,ZZZ")
        assert code == 2 and "unknown rule code(s) ZZZ" in out
    assert run_opkit("lint", "--schema", "f(Tensor x) -> Tensor", "--select", "S1,e,I001")[0] == 0
    (tmp_path / "pyproject.toml").write_text('[tool.opkit.lint]\nignore = ["S9"]\n')
    monkeypatch.chdir(tmp_path)
    code, out = run_opkit("lint", "--schema", "f(Tensor x) -> Tensor")
    assert code == 2 and "pyproject.toml: [tool.opkit.lint] ignore: unknown rule code(s) S9" in out


def test_json_statistics_and_plain_rule_docs(run_opkit):
    code, out = run_opkit("lint", "--schema", "f_(Tensor(a!) self) -> Tensor(a!)", "--statistics", "--format", "json")
    assert code == 1
    assert json.loads(out) == [{"count": 1, "code": "S101", "severity": "error", "name": "returns-mutated-input"}]
    code, out = run_opkit("rule", "S101")
    assert code == 0 and "``" not in out and "-> Tensor(a!)" in out


def test_s002_typo_gets_did_you_mean(run_opkit):
    code, out = run_opkit("lint", "--schema", "f(Tensr x) -> Tensor")
    assert code == 1 and "S002 unknown type 'Tensr'" in out and "did you mean 'Tensor'?" in out
    assert "installed torch" not in out


@pytest.mark.parametrize(
    "content, what",
    [
        ("- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n", "autograd derivatives"),  # PyTorch's derivatives.yaml
        ("- name: add(Tensor self, Scalar alpha, Tensor other) -> Tensor\n  aten: add(self, other, alpha)\n", "deprecated-overloads"),
        ("backend: NPU\ncpp_namespace: at_npu::native\nsupported:\n  - add.Tensor\n", "npu_native_functions"),
    ],
)
def test_other_yaml_formats_are_recognised_and_skipped(tmp_path, run_opkit, content, what):
    path = tmp_path / "other.yaml"
    path.write_text(content)
    code, findings = _json(run_opkit, path)
    assert code == 0 and [f["code"] for f in findings] == ["I001"] and what in findings[0]["message"]
