"""What each check calls with: copies of its inputs, on its device, and a fresh entry function per check."""

from __future__ import annotations

import types
from collections.abc import Callable


def fresh_entry(fn: Callable) -> Callable:
    """A new code object per check: Dynamo caches per code object, so checks never share cache entries
    (no recompile-limit surprises, and no ``torch._dynamo.reset()``, which costs seconds)."""

    def entry(*args, **kwargs):
        return fn(*args, **kwargs)

    return types.FunctionType(entry.__code__.replace(), entry.__globals__, "opkit_graph_entry", None, entry.__closure__)


def clone_tree(tree):
    import torch
    from torch.utils._pytree import tree_map_only

    return tree_map_only(torch.Tensor, lambda t: t.detach().clone(), tree)


def to_device(tree, device: str):
    import torch
    from torch.utils._pytree import tree_map_only

    if device == "cpu":
        return tree
    return tree_map_only(torch.Tensor, lambda t: t.to(device), tree)
