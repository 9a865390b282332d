"""Insert a generated ``custom:`` entry into a real op_plugin_functions.yaml, changing nothing else.

A full ruamel.yaml round trip of the real file is not byte-exact (it rewrites ``True``, ``[ v2.1, newest ]``,
``dtype : y`` and folded scalars), so the file is never re-emitted: its nodes are located with
PyYAML's C composer (the lint loader's parser, fast on the 350 KB file), and only the new entry is
emitted, by ruamel.yaml in the file's block layout, then spliced in after the last ``custom:`` entry.
The file's BOM and line endings (LF, CRLF or CR) are kept, and the new text is loaded back and
compared with the expected document before anything is written. ``add_entry`` holds a lock on the
file from the read to the rename (``file_write``), so concurrent runs lose nothing.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from opkit import naming, yamlio
from opkit.generate import file_write
from opkit.formats.files import InputError, decode_text, read_bytes
from opkit.signature import Dialect, SchemaError, parse_schema

SECTION = "custom"
FRAGMENT_PATH = Path("op_plugin", "op_plugin_functions.yaml")
# Reads of a file that another program keeps changing before ``add_entry`` gives up.
ATTEMPTS = 3


class YamlEditError(ValueError):
    """The file or the entry cannot be used; the message says why."""


@dataclass(frozen=True)
class YamlEdit:
    """What the edit does: ``added``, ``updated`` (an entry an earlier generation of the project wrote, replaced),
    ``removed`` (with the new text) or ``present`` (nothing to change)."""

    path: Path
    func: str
    status: str  # added | updated | removed | present
    line: int  # 1-based line of the new (or existing, or removed) entry
    new_bytes: bytes  # the whole file after the edit (== the old bytes when present), BOM and line endings kept
    clashes: tuple[str, ...] = ()  # warnings: another custom op whose exec calls the same OpType
    diff: tuple[str, ...] = ()  # updated/removed: the changed lines only, as a unified diff without context


@dataclass(frozen=True)
class _FileText:
    """A file's text as read, and what writing it back must keep: its BOM and its line ending."""

    text: str  # decoded, without the BOM
    bom: bool
    newline: str

    def encode(self, text: str) -> bytes:
        return (codecs.BOM_UTF8 if self.bom else b"") + text.encode("utf-8")


_LINE = re.compile(r"[^\r\n\x85\u2028\u2029]*(?:\r\n|[\r\n\x85\u2028\u2029])|[^\r\n\x85\u2028\u2029]+\Z")


def _lines(text: str) -> list[str]:
    """The lines of ``text`` with their endings, split where YAML (and so every node mark) breaks lines."""
    return _LINE.findall(text)


def _newline(text: str) -> str:
    """The file's line ending: the most common of CRLF, CR and LF (LF for a one-line file)."""
    crlf = text.count("\r\n")
    counts = {"\r\n": crlf, "\r": text.count("\r") - crlf, "\n": text.count("\n") - crlf}
    best = max(counts, key=counts.get)
    return best if counts[best] else "\n"


def _read_bytes(path: Path) -> bytes:
    try:
        return read_bytes(str(path))
    except InputError as exc:
        raise YamlEditError(f"{path}: {exc.message}") from None


def _read(path: Path, data: bytes | None = None) -> _FileText:
    if data is None:
        data = _read_bytes(path)
    try:
        text = decode_text(data)
    except InputError as exc:
        raise YamlEditError(f"{path}:{exc.line}: {exc.message}" if exc.line > 1 else f"{path}: {exc.message}") from None
    return _FileText(text, data.startswith(codecs.BOM_UTF8), _newline(text))


def _parsed(path: Path, text: str, parse=yamlio.load):
    """``parse(text)`` (``yamlio.load`` or ``yamlio.compose``); every way of failing is one YamlEditError naming the place."""
    try:
        return parse(text)
    except yamlio.TooLarge as exc:
        raise YamlEditError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise YamlEditError(yamlio.describe_error(path, exc)) from None


def load_fragment(path: str | os.PathLike) -> dict:
    """The one entry of a generated fragment (a project directory or its op_plugin_functions.yaml)."""
    path = Path(path)
    if path.is_dir():
        path = path / FRAGMENT_PATH
    data = _parsed(path, _read(path).text)
    entries = data.get(SECTION) if isinstance(data, dict) else None
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        raise YamlEditError(f"{path} is not an opkit fragment: expected '{SECTION}:' holding exactly one entry")
    entry = entries[0]
    check_entry(entry, where=str(path))
    return entry


def check_entry(entry: dict, *, where: str) -> None:
    from opkit.generate.schemas import SchemaViolation, validate_document

    try:
        validate_document(entry, "op-plugin-entry")
    except SchemaViolation as exc:
        raise YamlEditError(f"{where}: {exc}") from None
    try:
        parse_schema(entry["func"], Dialect.OP_PLUGIN)
    except SchemaError as exc:
        raise YamlEditError(f"{where}: func does not parse: {exc}") from None


def _last_line(node: yaml.Node) -> int:
    """0-based line where ``node``'s own text ends (a block mapping's end mark lies past trailing blank lines)."""
    while isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.value:
        node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
    end = node.end_mark
    return end.line - 1 if end.column == 0 else end.line


def emit_entry(entry: dict, *, dash: int, key: int) -> str:
    """The entry as a block-style sequence item, its dash at column ``dash`` and its keys at ``key``, emitted by ruamel.yaml."""
    from ruamel.yaml import YAML

    emitter = YAML(typ="rt")
    emitter.width = sys.maxsize  # never fold a long func
    emitter.indent(sequence=4)  # keys at column 4 (mappings nest by 2, the default); the dash is placed below
    buf = io.StringIO()
    emitter.dump({SECTION: [entry]}, buf)
    first, *rest = buf.getvalue().splitlines()[1:]  # drop 'custom:'; the dash sits at column 2, the keys at 4
    head = " " * dash + "-" + " " * (key - dash - 1) + first[4:]
    rest = [" " * key + line[4:] for line in rest]  # every line below the first is indented by at least the keys' 4
    return "".join(line + "\n" for line in (head, *rest))


def _op_name(func: str) -> str:
    """``name.overload`` as written before the '(' (whitespace dropped): what two declarations must not share."""
    return re.sub(r"\s+", "", func.partition("(")[0])


def _block_layout(root: yaml.MappingNode) -> tuple[int, int]:
    """(dash offset from its section key, key column offset from the dash) of the file's first non-empty block list; else (2, 2)."""
    for key, value in root.value:
        if isinstance(value, yaml.SequenceNode) and value.value and not value.flow_style:
            dash = value.start_mark.column
            return dash - key.start_mark.column, value.value[0].start_mark.column - dash
    return 2, 2


def plan_add(path: str | os.PathLike, entry: dict, data: bytes | None = None, *, earlier: tuple[dict, ...] = ()) -> YamlEdit:
    """Work out the edit without writing: refuse a conflicting duplicate, accept an identical one, and
    update a ``custom:`` entry of the same name and overload that is one of ``earlier`` (the entries the
    project's earlier generations wrote: ``earlier_entries``).

    ``data`` is the file's bytes when the caller has read them (else they are read here). The new
    text is checked before it is returned: it must load back as the old document with the entry
    appended to ``custom:`` (or put in the earlier one's place), or nothing is written.
    """
    path = Path(path)
    file = _read(path, data)
    text = file.text
    root = _parsed(path, text, yamlio.compose)
    if not isinstance(root, yaml.MappingNode):
        raise YamlEditError(f"{path} is not an op_plugin_functions.yaml: the top level is not a mapping")

    func = entry["func"]
    name = parse_schema(func, Dialect.OP_PLUGIN).full_name
    section_key = section_node = None
    declared: list[tuple[str, str, str]] = []  # (op, OpType, file:line) of the custom entries with an exec
    for key, value in root.value:
        if key.value == SECTION and isinstance(value, yaml.SequenceNode):
            declared += [(_op_name(f).split(".")[0], t, f"{path}:{item.start_mark.line + 1}") for item in value.value for f, t in [_entry_op_type(item)] if f and t]
        if isinstance(value, yaml.SequenceNode):
            for item in value.value:
                found = _entry_func(item)
                if found is None or _op_name(found) != name:
                    continue
                where = f"{path}:{item.start_mark.line + 1}"
                existing = yaml.load(yaml.serialize(item), Loader=yamlio.FAST_LOADER)
                if key.value == SECTION and existing != entry and existing in earlier:
                    return _replaced(path, file, root, value, item, entry)
                if found != func:
                    raise YamlEditError(
                        f"{where}: op '{name}' is already declared in '{key.value}:' as {found!r}, and no generation of this "
                        f"project wrote that entry; give the new op another name or overload"
                        + (f", or take the old one out: opkit yaml remove {path} {name}" if key.value == SECTION else "")
                    )
                if key.value == SECTION and existing == entry:
                    return YamlEdit(path, func, "present", item.start_mark.line + 1, file.encode(text))
                raise YamlEditError(
                    f"{where}: func {func!r} is already declared in '{key.value}:'"
                    + (" with different fields" if key.value == SECTION else "")
                    + "; remove or rename one of them"
                )
        if key.value == SECTION:
            section_key, section_node = key, value
    if section_node is None:
        raise YamlEditError(f"{path} has no '{SECTION}:' section (op-plugin's codegen needs all five sections)")

    lines = _lines(text)
    if isinstance(section_node, yaml.SequenceNode) and section_node.value and not section_node.flow_style:
        last = section_node.value[-1]
        insert_at = _last_line(last) + 1
        block = "\n" + emit_entry(entry, dash=section_node.start_mark.column, key=last.start_mark.column)
    elif _is_empty(section_node):
        # 'custom:', 'custom: ~' or 'custom: []': the value's text goes, the block list follows the key
        row = section_key.start_mark.line
        start, end = section_node.start_mark, section_node.end_mark
        if start.line == end.line == row and end.column > start.column:
            line = lines[row]
            lines[row] = line[: start.column].rstrip(" \t") + line[end.column :]
        dash_offset, key_offset = _block_layout(root)
        dash = section_key.start_mark.column + dash_offset
        insert_at = row + 1
        block = emit_entry(entry, dash=dash, key=dash + key_offset)
    else:
        raise YamlEditError(f"{path}: '{SECTION}:' is not a block list of entries; add the entry by hand")
    block = block.replace("\n", file.newline)
    if insert_at <= len(lines) and lines[insert_at - 1] == lines[insert_at - 1].rstrip("\r\n\x85\u2028\u2029"):
        lines[insert_at - 1] += file.newline  # the last line had no line break
    new_text = "".join(lines[:insert_at]) + block + "".join(lines[insert_at:])
    _check_loads_back(path, text, new_text, entry)
    line = insert_at + 2 if block.startswith(file.newline) else insert_at + 1
    return YamlEdit(path, func, "added", line, file.encode(new_text), _clashes(entry, declared))


def _entry_span(lines: list[str], item: yaml.Node) -> tuple[int, int]:
    """(first, end) 0-based line range of a sequence item's own text, with the blank lines just above it
    (the separator an added entry brings with it)."""
    first = item.start_mark.line
    while first > 0 and not lines[first - 1].strip():
        first -= 1
    return first, _last_line(item) + 1


def _changed_lines(path: Path, old: list[str], new: list[str]) -> tuple[str, ...]:
    """The diff of ``old`` and ``new`` lines without context: exactly the lines that change."""
    import difflib

    plain = [line.rstrip("\r\n\x85\u2028\u2029") for line in old], [line.rstrip("\r\n\x85\u2028\u2029") for line in new]
    return tuple(difflib.unified_diff(*plain, f"{path}", f"{path}", n=0, lineterm=""))


def _replaced(path: Path, file: _FileText, root: yaml.MappingNode, section: yaml.SequenceNode, item: yaml.Node, entry: dict) -> YamlEdit:
    """The edit that puts ``entry`` in the place of ``item`` (an earlier generation's entry), in its layout."""
    lines = _lines(file.text)
    start, end = item.start_mark.line, _last_line(item) + 1
    key_column = item.start_mark.column
    block = emit_entry(entry, dash=section.start_mark.column, key=key_column).replace("\n", file.newline)
    if end == len(lines) and not lines[-1].endswith(("\r", "\n")):
        block = block[: -len(file.newline)]  # the file had no final line break: keep it so
    new_lines = lines[:start] + _lines(block) + lines[end:]
    new_text = "".join(new_lines)
    index = next(i for i, node in enumerate(section.value) if node is item)
    expected = _parsed(path, file.text)
    expected[SECTION] = list(expected[SECTION])
    expected[SECTION][index] = entry
    _check_expected(path, new_text, expected)
    diff = _changed_lines(path, lines, new_lines)
    return YamlEdit(path, entry["func"], "updated", start + 1, file.encode(new_text), diff=diff)


def plan_remove(path: str | os.PathLike, op: str, data: bytes | None = None) -> YamlEdit:
    """The edit that takes the ``custom:`` entry of op ``op`` (``name`` or ``name.overload``) out of the file,
    with the blank lines above it; every other byte stays. Entries of the other sections are not opkit's to remove."""
    path = Path(path)
    file = _read(path, data)
    root = _parsed(path, file.text, yamlio.compose)
    if not isinstance(root, yaml.MappingNode):
        raise YamlEditError(f"{path} is not an op_plugin_functions.yaml: the top level is not a mapping")
    wanted = re.sub(r"\s+", "", op)
    for key, value in root.value:
        if not isinstance(value, yaml.SequenceNode):
            continue
        for index, item in enumerate(value.value):
            found = _entry_func(item)
            if found is None or _op_name(found) != wanted:
                continue
            if key.value != SECTION:
                raise YamlEditError(f"{path}:{item.start_mark.line + 1}: {wanted} is declared in '{key.value}:'; opkit yaml remove takes out '{SECTION}:' entries only")
            if value.flow_style:
                raise YamlEditError(f"{path}: '{SECTION}:' is a flow list; take the entry out by hand")
            lines = _lines(file.text)
            first, end = _entry_span(lines, item)
            if index == 0:
                first = item.start_mark.line  # the blank lines under 'custom:' belong to the section
                if len(value.value) > 1:  # the separator below goes with the first entry instead
                    end = value.value[1].start_mark.line
            new_lines = lines[:first] + lines[end:]
            new_text = "".join(new_lines)
            expected = _parsed(path, file.text)
            expected[SECTION] = [e for i, e in enumerate(expected[SECTION]) if i != index] or None
            _check_expected(path, new_text, expected)
            return YamlEdit(path, found, "removed", item.start_mark.line + 1, file.encode(new_text), diff=_changed_lines(path, lines, new_lines))
    raise YamlEditError(f"{path}: no entry declares op {wanted!r} (write NAME or NAME.OVERLOAD as in its func)")


def _check_expected(path: Path, new_text: str, expected: dict) -> None:
    try:
        if yamlio.load(new_text) == expected:
            return
    except (yaml.YAMLError, yamlio.TooLarge):
        pass
    raise YamlEditError(f"{path}: opkit cannot make this edit in this layout without changing the rest of the document; nothing was written (edit it by hand, and please report the file)")


def _clashes(entry: dict, declared: list[tuple[str, str, str]]) -> tuple[str, ...]:
    """OpType clashes of the new entry with the file's custom entries (an entry without gen_opapi has no known OpType)."""
    from opkit.generate.spec import op_type_warnings

    exec_text = (entry.get("gen_opapi") or {}).get("exec") if isinstance(entry.get("gen_opapi"), dict) else None
    op_type = naming.op_type_of_exec(exec_text) if isinstance(exec_text, str) else None
    if op_type is None:
        return ()
    name = _op_name(entry["func"]).split(".")[0]
    return tuple(w for w in op_type_warnings(name, op_type, declared) if "CANN built-in" not in w)


def _entry_op_type(item: yaml.Node) -> tuple[str | None, str | None]:
    """(func, the OpType its gen_opapi exec calls) of an entry node; None where it has none."""
    if not isinstance(item, yaml.MappingNode):
        return None, None
    fields = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)}
    func = fields.get("func")
    gen = fields.get("gen_opapi")
    exec_node = next((v for k, v in gen.value if k.value == "exec"), None) if isinstance(gen, yaml.MappingNode) else None
    func_text = func.value if isinstance(func, yaml.ScalarNode) else None
    op_type = naming.op_type_of_exec(exec_node.value) if isinstance(exec_node, yaml.ScalarNode) else None
    return func_text, op_type


def _is_empty(node: yaml.Node) -> bool:
    """A null scalar ('custom:', '~', 'null', '!!null ""': the composer resolves them all) or '[]'.
    A scalar tagged otherwise (``!!str ~``) is a value, not an empty section."""
    if isinstance(node, yaml.ScalarNode):
        return node.tag == "tag:yaml.org,2002:null"
    return isinstance(node, yaml.SequenceNode) and not node.value


def _check_loads_back(path: Path, old_text: str, new_text: str, entry: dict) -> None:
    """The new text must read as the old document with ``entry`` appended to ``custom:``, or nothing is written."""
    expected = _parsed(path, old_text)
    expected[SECTION] = list(expected.get(SECTION) or []) + [entry]
    _check_expected(path, new_text, expected)


def _entry_func(item: yaml.Node) -> str | None:
    if isinstance(item, yaml.MappingNode):
        for k, v in item.value:
            if k.value == "func" and isinstance(v, yaml.ScalarNode):
                return v.value
    return None


def add_entry(path: str | os.PathLike, entry: dict, *, write: bool = True, earlier: tuple[dict, ...] = ()) -> YamlEdit:
    """Plan (``plan_add``) and, with ``write``, apply the edit under a lock held from the read to the rename."""
    return _apply(path, lambda data: plan_add(path, entry, data, earlier=earlier), write=write)


def remove_entry(path: str | os.PathLike, op: str, *, write: bool = True) -> YamlEdit:
    """Plan (``plan_remove``) and, with ``write``, apply the removal under the same lock."""
    return _apply(path, lambda data: plan_remove(path, op, data), write=write)


def _apply(path: str | os.PathLike, plan, *, write: bool) -> YamlEdit:
    """Plan and (with ``write``) apply an edit under a lock held from the read to the rename.

    Another program that writes the file without the lock is detected (``file_write.Snapshot``): the
    file is read and the edit planned again, up to ``ATTEMPTS`` times, then refused.
    """
    try:
        with file_write.locked(path) as real:
            for _ in range(ATTEMPTS):
                try:
                    before = os.stat(real)
                except OSError as exc:
                    raise YamlEditError(f"{path}: cannot read: {exc.strerror or exc}") from None
                data = _read_bytes(Path(path))
                edit = plan(data)
                if not write or edit.status == "present":
                    return edit
                try:
                    file_write.write_file(real, edit.new_bytes, unchanged=file_write.Snapshot.of(before, data))
                    return edit
                except file_write.ChangedMeanwhile:
                    continue
    except file_write.FileWriteError as exc:
        raise YamlEditError(str(exc)) from None
    raise YamlEditError(f"{path} was changed by another program each of the {ATTEMPTS} times opkit read it; nothing was written (try again when that program has finished)")


EARLIER_ENTRIES = Path(".opkit", "earlier_entries.json")


def earlier_entries(fragment: str | os.PathLike) -> tuple[dict, ...]:
    """The yaml entries earlier generations of the project wrote (``.opkit/earlier_entries.json``, kept by
    ``opkit new --force``): the entries ``opkit yaml add`` may update. Empty for a bare fragment file."""
    fragment = Path(fragment)
    project = fragment if fragment.is_dir() else fragment.parent.parent
    path = project / EARLIER_ENTRIES
    if not path.is_file():
        return ()
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise YamlEditError(f"{path}: cannot read: {exc}") from None
    return tuple(e for e in data if isinstance(e, dict)) if isinstance(data, list) else ()
