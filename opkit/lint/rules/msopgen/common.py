"""Facts and helpers the msopgen rules share."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from opkit import msopgen
from opkit.lint.finding import Violation
from opkit.lint.project import LintProject
from opkit.formats.msopgen_json import JsonOp, MsOpGenFile, strings, text_of
from opkit.formats.op_plugin_yaml import YNode
from opkit.signature import OpSignature


UPPER_CAMEL_RE = re.compile(r"^[A-Z][A-Za-z0-9]*$")


# .ini spellings of attr types people carry over into JSON (msopgen.md §1).
INI_ATTR_TYPES = {"listInt": "list_int", "listFloat": "list_float", "listBool": "list_bool", "listListInt": "list_list_int", "str": "string"}


def where(op: JsonOp) -> str:
    return f"op '{op.op}'" if op.op else f"op {op.index}"


def described(key: str, item: YNode) -> str:
    """How a message names a descriptor or attr: ``input_desc 'x'``, or where it is when it has no name (J003's finding)."""
    name = text_of(item, "name")
    return f"{key} '{name}'" if name is not None else f"{key} without a name (line {item.line})"


def located(item: YNode, key: str, message: str, op: JsonOp, hint: str | None = None) -> Violation:
    return Violation(message, line=item.key_lines.get(key, item.line), hint=hint, op=op.op)


def kept_descriptors(op: JsonOp) -> Iterator[tuple[str, YNode]]:
    """Descriptors msOpGen keeps: those with both ``type`` and ``format``."""
    for key, d in op.descriptors:
        if "type" in d.value and "format" in d.value:
            yield key, d


def unknown_dtypes(d: YNode) -> tuple[list[YNode], list[YNode]]:
    """(all items, unknown items) of a descriptor's ``type``."""
    items = strings(d.value.get("type")) or []
    return items, [t for t in items if not (isinstance(t.value, str) and t.value in msopgen.DTYPES)]


def column_count(d: YNode) -> int | None:
    """Expanded length of a kept descriptor: a length-1 list broadcasts; None on a mismatch (J009)."""
    types, formats = len(strings(d.value.get("type")) or []), len(strings(d.value.get("format")) or [])
    if types == formats or formats == 1:
        return types
    return formats if types == 1 else None


def pairs(project: LintProject) -> Iterator[tuple[MsOpGenFile, JsonOp, OpSignature, msopgen.Prototype]]:
    """Each JSON op with the new op's schema of the same msOpGen name and that schema's prototype.

    Overloads share an op type (``my_op``, ``my_op.out``, ``my_op_`` → ``MyOp``): the default
    overload of the non-in-place name is the one msOpGen's prototype describes.
    """
    if not project.msopgen_files:
        return
    sigs = [s.signature for s in project.all_schema_sites() if s.is_custom and s.signature is not None]
    for file in project.msopgen_files:
        for op in file.ops:
            matches = sorted((sig for sig in sigs if sig.op_type == op.op), key=lambda s: (s.overload != "", s.is_inplace_name))
            if not matches:
                continue
            try:
                proto = msopgen.prototype_from_signature(matches[0])
            except msopgen.UnsupportedSignature:
                continue  # S203 explains what msOpGen cannot declare
            yield file, op, matches[0], proto


def differs(what: str, found: list, expected: list) -> str | None:
    if found == expected:
        return None
    return f"{what} {found} but the schema gives {expected}"


def default_as_value(default: object) -> object:
    """A default as a value, so ``1``, ``"1"`` and ``1.0``, or ``"[1, 1]"``, ``"{1,1}"`` and ``[1,1]``, compare equal."""
    if default is None or not isinstance(default, str):
        return default
    try:
        return json.loads(re.sub(r"\s+", "", default).lower().replace("{", "[").replace("}", "]"))
    except ValueError:
        return default
