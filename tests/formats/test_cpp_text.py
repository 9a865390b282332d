"""The C++ text helpers every C++ reader shares (opkit.formats.cpp_text): comments blanked, literals kept
and skipped, brackets matched, statements and items split, all located."""

from __future__ import annotations

import pytest

from opkit.formats.cpp_text import CppText, CppTextError, literal_value


def test_comments_are_blanked_in_place_and_literals_kept():
    text = 'a(1); // b(2);\n/* c(\n3) */ d("// not a comment", \'/\');\n'
    cpp = CppText(text)
    assert len(cpp.code) == len(text)
    assert cpp.code == 'a(1);' + " " * 9 + "\n" + " " * 5 + "\n" + " " * 5 + ' d("// not a comment", \'/\');\n'
    assert [cpp.code[s:e] for s, e in cpp.statements(0, len(text))] == ["a(1)", 'd("// not a comment", \'/\')']
    assert [(lit.kind, text[lit.start : lit.end]) for lit in cpp.literals] == [("string", '"// not a comment"'), ("character", "'/'")]


def test_positions_are_one_based_lines_and_columns():
    text = "ab\ncd(\n  x)\n"
    cpp = CppText(text)
    assert cpp.position(0) == (1, 1)
    assert cpp.position(text.index("d")) == (2, 2)
    assert cpp.position(text.index("x")) == (3, 3)
    assert cpp.line_of(text.index(")")) == 3


def test_brackets_inside_literals_do_not_count():
    text = 'f("(", \')\', R"x(a)"; )" )x", u8"[");'
    cpp = CppText(text)
    assert cpp.closing(1) == len(text) - 2
    assert cpp.statements(0, len(text)) == [(0, len(text) - 1)]
    assert [text[lit.start : lit.end] for lit in cpp.literals][2:] == ['R"x(a)"; )" )x"', 'u8"["']


def test_items_split_at_top_level_commas_only():
    text = "{a, f(b, c), {d, e}, \"x,y\"}"
    cpp = CppText(text)
    close = cpp.closing(0)
    assert [text[s:e] for s, e in cpp.items(1, close)] == ["a", "f(b, c)", "{d, e}", '"x,y"']


def test_digit_separators_are_not_character_literals():
    cpp = CppText("int64_t n = 1'000'000; int h = 0xFF'FF; char c = 'x';")
    assert [cpp.text[lit.start : lit.end] for lit in cpp.literals] == ["'x'"]
    assert len(cpp.statements(0, len(cpp.text))) == 3


def test_a_line_comment_continued_by_a_backslash_runs_on():
    cpp = CppText("// one \\\n two(\nthree();")
    assert cpp.statements(0, len(cpp.text)) == [(cpp.text.index("three"), len(cpp.text) - 1)]


@pytest.mark.parametrize(
    "text, message, line, column",
    [
        ('x = "abc\n";', "unterminated string literal", 1, 5),
        ("x = 'a\n';", "unterminated character literal", 1, 5),
        ("a;\n/* never closed", "unterminated /* comment", 2, 1),
        ('s = R"d(abc)e";', "unterminated raw string literal", 1, 5),
    ],
)
def test_unreadable_literals_and_comments_are_located(text, message, line, column):
    with pytest.raises(CppTextError) as err:
        CppText(text)
    assert (err.value.message, err.value.line, err.value.column) == (message, line, column)


def test_brackets_that_do_not_match_are_located_when_asked_for():
    cpp = CppText("ok(1);\nf({a, b);\ng(x));\nh(")
    assert cpp.closing(2) == 4
    with pytest.raises(CppTextError) as err:  # the '{' is closed by ')': said at the ')'
        cpp.closing(cpp.text.index("f(") + 1)
    assert (err.value.message, err.value.line, err.value.column) == ("unbalanced ')'", 2, 8)
    with pytest.raises(CppTextError) as err:
        cpp.statements(cpp.text.index("g"), cpp.text.index("h"))
    assert (err.value.message, err.value.line) == ("unbalanced ')'", 3)
    with pytest.raises(CppTextError) as err:
        cpp.closing(len(cpp.text) - 1)
    assert (err.value.message, err.value.line, err.value.column) == ("'(' is never closed", 4, 2)


def test_string_values_join_adjacent_literals():
    text = 'def("a(Tensor x) "\n    "-> Tensor", R"(raw\\n)", u8"\\x41\\101\\u00e9\\n", 3)'
    cpp = CppText(text)
    args = cpp.items(4, cpp.closing(3))
    assert [cpp.string_value(s, e) for s, e in args] == ["a(Tensor x) -> Tensor", "raw\\n", "AAé\n", None]


def test_literal_values():
    assert literal_value('"a\\"b"') == 'a"b'
    assert literal_value("L'x'") == "x"
    assert literal_value('uR"--(a)"b)--"') == 'a)"b'
