"""Load inputs, run the selected rules, apply suppressions: `opkit lint` as a library call."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from opkit.formats.files import CPP_HEADER_EXTENSIONS, InputError, NotLinted, check_parsed_size, read_text
from opkit.formats.schema_site import SchemaSite
from opkit.lint.discovery import InputGroup, discover
from opkit.lint.finding import Finding, Severity, Violation, input_error_finding, not_linted_finding
from opkit.lint.project import LintProject
from opkit.lint import rules as rule_modules
from opkit.lint.registry import RULES, Rule, Selection, load_rules
from opkit.signature import Dialect, OpSignature

SCHEMA_PATH = "<schema>"


@dataclass(frozen=True)
class LintResult:
    findings: tuple[Finding, ...]
    files: int

    @property
    def has_fatal(self) -> bool:
        return any(f.severity is Severity.FATAL for f in self.findings)

    def exit_code(self, fail_on: Severity = Severity.ERROR) -> int:
        """0 clean, 1 findings at or above ``fail_on``, 2 unreadable input."""
        if self.has_fatal:
            return 2
        return 1 if any(f.severity >= fail_on for f in self.findings) else 0


# Text that any registration module opkit reads contains; other Python files found by walking a
# directory (codegen scripts, tests, packaging) are not parsed at all.
# A Library imported from a sibling module (``from ._lib import lib``) is used as ``lib.define(`` / ``lib.impl(``
# (TorchAir's npugraph_ex/ops): those modules name neither torch.library nor Library(.
# vLLM/sglang register Python ops with their direct_register_custom_op helpers.
REGISTRATION_MARKERS = ("torch.library", "Library(", "register_fake", "custom_op", "impl_abstract", "has_side_effect", ".define(", ".impl(", "direct_register_custom_op")


def load_project(paths: Sequence[str], schemas: Sequence[str] = (), dialect: Dialect = Dialect.OP_PLUGIN) -> LintProject:
    """Every input of ``paths`` in one project (no pairing by directory): for tools and tests."""
    problems: list[Finding] = []
    group = InputGroup("", [item for g in discover(paths, problems) for item in g.inputs])
    project = load_group(group, read_inputs(group), schemas, dialect)
    project.input_findings[:0] = problems
    return project


def read_inputs(group: InputGroup) -> dict[str, str | InputError]:
    """Each input's text, or the InputError saying why it cannot be read."""
    texts: dict[str, str | InputError] = {}
    for item in group.inputs:
        try:
            texts[item.path] = read_text(item.path)
        except InputError as exc:
            texts[item.path] = exc
    return texts


def load_group(group: InputGroup, texts: dict[str, str | InputError], schemas: Sequence[str] = (), dialect: Dialect = Dialect.OP_PLUGIN) -> LintProject:
    """Read every input of the group into its source type; unreadable ones become FATAL findings, the rest still load."""
    project = LintProject(root=group.root)
    for i, schema in enumerate(schemas):
        project.schema_sites.append(SchemaSite(schema, SCHEMA_PATH if len(schemas) == 1 else f"<schema {i + 1}>", 1, 1, dialect))
    targets = {
        "yaml": project.yaml_files, "python": project.python_files, "msopgen": project.msopgen_files, "opdef": project.opdef_files,
        "cpp": project.cpp_files, "launch": project.launch_files,
    }  # fmt: skip
    macros, blocks, other_cpp = None, None, {}
    for item in group.inputs:
        text = texts[item.path]
        if isinstance(text, InputError):
            project.input_findings.append(input_error_finding(text, item.path))
            continue
        if item.kind == "python" and not item.explicit and not any(m in text for m in REGISTRATION_MARKERS):
            continue  # not a registration module
        kinds = [item.kind]
        if item.kind == "cpp":
            from opkit.formats import cpp_registrations as cpp_sources

            if macros is None:  # every C++ file's #defines, so a header's wrapper macro serves its neighbours
                macros = cpp_sources.group_macros({i.path: texts[i.path] for i in group.inputs if i.kind == "cpp" and isinstance(texts[i.path], str)})
                blocks = cpp_sources.block_macros(macros)
            kinds = _cpp_kinds(item.path, text, macros, blocks)
            if not kinds:
                other_cpp[item.path] = text  # a header or kernel source: read only for its macros and the functions kernels name
                if item.explicit and item.path.lower().endswith(CPP_HEADER_EXTENSIONS):
                    project.input_findings.append(not_linted_finding(NotLinted("a header that registers nothing (read for its macros and declarations)"), item.path))
                elif item.explicit:
                    project.input_findings.append(input_error_finding(InputError("E006", "no op registration found: no OpDef (`class X : public OpDef`) and no TORCH_LIBRARY block"), item.path))
                continue
        for kind in kinds:
            _load_one(project, targets[kind], item, kind, text, macros, lambda path: _module_text(path, texts))
    project.cpp_texts = {i.path: texts[i.path] for i in group.inputs if i.kind == "cpp" and isinstance(texts[i.path], str)}
    if project.cpp_files:
        from opkit.formats import cpp_registrations as cpp_sources

        project.cpp_functions = cpp_sources.function_index(project.cpp_files, other_cpp, macros or {})
    return project


def _cpp_kinds(path: str, text: str, macros, blocks) -> list[str]:
    """What a C++ file is read as: ``opdef`` (an op_host .cpp declaring an OpDef), ``cpp`` (TORCH_LIBRARY
    registrations), ``launch`` (``<<<>>>`` kernel launches), several, or none."""
    from opkit.formats import cpp_registrations as cpp_sources
    from opkit.formats.kernel_launches import has_launches

    kinds = []
    if "OpDef" in text and path.lower().endswith(".cpp"):
        kinds.append("opdef")
    if cpp_sources.registers_anything(text, macros, blocks=blocks):
        kinds.append("cpp")
    if has_launches(text):
        kinds.append("launch")  # host code launching a kernel with <<<>>>: the K rules
    return kinds


def _module_text(path: str, texts: dict) -> str | None:
    """Another module of a linted package (``from ._lib import lib``): the group's copy, else the file."""
    text = texts.get(path)
    if isinstance(text, str):
        return text
    try:
        return read_text(path) if os.path.isfile(path) else None
    except InputError:
        return None


def _load_one(project: LintProject, target: list, item, kind: str, text: str, macros, modules) -> None:
    """Load one input as ``kind`` into ``target``; what cannot be read becomes a finding."""
    try:
        check_parsed_size(text, kind)
        if kind == "cpp":
            from opkit.formats.cpp_registrations import load_cpp_registrations

            source = load_cpp_registrations(item.path, text, macros)
        elif kind == "python":
            source = _loader(kind)(item.path, text, explicit=item.explicit, modules=modules, trees=project.python_trees)
        elif kind == "launch":
            source = _loader(kind)(item.path, text, explicit=item.explicit, cache=project.cpp_tokens)
        else:
            source = _loader(kind)(item.path, text, explicit=item.explicit)
    except InputError as exc:
        project.input_findings.append(input_error_finding(exc, item.path))
        return
    except NotLinted as exc:
        project.input_findings.append(not_linted_finding(exc, item.path))
        return
    except RecursionError:  # json, PyYAML and our builders recurse per nesting level
        project.input_findings.append(input_error_finding(InputError("E003", "nested too deeply to read"), item.path))
        return
    project.input_findings.extend(input_error_finding(e, item.path) for e in getattr(source, "structure_errors", ()))
    target.append(source)


def _loader(kind: str):
    """The source loader for a kind of file, imported on first use."""
    if kind == "yaml":
        from opkit.formats.op_plugin_yaml import load_op_plugin_yaml

        return load_op_plugin_yaml
    if kind == "python":
        from opkit.formats.python_registrations import load_registration_file

        return load_registration_file
    if kind == "opdef":
        from opkit.formats.opdef_cpp import load_opdef_cpp

        return load_opdef_cpp
    if kind == "launch":
        from opkit.formats.kernel_launches import load_kernel_launch_file

        return load_kernel_launch_file
    from opkit.formats.msopgen_json import load_msopgen_json

    return load_msopgen_json


def _finding(rule: Rule, v: Violation, *, path: str, line: int, column: int, op: str | None) -> Finding:
    return Finding(
        code=rule.code,
        severity=rule.severity,
        message=v.message,
        path=v.path or path,
        line=v.line if v.line is not None else line,
        column=v.column if v.column is not None else column,
        op=v.op or op,
        hint=v.hint,
    )


def run_rules(project: LintProject, selection: Selection = Selection()) -> list[Finding]:
    kinds = project.kinds()
    load_rules(kinds)
    # Not the rules of modules these inputs do not need, even where they were imported before: what
    # runs depends on the inputs alone, so tests in one process check the table as a fresh lint uses it.
    skipped = set(rule_modules.RULE_MODULES).difference(rule_modules.modules_for(kinds))
    rules = [r for r in RULES.values() if selection.enabled(r.code) and r.check.__module__.rpartition(".")[0] not in skipped]
    findings: list[Finding] = []
    by_scope: dict[str, list[Rule]] = {}
    for r in rules:
        by_scope.setdefault(r.scope, []).append(r)

    schema_rules = by_scope.get("schema", [])
    aten_rules = [r for r in schema_rules if not r.new_ops_only]
    for site in project.all_schema_sites():
        parsed = site.parsed
        op = parsed.full_name if isinstance(parsed, OpSignature) else site.op_hint or _name_guess(site.text)
        for r in schema_rules if site.is_custom else aten_rules:
            for v in _violations(r, site, site.path, findings):
                # A violation's column is relative to the schema text; place it in the file.
                line, column = site.place(v.column or 1)
                findings.append(_finding(r, Violation(v.message, v.line, None, v.hint, v.path, v.op), path=site.path, line=line, column=column, op=op))
    for scope, sources in (("yaml", project.yaml_files), ("python", project.python_files), ("msopgen", project.msopgen_files), ("opdef", project.opdef_files), ("cpp", project.cpp_files),
                          ("launch", project.launch_files)):  # fmt: skip
        for source in sources:
            for r in by_scope.get(scope, ()):
                findings.extend(_finding(r, v, path=source.path, line=1, column=1, op=None) for v in _violations(r, source, source.path, findings))
    for r in by_scope.get("project", ()):
        findings.extend(_finding(r, v, path="", line=1, column=1, op=None) for v in _violations(r, project, "", findings))

    sources = (*project.yaml_files, *project.python_files, *project.msopgen_files, *project.opdef_files, *project.cpp_files, *project.launch_files)
    noqa = {s.path: s.noqa for s in sources if getattr(s, "noqa", None)}
    return [f for f in findings if not (f.path in noqa and noqa[f.path].suppresses(f.line, f.code))]


def _violations(rule: Rule, subject: object, path: str, findings: list[Finding]) -> list[Violation]:
    """Run one rule; a rule that crashes becomes an E005 finding instead of a traceback, and linting goes on."""
    try:
        return list(rule.check(subject))
    except Exception as exc:  # a bug in opkit, reported like ruff reports a panicking rule
        message = f"internal error: rule {rule.code} raised {type(exc).__name__}: {exc}; please report it with this input"
        findings.append(Finding("E005", Severity.FATAL, message, path))
        return []


def _name_guess(text: str) -> str | None:
    head = text.split("(", 1)[0].strip()
    return head.split("::")[-1] or None if head else None


# Below this many schemas a cache file costs more than it saves.
CACHE_MIN_SCHEMAS = 100


def lint(
    paths: Sequence[str] = (),
    *,
    schemas: Sequence[str] = (),
    dialect: Dialect = Dialect.OP_PLUGIN,
    selection: Selection = Selection(),
    use_cache: bool = True,
) -> LintResult:
    """Lint ``paths`` (files and directories) and ``schemas``, each project's files paired with each other."""
    with _without_cycle_collection():
        return _lint(paths, schemas, dialect, selection, use_cache)


@contextlib.contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while linting, as mypy and pickle loading do.

    Loading builds ~100k long-lived objects (yaml nodes, a Meta module's AST, signatures) and makes
    no reference cycles worth collecting; each collection the allocations trigger walks all of
    them again. Measured on the real yaml + Meta file: ~45% of the CPU time of a cold run.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _lint(paths: Sequence[str], schemas: Sequence[str], dialect: Dialect, selection: Selection, use_cache: bool) -> LintResult:
    from opkit import cachedir

    problems: list[Finding] = []
    groups = discover(paths, problems)
    if schemas and not (groups and groups[0].root == ""):
        groups.insert(0, InputGroup(""))  # --schema strings join the command line's group
    caching = use_cache and cachedir.enabled()
    if caching:  # a run without caches never loads the hashing and writing behind them
        from opkit.lint import result_cache
    # The selection as given, not the codes it enables: resolving it would import every rule module, whose
    # code the key's code_fingerprint covers already; rules registered from elsewhere (a test's) it does not.
    patterns = tuple(tuple(sorted({p.strip().upper() for p in given if p.strip()})) for given in (selection.select, selection.ignore))
    foreign = sorted(code for code, r in RULES.items() if not r.check.__module__.startswith("opkit.lint.rules.") and selection.enabled(code))
    from opkit import torch_npu_ops

    settings = (patterns, foreign, torch_npu_ops.stamp())  # findings depend on torch_npu's op list where a file re-declares its ops
    findings = [f for f in problems if selection.enabled(f.code) or f.severity is Severity.FATAL]
    files = 0
    for group in groups:
        group_schemas = schemas if group.root == "" else ()
        texts = read_inputs(group)
        readable = all(isinstance(t, str) for t in texts.values())
        key = result_cache.key(group, texts, (settings, dialect.value, tuple(group_schemas))) if caching and readable else None
        stored = result_cache.load(key) if key is not None else None
        if stored is None:
            stored = _lint_group(group, texts, group_schemas, dialect, selection, parse_cache=caching)
            if key is not None:
                result_cache.store(key, *stored)
        findings += stored[0]
        files += stored[1]
    return LintResult(tuple(sorted(set(findings), key=lambda f: f.sort_key)), files)


def _lint_group(group: InputGroup, texts: dict, schemas: Sequence[str], dialect: Dialect, selection: Selection, *, parse_cache: bool) -> tuple[list[Finding], int]:
    project = load_group(group, texts, schemas, dialect)
    parses = None
    if parse_cache:
        from opkit.lint import cache

        keys = list(dict.fromkeys((s.text, s.dialect) for s in project.all_schema_sites()))
        parses = cache.ParseCache.open(keys) if len(keys) >= CACHE_MIN_SCHEMAS else None
    findings = [f for f in project.input_findings if selection.enabled(f.code) or f.severity is Severity.FATAL]
    findings += run_rules(project, selection)
    if parses is not None:
        parses.save()
    files = {s.path for s in (*project.yaml_files, *project.python_files, *project.msopgen_files, *project.opdef_files, *project.cpp_files, *project.launch_files)}
    return findings, len(files)


__all__ = ["LintResult", "lint", "load_project", "run_rules", "RULES"]
