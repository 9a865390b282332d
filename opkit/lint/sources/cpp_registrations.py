"""C++ files that register ops (``TORCH_LIBRARY`` blocks), as lint sources: the records of
``opkit.formats.cpp_registrations`` plus the schema sites their defs give the schema rules.

A C++ file is read as what it contains: op_host OpDefs (``opdef_cpp``), registrations (here), or both.
Macros are read from every C++ file of the group first, so a wrapper defined in a header
(``TORCH_LIBRARY_EXPAND``) and a namespace pasted by ``CONCAT`` resolve when that header is linted too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from opkit.formats.cpp_registrations import (
    CppDef,
    CppFunction,
    CppReadError,
    CppRegistrationFile,
    Macros,
    macro_definitions,
    read_cpp_registrations,
    registers_anything,
)
from opkit.lint.sources import InputError, SchemaSite
from opkit.lint.suppression import NoqaMap
from opkit.signature import Dialect

CPP_EXTENSIONS = (".cpp", ".cc", ".cxx", ".asc", ".h", ".hpp")


@dataclass(eq=False)
class CppSource:
    path: str
    text: str
    records: CppRegistrationFile
    noqa: NoqaMap = field(default_factory=NoqaMap)

    @property
    def defs(self) -> list[CppDef]:
        return self.records.defs

    @property
    def impls(self):
        return self.records.impls

    def schema_sites(self) -> list[SchemaSite]:
        return [schema_site(self.path, d) for d in self.records.defs]


def schema_site(path: str, d: CppDef) -> SchemaSite:
    """A def's schema where the schema rules see it: torch.library's dialect, the block's namespace."""
    return SchemaSite(d.schema, path, d.line, d.column, Dialect.TORCH_LIBRARY, op_hint=d.qualname.split(".")[0] or None, namespace=d.namespace, runs=d.runs)


def group_macros(texts: dict[str, str]) -> Macros:
    """The ``#define``s of every C++ file of a group, so a header's wrapper serves the files beside it."""
    macros: Macros = {}
    for path, text in texts.items():
        if path.lower().endswith(CPP_EXTENSIONS) and "#" in text:
            macros.update(macro_definitions(path, text))
    return macros


def registers(text: str, macros: Macros) -> bool:
    return registers_anything(text, macros)


def load_cpp_registrations(path: str, text: str, macros: Macros) -> CppSource:
    try:
        records = read_cpp_registrations(path, text, macros)
    except CppReadError as exc:
        raise InputError("E002", f"cannot read the C++ registrations: {exc.message}", line=exc.line, column=exc.column) from None
    return CppSource(path, text, records, NoqaMap.from_text(text, comment="//"))


def function_index(sources: list[CppSource], others: dict[str, str], macros: Macros) -> dict[str, list[CppFunction]]:
    """Every C++ function the registrations' kernels may name, by its unqualified name: those of the
    registering files, and those of the group's other C++ files (headers, kernel sources) that mention a
    name a kernel uses and is not yet found (only those files are read)."""
    index: dict[str, list[CppFunction]] = {}
    for source in sources:
        for fn in source.records.functions:
            index.setdefault(fn.short_name, []).append(fn)
    wanted = {i.kernel.name.rsplit("::", 1)[-1] for s in sources for i in s.impls if i.kernel.kind == "function"}
    wanted |= {d.kernel.name.rsplit("::", 1)[-1] for s in sources for d in s.defs if d.kernel is not None and d.kernel.kind == "function"}
    wanted -= set(index)
    if not wanted:
        return index
    pattern = re.compile(r"\b(" + "|".join(sorted(map(re.escape, wanted))) + r")\s*\(")
    for path, text in others.items():
        if not pattern.search(text):
            continue
        try:
            records = read_cpp_registrations(path, text, macros)
        except CppReadError:
            continue  # a header opkit cannot tokenize: its functions stay unknown, never an error of the linted files
        for fn in records.functions:
            if fn.short_name in wanted:
                index.setdefault(fn.short_name, []).append(fn)
    return index
