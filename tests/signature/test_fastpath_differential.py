"""The op-plugin fast path agrees with torchgen exactly, on every real schema there is.

Whenever ``fastpath.parse_simple`` answers, torchgen must accept the same string and give the
same signature (names, types, defaults, alias annotations, argument columns), and the string must
print back exactly; where it does not answer, torchgen decides. Run over the real
op_plugin_functions.yaml, torchgen's packaged native_functions.yaml and every schema the installed
torch registers (``torch._C._jit_get_all_schemas()``, namespaces stripped so the fast path sees them).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torchgen
import yaml

from opkit.signature import SchemaError
from opkit.signature.fastpath import BASE_TYPES, parse_simple
from opkit.signature.parse import _dimname_refusal, _parse_op_plugin

SECTIONS = ("official", "custom", "symint", "quant", "autograd")


def _corpus(path: Path) -> list[str]:
    document = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    return [e["func"] for s in SECTIONS for e in document.get(s) or []]


def _native() -> list[str]:
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    return [e["func"] for e in yaml.load(path.read_text(), Loader=yaml.CSafeLoader)]


def _jit() -> list[str]:
    import torch

    return [re.sub(r"^\w+::", "", str(s)) for s in torch._C._jit_get_all_schemas()]


def _disagreements(funcs: list[str]) -> tuple[int, list[str]]:
    answered, wrong = 0, []
    for text in funcs:
        fast = parse_simple(text)
        if fast is None:
            refusal = _dimname_refusal(text) if "Dimname" in text else None
            if refusal is not None:
                answered += 1
                wrong += _refusal_disagreement(text, refusal)
            continue
        answered += 1
        try:
            reference = _parse_op_plugin(text)
        except SchemaError as exc:
            wrong.append(f"torchgen rejects what the fast path accepted: {text} ({exc})")
            continue
        if fast != reference or [a.column for a in fast.arguments] != [a.column for a in reference.arguments] or str(fast) != text:
            wrong.append(f"differs: {text}")
    return answered, wrong


def _refusal_disagreement(text: str, refusal: SchemaError) -> list[str]:
    """[] when torchgen's error for ``text`` is ``refusal``: message, column, hint and corrected spelling."""
    try:
        _parse_op_plugin(text)
    except SchemaError as exc:
        mine, theirs = (refusal.message, refusal.column, refusal.hint, refusal.canonical), (exc.message, exc.column, exc.hint, exc.canonical)
        return [] if mine == theirs else [f"another error: {text}: {mine} != {theirs}"]
    return [f"torchgen accepts what the Dimname refusal refused: {text}"]


@pytest.mark.parametrize("source, minimum", [("native", 2300), ("jit", 3400)])
def test_agrees_with_torchgen_on_pytorch_schemas(source, minimum):
    funcs = _native() if source == "native" else _jit()
    answered, wrong = _disagreements(funcs)
    assert wrong == []
    assert answered >= minimum  # the fast path covers most schemas (measured: 2403 of 2584, 3565 of 4374)


def test_agrees_with_torchgen_on_the_corpus(corpus_yaml):
    answered, wrong = _disagreements(_corpus(corpus_yaml))
    assert wrong == []
    assert answered == 1514  # every entry: 1485 parsed, 29 Dimname refusals (none left to torchgen)


def test_base_types_are_torchgens():
    assert BASE_TYPES == {t.name for t in torchgen.model.BaseTy}


@pytest.mark.parametrize(
    "text",
    [
        "f_(Tensor(a!) x) -> Tensor(a!)",  # in-place without self
        "f.out(Tensor x, *, Tensor(a!) out, Tensor y) -> Tensor(a!)",  # non-mutable after out
        "f(Tensor x) -> (Tensor)",  # one return in parentheses
        "f(Tensor x, int[02] k) -> Tensor",  # a size torchgen prints differently
        "f(Tensor x, *) -> Tensor",  # a trailing '*'
        "f(Tensor(a!) x) -> Tensor(a!)",  # returns a mutated positional that is not self
        "f(Tensor x, Dimname d) -> Tensor",  # unknown to torchgen 2.13
    ],
)
def test_what_torchgen_rejects_the_fast_path_leaves_to_it(text):
    assert parse_simple(text) is None
    with pytest.raises(SchemaError):
        _parse_op_plugin(text)
