"""The third-party modules the torch-npu wheel's ``npugraph_ex`` package imports when opkit runs it.

The wheel's METADATA declares only torch, numpy and pyyaml, yet its compiler imports ``packaging``
(``npugraph_ex/ops/_tagged_event.py``, ``_acl_concrete_graph/fx2acl_converter.py``, imported lazily during
the first compile) and ``sympy``. opkit declares each of them (pyproject.toml), ``opkit doctor`` checks that
they import, and a failed import inside the wheel's code is reported by name with the ``pip install`` that
fixes it. ``tests/verify/test_wheel_requirements.py`` reads the unpacked wheel's imports against this table.
"""

from __future__ import annotations

import importlib.util

# module name -> the distribution that provides it (what `pip install` takes)
WHEEL_IMPORTS = {
    "packaging": "packaging",
    "sympy": "sympy",
    "numpy": "numpy",
}


def pip_name(module: str) -> str:
    """The distribution to ``pip install`` for a module: its top-level package's, as the table says, else its name."""
    top = module.split(".", 1)[0]
    return WHEEL_IMPORTS.get(top, top)


def missing() -> list[str]:
    """The modules of ``WHEEL_IMPORTS`` that cannot be imported here (found without importing them)."""
    out = []
    for module in WHEEL_IMPORTS:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a broken or half-removed package
            found = False
        if not found:
            out.append(module)
    return out
