"""Checks: gradients against finite differences, and teachgrad against torch.

    tg.check.gradcheck(f, (x,))         # True, or GradcheckError naming the entries that differ
    tg.check.gradgradcheck(f, (x,))     # the same for second derivatives
    tg.check.agree(ours, theirs, "t")   # asserts value, grad, grad_fn name... equal; prints one line
    tg.check.twin(example)              # runs example(tg) and example(torch) and compares each result

A teaching tool, above the public packages: `gradcheck` is torch.autograd's (teachgrad/autograd/gradcheck.py), and
`twin` hands the whole namespace `teachgrad` to the example it runs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeAlias

import torch

import teachgrad
from .autograd.gradcheck import (GradcheckError, analytical_jacobian, gradcheck, gradgradcheck,  # noqa: F401
                                 numerical_jacobian)
from .core.variable import Variable

if TYPE_CHECKING:   # names the hints use (never evaluated at run time)
    from types import ModuleType
    Number: TypeAlias = int | float | bool           # a Python number, as torch.types.Number
    TensorLike: TypeAlias = Variable | torch.Tensor  # a teachgrad Variable or a torch tensor


# --- twin checks against torch ------------------------------------------------------------------

def _plain(x):
    if isinstance(x, Variable):
        return x.data
    if isinstance(x, torch.Tensor):
        return x.detach()
    return torch.as_tensor(x)


def _node_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def describe(x: TensorLike | Number) -> str:
    """A short, stable text for a tensor's value: numbers up to 4 significant digits, else its shape."""
    data = _plain(x)
    if data.device.type == "meta":
        return f"meta tensor of shape {tuple(data.shape)}"
    if data.numel() > 8:
        return f"tensor of shape {tuple(data.shape)}"
    values = data.detach().cpu()
    if values.is_floating_point():
        values = values.double()
        text = [format(v, ".4g") for v in values.reshape(-1).tolist()]
    else:
        text = [str(v) for v in values.reshape(-1).tolist()]
    if data.dim() == 0:
        return text[0]
    if data.dim() == 1:
        return "[" + ", ".join(text) + "]"
    return f"tensor of shape {tuple(data.shape)}: [" + ", ".join(text) + "]"


def agree(ours: TensorLike | Number, theirs: TensorLike | Number, name: str = "value", atol: float = 1e-6,
          rtol: float = 1e-5, quiet: bool = False) -> None:
    """Assert a teachgrad result and a torch result agree, and print one line saying so.

    Compared: shape, dtype, device type, values, requires_grad, is_leaf, the grad_fn's name and
    `.grad` (when either has one). Raises AssertionError naming each difference.
    """
    problems = []
    a, b = _plain(ours), _plain(theirs)
    if a.shape != b.shape:
        problems.append(f"shape {tuple(a.shape)} vs torch's {tuple(b.shape)}")
    elif a.dtype != b.dtype:
        problems.append(f"dtype {a.dtype} vs torch's {b.dtype}")
    elif a.device.type != b.device.type:
        problems.append(f"device {a.device} vs torch's {b.device}")
    elif a.device.type != "meta" and not torch.allclose(a.cpu(), b.cpu(), atol=atol, rtol=rtol, equal_nan=True):
        problems.append(f"value {describe(a)} vs torch's {describe(b)}")
    tracked = isinstance(ours, Variable) and isinstance(theirs, torch.Tensor)
    if tracked:
        for what in ("requires_grad", "is_leaf"):
            if getattr(ours, what) != getattr(theirs, what):
                problems.append(f"{what} {getattr(ours, what)} vs torch's {getattr(theirs, what)}")
        if _node_name(ours) != _node_name(theirs):
            problems.append(f"grad_fn {_node_name(ours)} vs torch's {_node_name(theirs)}")
        our_grad = ours._grad
        their_grad = theirs.grad if theirs.is_leaf or theirs.retains_grad else None
        if (our_grad is None) != (their_grad is None):
            problems.append(f"grad {describe(our_grad) if our_grad is not None else None} vs torch's "
                            f"{describe(their_grad) if their_grad is not None else None}")
        elif our_grad is not None:
            g, h = _plain(our_grad), _plain(their_grad)
            if g.shape != h.shape or (g.device.type != "meta" and not torch.allclose(g.cpu(), h.cpu(), atol=atol, rtol=rtol)):
                problems.append(f"grad {describe(g)} vs torch's {describe(h)}")
    if problems:
        raise AssertionError(f"{name}: teachgrad and torch differ: " + "; ".join(problems))
    if not quiet:
        line = f"✓ {name} = {describe(a)}"
        if tracked and ours.grad_fn is not None:
            line += f"  grad_fn={_node_name(ours)}"
        if tracked and ours._grad is not None:
            line += f"  grad={describe(ours._grad)}"
        print(line + "  (same in torch)")


def twin(example: Callable[[ModuleType], Any], atol: float = 1e-6, rtol: float = 1e-5,
         quiet: bool = False) -> tuple[Any, Any]:
    """Run `example(lib)` with lib=teachgrad and lib=torch and check every result agrees.

    `example` returns a dict of named results (or one result). Returns (ours, theirs).

        def example(lib):
            p = lib.tensor(3.0, requires_grad=True)
            t = (p + 5) * 2
            t.backward()
            return {"t": t, "p": p}
        ours, theirs = tg.check.twin(example)
    """
    ours = example(teachgrad)
    theirs = example(torch)
    if isinstance(ours, dict):
        if set(ours) != set(theirs):
            raise AssertionError(f"the two runs returned different names: {sorted(ours)} vs {sorted(theirs)}")
        for name in ours:
            agree(ours[name], theirs[name], name, atol=atol, rtol=rtol, quiet=quiet)
    elif isinstance(ours, (tuple, list)):
        for k, (a, b) in enumerate(zip(ours, theirs)):
            agree(a, b, f"result[{k}]", atol=atol, rtol=rtol, quiet=quiet)
    else:
        agree(ours, theirs, "result", atol=atol, rtol=rtol, quiet=quiet)
    return ours, theirs
