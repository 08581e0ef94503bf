"""Shared helpers for the tests: make the same inputs for teachgrad and torch."""
import torch

import teachgrad as tg


def pair(data, requires_grad=True, dtype=torch.float64):
    """The same leaf as a teachgrad Variable and as a torch tensor."""
    t = torch.as_tensor(data, dtype=dtype).clone()
    return tg.Variable(t.clone(), requires_grad=requires_grad), t.clone().requires_grad_(requires_grad)


def close(ours, theirs, atol=1e-10, rtol=1e-7):
    a = ours.data if isinstance(ours, tg.Variable) else ours
    b = theirs.detach() if isinstance(theirs, torch.Tensor) else torch.as_tensor(theirs)
    return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)


def graph_names(root):
    """Node names reachable from a tensor's grad_fn, depth first, in next_functions order."""
    names, stack = [], [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None:
            names.append(None)
            continue
        names.append(type(node).__name__)
        stack.extend(reversed([n for n, _ in node.next_functions]))
    return names


def close_for(ours, theirs, dtype):
    """`close`, within round-off of `dtype`: tight for float64, float32's otherwise."""
    tol = dict(atol=1e-10, rtol=1e-7) if dtype == torch.float64 else dict(atol=1e-5, rtol=1e-4)
    return close(ours, theirs, **tol)


def assert_values_graph_and_grads_match(name, fn, ours_in, theirs_in, dtype):
    """Run `fn(lib, *inputs)` under both libraries: equal values and node names, then the same gradient of every
    input for one random cotangent. Returns (ours, theirs)."""
    ours, theirs = fn(tg, *ours_in), fn(torch, *theirs_in)
    assert close_for(ours, theirs, dtype), (ours, theirs)
    assert graph_names(ours) == graph_names(theirs)
    seed = torch.randn(theirs.shape, dtype=dtype, generator=torch.Generator().manual_seed(1))
    ours.backward(tg.Variable(seed.clone()))
    theirs.backward(seed.clone())
    for a, b in zip(ours_in, theirs_in):
        assert (a.grad is None) == (b.grad is None)
        if b.grad is not None:
            assert close_for(a.grad, b.grad, dtype), (name, a.grad, b.grad)
    return ours, theirs
