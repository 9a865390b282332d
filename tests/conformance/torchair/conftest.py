"""Fixtures of the TorchAir conformance cases."""

from __future__ import annotations

import pytest


@pytest.fixture
def sin_cos_reinplaceable():
    """sin_cos_functional registered with npugraph_ex as re-inplaceable into sin_cos_inplace, as TorchAir's
    stub registers it (torchair_st_stub_aclgraph_utils.py:563), for one test."""
    from tair_ops import register_sin_cos_reinplace

    from opkit.verify import npugraph_ex

    table, key = register_sin_cos_reinplace(npugraph_ex.load().module)
    yield
    table.pop(key, None)
