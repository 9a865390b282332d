"""opkit.jsonio: exact messages and positions for what ``json.loads`` lets through."""

from __future__ import annotations

import sys

import pytest

from opkit.jsonio import JsonError, loads


def error(text: str) -> tuple[str, int, int]:
    with pytest.raises(JsonError) as info:
        loads(text)
    with pytest.raises(JsonError) as without_duplicates:
        loads(text, find_duplicates=False)
    assert (without_duplicates.value.message, without_duplicates.value.line, without_duplicates.value.column) == (info.value.message, info.value.line, info.value.column)
    return info.value.message, info.value.line, info.value.column


def test_plain_json_and_repeated_keys():
    assert loads('{"a": 1, "b": [1.5, true, null]}') == ({"a": 1, "b": [1.5, True, None]}, ())
    value, duplicates = loads('{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}')
    assert value == {"a": 3, "b": {"c": 2}} and duplicates == ("c", "a")  # the last wins, each repeat named
    value, duplicates = loads('{"a": 1, "b": {"c": 1, "c": 2}, "a": 3}', find_duplicates=False)
    assert list(value) == ["a", "b"] and value == {"a": 3, "b": {"c": 2}} and duplicates == ()  # the same value, unchecked


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": NaN}', ("NaN (RFC 8259 JSON has no NaN or Infinity)", 1, 7)),
        ('{\n  "a": 1,\n  "b": Infinity}', ("Infinity (RFC 8259 JSON has no NaN or Infinity)", 3, 8)),
        ('{"NaN": 1, "x": -Infinity}', ("-Infinity (RFC 8259 JSON has no NaN or Infinity)", 1, 17)),  # a key is no match
        ('[1,\n 1e999]', ("number 1e999 is out of range (it reads as inf)", 2, 2)),
        ('["1e999", -1e999]', ("number -1e999 is out of range (it reads as -inf)", 1, 11)),
        ('{"a": }', ("Expecting value", 1, 7)),
        ("[1,\n2", ("Expecting ',' delimiter", 2, 2)),
    ],
)
def test_what_json_loads_accepts_is_refused_with_its_position(text, expected):
    assert error(text) == expected


def test_an_integer_over_the_digit_limit_is_located():
    limit = sys.get_int_max_str_digits()
    message, line, column = error('{"a": 1,\n "b": ' + "7" * (limit + 1) + "}")
    assert (message, line, column) == (f"integer with more than {limit} digits", 2, 7)


def test_json_error_defaults_to_the_first_position():
    exc = JsonError("bad")
    assert (str(exc), exc.message, exc.line, exc.column) == ("bad", "bad", 1, 1)
    assert isinstance(exc, ValueError)


def test_no_match_outside_strings_is_the_first_position():
    from opkit.jsonio import _position

    assert _position('{"NaN": 1}', r"NaN") == (1, 1)
    assert _position('{"a": "x"}\n  NaN', r"NaN") == (2, 3)


def test_positions_count_only_the_lines_before_the_match():
    from opkit.jsonio import _position

    assert _position("\nNaN", r"NaN") == (2, 1)  # a newline at offset 0 counts
    assert _position(" NaN\n\n", r"NaN") == (1, 2)  # newlines after the match do not


def test_a_long_but_legal_integer_before_the_huge_one_is_not_blamed():
    limit = sys.get_int_max_str_digits()
    assert error("[" + "1" * limit + ",\n " + "7" * (limit + 1) + "]") == (f"integer with more than {limit} digits", 2, 2)
