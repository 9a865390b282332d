"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CORPUS_YAML = REPO.parent / "shared" / "corpus" / "op-plugin" / "op_plugin_functions.yaml"


@pytest.fixture
def corpus_yaml() -> Path:
    """The real 1514-entry op_plugin_functions.yaml, read in place (never copied into the project)."""
    if not CORPUS_YAML.is_file():
        pytest.skip(f"corpus not present at {CORPUS_YAML}")
    return CORPUS_YAML


@pytest.fixture
def run_opkit():
    """Run the `opkit` CLI in-process with click's runner; returns (exit_code, output)."""
    from click.testing import CliRunner

    from opkit.cli import main

    def run(*args: str, input: str | None = None):
        result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
        return result.exit_code, result.output

    return run


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Tests never read or write the user's ~/.cache/opkit."""
    monkeypatch.setenv("OPKIT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "opkit-cache"))
