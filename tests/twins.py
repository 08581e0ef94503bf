"""Run one snippet with `lib=torch` and `lib=teachgrad` and compare everything it returns or raises."""
import torch

import teachgrad as tg


def outcome(snippet, lib):
    """What `snippet(lib)` returns (tensors as plain data with dtype), or (exception type, message)."""
    try:
        return "returned", _plain(snippet(lib))
    except Exception as error:  # noqa: BLE001  (comparing errors is the point)
        return "raised", (type(error), str(error))


def same(snippet):
    """Assert the snippet returns equal results, or raises the same exception type and message, in both."""
    ours, theirs = outcome(snippet, tg), outcome(snippet, torch)
    assert _equal(ours, theirs), f"teachgrad: {ours}\n    torch: {theirs}"
    return ours


def _plain(x):
    if isinstance(x, tg.Variable):
        x = x.data
    if isinstance(x, torch.Tensor):
        return ("tensor", x.dtype, tuple(x.shape), x.detach().cpu().tolist())
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v) for v in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _equal(a, b):
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


# ---- an op's derivatives, under both libraries --------------------------------------------------------------------

def _leaf(lib, data):
    return lib.tensor(data, dtype=torch.float64, requires_grad=True)


def _data(x):
    return x.data if isinstance(x, tg.Variable) else x.detach()


def derivatives(lib, fn, *data, second=True):
    """fn(lib, *leaves)'s value and node name, the gradient of every input and the second derivative (one backward
    of the sum of the output, then of the sum of the gradients), and its tangent for tangents of ones."""
    import torch.autograd.forward_ad as tfw
    leaves = [_leaf(lib, d) for d in data]
    out = fn(lib, *leaves)
    grads = lib.autograd.grad(out.sum(), leaves, create_graph=True, allow_unused=True)
    recorded = [g for g in grads if g is not None and g.requires_grad]
    # (a first gradient that is a constant has no second derivative: zeros, as torch's op_db harness counts it)
    seconds = lib.autograd.grad(sum(g.sum() for g in recorded), leaves, allow_unused=True) if recorded and second \
        else [None] * len(leaves)
    fw = tg.autograd.forward_ad if lib is tg else tfw
    with fw.dual_level():
        duals = [fw.make_dual(_leaf(lib, d).detach(), lib.ones(torch.tensor(d).shape, dtype=torch.float64))
                 for d in data]
        tangent = fw.unpack_dual(fn(lib, *duals)).tangent
    zeros = [torch.zeros(torch.tensor(d).shape, dtype=torch.float64) for d in data]
    return {"value": _data(out), "node": type(out.grad_fn).__name__,
            "grads": [z if g is None else _data(g) for g, z in zip(grads, zeros)],
            "seconds": [z if g is None else _data(g) for g, z in zip(seconds, zeros)],
            "tangent": zeros[0].new_zeros(out.shape) if tangent is None else _data(tangent)}


def assert_twins(fn, *data, second=True):
    """fn(lib, *leaves) under teachgrad and torch: the same value, node name, gradients, second derivatives (where
    torch has them: `second`) and tangent (nan where torch's is nan)."""
    ours, theirs = derivatives(tg, fn, *data, second=second), derivatives(torch, fn, *data, second=second)
    assert ours["node"] == theirs["node"]
    for key in ("value", "tangent"):
        torch.testing.assert_close(ours[key], theirs[key], equal_nan=True, msg=key)
    for key in ("grads", "seconds"):
        assert len(ours[key]) == len(theirs[key]), key
        for a, b in zip(ours[key], theirs[key]):
            torch.testing.assert_close(a, b, equal_nan=True, msg=key)
