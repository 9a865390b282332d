"""What each check calls with: copies of its inputs, on its device, and a fresh entry function per check."""

from __future__ import annotations

import itertools
import types
from collections.abc import Callable


_entries = itertools.count(1)


def fresh_entry(fn: Callable) -> Callable:
    """A new code object per check: Dynamo caches per code object, so checks never share cache entries
    (no recompile-limit surprises, and no ``torch._dynamo.reset()``, which costs seconds). Its own name too:
    Dynamo's automatic-dynamic state is kept per (file, line, name), so with one name an earlier check's
    recompile would make a later check's sizes dynamic from its first call."""

    def entry(*args, **kwargs):
        return fn(*args, **kwargs)

    code = entry.__code__.replace(co_name=f"opkit_graph_entry_{next(_entries)}")
    return types.FunctionType(code, entry.__globals__, "opkit_graph_entry", None, entry.__closure__)


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
