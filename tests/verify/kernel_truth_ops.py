"""Small custom ops whose Python kernels do what their schemas do not say, each beside a correct twin
(namespace ``opkit_kernel_truth``): verify must show the consequence the real compiler gives."""

from __future__ import annotations

import torch

NS = "opkit_kernel_truth"


@torch.library.custom_op("opkit_kernel_truth::scale_sync", mutates_args=())
def scale_sync(x: torch.Tensor) -> torch.Tensor:
    s = x.abs().max().item()  # a host sync: aclgraph capture refuses it
    return x / s


@scale_sync.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("opkit_kernel_truth::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x / x.abs().max()  # the twin: the value stays on the device


@scale.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("opkit_kernel_truth::to_host", mutates_args=())
def to_host(x: torch.Tensor) -> torch.Tensor:
    host = x.cpu()  # a copy to the host: on the NPU a stream sync
    return host + 1


@to_host.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("opkit_kernel_truth::store", mutates_args=())
def store(cache: torch.Tensor, x: torch.Tensor) -> None:
    cache.copy_(x)  # written, but mutates_args leaves it out: the schema says -> () and writes nothing


@store.register_fake
def _(cache, x):
    return None


@torch.library.custom_op("opkit_kernel_truth::store_declared", mutates_args=("cache",))
def store_declared(cache: torch.Tensor, x: torch.Tensor) -> None:
    cache.copy_(x)


@store_declared.register_fake
def _(cache, x):
    return None


def _elsewhere(t, v):
    return v.sum()  # writes nothing, but opkit cannot see that through the name below


_hidden = _elsewhere  # a callable opkit's reader does not follow


@torch.library.custom_op("opkit_kernel_truth::store_hidden", mutates_args=())
def store_hidden(cache: torch.Tensor, x: torch.Tensor) -> None:
    _hidden(cache, x)


@store_hidden.register_fake
def _(cache, x):
    return None


@torch.library.custom_op("opkit_kernel_truth::noop", mutates_args=())
def noop(cache: torch.Tensor, x: torch.Tensor) -> None:
    return None  # writes nothing: an unused call of it is rightly dropped


@noop.register_fake
def _(cache, x):
    return None


OPS = getattr(torch.ops, NS)
