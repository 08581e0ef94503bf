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
