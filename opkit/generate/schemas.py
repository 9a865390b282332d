"""Validate documents opkit reads and writes against the JSON Schemas in ``schemas/``.

The schemas are also meant for editors (``"$schema"`` / yaml-language-server). ``jsonschema`` is an
optional dependency (the ``test`` extra): without it, documents are still checked by the typed
validators (``validate_spec``, the lint rules), only the schema pass is skipped.
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


def validate_document(document: object, kind: str) -> None:
    """Raise SchemaViolation when ``document`` breaks the ``kind`` schema (a no-op without jsonschema)."""
    try:
        import jsonschema
    except ImportError:  # optional: the typed validators still run
        return
    validator_cls = jsonschema.validators.validator_for(load_schema(kind))
    errors = sorted(validator_cls(load_schema(kind)).iter_errors(document), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(top level)"
        raise SchemaViolation(f"{where}: {e.message}")
