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


def test_a_compound_statement_ends_its_statement():
    text = "for (auto t : {1, 2}) { v.push_back(t); }\nx = {1, 2};\nif (a) { b(); } else { c(); }\nauto f = [this]() -> void { g(); };\nh();"
    cpp = CppText(text)
    assert [cpp.code[s:e] for s, e in cpp.statements(0, len(text))] == [
        "for (auto t : {1, 2}) { v.push_back(t); }", "x = {1, 2}", "if (a) { b(); }", "else { c(); }", "auto f = [this]() -> void { g(); }", "h()",
    ]  # fmt: skip


def test_tokens_carry_their_kind_line_and_column_across_blank_lines_directives_and_literals():
    from opkit.formats.cpp_tokens import tokenize

    text = '#include "a.h"\n\n  x = 0x1F; /* c\n */ y->z(u8"s\\n", \'c\');\n  #define M(a) \\\n  a\n.5e+3 ## w\n'
    got = [(t.kind, t.text, t.line, t.column) for t in tokenize(text)]
    assert got == [
        ("directive", '#include "a.h"', 1, 1),
        ("ident", "x", 3, 3), ("punct", "=", 3, 5), ("number", "0x1F", 3, 7), ("punct", ";", 3, 11),
        ("ident", "y", 4, 5), ("punct", "->", 4, 6), ("ident", "z", 4, 8), ("punct", "(", 4, 9),
        ("string", 'u8"s\\n"', 4, 10), ("punct", ",", 4, 17), ("char", "'c'", 4, 19), ("punct", ")", 4, 22), ("punct", ";", 4, 23),
        ("directive", "#define M(a) a", 5, 3),
        ("number", ".5e+3", 7, 1), ("punct", "##", 7, 7), ("ident", "w", 7, 10),
    ]  # fmt: skip
