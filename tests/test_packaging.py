"""What other repositories and installers read from this one: pre-commit hooks and the package metadata."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent


def test_pre_commit_hooks_run_opkit_lint_on_the_files_it_lints():
    hooks = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"opkit-lint", "opkit-lint-system"}
    for hook in hooks.values():
        assert hook["entry"] == "opkit lint" and hook["name"] and hook["language"] in ("python", "system")
        files = re.compile(hook["files"])
        for path in ("third_party/op-plugin/op_plugin/config/op_plugin_functions.yaml", "op_plugin/python/meta/_meta_registrations.py",
                     "my_op/meta/my_op_meta.py", "my_op/msopgen/my_op.json"):  # fmt: skip
            assert files.search(path), path
        assert not files.search("setup.py") and not files.search("ci/config.yaml")


def test_console_script_and_pytest_plugin_are_declared():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["opkit"] == "opkit.cli:main"
    assert project["entry-points"]["pytest11"]["opkit"] == "opkit.verify.pytest_plugin"
    # torch is a range (never replacing an installed torch/torch_npu pair); torch-npu only as an extra.
    assert "torch>=2.6" in project["dependencies"]
    assert not any(d.startswith("torch-npu") for d in project["dependencies"])
    assert any(d.startswith("torch-npu") for d in project["optional-dependencies"]["npu"])
