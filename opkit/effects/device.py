"""The effects of device kernels: ``<<<>>>`` launches traced to the ``__global__`` kernel's copies to global memory.

Placeholder of the producer registry (``opkit.effects.build.PRODUCERS``): branch effects-dev reads device
kernels here. Until then it reports nothing, and the C++ producer says "unknown" for a tensor whose memory
a host kernel hands to a launch.
"""

from __future__ import annotations

from collections.abc import Iterator

from opkit.effects.model import OpEffects


def produce(inputs) -> Iterator[OpEffects]:
    return iter(())
