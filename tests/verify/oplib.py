"""Real torch.library ops with CPU kernels and Meta functions, defined under a test's own namespace."""

from __future__ import annotations

from torch.library import Library, impl


class OpLibrary:
    """One namespace's FRAGMENT, CPU and Meta libraries; ``op`` defines a schema with both kernels."""

    def __init__(self, namespace: str):
        self.namespace = namespace
        self._lib = Library(namespace, "FRAGMENT")
        self._cpu = Library(namespace, "IMPL", "CPU")
        self._meta = Library(namespace, "IMPL", "Meta")

    def op(self, schema: str, kernel, meta) -> None:
        name = schema.split("(", 1)[0]
        self._lib.define(schema)
        self._cpu.impl(name, kernel)
        impl(self._meta, name)(meta)
