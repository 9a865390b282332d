"""What the kernel-effects rules share: the effects of the lint's ops, each op's promises (its schemas), and
comparing dtypes read from two sources."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from opkit.effects.model import Evidence, OpEffects
from opkit.formats.schema_site import SchemaSite
from opkit.lint.project import LintProject
from opkit.lint.registry import shared_index
from opkit.signature import OpSignature


@shared_index
def effects_of(project: LintProject) -> dict[str, OpEffects]:
    """Every op's effects, computed once per lint from all producers (``opkit.effects.build``)."""
    from opkit.effects.build import compute

    return compute(project)


@dataclass(frozen=True)
class Promise:
    """One schema of an op whose kernel was read: where it is, what it says, what the kernel does."""

    site: SchemaSite
    sig: OpSignature
    effects: OpEffects

    @property
    def op(self) -> str:
        return self.effects.op

    @property
    def inferred(self) -> bool:
        """A schema inferred from a Python function's annotations (custom_op, direct_register_custom_op): its
        promise is ``mutates_args``, and it sits at the registration, not in a string."""
        return self.site.op_hint is not None and self.site.path.endswith(".py")

    def place(self, argument: str | None = None) -> tuple[int, int]:
        """The file (line, column) of an argument of the schema (its type's first character), else of the schema."""
        if self.inferred:
            return self.site.line, self.site.column
        arg = next((a for a in self.sig.arguments if a.name == argument), None) if argument else None
        return self.site.place(arg.column) if arg is not None and arg.column else (self.site.line, self.site.column)


def promises(project: LintProject) -> Iterator[Promise]:
    """Each schema (C++ def, Python definition) of an op whose effects were read."""
    effects = effects_of(project)
    if not effects:
        return
    for source in (*project.cpp_files, *project.python_files):
        for site in source.schema_sites():
            sig = site.signature
            if sig is None:
                continue
            namespace = sig.namespace or site.namespace
            found = effects.get(f"{namespace}::{sig.full_name}")
            if found is not None and found.kernels:
                yield Promise(site, sig, found)


def evidence_text(evidence: tuple[Evidence, ...], limit: int = 2, *, beside: str = "") -> str:
    """The first pieces of evidence as ``path:line:col: why`` (``line N: why`` in the file ``beside``), and how many more."""
    shown = "; ".join(f"line {e.line}: {e.why}" if e.path == beside else str(e) for e in evidence[:limit])
    return shown + (f" (and {len(evidence) - limit} more)" if len(evidence) > limit else "")


def kernel_name(effects: OpEffects) -> str:
    return ", ".join(dict.fromkeys(k.function for k in effects.kernels))


def my_ops_example(*lines: str, files: dict[str, str] | None = None) -> str:
    """A ``project`` example: ``my_ops.cpp`` made of ``lines``, and other files by name."""
    text = "\n".join(("# file: my_ops.cpp", *lines))
    for name, content in (files or {}).items():
        text += f"\n# file: {name}\n{content}"
    return text


@shared_index
def side_effect_ops(project: LintProject) -> dict[str, tuple[str, int]]:
    """``ns::name`` → (path, line) of each op the linted Python declares impure (``has_side_effect``)."""
    from opkit.formats.python_registrations import side_effect_ops as declared

    found: dict[str, tuple[str, int]] = {}
    for source in project.python_files:
        for op, (line, _) in declared(source.text).items():
            found.setdefault(op, (source.path, line))
    return found


def has_side_effect(project: LintProject, op: str) -> bool:
    return op.split(".", 1)[0] in side_effect_ops(project)


def returns_place(promise: Promise) -> tuple[int, int]:
    """The file (line, column) of the schema's ``->`` (an inferred schema's registration, which has none in the file)."""
    if promise.inferred:
        return promise.site.line, promise.site.column
    at = promise.site.text.find("->")
    return promise.site.place(at + 1) if at >= 0 else (promise.site.line, promise.site.column)


def impls(meta: str, device: str = "my_op") -> tuple[str, str]:
    """The examples' two registrations of my_op: the device kernel ``device`` and the Meta kernel ``meta``."""
    return (
        f'TORCH_LIBRARY_IMPL(my_ops, PrivateUse1, m) {{ m.impl("my_op", TORCH_FN({device})); }}',
        f'TORCH_LIBRARY_IMPL(my_ops, Meta, m) {{ m.impl("my_op", &{meta}); }}',
    )


def compare_dtypes(expected: str | None, found: str | None, checked: Mapping[str, frozenset[str]] | None = None) -> str | None:
    """Why two normalised dtypes (``"int8"``, ``"like:x"``, ``"default"``, None) disagree, or None when they
    agree or opkit cannot tell: an unread expression, two different inputs (which may share a dtype), or an
    input's dtype against a named one, unless ``checked`` (input → the dtypes the kernel accepts for it,
    from its ``TORCH_CHECK``s) shows that input never has that dtype."""
    if expected is None or found is None:
        return None
    expected = "float32" if expected == "default" else expected
    found = "float32" if found == "default" else found
    if expected == found or (expected.startswith("like:") and found.startswith("like:")):
        return None
    if expected.startswith("like:") or found.startswith("like:"):
        like, named = (expected, found) if expected.startswith("like:") else (found, expected)
        accepted = (checked or {}).get(like[5:])
        if accepted and named not in accepted:
            return f"the kernel accepts {like[5:]} only as {' or '.join(sorted(accepted))}"
        return None
    return "the dtypes differ"
