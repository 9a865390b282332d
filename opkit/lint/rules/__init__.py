"""Rule modules, one per scope. Importing a module registers its rules in ``opkit.lint.registry.RULES``.

Codes: E input errors (sources), S schema, Y op_plugin_functions.yaml, M Meta/fake registrations,
J msOpGen JSON, O Ascend C OpDef (op_host C++), C C++ TORCH_LIBRARY registrations, K kernel launches (host C++ with
``<<<>>>``; K2xx: the registration against what the kernel does, ``opkit.effects``). Codes are stable: a retired code is never reused.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

# Each rule module → the kinds of input file without which none of its rules can fire (None: any
# input, as schema sites come from every kind and from --schema). A lint imports only the modules
# its inputs need: a yaml alone never pays for the C++, JSON or Meta rules. Its project-scope rules
# pair its own kind with others (M001 also reads C++ registrations, hence "cpp" for the M rules);
# tests/lint/test_rule_loading.py checks every rule's examples against this table.
RULE_MODULES: dict[str, tuple[str, ...] | None] = {
    "opkit.lint.rules.schema": None,
    "opkit.lint.rules.op_plugin_yaml": ("yaml",),
    "opkit.lint.rules.registrations": ("python", "cpp"),
    "opkit.lint.rules.msopgen": ("msopgen",),
    "opkit.lint.rules.opdef": ("opdef",),
    "opkit.lint.rules.cpp": ("cpp",),
    "opkit.lint.rules.launch": ("launch",),
    "opkit.lint.rules.effects": ("cpp", "launch", "python"),
}

_loaded: set[str] = set()


def modules_for(kinds: Iterable[str] | None) -> list[str]:
    """The rule modules that inputs of ``kinds`` need (every module when ``kinds`` is None)."""
    if kinds is None:
        return list(RULE_MODULES)
    present = set(kinds)
    return [m for m, needs in RULE_MODULES.items() if needs is None or present.intersection(needs)]


def load(kinds: Iterable[str] | None = None) -> None:
    """Import the rule modules for inputs of ``kinds`` (all of them when None), each once."""
    for module in modules_for(kinds):
        if module not in _loaded:
            importlib.import_module(module)
            _loaded.add(module)


def load_all() -> None:
    load(None)
