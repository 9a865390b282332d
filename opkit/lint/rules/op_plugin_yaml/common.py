"""Facts and helpers the op_plugin_yaml rules share."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from opkit.lint.finding import Violation
from opkit.lint.registry import shared_index
from opkit.formats.op_plugin_yaml import OpPluginFile, YamlEntry, YNode
from opkit.formats.version_specs import VersionSpec
from opkit.signature import Dialect, OpSignature, parse_schema, SchemaError, SchemaKind


# Entry fields the codegen (or torchgen's NativeFunction, or torch_npu's registration) reads.
# Checked against the real file: these 14 are exactly the fields its 1514 entries use.
ENTRY_FIELDS = frozenset(
    {
        "func",
        "op_api",
        "acl_op",
        "gen_opapi",
        "exposed",
        "internal_format_opapi",
        "dvm",
        "sparse",
        "device_check",
        "tags",
        "dispatch",
        "structured",
        "structured_delegate",
        "use_const_ref_for_mutable_tensors",
    }
)


DEVICE_CHECKS = ("NoCheck", "ExactSame")


# gen_opapi keys that are not output (result) descriptions; every other key names a result.
GEN_OPAPI_KEYS = frozenset({"exec", "structured_inherit", "new_params", "integral_identity_tensor", "cpu_scalar_h2d", "cpu_scalar_op"})


OUTPUT_FIELDS = ("size", "dtype", "name")  # name: propagate_names source (ResInfo.infer_name)


# struct_codegen.py's USED_KEYS: gen_opapi anywhere else is never read.
GEN_OPAPI_SECTIONS = ("official", "custom")


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class EntryFacts:
    entry: YamlEntry
    signature: OpSignature | None
    specs: dict[str, VersionSpec]
    versions: frozenset[str]  # where the codegen keeps the entry (OpPluginFile.active_versions)

    @property
    def op(self) -> str | None:
        return self.signature.full_name if self.signature is not None else None


@dataclass
class FileIndex:
    is_fragment: bool
    universe: tuple[str, ...]  # all_version, or in a fragment every vX.Y the file mentions, in order
    entries: list[EntryFacts]
    gen_opapi_by_name: dict[str, EntryFacts]  # name.overload → official/custom entry the codegen can inherit from


def _signature(func: str | None) -> OpSignature | None:
    if func is None:
        return None
    try:
        return parse_schema(func, Dialect.OP_PLUGIN)
    except SchemaError:
        return None  # reported by the S rules


@shared_index
def file_index(file: OpPluginFile) -> FileIndex:
    """Everything the Y rules share, computed once per file."""
    facts = [EntryFacts(entry, _signature(entry.func), file.specs(entry), file.active_versions(entry)) for entry in file.entries]
    by_name: dict[str, EntryFacts] = {}
    for fact in facts:
        if fact.op is not None and fact.entry.section in GEN_OPAPI_SECTIONS and fact.entry.get("gen_opapi") is not None:
            by_name.setdefault(fact.op, fact)
    return FileIndex(file.is_fragment, file.universe, facts, by_name)


def spec_problems(file: OpPluginFile, code: str) -> Iterator[Violation]:
    for fact in file_index(file).entries:
        for spec in fact.specs.values():
            for p in spec.problems:
                if p.code == code:
                    yield Violation(p.message, line=p.line, column=p.column, hint=p.hint, op=fact.op)


def mapping_duplicates(node: YNode) -> Iterator[tuple[YNode, object]]:
    """Every duplicate key in ``node`` and the mappings nested inside it."""
    if node.kind == "mapping":
        for dup in node.duplicates:
            yield node, dup
        for child in node.value.values():
            yield from mapping_duplicates(child)
    elif node.kind == "sequence":
        for child in node.value:
            yield from mapping_duplicates(child)


@dataclass(frozen=True)
class GenOpApi:
    """The gen_opapi block the codegen uses for one entry: its own, or the one it inherits."""

    fact: EntryFacts
    signature: OpSignature
    block: YNode  # the mapping read (the target's when inherited)
    inherited_from: str | None  # structured_inherit target, when the block is the target's
    anchor: tuple[int, int]  # where to report problems that belong to the entry

    @property
    def outputs(self) -> dict[str, YNode]:
        """Result descriptions: every key that is not one of the other gen_opapi keys."""
        return {k: v for k, v in self.block.value.items() if k not in GEN_OPAPI_KEYS}

    @property
    def new_params(self) -> set[str]:
        node = self.block.value.get("new_params")
        return set(node.value) if node is not None and node.kind == "mapping" else set()

    @property
    def result_names(self) -> set[str]:
        if self.signature.kind is SchemaKind.OUT:
            return {a.name for a in self.signature.out_arguments}
        return set(self.outputs)

    def where(self, node: YNode | None = None, key: str | None = None) -> tuple[int, int]:
        """Position to report: the block's ``key`` if given, else ``node`` itself, unless it lives in another
        entry's (inherited) block. Every caller passes one of them."""
        if self.inherited_from is not None:
            return self.anchor
        if key is not None:
            return self.block.key_position(key)
        assert node is not None
        return node.line, node.column

    @property
    def suffix(self) -> str:
        return f" (inherited from {self.inherited_from})" if self.inherited_from else ""


def gen_opapi_blocks(file: OpPluginFile) -> Iterator[GenOpApi]:
    """The effective gen_opapi of every entry the generator reads whose func parses.

    An in-place entry with ``structured_inherit`` delegates to the out kernel and has no block of its
    own; any other entry with it uses the target's block (``struct_map.get(structured_inherit)``).
    """
    index = file_index(file)
    for fact in index.entries:
        node = fact.entry.get("gen_opapi")
        if node is None or fact.signature is None or fact.entry.section not in GEN_OPAPI_SECTIONS or node.kind != "mapping":
            continue
        inherit = node.value.get("structured_inherit")
        if inherit is None:
            yield GenOpApi(fact, fact.signature, node, None, fact.entry.node.key_position("gen_opapi"))
            continue
        target = index.gen_opapi_by_name.get(str(inherit.value))
        if fact.signature.kind is SchemaKind.INPLACE or target is None:
            continue  # delegation, or a missing target (Y105)
        target_block = target.entry.get("gen_opapi")
        if target_block.kind == "mapping" and "structured_inherit" not in target_block.value:
            yield GenOpApi(fact, fact.signature, target_block, target.op, (inherit.line, inherit.column))


def exec_parts(node: YNode) -> list[str] | None:
    """``exec`` split as the codegen splits it, or None when it is not a string."""
    return [p.strip() for p in node.value.split(",")] if isinstance(node.value, str) else None
