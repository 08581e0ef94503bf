"""`teachgrad.functorch`: what a program written for the old `functorch` package imports, on teachgrad's engine.

functorch's transforms became torch.func's (torch keeps `functorch.jvp` and the rest as deprecated aliases),
so here they are tg.func's. `make_functional` / `make_functional_with_buffers` give what functorch's give:
a function of (params[, buffers], *inputs) that calls a copy of the model with those tensors in place of its
own (tg.func.functional_call underneath), and the copy's parameters and buffers as tuples.
"""
import copy

from .func import __getattr__, functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp  # noqa: F401

__all__ = ["grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "make_functional",
           "make_functional_with_buffers"]


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(func, params, buffers): func(params, buffers, *args, **kwargs) is the model's forward with those tensors."""
    stateless = copy.deepcopy(model)
    param_names, params = _named(stateless.named_parameters(), disable_autograd_tracking)
    buffer_names, buffers = _named(stateless.named_buffers(), False)

    def func(params, buffers, *args, **kwargs):
        tensors = {**dict(zip(param_names, params)), **dict(zip(buffer_names, buffers))}
        return functional_call(stateless, tensors, args, kwargs)
    return func, params, buffers


def make_functional(model, disable_autograd_tracking=False):
    """(func, params): func(params, *args, **kwargs) is the model's forward with those parameters."""
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    func_with_buffers, params, _ = make_functional_with_buffers(model, disable_autograd_tracking)

    def func(params, *args, **kwargs):
        return func_with_buffers(params, (), *args, **kwargs)
    return func, params


def _named(pairs, detach):
    pairs = list(pairs)
    names = tuple(n for n, _ in pairs)
    tensors = tuple(t.requires_grad_(False) if detach else t for _, t in pairs)
    return names, tensors
