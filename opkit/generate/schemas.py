"""Validate documents opkit reads and writes against the JSON Schemas in ``schemas/``.

`opkit new` checks everything it writes against them before the project is moved into place, and
reading a project's ``opkit.json`` or inserting an entry checks what is read. The schemas are also
meant for editors (``"$schema"`` / yaml-language-server).
"""

from __future__ import annotations

import functools
import json

from opkit.generate.resources import schemas_dir

# kind → file in schemas/
SCHEMA_FILES = {
    "opkit-spec": "opkit-spec.schema.json",
    "msopgen": "msopgen.schema.json",
    "op-plugin-entry": "op-plugin-entry.schema.json",
}


class SchemaViolation(ValueError):
    """A document that does not match its JSON Schema; the message names the failing path."""


@functools.lru_cache(maxsize=None)
def load_schema(kind: str) -> dict:
    with open(schemas_dir() / SCHEMA_FILES[kind], encoding="utf-8") as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def _validator(kind: str):
    import jsonschema

    return jsonschema.validators.validator_for(load_schema(kind))(load_schema(kind))


def validate_document(document: object, kind: str) -> None:
    """Raise SchemaViolation when ``document`` breaks the ``kind`` schema."""
    import jsonschema

    # best_match looks inside oneOf/anyOf, so the message names the deepest failing path.
    error = jsonschema.exceptions.best_match(_validator(kind).iter_errors(document))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        raise SchemaViolation(f"{where}: {error.message}")
