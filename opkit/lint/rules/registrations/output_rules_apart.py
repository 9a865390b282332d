"""M016 output-rules-apart."""

from __future__ import annotations

import ast
import difflib
import json
from collections.abc import Iterator
from pathlib import Path

from opkit.lint.finding import Severity, Violation
from opkit.lint.registry import rule
from opkit.lint.project import LintProject

# What `opkit new` keeps of its last generation (opkit.generate.update.GENERATED_DIR; lint does not import the generator).
GENERATED = Path(".opkit", "generated")
SPEC = "opkit.json"

_SPEC = '{"name": "my_op", "schema": "my_op(Tensor x, Tensor y) -> Tensor", "style": "op-plugin", "outputs": {}}'
_YAML = "custom:\n  - func: my_op(Tensor x, Tensor y) -> Tensor\n    op_api: all_version\n    gen_opapi:\n      out:\n        size: x\n        dtype: x\n      exec: aclnnMyOp"
_META = (
    'import torch\nfrom torch.library import Library, impl\n\nm = Library("npu", "IMPL", "Meta")\n\n\n'
    '@impl(m, "my_op")\ndef my_op_meta(x, y):\n    return torch.empty_like({})'
)


def _example(meta_like: str) -> str:
    files = {
        SPEC: _SPEC, f"{GENERATED}/{SPEC}": _SPEC,
        "op_plugin/op_plugin_functions.yaml": _YAML, f"{GENERATED}/op_plugin/op_plugin_functions.yaml": _YAML,
        "meta/my_op_meta.py": _META.format(meta_like), f"{GENERATED}/meta/my_op_meta.py": _META.format("x"),
    }  # fmt: skip
    return "\n".join(f"# file: {name}\n{text}" for name, text in files.items())


@rule("M016", "output-rules-apart", severity=Severity.ERROR, scope="project", example=_example("y"), fixed=_example("x"))
def output_rules_apart(project: LintProject) -> Iterator[Violation]:
    """In an opkit project, a hand edit changed the output rule of one of Meta, yaml entry and OpDef, not the others.

    ``opkit new`` writes an op's output sizes and dtypes three times from the one rule in opkit.json
    (``--output``/``--out-like``): the Meta function (what the graph plans), the yaml entry's
    ``gen_opapi`` outputs (what op-plugin allocates on the NPU) and the OpDef's InferShape/InferDataType
    (what CANN infers). It keeps what it wrote in ``.opkit/generated/``. When one of them no longer matches
    that generation and another still does, they disagree: fixing only the Meta function makes lint and
    verify pass off the NPU while the NPU allocates the old size. Change the rule in opkit.json instead
    (``opkit new NAME --force --output OUT=RULE`` regenerates all of them and the kernel, keeping your
    other edits), or make the same edit in each file. Nothing is reported while opkit.json itself differs
    from the generation (the next ``--force`` brings them together).
    """
    root = Path(project.root) if project.root else None
    if root is None or not (root / SPEC).is_file() or not (root / GENERATED / SPEC).is_file():
        return
    spec = _json(root / SPEC)
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or _spec_fields(spec) != _spec_fields(_json(root / GENERATED / SPEC)):
        return
    name = spec["name"]
    parts = [part for part in (_meta(root, name), _yaml(root), *_infer_functions(root)) if part is not None]
    edited = [part for part in parts if part[2] != part[3]]
    if not edited or len(edited) == len(parts):
        return
    kept_parts = [what for what, _, now, then in parts if now == then]
    kept = ", ".join(kept_parts[:-1]) + " and " + kept_parts[-1] if len(kept_parts) > 1 else kept_parts[0]
    for what, path, now, _ in edited:
        yield Violation(
            f"{what} no longer follows opkit.json's output rules (edited since opkit generated it), but {kept} "
            f"{'is' if len(kept_parts) == 1 else 'are'} still as generated: the op's output sizes or dtypes now differ between them",
            line=_first_changed_line(root, path),
            path=str(root / path),
            op=name,
            hint=(
                f"change the rule for all of them at once: opkit new {name} --force --output OUT=RULE (e.g. out1=like:k; Meta, "
                f"yaml, OpDef and kernel are regenerated together, your other edits merged), or make the same edit in {kept}"
            ),
        )


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _spec_fields(data: object) -> object:
    return {k: v for k, v in data.items() if k != "opkit_version"} if isinstance(data, dict) else data


def _texts(root: Path, rel: Path) -> tuple[str, str] | None:
    try:
        return (root / rel).read_text(encoding="utf-8"), (root / GENERATED / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _meta(root: Path, name: str):
    """The Meta module's code (comments and layout aside), now and as generated."""
    rel = Path("meta", f"{name}_meta.py")
    texts = _texts(root, rel)
    if texts is None:
        return None
    try:
        now, then = (ast.dump(ast.parse(text)) for text in texts)
    except (SyntaxError, ValueError, RecursionError):
        return None  # the registrations reader reports it
    return ("the Meta function", rel, now, then)


def _yaml(root: Path):
    """The yaml entry's gen_opapi outputs (all but ``exec``), now and as generated."""
    import yaml

    from opkit import yamlio

    rel = Path("op_plugin", "op_plugin_functions.yaml")
    texts = _texts(root, rel)
    if texts is None:
        return None
    outputs = []
    for text in texts:
        try:
            data = yamlio.load(text)
        except (yaml.YAMLError, yamlio.TooLarge):
            return None
        entries = data.get("custom") if isinstance(data, dict) else None
        entry = entries[0] if isinstance(entries, list) and entries and isinstance(entries[0], dict) else {}
        gen = entry.get("gen_opapi") if isinstance(entry.get("gen_opapi"), dict) else {}
        outputs.append({k: v for k, v in gen.items() if k != "exec"})
    return ("the yaml entry's gen_opapi", rel, *outputs)


def _infer_functions(root: Path):
    """Each op_host source's InferShape and InferDataType functions (as tokens), now and as generated."""
    from opkit.formats.cpp_text import CppTextError
    from opkit.formats.cpp_tokens import tokenize

    for path in sorted((root / GENERATED).glob("*/op_host/*.cpp")):
        rel = path.relative_to(root / GENERATED)
        texts = _texts(root, rel)
        if texts is None:
            continue
        try:
            now, then = (_functions(tokenize(text), ("InferShape", "InferDataType")) for text in texts)
        except CppTextError:
            continue
        if then:
            yield ("the OpDef's InferShape/InferDataType", rel, now, then)


def _functions(tokens: list, names: tuple[str, ...]) -> tuple[str, ...]:
    """The token texts of each function definition named in ``names`` (its name through its closing brace)."""
    found = []
    for i, token in enumerate(tokens):
        if token.text not in names or i + 1 >= len(tokens) or tokens[i + 1].text != "(":
            continue
        j, depth = i + 1, 0
        while j < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[j].text, 0)
            j += 1
            if depth == 0:
                break
        if j >= len(tokens) or tokens[j].text != "{":
            continue  # a call or a declaration, not the definition
        level = 0
        for k in range(j, len(tokens)):
            level += {"{": 1, "}": -1}.get(tokens[k].text, 0)
            if level == 0:
                found.append(" ".join(t.text for t in tokens[i : k + 1]))
                break
    return tuple(found)


def _first_changed_line(root: Path, rel: Path) -> int:
    texts = _texts(root, rel)
    if texts is None:
        return 1
    now, then = (text.splitlines() for text in texts)
    for tag, i1, _, _, _ in difflib.SequenceMatcher(None, now, then, autojunk=False).get_opcodes():
        if tag != "equal":
            return i1 + 1
    return 1
