"""A persistent cache of schema parse results, as ruff and mypy keep one.

torchgen's parser is the authority for op-plugin ``func`` strings and also the slowest step of
linting a large op_plugin_functions.yaml (~0.1 ms a schema). Results are kept per schema string, so
editing one entry re-parses only that entry, and are reused only by the same opkit code and the same
installed torchgen (``code_fingerprint``): a cached run reports exactly what a cold run would. The file
is JSON (``opkit.cachedir``: data, never code), a result as plain lists (``encode``/``decode``);
only the results a run asks for are turned back into objects. Set ``OPKIT_CACHE_DIR`` to move it,
``OPKIT_NO_CACHE=1`` or ``opkit lint --no-cache`` to bypass it. Any cache problem (missing, corrupt,
unwritable, refused) just means parsing again.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opkit import cachedir
from opkit.signature import Alias, Argument, ArgType, Dialect, OpSignature, Return, SchemaError, parsed_results, parser_fingerprint, remember_results

# Oldest entries beyond this are dropped when the cache is rewritten.
MAX_ENTRIES = 50_000

Key = tuple[str, Dialect]


FORMAT = 2


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """The code that parse results and findings come from: opkit's own (by content, not only its version)
    and the installed torchgen's parser. Both lint caches key on it."""
    return hashlib.sha256(f"{cachedir.code_hash()}\0{parser_fingerprint()}".encode()).hexdigest()


def fingerprint() -> str:
    """What a parse-cache file must have been written by: this format and ``code_fingerprint()``."""
    return hashlib.sha256(f"{FORMAT}\0{code_fingerprint()}".encode()).hexdigest()


def _cache_file() -> Path | None:
    directory = cachedir.usable()
    return None if directory is None else directory / f"schemas-{fingerprint()[:24]}.json"


@dataclass
class ParseCache:
    """The stored (encoded) results; ``missing`` are the keys of this run that had to be parsed afresh."""

    path: Path | None
    stored: dict[str, Any] = field(default_factory=dict)  # _entry_key -> encode(result)
    types: list[list] = field(default_factory=list)
    missing: list[Key] = field(default_factory=list)

    @classmethod
    def open(cls, keys: Sequence[Key]) -> ParseCache:
        """Load the cache and seed the parser's memo with every result it has for ``keys``."""
        cache = cls(_cache_file())
        document = cachedir.load_json(cache.path) if cache.path is not None else None
        if isinstance(document, dict) and document.get("fingerprint") == fingerprint() and isinstance(document.get("entries"), dict) and isinstance(document.get("types"), list):
            cache.stored, cache.types = document["entries"], document["types"]
        found: dict[Key, OpSignature | SchemaError] = {}
        types: dict[int, ArgType] = {}
        for k in keys:
            encoded = cache.stored.get(_entry_key(k))
            if encoded is not None:
                try:
                    found[k] = decode(encoded, k, cache.types, types)
                except (TypeError, ValueError, IndexError, KeyError):  # not what encode wrote: parse afresh
                    pass
        remember_results(found)
        cache.missing = [k for k in keys if k not in found]
        return cache

    def save(self) -> None:
        """Add this run's new results and rewrite the file atomically; skip silently when unwritable."""
        if not self.missing or self.path is None:
            return
        types = list(self.types)
        index = {tuple(t): i for i, t in enumerate(types)}
        merged = dict(self.stored)
        for k, result in parsed_results(self.missing).items():
            merged.pop(_entry_key(k), None)  # re-inserted last: the newest are kept when trimming
            merged[_entry_key(k)] = encode(result, types, index)
        if len(merged) > MAX_ENTRIES:
            merged = dict(list(merged.items())[-MAX_ENTRIES:])
        cachedir.store_json(self.path, {"fingerprint": fingerprint(), "types": types, "entries": merged})


def _entry_key(key: Key) -> str:
    text, dialect = key
    return f"{dialect.value}\0{text}"


# -- a parse result as JSON: plain lists, each type once in a shared table -----------------------------


def _type_index(t: ArgType, types: list[list], index: dict[tuple, int]) -> int:
    row = (t.base, t.optional, t.is_list, t.size, t.elem_optional)
    if row not in index:
        index[row] = len(types)
        types.append(list(row))
    return index[row]


def _alias(a: Alias | None) -> list | None:
    return None if a is None else [list(a.sets), a.is_write, list(a.after), a.shorthand, a.on_list]


def encode(result: OpSignature | SchemaError, types: list[list], index: dict[tuple, int]) -> list:
    """``result`` as JSON lists; its types are appended to ``types`` (``index`` maps a type's fields to its place)."""
    if isinstance(result, SchemaError):
        return ["error", result.message, result.column, result.hint, result.canonical]
    arguments = [[a.name, _type_index(a.type, types, index), a.default, _alias(a.alias), a.kwarg_only, a.column] for a in result.arguments]
    returns = [[_type_index(r.type, types, index), r.name, _alias(r.alias)] for r in result.returns]
    return ["ok", result.name, result.overload, result.namespace, arguments, returns]


def decode(encoded: list, key: Key, table: list[list], types: dict[int, ArgType]) -> OpSignature | SchemaError:
    """The result ``encode`` gave for ``key``; equal types come back as one object, as the parser shares them."""
    text, dialect = key

    def type_at(i: int) -> ArgType:
        if i not in types:
            base, optional, is_list, size, elem_optional = table[i]
            types[i] = ArgType(str(base), bool(optional), bool(is_list), None if size is None else int(size), bool(elem_optional))
        return types[i]

    def alias(a: list | None) -> Alias | None:
        return None if a is None else Alias(tuple(a[0]), bool(a[1]), tuple(a[2]), bool(a[3]), bool(a[4]))

    if encoded[0] == "error":
        _, message, column, hint, canonical = encoded
        error = SchemaError(message, text=text, column=int(column), dialect=dialect, hint=hint)
        error.canonical = canonical
        return error
    _, name, overload, namespace, arguments, returns = encoded
    return OpSignature(
        text, dialect, name, overload, namespace,
        tuple(Argument(n, type_at(t), d, alias(al), bool(kw), int(c)) for n, t, d, al, kw, c in arguments),
        tuple(Return(type_at(t), n, alias(al)) for t, n, al in returns),
    )  # fmt: skip
