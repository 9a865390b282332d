"""What the kernel-effects rules share: comparing dtypes read from two sources."""

from __future__ import annotations

from collections.abc import Mapping


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
