"""The effects of Python kernels (custom_op bodies, ``impl`` functions, ``direct_register_custom_op`` funcs).

Placeholder of the producer registry (``opkit.effects.build.PRODUCERS``): branch effects-py reads Python
kernel bodies here. Until then it reports nothing, so no rule fires on a Python kernel.
"""

from __future__ import annotations

from collections.abc import Iterator

from opkit.effects.model import OpEffects


def produce(inputs) -> Iterator[OpEffects]:
    return iter(())
