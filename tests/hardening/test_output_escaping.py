"""Hardening III, part 6: text and `--format github` output never carry a raw control character from the input."""

from __future__ import annotations

from pathlib import Path

BAD = "custom:\n  - func: my_op(Tensor(a!) x) -> Tensor(a!)\n    op_api: all_version\n"


def _project(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    directory.mkdir()
    (directory / "op_plugin_functions.yaml").write_text(BAD)
    return directory


def test_lint_github_a_newline_in_a_directory_name_injects_no_command(tmp_path, run_opkit):
    directory = _project(tmp_path, "d\n::error title=forged::all good")
    code, output = run_opkit("lint", str(directory), "--format", "github", "--no-cache")
    assert code == 1, output
    lines = output.splitlines()
    assert lines and all(line.startswith(("::error file=", "::warning file=", "::notice file=")) for line in lines), output
    assert not any(line.startswith("::error title=forged") for line in lines)
    assert "d%0A%3A%3Aerror title=forged%3A%3Aall good" in output


def test_lint_text_spells_terminal_escapes_in_paths(tmp_path, run_opkit):
    directory = _project(tmp_path, "d\x1b]2;owned\x07")
    code, output = run_opkit("lint", str(directory), "--no-cache")
    assert code == 1, output
    assert "\x1b" not in output and "\x07" not in output
    assert "d\\x1b]2;owned\\x07/op_plugin_functions.yaml" in output
