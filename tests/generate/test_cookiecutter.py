"""The template works with plain cookiecutter too, and renders what `opkit new` renders."""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys

from opkit.generate.resources import template_dir


def _same_tree(a, b, ignore=()):
    cmp = filecmp.dircmp(a, b, ignore=list(ignore))
    assert not cmp.left_only and not cmp.right_only and not cmp.diff_files, (cmp.left_only, cmp.right_only, cmp.diff_files)
    for sub in cmp.common_dirs:
        _same_tree(a / sub, b / sub)


def test_plain_cookiecutter_cli_matches_opkit_new(tmp_path, run_opkit):
    schema = "my_op(Tensor x, Tensor? y, Tensor[] z, float attr1, int attr2) -> Tensor"
    done = subprocess.run(
        [sys.executable, "-m", "cookiecutter", "--no-input", "--output-dir", str(tmp_path / "cc"), str(template_dir()),
         "name=my_op", f"schema={schema}", "dtypes=float"],
        capture_output=True, text=True, env={"HOME": str(tmp_path), "PATH": ""},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    code, output = run_opkit("new", "my_op", "--schema", schema, "--dtypes", "float", "-o", str(tmp_path / "opkit" / "my_op"), "--no-verify", "--msopgen", "builtin")
    assert code == 0, output
    opkit_project = tmp_path / "opkit" / "my_op"
    _same_tree(tmp_path / "cc" / "my_op", opkit_project, ignore=[".opkit"])  # .opkit/: opkit's record of what it generated
    _same_tree(opkit_project / ".opkit" / "generated", opkit_project, ignore=[".opkit"])


def test_cookiecutter_api_defaults_and_custom_op(tmp_path):
    from cookiecutter.main import cookiecutter

    config = {"replay_dir": str(tmp_path / "replay"), "cookiecutters_dir": str(tmp_path / "cc")}
    path = cookiecutter(str(template_dir()), no_input=True, output_dir=str(tmp_path), default_config=config,
                        extra_context={"name": "kv_update_", "inplace": True, "style": "custom-op"})  # fmt: skip
    spec = json.loads((tmp_path / "kv_update_" / "opkit.json").read_text())
    assert path.endswith("kv_update_")
    assert spec["schema"] == "kv_update_(Tensor(a!) x, Tensor y) -> ()"
    assert spec["namespace"] == "mylib" and spec["vendor"] == "kv_update_"
    assert not (tmp_path / "kv_update_" / "op_plugin").exists()
    assert (tmp_path / "kv_update_" / "KvUpdate" / "op_host" / "kv_update.cpp").is_file()
