"""The checker for the exercise of the forward-mode notebook (16_forward_mode).

It lives here until the series' exercises module (teachgrad/exercises.py) is on main; it follows the
same rules: it recomputes what it compares with, catches the learner's exception and answers with a
hint, accepts a Variable or a torch tensor of any float dtype, and gives the same verdict when re-run.
"""
import torch

import teachgrad as tg


def _cases():
    """Functions with more inputs than outputs, more outputs than inputs, and as many."""
    w = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.0, 2.0]], dtype=torch.float64)
    return [
        ("x ↦ sin(x) * x (3 → 3)", lambda x: x.sin() * x, torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)),
        ("x ↦ W @ tanh(x) (3 → 2)", lambda x: (x.tanh() * w).sum(1), torch.tensor([0.1, 0.7, -0.4], dtype=torch.float64)),
        ("x ↦ (x, x², exp(x)) (1 → 3)", lambda x: tg.stack([x, x * x, x.exp()]) if isinstance(x, tg.Variable)
         else torch.stack([x, x * x, x.exp()]), torch.tensor(0.3, dtype=torch.float64)),
    ]


def check_jacobian_by_columns(candidate):
    """Compare candidate(f, x) with torch.autograd.functional.jacobian on three functions; print a verdict."""
    for name, f, x in _cases():
        expected = torch.autograd.functional.jacobian(f, x.clone())
        try:
            ours = candidate(f, tg.Variable(x.clone()))
        except Exception as error:  # noqa: BLE001 (the learner's code may raise anything)
            print(f"not yet: for {name} your function raised {type(error).__name__}: {error}")
            print("hint: open one dual level per column, with the tangent a one-hot tensor shaped like x "
                  "(tangent.view(x.shape)); read the column with unpack_dual(...).tangent")
            return False
        if ours is None:
            print(f"not yet: for {name} your function returned None: return the Jacobian")
            return False
        data = ours.data if isinstance(ours, tg.Variable) else ours
        if not isinstance(data, torch.Tensor):
            print(f"not yet: for {name} your function returned a {type(ours).__name__}, not a tensor")
            return False
        if tuple(data.shape) != tuple(expected.shape):
            print(f"not yet: for {name} the Jacobian has shape {tuple(data.shape)}, expected "
                  f"{tuple(expected.shape)} (output shape + input shape)")
            print("hint: stack the columns on the last dimension, then reshape to f(x).shape + x.shape")
            return False
        if not torch.allclose(data.to(torch.float64), expected, atol=1e-6):
            print(f"not yet: for {name} the numbers differ from torch.autograd.functional.jacobian")
            print("hint: column j is the tangent of f(x) when x's tangent is 1 at element j and 0 elsewhere")
            return False
    print("correct: all three Jacobians equal torch.autograd.functional.jacobian")
    return True
