"""The op-signature model and its parsers: ``parse_schema(text, dialect)`` gives an ``OpSignature``.

The package is layered so that no module imports another in a circle: ``model`` (the frozen values,
the dialects, ``SchemaError``, ``parse_default``) at the bottom; ``fastpath`` (the common op-plugin
schemas without torchgen) on it; ``parse`` (torchgen and torch.library's grammar, ``parse_schema``)
on both. The modules import each other by their own names, never through this one; the rest of
opkit imports from here.
"""

from opkit.signature.model import (
    ENUM_DEFAULTS,
    REFUSED_TYPES,
    SCALAR_TYPE_DEFAULTS,
    Alias,
    Argument,
    ArgType,
    Dialect,
    DType,
    OpSignature,
    Return,
    SchemaError,
    SchemaKind,
    default_problem,
    iter_alias_letters,
    parse_default,
)
from opkit.signature.parse import UNSUPPORTED, check_schema, parse_schema, parsed_results, parser_fingerprint, remember_results

__all__ = [
    "ENUM_DEFAULTS",
    "REFUSED_TYPES",
    "SCALAR_TYPE_DEFAULTS",
    "UNSUPPORTED",
    "Alias",
    "ArgType",
    "Argument",
    "DType",
    "Dialect",
    "OpSignature",
    "Return",
    "SchemaError",
    "SchemaKind",
    "check_schema",
    "default_problem",
    "iter_alias_letters",
    "parse_default",
    "parse_schema",
    "parsed_results",
    "parser_fingerprint",
    "remember_results",
]
