"""Insert a generated ``custom:`` entry into a real op_plugin_functions.yaml, changing nothing else.

A full ruamel.yaml round trip of the real file is not byte-exact (it rewrites ``True``, ``[ v2.1, newest ]``,
``dtype : y`` and folded scalars), so the file is never re-emitted: its nodes are located with
PyYAML's C composer (the lint loader's parser, fast on the 350 KB file), and only the new entry is
emitted, by ruamel.yaml in the file's block style, then spliced in after the last ``custom:`` entry.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from opkit import yamlio
from opkit.lint.sources import InputError, read_text
from opkit.signature import Dialect, SchemaError, parse_schema

SECTION = "custom"
FRAGMENT_PATH = Path("op_plugin", "op_plugin_functions.yaml")



class YamlEditError(ValueError):
    """The file or the entry cannot be used; the message says why."""


@dataclass(frozen=True)
class YamlEdit:
    """What adding the entry does: ``added`` (with the new text) or ``present`` (nothing to change)."""

    path: Path
    func: str
    status: str  # added | present
    line: int  # 1-based line of the new (or existing) entry
    new_text: str  # the whole file after the edit (== the old text when present)


def _read_yaml(path: Path, parse):
    """``parse(text)`` of the file at ``path``; every way of failing is one YamlEditError naming the place."""
    try:
        return parse(read_text(str(path)))
    except InputError as exc:
        raise YamlEditError(f"{path}: {exc.message}") from None
    except yamlio.TooLarge as exc:
        raise YamlEditError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise YamlEditError(yamlio.describe_error(path, exc)) from None


def load_fragment(path: str | os.PathLike) -> dict:
    """The one entry of a generated fragment (a project directory or its op_plugin_functions.yaml)."""
    path = Path(path)
    if path.is_dir():
        path = path / FRAGMENT_PATH
    data = _read_yaml(path, yamlio.load)
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


def emit_entry(entry: dict, *, indent: int) -> str:
    """The entry as a block-style sequence item whose keys start at column ``indent``, emitted by ruamel.yaml."""
    from ruamel.yaml import YAML

    emitter = YAML(typ="rt")
    emitter.width = 1 << 16  # never fold a long func
    emitter.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    emitter.dump({SECTION: [entry]}, buf)
    lines = buf.getvalue().splitlines()[1:]  # drop 'custom:'; the dash sits at column 2, 'func' at 4
    shift = indent - 4
    return "".join((" " * shift + line if shift >= 0 else line[-shift:]) + "\n" for line in lines)


def plan_add(path: str | os.PathLike, entry: dict) -> YamlEdit:
    """Work out the edit without writing: refuse a conflicting duplicate, accept an identical one."""
    path = Path(path)
    text, root = _read_yaml(path, lambda text: (text, yamlio.compose(text)))
    if not isinstance(root, yaml.MappingNode):
        raise YamlEditError(f"{path} is not an op_plugin_functions.yaml: the top level is not a mapping")

    func = entry["func"]
    section_node = None
    for key, value in root.value:
        if isinstance(value, yaml.SequenceNode):
            for item in value.value:
                found = _entry_func(item)
                if found == func:
                    existing = yaml.load(yaml.serialize(item), Loader=yamlio.FAST_LOADER)
                    if key.value == SECTION and existing == entry:
                        return YamlEdit(path, func, "present", item.start_mark.line + 1, text)
                    raise YamlEditError(
                        f"{path}:{item.start_mark.line + 1}: func {func!r} is already declared in '{key.value}:'"
                        + (" with different fields" if key.value == SECTION else "")
                        + "; remove or rename one of them"
                    )
        if key.value == SECTION:
            section_node = value
    if section_node is None:
        raise YamlEditError(f"{path} has no '{SECTION}:' section (op-plugin's codegen needs all five sections)")

    lines = text.splitlines(keepends=True)
    if isinstance(section_node, yaml.SequenceNode) and section_node.value and not section_node.flow_style:
        last = section_node.value[-1]
        insert_at = _last_line(last) + 1
        indent = last.start_mark.column  # column of 'func'; the dash sits two to the left
        block = "\n" + emit_entry(entry, indent=indent)
    elif isinstance(section_node, yaml.ScalarNode) and section_node.value in ("", "~", "null"):
        insert_at = section_node.start_mark.line + 1
        block = emit_entry(entry, indent=4)
    else:
        raise YamlEditError(f"{path}: '{SECTION}:' is not a block list of entries; add the entry by hand")
    newline = "\r\n" if "\r\n" in text else "\n"  # keep the file's line endings
    block = block.replace("\n", newline)
    if insert_at > 0 and insert_at <= len(lines) and not lines[insert_at - 1].endswith("\n"):
        lines[insert_at - 1] += newline
    new_text = "".join(lines[:insert_at]) + block + "".join(lines[insert_at:])
    return YamlEdit(path, func, "added", insert_at + 2 if block.startswith("\n") else insert_at + 1, new_text)


def _entry_func(item: yaml.Node) -> str | None:
    if isinstance(item, yaml.MappingNode):
        for k, v in item.value:
            if k.value == "func" and isinstance(v, yaml.ScalarNode):
                return v.value
    return None


def apply(edit: YamlEdit) -> None:
    """Write the edited file atomically (same directory, same mode), if anything changed."""
    if edit.status != "added":
        return
    tmp = None
    try:
        mode = edit.path.stat().st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(prefix=f".{edit.path.name}.", dir=edit.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(edit.new_text)
        os.chmod(tmp, mode)
        os.replace(tmp, edit.path)
    except BaseException as exc:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):  # the file itself is untouched: os.replace is the only write to it
            raise YamlEditError(f"cannot write {edit.path}: {exc.strerror or exc}") from None
        raise
