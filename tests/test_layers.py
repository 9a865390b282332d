"""opkit's layers, read from its source: the readers (``opkit.formats``) import no layer above them, the
shared modules at opkit's top level (the signature model, the torch-npu wheel, the cache) import no layer,
``opkit check`` does not import ``opkit verify`` (verify compiles with check, not the other way round), and
no modules import each other in a circle.

Every import counts, at module level or inside a function (a lazy import hides a circle, it does not
remove it); only ``if TYPE_CHECKING:`` blocks are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "opkit"

# Layers the readers sit under: nothing in opkit.formats may import them.
ABOVE_FORMATS = ("opkit.effects", "opkit.lint", "opkit.adopt", "opkit.generate", "opkit.verify", "opkit.cli", "opkit.check")
# Layers above the kernel-effects model (opkit.effects): it reads the readers' records and no consumer's.
ABOVE_EFFECTS = ABOVE_FORMATS[1:]
LAYERS = ("opkit.formats", *ABOVE_FORMATS)

# None left: the last (the signature model ↔ the op-plugin fast path) went when opkit.signature became a
# package whose model sits under both its parsers (docs/layers.md). A new circle fails test_no_import_circles.
KNOWN_CIRCLES: list[frozenset[str]] = []


def module_files(package: Path) -> dict[str, Path]:
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module → the opkit modules it imports. ``from a import b`` is an edge to ``a.b`` when that is a
    module, else to ``a``; a name that is no module resolves to the nearest enclosing one."""
    modules = module_files(package)

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package_name = module if path.name == "__init__.py" else module.rpartition(".")[0]
        skipped = _type_checking_nodes(tree)
        targets: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package_name.split(".")[: len(package_name.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            targets.update(t for t in map(resolve, (n for n in names if n.split(".")[0] == "opkit")) if t and t != module)
        graph[module] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph(PACKAGE)


def test_the_graph_sees_lazy_imports_and_skips_type_checking(tmp_path):
    pkg = tmp_path / "opkit"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from opkit.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from opkit import a\nfrom . import c\n")
    (pkg / "sub" / "c.py").write_text("import opkit.a\nfrom opkit.sub.b import name\n")
    g = import_graph(pkg)
    assert g["opkit.a"] == {"opkit.sub.b"}
    assert g["opkit.sub.b"] == {"opkit.sub.c"}
    assert g["opkit.sub.c"] == {"opkit.a", "opkit.sub.b"}
    assert circles(g) == [frozenset({"opkit.a", "opkit.sub.b", "opkit.sub.c"})]


def test_the_readers_import_no_layer_above_them(graph):
    readers = {m: targets for m, targets in graph.items() if m == "opkit.formats" or m.startswith("opkit.formats.")}
    assert {"opkit.formats.opdef_cpp", "opkit.formats.cpp_text", "opkit.formats.msopgen_json", "opkit.formats.op_plugin_yaml"} <= set(readers)
    wrong = {m: sorted(t for t in targets if t.startswith(ABOVE_FORMATS)) for m, targets in readers.items()}
    assert {m: t for m, t in wrong.items() if t} == {}


def _layer_imports(graph: dict[str, set[str]], modules, forbidden: tuple[str, ...]) -> dict[str, list[str]]:
    wrong = {m: sorted(t for t in graph[m] if t.startswith(forbidden)) for m in modules}
    return {m: t for m, t in wrong.items() if t}


def test_the_shared_top_level_modules_import_no_layer(graph):
    """``opkit.signature``, ``opkit.torch_npu_wheel``, ``opkit.cachedir`` ...: what several layers use lives under all of them."""
    shared = [m for m in graph if m.count(".") == 1 and m not in LAYERS and m != "opkit.__main__"]
    assert {"opkit.signature", "opkit.torch_npu_wheel", "opkit.installed", "opkit.cachedir"} <= set(shared)
    assert _layer_imports(graph, shared, LAYERS) == {}


def test_the_effects_model_imports_no_consumer(graph):
    """``opkit.effects`` sits between the readers and their consumers: lint, verify and new read it, it reads none of them."""
    effects = [m for m in graph if m == "opkit.effects" or m.startswith("opkit.effects.")]
    assert "opkit.effects.model" in effects
    assert _layer_imports(graph, effects, ABOVE_EFFECTS) == {}


def test_check_imports_no_verify(graph):
    """``opkit verify`` compiles a project with ``opkit check``; the wheel both read sits below them (opkit.torch_npu_wheel)."""
    checks = [m for m in graph if m == "opkit.check" or m.startswith("opkit.check.")]
    assert "opkit.check.launcher" in checks
    assert _layer_imports(graph, checks, ("opkit.verify", "opkit.cli")) == {}


def test_no_reader_lives_outside_the_readers_layer(graph):
    assert not [m for m in graph if m.startswith(("opkit.lint.sources", "opkit.adopt.model", "opkit.adopt.opdef_cpp", "opkit.adopt.msopgen_json"))]


def test_the_signature_model_sits_under_its_parsers(graph):
    """``opkit.signature``'s modules: the model imports no parser, the fast path only the model, and none
    imports the package itself (its ``__init__`` imports the parser: docs/layers.md, "Inside opkit.signature")."""
    inside = {m: t for m, t in graph.items() if m.startswith("opkit.signature.")}
    assert set(inside) == {"opkit.signature.model", "opkit.signature.fastpath", "opkit.signature.parse"}
    assert graph["opkit.signature.model"] == {"opkit.naming", "opkit.torch_lexer"}
    assert graph["opkit.signature.fastpath"] == {"opkit.signature.model"}
    assert {"opkit.signature.model", "opkit.signature.fastpath"} <= graph["opkit.signature.parse"]
    assert graph["opkit.signature"] == {"opkit.signature.model", "opkit.signature.parse"}
    assert [m for m, targets in inside.items() if "opkit.signature" in targets] == []

def test_no_import_circles(graph):
    found = circles(graph)
    assert [c for c in found if c not in KNOWN_CIRCLES] == []
    assert [c for c in KNOWN_CIRCLES if c not in found] == [], "a known circle is gone: remove it from KNOWN_CIRCLES"


def test_a_yaml_only_lint_imports_no_cpp_reader(tmp_path):
    """Every rule is loaded for any lint; the C++ readers only when a C++ file is read (their import and
    regexes are a measurable part of a cold lint)."""
    import subprocess
    import sys

    (tmp_path / "op_plugin_functions.yaml").write_text("custom:\n  - func: my_op(Tensor x) -> Tensor\n    op_api: all_version\n")
    code = (
        "import sys\nfrom opkit.lint import lint\nlint([sys.argv[1]], use_cache=False)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('opkit.formats.cpp', 'opkit.formats.opdef'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "op_plugin_functions.yaml")], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
