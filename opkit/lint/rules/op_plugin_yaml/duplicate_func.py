"""Y009 duplicate-func."""

from __future__ import annotations

from collections.abc import Iterator

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.op_plugin_yaml.common import EntryFacts, file_index
from opkit.formats.op_plugin_yaml import OpPluginFile


@rule(
    "Y009",
    "duplicate-func",
    severity=Severity.ERROR,
    scope="yaml",
    example=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    acl_op: [v2.6, newest]'
    ),
    fixed=(
        'custom:\n'
        '  - func: my_op(Tensor x) -> Tensor\n'
        '    op_api: all_version\n'
        '    acl_op: [v2.6, newest]'
    ),
)
def duplicate_func(file: OpPluginFile) -> Iterator[Violation]:
    """One op (``name.overload``) is declared twice in a section with overlapping versions.

    Split declarations are fine when their versions are disjoint (``[v2.1, v2.6]`` and
    ``[v2.7, newest]``); where they overlap, the build for that torch version registers the op twice
    ("has multiple definitions") and one entry's settings are lost.
    """
    index = file_index(file)
    seen: dict[tuple[str, str], list[EntryFacts]] = {}
    for fact in index.entries:
        key = fact.op or fact.entry.func
        if key is None:
            continue
        earlier = seen.setdefault((fact.entry.section, key), [])
        versions = fact.versions
        for other in earlier:
            overlap = versions & other.versions
            if overlap:
                # the versions the file builds, in its order; a name outside it (a malformed spec) after them
                order = {v: i for i, v in enumerate(index.universe)}
                shown = ", ".join(sorted(overlap, key=lambda v: (order.get(v, len(order)), v)))
                yield Violation(
                    f"'{key}' is already declared in '{fact.entry.section}' at line {other.entry.line} for the same versions ({shown})",
                    line=fact.entry.line,
                    column=fact.entry.column,
                    hint="merge the entries, or give them disjoint version ranges",
                    op=fact.op,
                )
                break
        earlier.append(fact)
