"""`teachgrad.functorch`: what a program written for the old `functorch` package imports, on teachgrad's engine.

functorch's transforms became torch.func's (torch keeps `functorch.jvp` and the rest as deprecated aliases),
so here they are tg.func's. `make_functional` / `make_functional_with_buffers` give what functorch's give:
a function of (params[, buffers], *inputs) that calls a copy of the model with those tensors in place of its
own (tg.func.functional_call underneath), and the copy's parameters and buffers as tuples.
"""
import copy

import torch

from .compiler import aot as compile  # noqa: A004  (functorch.compile: aot_function, the partitioners)
from .func import __getattr__, functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp  # noqa: F401

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "make_functional",
           "make_functional_with_buffers"]


class FunctionalModuleWithBuffers(torch.nn.Module):
    """What make_functional_with_buffers returns, as functorch's: a module whose forward(params, buffers, *args)
    runs `stateless_model`, a copy of the model whose parameters and buffers stay on the meta device (no data),
    with the given tensors in their places (tg.func.functional_call underneath)."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names, self.buffer_names = param_names, buffer_names

    def forward(self, params, buffers, *args, **kwargs):
        tensors = {**dict(zip(self.param_names, params)), **dict(zip(self.buffer_names, buffers))}
        return functional_call(self.stateless_model, tensors, args, kwargs)


class FunctionalModule(torch.nn.Module):
    """What make_functional returns: forward(params, *args) runs `stateless_model` with those parameters."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)), args, kwargs)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(func, params, buffers): func(params, buffers, *args, **kwargs) is the model's forward with those tensors."""
    stateless = copy.deepcopy(model)
    param_names, params = _extract(stateless, stateless.named_parameters, torch.nn.Parameter)
    buffer_names, buffers = _extract(stateless, stateless.named_buffers, lambda t: t)
    if disable_autograd_tracking:
        for param in params:
            param.requires_grad_(False)
    return FunctionalModuleWithBuffers(stateless, param_names, buffer_names), params, buffers


def make_functional(model, disable_autograd_tracking=False):
    """(func, params): func(params, *args, **kwargs) is the model's forward with those parameters."""
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    stateless = copy.deepcopy(model)
    param_names, params = _extract(stateless, stateless.named_parameters, torch.nn.Parameter)
    if disable_autograd_tracking:
        for param in params:
            param.requires_grad_(False)
    return FunctionalModule(stateless, param_names), params


def _extract(module, named_members, kind):
    """The module's own tensors (each once, with its name), replaced in the module by empty meta tensors of the
    same kind (one for a tensor shared under several names), as functorch leaves its stateless model."""
    unique = tuple(named_members(remove_duplicate=True))
    memo = {}
    for name, tensor in tuple(named_members(remove_duplicate=False)):
        if tensor not in memo:
            memo[tensor] = kind(torch.empty_like(tensor, device="meta"))
        owner, _, attribute = name.rpartition(".")
        setattr(module.get_submodule(owner) if owner else module, attribute, memo[tensor])
    return tuple(name for name, _ in unique), tuple(tensor for _, tensor in unique)
