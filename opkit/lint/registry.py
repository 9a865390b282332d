"""Rules: small documented units with stable codes, registered by decorator (as flake8 plugins are).

A rule is a generator function over one kind of subject; its docstring is its documentation (first
line: summary; the rest: the explanation ``opkit rule CODE`` prints). Adding a rule touches one file.

Scopes and the subject each rule receives:
  ``schema``   a ``SchemaSite``: one parsed signature and where it came from
  ``yaml``     an ``OpPluginFile`` (one op_plugin_functions.yaml)
  ``python``   a ``RegistrationFile`` (one Meta/fake registration module)
  ``msopgen``  an ``MsOpGenFile`` (one msOpGen prototype JSON)
  ``opdef``    an ``OpDefFile`` (one op_host C++ file with OpDefs)
  ``cpp``      a ``CppSource`` (one C++ file with TORCH_LIBRARY registrations)
  ``launch``   a ``KernelLaunchFile`` (host C++ launching kernels with ``<<<>>>``: ``.asc``, ``.cpp``)
  ``project``  the whole ``LintProject``: cross-file rules
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from opkit.lint.finding import Severity, Violation

SCOPES = ("schema", "yaml", "python", "msopgen", "opdef", "cpp", "launch", "project")


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    scope: str
    summary: str
    explanation: str
    example: str
    fixed: str
    check: Callable[..., Iterable[Violation]]
    new_ops_only: bool = False  # a schema rule for new ops only: the engine skips other sites in bulk

    def run(self, subject: object) -> Iterator[Violation]:
        yield from self.check(subject)


# The file an example is written as, by the rule's scope; a ``project`` example names its files.
EXAMPLE_FILES = {"yaml": "op_plugin_functions.yaml", "python": "meta.py", "msopgen": "my_op.json", "opdef": "my_op.cpp", "cpp": "my_ops.cpp", "launch": "my_op.asc"}


def example_inputs(scope: str, example: str) -> tuple[dict[str, str], list[str]]:
    """(files by name, --schema strings) that an example (or its fixed twin) stands for.

    A ``schema`` example is one signature. Other examples are the text of one file of the scope's
    kind, or several: ``# file: NAME`` starts a file, and a ``# schema: SIGNATURE`` line before the
    first file is a ``--schema`` string."""
    if scope == "schema":
        return {}, [example]
    files: dict[str, list[str]] = {}
    schemas: list[str] = []
    current = EXAMPLE_FILES.get(scope)
    for line in example.splitlines():
        if line.startswith("# file: "):
            current = line.removeprefix("# file: ").strip()
            files[current] = []
        elif line.startswith("# schema: ") and not files:
            schemas.append(line.removeprefix("# schema: ").strip())
        elif current is None:
            raise ValueError(f"a {scope} example names its files with '# file: NAME': {line!r}")
        else:
            files.setdefault(current, []).append(line)
    return {name: "\n".join(lines) + "\n" for name, lines in files.items()}, schemas


RULES: dict[str, Rule] = {}


def rule(code: str, name: str, *, severity: Severity, scope: str, example: str, fixed: str, new_ops_only: bool = False) -> Callable:
    """Register the decorated generator as rule ``code``; ``example`` shows input that fires it, ``fixed``
    the same input corrected (see ``example_inputs`` for how both are written).

    ``new_ops_only`` (schema rules): the rule concerns new ops (``custom:``, ``--schema``, custom_ops)
    and is never called for ATen overloads (``official:`` ...), of which a real file has a thousand."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")

    def register(fn: Callable[..., Iterable[Violation]]) -> Callable[..., Iterable[Violation]]:
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        doc = inspect.cleandoc(fn.__doc__ or "")
        summary, _, explanation = doc.partition("\n")
        RULES[code] = Rule(code, name, severity, scope, summary.strip(), explanation.strip(), inspect.cleandoc(example), inspect.cleandoc(fixed), fn, new_ops_only)
        return fn

    return register


def shared_index(build: Callable) -> Callable:
    """Cache ``build(subject)`` while the subject lives: the rules of one scope share derived indexes.

    Subjects (source files, the project) compare by identity, so each lint run gets its own index.
    """
    cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @functools.wraps(build)
    def get(subject):
        index = cache.get(subject)
        if index is None:
            index = cache[subject] = build(subject)
        return index

    return get


def load_rules(kinds: Iterable[str] | None = None) -> dict[str, Rule]:
    """Import the rule modules once, so RULES is complete: every module, or (``kinds``) those that inputs
    of these kinds need. RULES may then hold more (modules loaded before): those find nothing there."""
    from opkit.lint.rules import load

    load(kinds)
    return RULES


def matches(code: str, patterns: Iterable[str]) -> bool:
    """``--select``/``--ignore`` matching by code or prefix (``S``, ``S1``, ``S101``), case-insensitive."""
    code = code.upper()
    return any(code.startswith(p.strip().upper()) for p in patterns if p.strip())


def known_codes() -> dict[str, str]:
    """Every code opkit reports → its name: the rules, the input errors (E) and input notes (I)."""
    from opkit.lint.finding import INPUT_ERRORS, INPUT_NOTES

    return {code: r.name for code, r in load_rules().items()} | {code: name for code, (name, _) in (INPUT_ERRORS | INPUT_NOTES).items()}


def unknown_patterns(patterns: Iterable[str]) -> list[str]:
    """The ``--select``/``--ignore`` patterns that match no code: typos, as ruff refuses them."""
    patterns = [p for p in patterns if p.strip()]
    if not patterns:
        return []  # nothing to check: no need to import every rule module
    codes = known_codes()
    return [p for p in patterns if p.strip() and not any(code.startswith(p.strip().upper()) for code in codes)]


@dataclass(frozen=True)
class Selection:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()

    def enabled(self, code: str) -> bool:
        if self.select and not matches(code, self.select):
            return False
        return not matches(code, self.ignore)
