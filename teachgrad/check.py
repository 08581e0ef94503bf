"""Checks: gradients against finite differences, and teachgrad against torch.

    tg.check.gradcheck(f, (x,))         # True, or GradcheckError naming the entries that differ
    tg.check.gradgradcheck(f, (x,))     # the same for second derivatives
    tg.check.agree(ours, theirs, "t")   # asserts value, grad, grad_fn name... equal; prints one line
    tg.check.twin(example)              # runs example(tg) and example(torch) and compares each result
"""
import torch

from . import engine, grad_mode
from .variable import Variable


class GradcheckError(RuntimeError):
    """Analytical and numerical gradients disagree (torch.autograd.gradcheck.GradcheckError)."""


# --- gradcheck ----------------------------------------------------------------------------------

def _outputs(fn, inputs):
    out = fn(*inputs)
    return out if isinstance(out, (tuple, list)) else (out,)


def numerical_jacobian(fn, inputs, eps=1e-6):
    """d output / d input by central differences: one matrix (input.numel × output.numel) per pair.

    `fn` runs in the grad mode of the caller, as torch's gradcheck runs it.
    """
    outputs = _outputs(fn, inputs)
    jacobians = []
    for x in inputs:
        if not (isinstance(x, Variable) and x.requires_grad):
            continue
        columns = [torch.zeros(x.numel(), o.numel(), dtype=o.dtype, device=o.device) for o in outputs]
        flat = x.data.view(-1)
        for i in range(flat.numel()):
            original = flat[i].item()
            flat[i] = original + eps
            plus = [o.data.reshape(-1).clone() for o in _outputs(fn, inputs)]
            flat[i] = original - eps
            minus = [o.data.reshape(-1).clone() for o in _outputs(fn, inputs)]
            flat[i] = original
            for column, p, m in zip(columns, plus, minus):
                column[i] = (p - m) / (2 * eps)
        jacobians.append(columns)
    return jacobians


def analytical_jacobian(fn, inputs):
    """d output / d input from backward: one backward pass per output element."""
    differentiable = [x for x in inputs if isinstance(x, Variable) and x.requires_grad]
    outputs = _outputs(fn, inputs)
    jacobians = [[torch.zeros(x.numel(), o.numel(), dtype=o.dtype, device=o.device) for o in outputs]
                 for x in differentiable]
    for k, out in enumerate(outputs):
        if not out.requires_grad:   # an output backward cannot reach: its Jacobian is zero, as torch takes it
            continue
        for j in range(out.numel()):
            seed = torch.zeros(out.numel(), dtype=out.dtype, device=out.device)
            seed[j] = 1
            grads = engine.grad(out, differentiable, seed.view(out.shape), retain_graph=True, allow_unused=True)
            for jacobian, x, g in zip(jacobians, differentiable, grads):
                if g is not None:
                    if g.shape != x.shape:
                        raise GradcheckError(f"gradient has shape {tuple(g.shape)} but its input has shape {tuple(x.shape)}")
                    jacobian[k][:, j] = g.data.reshape(-1)
    return jacobians


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Compare backward's gradients with finite differences; True when every entry agrees.

    Use float64 inputs: in float32 the finite differences themselves are too coarse.

        x = tg.randn(3, dtype=torch.float64, requires_grad=True)
        tg.check.gradcheck(lambda x: (x * x).sum(), (x,))   # True
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    differentiable = [(i, x) for i, x in enumerate(inputs) if isinstance(x, Variable) and x.requires_grad]
    if not differentiable:
        raise ValueError("gradcheck expects at least one input Variable with requires_grad=True")
    for i, x in differentiable:
        if x.dtype != torch.float64:
            raise ValueError(f"Input #{i} requires gradient and is not a double precision floating point; "
                             "gradcheck needs float64 inputs (x.double())")
    numerical = numerical_jacobian(fn, inputs, eps)
    analytical = analytical_jacobian(fn, inputs)
    problems = []
    for (i, _), num_per_out, ana_per_out in zip(differentiable, numerical, analytical):
        for k, (num, ana) in enumerate(zip(num_per_out, ana_per_out)):
            bad = ~torch.isclose(ana, num, rtol=rtol, atol=atol)
            if bad.any():
                entries = [
                    f"  d output[{k}][{o}] / d input[{i}][{n}]: analytical {ana[n, o].item():.6g}, numerical {num[n, o].item():.6g}"
                    for n, o in bad.nonzero().tolist()[:10]
                ]
                problems.append(f"Jacobian mismatch for output {k} with respect to input {i}:\n" + "\n".join(entries))
    if problems:
        if raise_exception:
            raise GradcheckError("\n".join(problems))
        return False
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check second derivatives: gradcheck the function that computes fn's gradients with create_graph=True.

    That function takes the inputs and the output gradients (random in [-1, 1) unless given, as in
    torch) and returns d(outputs·grad_outputs)/d inputs; both kinds of argument are checked.
    """
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    outputs = [o for o in _outputs(fn, inputs) if o.requires_grad]
    if grad_outputs is None:
        grad_outputs = tuple(Variable(torch.empty_like(o.data).uniform_(-1, 1), requires_grad=True) for o in outputs)
    else:
        grad_outputs = tuple(grad_outputs) if isinstance(grad_outputs, (tuple, list)) else (grad_outputs,)
    count = len(inputs)

    def first_derivatives(*args):
        xs, vs = args[:count], args[count:]
        with grad_mode.enable_grad():   # also while gradcheck's finite differences run without grad
            outs = [o for o in _outputs(fn, xs) if o.requires_grad]
            wrt = [x for x in xs if isinstance(x, Variable) and x.requires_grad]
            grads = engine.grad(outs, wrt, vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps, atol, rtol, raise_exception)


# --- twin checks against torch ------------------------------------------------------------------

def _plain(x):
    if isinstance(x, Variable):
        return x.data
    if isinstance(x, torch.Tensor):
        return x.detach()
    return torch.as_tensor(x)


def _node_name(t):
    return None if t.grad_fn is None else type(t.grad_fn).__name__


def describe(x):
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


def agree(ours, theirs, name="value", atol=1e-6, rtol=1e-5, quiet=False):
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


def twin(example, atol=1e-6, rtol=1e-5, quiet=False):
    """Run `example(lib)` with lib=teachgrad and lib=torch and check every result agrees.

    `example` returns a dict of named results (or one result). Returns (ours, theirs).

        def example(lib):
            p = lib.tensor(3.0, requires_grad=True)
            t = (p + 5) * 2
            t.backward()
            return {"t": t, "p": p}
        ours, theirs = tg.check.twin(example)
    """
    import teachgrad

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
