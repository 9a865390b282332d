"""Rule modules, one per scope. Importing a module registers its rules in ``opkit.lint.registry.RULES``.

Codes: E input errors (sources), S schema, Y op_plugin_functions.yaml, M Meta/fake registrations,
J msOpGen JSON, O Ascend C OpDef (op_host C++), C C++ TORCH_LIBRARY registrations, K kernel launches (host C++ with
``<<<>>>``). Codes are stable: a retired code is never reused.
"""

from __future__ import annotations

import importlib

RULE_MODULES = (
    "opkit.lint.rules.schema",
    "opkit.lint.rules.op_plugin_yaml",
    "opkit.lint.rules.registrations",
    "opkit.lint.rules.msopgen",
    "opkit.lint.rules.opdef",
    "opkit.lint.rules.cpp",
    "opkit.lint.rules.launch",
)

_loaded = False


def load_all() -> None:
    global _loaded
    if _loaded:
        return
    for module in RULE_MODULES:
        importlib.import_module(module)
    _loaded = True
