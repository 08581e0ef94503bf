"""`**`: a tensor to a number's power (`x ** 3`), to a tensor's (`x ** y`), and a number to a tensor's (`2 ** x`).

Each is a node of its own in torch (PowBackward0, PowBackward1, PowBackward2), and each takes care where the
formula of its derivative would multiply 0 by an infinity (0 * a ** -1 at a = 0, 0 * log(0)): there torch's
derivatives.yaml (pow_backward, pow_backward_self, pow_backward_exponent) gives 0, and so does this file.

Guarded by tests/test_ops_vs_torch.py (values, node names and gradients against torch, and gradcheck; pow_zero
among them), tests/test_bitwise.py (the bits of x ** 2, x ** 3, x ** 0.5) and tests/test_forward_ad.py (jvp).
"""
import math

import torch

from ..core.function import Function
from ..rules.broadcast import conj, total


class Pow(Function, node="PowBackward0", saves=("self",), batching="pointwise"):
    """a ** n for a number n: d/da = n * a**(n-1)."""

    @staticmethod
    def forward(ctx, a, exponent):
        ctx.exponent = exponent
        ctx.save_for_backward(a)
        return a.pow(exponent)   # (a ** exponent would go through torch's Python wrapper first: twice the time)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        n = ctx.exponent
        if n == 0:
            return a.new_zeros(a.shape), None   # zeros, as torch: even where the gradient is inf
        return grad * conj(n * a.pow(n - 1)), None   # in torch's order, so its bits

    @staticmethod
    def jvp(ctx, ta, _exponent):
        a, n = ctx._primals
        if n == 0:
            return torch.zeros_like(ta)
        return ta * n * a ** (n - 1)


# pack_order: torch packs exponent, self, result (its saved inputs by name, then outputs)
class PowTensor(Function, node="PowBackward1", saves=("self", "exponent", "result"), pack_order=(1, 0, 2),
                batching="pointwise"):
    """a ** b for tensors: d/da = b * a**(b-1), d/db = a**b * log(a) (conjugated in backward, for complex)."""

    @staticmethod
    def forward(ctx, a, b):
        result = a ** b
        ctx.save_for_backward(a, b, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, b, result = ctx.saved_tensors
        grad_a = grad_b = None
        if ctx.needs_input_grad[0]:
            # b == 0 gives 0 (a ** -1 would be inf at a == 0)
            grad_a = (grad * conj(b * a ** (b - 1))).where(b != 0, 0.0)
        if ctx.needs_input_grad[1]:
            # where a == 0 and b >= 0 the derivative is 0, not 0 * log(0) = nan
            grad_b = grad * conj(result * a.log()).where(~((a == 0) & (b.real >= 0)), 0.0)
        return grad_a, grad_b

    @staticmethod
    def jvp(ctx, ta, tb):
        a, b = ctx._primals
        # as in backward: b == 0 gives 0 in a; where a == 0 and b >= 0 the derivative in b is 0, not 0 * log(0)
        d_a = (b * a ** (b - 1)).where(b != 0, 0.0)
        d_b = (ctx._result * a.log()).where(~((a == 0) & (b.real >= 0)), 0.0)
        return total(ta * d_a, tb * d_b)


class PowScalarBase(Function, node="PowBackward2", saves=("exponent", "result"), batching="pointwise"):
    """number ** b: d/db = number**b * log(number)."""

    @staticmethod
    def forward(ctx, base, b):
        result = base ** b
        ctx.base = base
        ctx.log_base = math.log(base) if base > 0 else (float("-inf") if base == 0 else float("nan"))
        ctx.save_for_backward(b, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        b, result = ctx.saved_tensors
        if ctx.base == 0:   # 0 ** b is flat (0) for b > 0 and 1 at b == 0: derivative 0, not 0 * -inf
            return None, grad * conj(result * ctx.log_base).where(~(b.real >= 0), 0.0)   # (NaN stays, as torch's)
        return None, grad * conj(result * ctx.log_base)

    @staticmethod
    def jvp(ctx, _number, tb):
        return tb * ctx._result * ctx.log_base
