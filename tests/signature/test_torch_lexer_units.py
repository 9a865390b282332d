"""opkit.torch_lexer piece by piece: literal expectations, fast enough for mutation testing.

Each expectation is what ``torch._C.parse_schema`` (torch/csrc/jit/frontend/lexer.h and
function_schema_parser.cpp) does with the same text, checked once against torch 2.13 when the table
was written; opkit's deliberate refusals (docs/lint.md, "Schema dialects") start with ``unsupported by opkit``.
"""

from __future__ import annotations

import pytest

from opkit.torch_lexer import KEYWORDS, UNSUPPORTED, LexError, blank_out, device_problem, number_value, string_end, string_value


@pytest.mark.parametrize(
    "text, start, end",
    [("'abc'", 0, 5), ("'a\\'b' x", 0, 6), ("'''a'b'''", 0, 9), ("'ab", 0, -1), ("'a\nb'", 0, -1), ("'''a\nb'''", 0, 9),
     ('"a"', 0, 3), ("x'a'", 1, 4), ("'a\\\\'", 0, 5), ("''", 0, 2), ("''''''", 0, 6), ("'a' 'b'", 0, 3), ("'''a", 0, -1),
     ("'a\\'", 0, -1), ('"a\'b"', 0, 5),
     ("'''a''' 'b'", 8, 11)],  # a one-quote string after a three-quote one: its width is read where it starts
)  # fmt: skip
def test_string_end(text, start, end):
    assert string_end(text, start) == end


@pytest.mark.parametrize(
    "literal, value",
    [("'a'", "a"), ("'\\n'", "\n"), ("'\\t\\a\\b\\f\\v'", "\t\a\b\f\v"), ("'\\\\'", "\\"), ("'\\''", "'"), ("'\\\"'", '"'),
     ("'\\101'", "A"), ("'\\0777'", "?7"), ("'''abc'''", "abc"), ("'''a'''", "a"), ("'\\\n'", "\n"), ("''", ""), ('"x y"', "x y"),
     ("'é'", "é"), ("''''''", ""), ("'a\\101'", "aA"),
     ("'\\303\\251x'", "éx")],  # torch keeps bytes: two octal escapes are the UTF-8 of é; six quotes: an empty string
)  # fmt: skip
def test_string_values(literal, value):
    assert string_value(literal) == value


@pytest.mark.parametrize(
    "literal, message",
    [("'\\400'", "torch refuses the escape '\\4' in a string default (ill-formed octal)"),
     ("'\\1'", "torch refuses the escape '\\1' in a string default (ill-formed octal)"),
     ("'\\12'", "torch refuses the escape '\\1' in a string default (ill-formed octal)"),
     ("'\\q'", "torch refuses the escape '\\q' in a string default (ill-formed octal)"),
     ("'\\x41'", "torch refuses the escape '\\x' in a string default"),
     ("'\\u0041'", "torch refuses the escape '\\u' in a string default"),
     ("'\\U00000041'", "torch refuses the escape '\\U' in a string default"),
     ("'\\8'", "torch refuses the escape '\\8' in a string default (ill-formed octal)"),
     # a backslash with nothing after it (string_end never ends a literal so: it reads the quote as escaped)
     ("'a\\'", "torch refuses the escape '\\' in a string default (ill-formed octal)"),
     # torch takes it, but its default is the byte 0xFF, which Python cannot decode (reading default_value raises)
     ("'\\377'", f"{UNSUPPORTED}: the string default '\\377' holds bytes that are not UTF-8 text (octal escapes), which Python cannot read from torch's schema")],
)  # fmt: skip
def test_string_escapes_torch_refuses(literal, message):
    with pytest.raises(ValueError) as info:
        string_value(literal)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "text, as_float, value",
    [("1", False, 1), ("-1", False, -1), ("1", True, 1.0), ("1.5", False, 1.5), ("-1.5", False, -1.5), ("1e3", False, 1000.0),
     ("1E3", True, 1000.0), ("1.", False, 1.0), (".5", False, 0.5), ("0e5", False, 0.0), ("0.0", False, 0.0), ("0.0e-400", True, 0.0), ("0.0E-400", True, 0.0),
     ("9223372036854775807", False, 9223372036854775807), ("-9223372036854775808", False, -9223372036854775808), ("007", False, 7),
     ("1e-3", False, 0.001), ("2e+2", False, 200.0)],
)  # fmt: skip
def test_numbers(text, as_float, value):
    got = number_value(text, as_float=as_float)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    "text, as_float, message",
    [("1E3", False, f"{UNSUPPORTED}: the integer default 1E3, which torch reads only up to the 'E' (1): write 1000"),
     ("-2E1", False, f"{UNSUPPORTED}: the integer default -2E1, which torch reads only up to the 'E' (-2): write -20"),
     ("0x10", False, f"{UNSUPPORTED}: the hexadecimal default 0x10, which torch reads as its leading 0: write it in decimal"),
     ("0x10", True, f"{UNSUPPORTED}: the hexadecimal default 0x10, which torch reads as a float: write it in decimal"),
     ("0x1.8", False, f"{UNSUPPORTED}: the hexadecimal default 0x1.8, which torch reads as a float: write it in decimal"),
     # torch reads a token with '.' or a lowercase 'e' with strtod (0x1e is 30.0, 0x1.8 is 1.5), any other one up to the 'x'
     # (0x1p3, 0X1P3 and 0x1E are 0): torch._C.parse_schema("f(int x=0x1p3) -> ()") gives x the default 0
     ("0x1p3", False, f"{UNSUPPORTED}: the hexadecimal default 0x1p3, which torch reads as its leading 0: write it in decimal"),
     ("0X1P3", False, f"{UNSUPPORTED}: the hexadecimal default 0X1P3, which torch reads as its leading 0: write it in decimal"),
     ("0x1E", False, f"{UNSUPPORTED}: the hexadecimal default 0x1E, which torch reads as its leading 0: write it in decimal"),
     ("0x1e", False, f"{UNSUPPORTED}: the hexadecimal default 0x1e, which torch reads as a float: write it in decimal"),
     ("0x1p3", True, f"{UNSUPPORTED}: the hexadecimal default 0x1p3, which torch reads as a float: write it in decimal"),
     ("-0X1A", False, f"{UNSUPPORTED}: the hexadecimal default -0X1A, which torch reads as its leading 0: write it in decimal"),
     ("1j", False, f"{UNSUPPORTED}: the complex default 1j: opkit has no complex arguments"),
     ("1.5j", True, f"{UNSUPPORTED}: the complex default 1.5j: opkit has no complex arguments"),
     ("x", False, "default x is not a number, a string, True, False or None"),
     ("--1", False, "default --1 is not a number, a string, True, False or None"),
     ("1e", False, "default 1e is not a number, a string, True, False or None"),
     ("-", False, "default - is not a number, a string, True, False or None"),
     ("inf", True, "default inf is not a number, a string, True, False or None"),
     ("1e400", True, "default 1e400 is out of the range of a double"),
     ("-1e400", False, "default -1e400 is out of the range of a double"),
     ("1e-400", True, "default 1e-400 is out of the range of a double"),
     ("1.0E-400", True, "default 1.0E-400 is out of the range of a double"),
     ("9223372036854775808", False, "default 9223372036854775808 is out of the range of a 64-bit integer"),
     ("-9223372036854775809", False, "default -9223372036854775809 is out of the range of a 64-bit integer")],
)  # fmt: skip
def test_numbers_torch_refuses_or_misreads(text, as_float, message):
    with pytest.raises(ValueError) as info:
        number_value(text, as_float=as_float)
    assert str(info.value) == message


DEVICES = ", ".join(sorted("cpu cuda ipu xpu mkldnn opengl opencl ideep hip ve fpga maia xla lazy vulkan mps meta hpu mtia privateuseone npu".split()))


@pytest.mark.parametrize(
    "literal, problem",
    [("'cpu'", None), ('"cuda:0"', None), ("'npu:1'", None), ("'meta'", None), ("'xla:12'", None),
     ("'cpu:01'", f"'cpu:01' is not a device torch knows (one of {DEVICES}, with an optional :index)"),
     ("'gpu'", f"'gpu' is not a device torch knows (one of {DEVICES}, with an optional :index)"),
     ("'CPU'", f"'CPU' is not a device torch knows (one of {DEVICES}, with an optional :index)"),
     ("'cuda:'", f"'cuda:' is not a device torch knows (one of {DEVICES}, with an optional :index)"),
     ("''", f"'' is not a device torch knows (one of {DEVICES}, with an optional :index)"),
     ("cpu", 'a Device default is a string naming a device, e.g. "cpu", not cpu'),
     ("XLA", 'a Device default is a string naming a device, e.g. "cpu", not XLA'),
     ("", 'a Device default is a string naming a device, e.g. "cpu", not '),
     ("'\\x41'", "torch refuses the escape '\\x' in a string default")],
)  # fmt: skip
def test_device_defaults(literal, problem):
    assert device_problem(literal) == problem


@pytest.mark.parametrize(
    "text, blanked",
    [("f(int x) -> ()", "f(int x) -> ()"),
     ("f(int x) -> () # c", "f(int x) -> ()    "),
     ("f(int x, # c\n int y) -> ()", "f(int x,      int y) -> ()"),
     ("f(int x, # c\n int y,\n int z) -> ()", "f(int x,      int y,  int z) -> ()"),  # the comment ends at its own line's end
     ("f(int x,\n int y) -> ()", "f(int x,  int y) -> ()"),
     ("f(int x) -> ()\n", "f(int x) -> () "),
     ("f(int x) -> ()\n\n  ", "f(int x) -> ()    "),
     ("f(int x) -> ()\n# c", "f(int x) -> ()    "),
     ("f(int x) -> ()\n  # c\n", "f(int x) -> ()       "),
     ("f(int x) \\\n-> ()", "f(int x)   -> ()"),
     ("f(str s='#', int y) -> ()", "f(str s='#', int y) -> ()"),
     ("f(str s='#\\'', int y) # c", "f(str s='#\\'', int y)    "),
     ("f(str s='é') -> ()", "f(str s='é') -> ()"),
     ("f(int\tx) -> ()", "f(int x) -> ()"),
     ("f(int\x0bx\x0c) -> ()\r", "f(int x ) -> () "),
     ("f(int x) -> () # type: ignore", "f(int x) -> () # type: ignore"),
     ("f(int[2] x=[1,\n2]) -> ()", "f(int[2] x=[1, 2]) -> ()"),
     ("f(int {x}\n) -> ()", "f(int {x} ) -> ()"),
     ("f(int x) -> (\n)", "f(int x) -> ( )"),
     ("\tf(int x) -> ()", " f(int x) -> ()"),
     ("f(int X) -> () # c", "f(int X) -> ()    "),
     ("f(int X,\n int y) -> ()", "f(int X,  int y) -> ()"),
     ("f(int x) -> ()\\\n", "f(int x) -> ()  "),  # a line continuation at the very end
     ("f(int x) \\\n\t-> () # c", "f(int x)    -> ()    "),  # what follows a continuation is read on
     # left to the grammar, which refuses them as torch does: a last backslash, DEL
     ("f(int x) -> ()\\", "f(int x) -> ()\\"),
     ("f(int\x7f x) -> ()\n", "f(int\x7f x) -> () ")],
)  # fmt: skip
def test_blank_out_keeps_length_and_blanks_what_the_lexer_skips(text, blanked):
    assert blank_out(text) == blanked and len(blanked) == len(text)


@pytest.mark.parametrize(
    "text, index, message",
    [("f(int x)\n-> ()", 9, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(int x)\n  \n -> ()", 13, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(int x) # type: x\n -> ()", 20, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(int x) -> ()\n\t)", 16, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(str s='a\n') -> ()", 8, "unterminated string literal"),
     ("f(str s='a) -> () #", 8, "unterminated string literal"),
     # one line, nothing else to skip: refused at the quote, where torch refuses it ("expected a valid token"), not at a later symptom
     ("f(str s='a) -> Tensor", 8, "unterminated string literal"),
     ('f(str s="a, int y) -> ()', 8, "unterminated string literal"),
     ("f(int é) -> ()", 6, "character 'é' (U+00E9) is not allowed outside a string literal: torch's lexer reads ASCII"),
     ("f(int x) -> ()\n\x1c", 15, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(int x) -> ()\nX", 15, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(int x) -> X\n-> ()", 14, "a schema is one declaration: nothing may follow a line break outside parentheses"),
     ("f(int\x80x) -> ()", 5, "character '\\x80' (U+0080) is not allowed outside a string literal: torch's lexer reads ASCII"),
     ("f(int\u00a0x) -> ()", 5, "character '\\xa0' (U+00A0) is not allowed outside a string literal: torch's lexer reads ASCII")],
)  # fmt: skip
def test_lex_errors(text, index, message):
    with pytest.raises(LexError) as info:
        blank_out(text)
    assert (info.value.index, info.value.message, str(info.value)) == (index, message, message)


def test_keywords_are_the_lexers_multi_character_tokens():
    assert {"def", "None", "in", "for", "True", "False", "NoneType", "Ellipsis", "class", "import"} <= KEYWORDS
    assert not {"self", "out", "int", "Tensor", "default", "match", "type"} & KEYWORDS
    assert KEYWORDS == set(
        "def if else elif while return is True False None and or not global raise assert break continue del pass class import with as Ellipsis NoneType in for".split()
    )
