"""Builders for opkit projects in tmp_path, in the layout `opkit new` writes (agreed, not imported)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest


def write_project(
    root: Path, *, name: str, schema: str, meta: str, style: str = "op-plugin", namespace: str = "npu", reference: str | None = None
) -> Path:
    (root / "op_plugin").mkdir(parents=True, exist_ok=True)
    (root / "meta").mkdir(exist_ok=True)
    spec = {"name": name, "schema": schema, "style": style, "namespace": namespace, "dtypes": ["float16"], "soc": ["ascend910b"]}
    (root / "opkit.json").write_text(json.dumps(spec, indent=2))
    (root / "op_plugin" / "op_plugin_functions.yaml").write_text(
        f"custom:\n  - func: {schema}\n    op_api: all_version\n    gen_opapi:\n      exec: aclnn{name.title().replace('_', '')}\n"
    )
    (root / "meta" / f"{name}_meta.py").write_text(textwrap.dedent(meta).lstrip())
    if reference is not None:
        (root / "reference.py").write_text(textwrap.dedent(reference).lstrip())
    return root


@pytest.fixture
def make_project(tmp_path):
    def make(subdir: str = "proj", **kwargs) -> Path:
        return write_project(tmp_path / subdir, **kwargs)

    return make
