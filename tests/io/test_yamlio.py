"""opkit.yamlio: the nesting bound, the alias budget and error positions, with exact numbers."""

from __future__ import annotations

import pytest
import yaml

from opkit import yamlio


@pytest.mark.parametrize(
    "text, bound",
    [
        ("a: 1\n", 0),
        ("a: [1, {b: 2}]\n", 2),
        ("a: [1]\nb: [[2]]\n", 2),  # the deepest run, not the sum
        ("a: ']'\nb: [1]\n", 1),  # a closing bracket with none open is skipped
        ("a:\n  b:\n    - c\n", 6),  # block indentation counts characters: spaces and the "- " marker
        ("? - x\n", 4),
        ("a: '[[['\n", 3),  # brackets inside quotes count: an upper bound
    ],
)
def test_nesting_bound(text, bound):
    assert yamlio.nesting_bound(text) == bound


def test_deeper_than_the_limit_is_refused_and_the_limit_itself_is_read():
    assert yamlio.load("[" * yamlio.MAX_NESTING + "]" * yamlio.MAX_NESTING) is not None
    with pytest.raises(yamlio.TooDeep, match=f"nested more than {yamlio.MAX_NESTING} levels deep"):
        yamlio.load("[" * (yamlio.MAX_NESTING + 1) + "]" * (yamlio.MAX_NESTING + 1))
    for read in (yamlio.compose, yamlio.compose_all):
        with pytest.raises(yamlio.TooDeep):
            read("{" * (yamlio.MAX_NESTING + 1))


@pytest.mark.parametrize(
    "text, sizes",
    [
        ("a: 1\n", (0, 3)),  # a mapping of two scalars
        ("a: &x [1, 2]\nb: *x\n", (1, 9)),  # the alias weighs what its anchor does: 3 + 1 + 3 + 1 + 1
        ("a: &s 1\nb: *s\nc: *s\n", (2, 7)),
        ("- 1\n---\n- 2\n", (0, 4)),  # documents add up
    ],
)
def test_expanded_size_counts_aliases_at_their_anchor_weight(text, sizes):
    assert yamlio.expanded_size(text) == sizes


def laughs(levels: int, fan: int) -> str:
    lines = ["a0: &a0 [x]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def test_alias_budget_is_exact():
    with pytest.raises(yamlio.TooManyAliases, match=f"aliases expand to more than {yamlio.MAX_EXPANDED_NODES:,} nodes"):
        yamlio.load(laughs(9, 10))
    many = "a: &x 1\nb: [" + ", ".join(["*x"] * (yamlio.MAX_ALIASES + 1)) + "]\n"
    with pytest.raises(yamlio.TooManyAliases, match=f"more than {yamlio.MAX_ALIASES} aliases"):
        yamlio.load(many)
    few = "a: &x 1\nb: [" + ", ".join(["*x"] * yamlio.MAX_ALIASES) + "]\n"
    assert len(yamlio.load(few)["b"]) == yamlio.MAX_ALIASES
    assert yamlio.load("a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}
    assert yamlio.load("a: '&'\nb: '*'\n") == {"a": "&", "b": "*"}


def test_compose_refuses_what_load_refuses_and_scans_only_documents_with_aliases(monkeypatch):
    many = "a: &x 1\nb: [" + ", ".join(["*x"] * (yamlio.MAX_ALIASES + 1)) + "]\n"
    for read in (yamlio.compose, yamlio.compose_all):
        with pytest.raises(yamlio.TooManyAliases, match="aliases expand to more than"):
            read(laughs(9, 10))
        with pytest.raises(yamlio.TooManyAliases, match=f"more than {yamlio.MAX_ALIASES} aliases"):
            read(many)
    assert yamlio.compose("a: &x [1]\nb: *x\n").value[1][1].value[0].value == "1"

    def no_scan(text):
        raise AssertionError("scanned a document without aliases")

    monkeypatch.setattr(yamlio, "expanded_size", no_scan)
    text = "custom:\n  - func: f(Tensor x) -> Tensor\n    a: 'x && y'\n    b: 'const_cast<char *>(s)'\n"  # as in the real file
    assert yamlio.compose(text).value[0][0].value == "custom"
    assert len(yamlio.compose_all(text)) == 1


def test_compose_and_load_agree():
    text = "custom:\n  - func: f(Tensor x) -> Tensor\n"
    node = yamlio.compose(text)
    assert isinstance(node, yaml.MappingNode) and node.value[0][0].value == "custom"
    assert [n.value[0][0].value for n in yamlio.compose_all(text + "---\nofficial: []\n")] == ["custom", "official"]
    assert yamlio.load(text) == {"custom": [{"func": "f(Tensor x) -> Tensor"}]}


def test_error_position_and_description():
    with pytest.raises(yaml.YAMLError) as info:
        yamlio.load("a: 1\nb: [1, 2\n")
    line, column, problem = yamlio.error_position(info.value)
    assert (line, column) == (3, 1) and problem == "did not find expected ',' or ']'"
    assert yamlio.describe_error("f.yaml", info.value) == f"f.yaml:3:1: not valid YAML: {problem}"
    assert yamlio.error_position(yaml.YAMLError("two\n  lines")) == (1, 1, "two lines")
    assert yamlio.error_position(yaml.MarkedYAMLError(context="while parsing")) == (1, 1, "while parsing")
    assert yamlio.error_position(yaml.MarkedYAMLError()) == (1, 1, "invalid YAML")


def test_an_alias_of_an_unknown_anchor_weighs_one_node():
    assert yamlio.expanded_size("a: &x 1\nb: *y\n") == (1, 5)  # mapping, a, 1, b, *y


def test_the_expansion_limit_itself_is_read():
    # root sequence (1) + an anchored list of 999 scalars (1000) + 998 aliases of it + 999 scalars = 1,000,000 nodes
    anchored = "&a [" + ", ".join(["0"] * 999) + "]"
    text = "[" + ", ".join([anchored] + ["*a"] * 998 + ["1"] * 999) + "]\n"
    assert yamlio.expanded_size(text) == (998, yamlio.MAX_EXPANDED_NODES)
    with pytest.raises(yamlio.TooManyAliases):
        yamlio.expanded_size(text.replace("]\n", ", 2]\n"))


def test_aliases_without_any_anchor_are_left_to_the_yaml_reader():
    """No '&': nothing can expand, so the budget is not counted and PyYAML reports the undefined alias."""
    with pytest.raises(yaml.composer.ComposerError, match="found undefined alias"):
        yamlio.load("[" + ", ".join(["*x"] * (yamlio.MAX_ALIASES + 1)) + "]")
