"""Helpers for the generator tests: generate projects in tmp_path, in-process, never running msopgen."""

from __future__ import annotations

from pathlib import Path

import pytest

from opkit.generate import make_spec
from opkit.generate.project import generate_project


@pytest.fixture
def generate(tmp_path: Path):
    """generate(name, **make_spec options) → the project directory (built-in Ascend C tree)."""

    def run(name: str, **options) -> Path:
        spec = make_spec(name, **options)
        return generate_project(spec, tmp_path / name, msopgen_mode="builtin").path

    return run
