"""Text from the user's files (paths, names, messages, the checked code's errors) shown safely.

A terminal runs the escape sequences it is sent (a title change, a hidden line, a rewritten screen), and
GitHub Actions reads any output line that starts with ``::`` as a workflow command: a newline in a
directory name would inject one. Reports therefore spell control characters as escapes: ``one_line``
for a value that must stay on its line, ``visible`` for a block of text whose line breaks are its own,
``github_escape`` for the parts of a workflow command.
"""

from __future__ import annotations

import re

_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROLS_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


def one_line(text: str) -> str:
    """``text`` with every control character (line breaks included) spelled as an escape."""
    return _CONTROLS.sub(_escape, text)


def visible(text: str) -> str:
    """``text`` with every control character but its line breaks and tabs spelled as an escape."""
    return _CONTROLS_BUT_LINES.sub(_escape, text)


def github_escape(text: str, *, property_value: bool = False) -> str:
    """A workflow command's message (or, with ``property_value``, a ``file=``/``title=`` value): its line
    breaks encoded as GitHub decodes them, every other control character spelled as an escape."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if property_value:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return one_line(text)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (a line break included)."""
    return _CONTROLS.search(text) is not None
