"""J013 attr-default-invalid."""

from __future__ import annotations

from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.rules.msopgen.common import located, where
from opkit.lint.sources.msopgen_json import MsOpGenFile, text_of


@rule("J013", "attr-default-invalid", severity=Severity.ERROR, scope="msopgen", example='"attr": [{"name": "mode", "type": "string", "param_type": "optional", "default_value": "\\"mean\\""}]')
def attr_default_invalid(file: MsOpGenFile) -> Iterator[Violation]:
    """An attr's ``default_value`` contains ``; ' " ( )``, a newline, tab or backtick, or exceeds 1024 characters.

    msOpGen rejects such defaults: they are pasted into generated C++.
    """
    for op in file.ops:
        for a in op.attrs:
            node = a.value.get("default_value")
            if node is None:
                continue
            text = str(node.value)
            bad = sorted(set(text) & msopgen.FORBIDDEN_DEFAULT_CHARS)
            if bad:
                yield located(a, "default_value", f"{where(op)}: attr '{text_of(a, 'name')}' default_value contains forbidden characters {', '.join(map(repr, bad))}", op)
            if len(text) > msopgen.MAX_DEFAULT_LENGTH:
                yield located(a, "default_value", f"{where(op)}: attr '{text_of(a, 'name')}' default_value is {len(text)} characters, over {msopgen.MAX_DEFAULT_LENGTH}", op)
